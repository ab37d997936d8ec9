"""`manage.py verify_trail [--file EXPORT] [--public-key KEY] [--witness PATH|URL] [--deep]
[--checkpoint HASH]`: exit 0 when intact.

Otherwise exit 1, naming the first broken event of every broken chain and why; exit 2 when
the export cannot be read at all.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit import integrity, rows
from trail import checkpoints, export, signing, verify, witness


def _read_lines(path: str) -> Iterator[bytes]:
    if path == "-":
        yield from sys.stdin.buffer
        return
    try:
        with Path(path).open("rb") as handle:
            yield from handle
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}", returncode=2) from error


class Command(BaseCommand):
    help = (
        "Verify the trail's hash chains, head rows and checkpoints in the database, or an "
        "export offline (--file). Exit 0 when intact; 1 with the first broken event otherwise."
    )
    # An auditor verifies an export on their own machine: no database, so no system checks.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--file",
            metavar="EXPORT",
            help="verify a JSON Lines export from GET /api/v1/trail/ ('-' reads stdin)",
        )
        parser.add_argument(
            "--deep",
            action="store_true",
            help=(
                "hash every event in this process, not trusting the database server's sha256 "
                "(slower; the columns are checked against the hashed bodies either way)"
            ),
        )
        parser.add_argument(
            "--public-key",
            metavar="KEY",
            action="append",
            help=(
                "check the checkpoints' signatures with this Ed25519 public key (base64, or a "
                "file holding it; GET /api/v1/trail/public-key/ publishes it); repeat it for "
                "the keys of before a rotation"
            ),
        )
        parser.add_argument(
            "--checkpoint",
            metavar="HASH",
            help="check against the checkpoint with this hash (one you kept) instead of the latest",
        )
        parser.add_argument(
            "--witness",
            metavar="PATH|URL",
            help=(
                "read the witness back (its file, or the http(s) URL checkpoints are POSTed "
                "to, read with GET) and check that every checkpoint it holds is in the "
                "database or export, unchanged, and that no chain is behind or off its latest "
                "one (default: MARIA_TRAIL_WITNESS, when set)"
            ),
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        try:
            keys = [signing.public_key_from(text) for text in options["public_key"] or []]
        except signing.SigningKeyError as error:
            raise CommandError(str(error), returncode=2) from error
        witnessed, unread = self._witness(options["witness"])
        if path is not None:
            if options["checkpoint"] or options["deep"]:
                raise CommandError("--checkpoint and --deep apply to the database only")
            report = export.verify_export(
                _read_lines(path),
                source=path,
                appendix_check=integrity.verify_evidence_records,
                public_keys=keys,
                witnessed=witnessed,
            )
        else:
            report = verify.verify_database(
                deep=options["deep"],
                checkpoint_hash=options["checkpoint"],
                public_keys=keys or None,
            )
            # What the events name, re-hashed: bundles, reports, versions and paragraphs.
            problems, report.evidence_checked = integrity.verify_evidence_database()
            report.problems.extend(problems)
            # The rows that change in place, replayed from their chains (audit.rows).
            problems, replayed = rows.verify_rows_database()
            report.problems.extend(problems)
            report.evidence_checked += replayed
            if witnessed is not None:
                checkpoints.witness_compare(report, witnessed, keys=keys or signing.public_keys())
        if unread:
            report.witness = unread
        for line in report.lines():
            self.stdout.write(line)
        if not report.intact:
            raise CommandError(report.summary(), returncode=1)
        self.stdout.write(self.style.SUCCESS(report.summary()))

    def _witness(self, given: str | None) -> tuple[witness.WitnessLog | None, str]:
        """The witness read back, or why not: one named on the command line must be read
        (exit 2 otherwise); the configured one is only reported as unreadable."""
        target = given or settings.MARIA_TRAIL_WITNESS
        if not target:
            return None, ""
        try:
            return witness.read_back(target), ""
        except witness.WitnessError as error:
            if given:
                raise CommandError(str(error), returncode=2) from error
            return None, f"not checked: {error}"
