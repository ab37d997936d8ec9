"""`manage.py trail_key --new FILE` writes a new checkpoint signing key (mode 0600) unless
FILE exists; `manage.py trail_key --public` prints the configured key's public half."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from trail import signing


class Command(BaseCommand):
    help = "Make a checkpoint signing key (--new FILE), or print the public key (--public)."

    def add_arguments(self, parser: CommandParser) -> None:
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--new", metavar="FILE", help="write a new key here unless it exists")
        group.add_argument("--public", action="store_true", help="print the public key")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["new"]:
            path = Path(options["new"])
            if path.exists():
                self.stdout.write(f"{path} exists: kept")
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            # Created 0600 from the start: the key is never readable by others, not even briefly.
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as handle:
                handle.write(signing.new_seed() + "\n")
            self.stdout.write(f"wrote a new trail signing key to {path}")
            return
        try:
            key = signing.public_key()
        except signing.SigningKeyError as error:
            raise CommandError(str(error)) from error
        if key is None:
            raise CommandError("no signing key: set MARIA_TRAIL_SIGNING_KEY(_FILE)")
        self.stdout.write(f"{signing.ALGORITHM} key {key.key_id}: {key.text}")
