from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from coordinates.coordinate import CoordinateError, Level, parse
from coordinates.services import token_issue
from maria.errors import ApplicationError


class Command(BaseCommand):
    help = "Issue a bearer token for an agent (or a person's personal token); prints it once."

    def add_arguments(self, parser: CommandParser) -> None:
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--agent", help="agent coordinate G.U.P.Z.A")
        who.add_argument("--user", help="username, for a personal API token")
        parser.add_argument("--label", default="")
        parser.add_argument("--webhook", default="", help="URL notified when answers are released")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["agent"]:
                agent = parse(options["agent"], level=Level.AGENT)
                token, key = token_issue(
                    agent=agent, label=options["label"], webhook_url=options["webhook"]
                )
            else:
                user = get_user_model().objects.filter(username=options["user"]).first()
                if user is None:
                    raise CommandError(f"no user {options['user']!r}")
                token, key = token_issue(user=user, label=options["label"])
        except (CoordinateError, ApplicationError) as error:
            raise CommandError(str(error)) from error
        owner = token.agent or token.user.get_username()
        self.stderr.write(f"token for {owner} (shown once; store it now):")
        self.stdout.write(key)
        if token.webhook_secret:
            # The Standard Webhooks form: any of its libraries takes it as it is.
            self.stderr.write("webhook signing secret (Standard Webhooks; shown once):")
            self.stdout.write(f"whsec_{token.webhook_secret}")
