from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from coordinates.coordinate import CoordinateError, Level, parse
from coordinates.selectors import zone_get
from evidence.models import DocumentKind, DocumentStatus
from evidence.services import document_ingest
from maria.errors import ApplicationError

SUFFIXES = {".txt", ".text", ".md", ".markdown", ".html", ".htm"}


class Command(BaseCommand):
    help = (
        "Ingest files (or folders of .txt/.md/.html files) into a zone. The file's path is its "
        "key: ingesting a changed file makes a new version, an unchanged one is a no-op."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--zone", required=True, help="zone coordinate G.U.P.Z")
        parser.add_argument("--kind", required=True, choices=DocumentKind.values)
        parser.add_argument(
            "--status", default=DocumentStatus.APPROVED, choices=DocumentStatus.values
        )
        parser.add_argument("--effective-date", type=date.fromisoformat, default=None)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            zone = zone_get(parse(options["zone"], level=Level.ZONE), field="zone")
        except (CoordinateError, ApplicationError) as error:
            raise CommandError(str(error)) from error
        files: list[Path] = []
        for path in options["paths"]:
            if path.is_dir():
                files.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES))
            elif path.is_file():
                files.append(path)
            else:
                raise CommandError(f"no such file or folder: {path}")
        created = unchanged = 0
        failures: list[str] = []
        for path in tqdm(files, unit="file", disable=options["no_progress"] or len(files) < 2):
            try:
                result = document_ingest(
                    zone=zone,
                    raw=path.read_bytes(),
                    kind=options["kind"],
                    status=options["status"],
                    key=str(path),
                    filename=path.name,
                    effective_date=options["effective_date"],
                )
            except ApplicationError as error:
                failures.append(f"{path}: {error.message}")
                continue
            created += result.created
            unchanged += not result.created
        self.stdout.write(
            f"{created} new version(s), {unchanged} unchanged, {len(failures)} failed"
        )
        for failure in failures:
            self.stderr.write(failure)
        if failures:
            raise CommandError(f"{len(failures)} file(s) could not be ingested")
