from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from coordinates.coordinate import CoordinateError, parse
from coordinates.models import Role
from coordinates.services import role_grant, user_ensure
from maria.errors import ApplicationError


class Command(BaseCommand):
    help = "Grant a role on a coordinate prefix, creating the user when missing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True)
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument("--scope", required=True, help="coordinate prefix, e.g. G1.U1")
        parser.add_argument("--password", default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            scope = parse(options["scope"])
            # One transaction: a grant that fails leaves no half-made user behind.
            with transaction.atomic():
                user = user_ensure(username=options["user"], password=options["password"])
                role_grant(user=user, role=options["role"], scope=scope)
        except (CoordinateError, ApplicationError) as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"{options['user']} is {options['role']} on {scope}")
