from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from coordinates.coordinate import CoordinateError, parse
from coordinates.services import zone_add
from maria.errors import ApplicationError


class Command(BaseCommand):
    help = "Create a zone (G.U.P.Z or a prefix) and any missing ancestors."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("coordinate")
        parser.add_argument("--name", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            zone = zone_add(coordinate=parse(options["coordinate"]), name=options["name"])
        except (CoordinateError, ApplicationError) as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"zone {zone.coordinate} ({zone.level}) ready")
