from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from coordinates import demo
from coordinates.coordinate import parse
from coordinates.models import ApiToken
from coordinates.selectors import person_exists, zone_get, zone_has_own_policy
from coordinates.services import (
    agent_user,
    hash_key,
    policy_update,
    role_grant,
    user_ensure,
    zone_add,
)
from decisions.services import decision_submit
from evidence import demo as demo_documents
from evidence.models import Document
from evidence.selectors import document_exists
from evidence.services import document_ingest


class Command(BaseCommand):
    help = (
        "Load the demo organisation and its documents, and print the logins and the agent "
        "token. Run again (each `make run`), it adds only what is missing: a zone policy or "
        "a document that exists is the admins' now, whatever they made of it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--force", action="store_true", help="seed even with DEBUG off (never in production)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG and not options["force"]:
            raise CommandError("seed_demo creates known passwords; it runs only with DEBUG on")
        with transaction.atomic():
            for coordinate, name in demo.ZONES:
                zone_add(coordinate=parse(coordinate), name=name)
            for coordinate, overrides, reason in demo.POLICIES:
                zone = zone_get(parse(coordinate))
                # Compared with the current version instead, a restart would set the demo
                # values again on top of an admin's edit.
                if not zone_has_own_policy(zone):
                    policy_update(zone=zone, overrides=overrides, reason=reason, actor=None)
            for username, role, scope, password in demo.PEOPLE:
                # An existing account keeps the password and roles its admins left it with
                # (a revoked role stays revoked).
                if person_exists(username):
                    continue
                user = user_ensure(username=username, password=password)
                role_grant(user=user, role=role, scope=parse(scope))
            agent = parse(demo.AGENT)
            ApiToken.objects.get_or_create(
                key_hash=hash_key(demo.AGENT_DEMO_KEY),
                defaults={
                    "prefix": demo.AGENT_DEMO_KEY[:14],
                    "user": agent_user(agent),
                    "agent": demo.AGENT,
                    "label": "demo agent",
                },
            )
            for filename, coordinate, kind, title in demo_documents.DOCUMENTS:
                zone = zone_get(parse(coordinate))
                key = f"demo/{filename}"
                # By its key, in any version: an admin's new version of a demo document is
                # not superseded by the demo text again (nor compared with it as a conflict).
                if document_exists(zone=zone, key=key):
                    continue
                document_ingest(
                    zone=zone,
                    raw=(demo_documents.FOLDER / filename).read_bytes(),
                    kind=kind,
                    status="approved",
                    title=title,
                    key=key,
                    filename=filename,
                )
        waiting = self._submit_waiting()
        self.stdout.write("Demo data ready.")
        if waiting:
            self.stdout.write(
                f"{waiting} demo answers submitted for review: /queue/ as reviewer or reviewer2."
            )
        self.stdout.write("Logins as first seeded (username / password, role on scope):")
        for username, role, scope, password in demo.PEOPLE:
            self.stdout.write(f"  {username:<10} / {password:<15} {role} on {scope}")
        self.stdout.write(f"Agent {demo.AGENT} token: {demo.AGENT_DEMO_KEY}")

    def _submit_waiting(self) -> int:
        """The demo agent's answers waiting for the demo reviewers, each by its idempotency
        key. After
        the seeding transaction: validation runs after each submission commits (the
        service replays a key it has seen, so a restart submits nothing twice)."""
        token = ApiToken.objects.get(key_hash=hash_key(demo.AGENT_DEMO_KEY))
        zone = demo.AGENT.rsplit(".", 1)[0]
        documents = dict(Document.objects.filter(zone__coordinate=zone).values_list("key", "pk"))
        submitted = 0
        for key, question, answer, cited in demo_documents.WAITING:
            citations = [
                {"document": documents[doc_key], "paragraph": number} for doc_key, number in cited
            ]
            done = decision_submit(
                token=token,
                payload={
                    "question": question,
                    "answer": answer,
                    "zone": zone,
                    "agent": demo.AGENT,
                    "claims": [{"text": answer, "citations": citations}],
                },
                idempotency_key=key,
            )
            submitted += not done.replayed
        return submitted
