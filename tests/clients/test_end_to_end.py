"""Issue 15's whole path, from the client, against the engine in a server process of its
own (gunicorn on the test database: SQLite in the embedded run, PostgreSQL in the other):
upload two documents, search, submit plain answers with `[n]` markers, receive the signed
webhooks of a blocked answer, of an approved one (and of a rejected one) on a local
receiver, verify them with the client's helper, and read (and verify) the trail."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from maria_client import (
    ClaimVerdict,
    Maria,
    WebhookInbox,
    WebhookVerificationError,
    verify_webhook,
)
from tests.clients.conftest import AGENT, ZONE, Receiver, gunicorn_engine
from tests.samples import POLICY_EN

pytestmark = pytest.mark.django_db(transaction=True)

PER_DIEM = """Per Diem Memo

1. Daily allowance
The daily allowance for domestic business travel is 5,000 yen.

2. Receipts
Receipts are not required for the daily allowance.
"""
QUESTION = "Who approves a 700,000 yen business trip, and what is the daily allowance?"


def test_an_agent_and_two_reviewers_drive_the_whole_path_through_the_client(
    org: Any,
    person: Callable[..., Any],
    set_policy: Callable[..., Any],
    tmp_path: Path,
    unused_tcp_port: int,
) -> None:
    from coordinates.coordinate import parse
    from coordinates.models import Role
    from coordinates.services import token_issue

    # given a zone where a supported answer needs two reviewers, an agent whose webhook is a
    # local receiver, two reviewers and an auditor, each with a personal token
    set_policy(tau=0.99, refusal_floor=0.05, approvals_required=2)
    inbox = WebhookInbox(secret="")
    with (
        Receiver(inbox).running() as receiver,
        gunicorn_engine(unused_tcp_port, tmp_path / "gunicorn.log") as url,
    ):
        token, agent_key = token_issue(agent=parse(AGENT), webhook_url=receiver.url)
        secret = f"whsec_{token.webhook_secret}"
        inbox.secret = secret
        people = {
            name: token_issue(user=person(name, role, ZONE))[1]
            for name, role in [
                ("reviewer", Role.REVIEWER),
                ("reviewer2", Role.REVIEWER),
                ("auditor", Role.AUDITOR),
            ]
        }
        agent = Maria(url, agent_key, timeout=120)
        reviewer, reviewer2, auditor = (
            Maria(url, people[name], timeout=120) for name in ("reviewer", "reviewer2", "auditor")
        )

        # when the agent uploads two documents
        policy = agent.upload_document(POLICY_EN, zone=ZONE, title="Travel policy", key="travel")
        memo = agent.upload_document(PER_DIEM, zone=ZONE, kind="memo", title="Per diem")
        assert (policy.created, memo.created) == (True, True)

        # and searches them
        approval = next(
            p
            for p in agent.search("Who approves expenses above 500,000 yen?", zone=ZONE, k=5)
            if "500,000 yen require" in p.text
        )
        allowance = next(
            p
            for p in agent.search("daily allowance for domestic travel", zone=ZONE, k=5)
            if "5,000 yen" in p.text
        )
        assert (approval.document, allowance.document) == (policy.id, memo.id)
        sources = [approval, allowance]

        # and submits a plain answer whose number the policy does not say
        blocked = agent.submit(
            question=QUESTION,
            answer="Expenses above 300,000 yen require prior approval by the division head [1].",
            zone=ZONE,
            agent=AGENT,
            sources=sources,
        )
        failed = agent.wait(blocked.id, timeout=120, webhook=inbox)

        # then it is blocked, and the agent's webhook heard it, signed
        assert (failed.state, failed.gate) == ("failed", "blocked")
        assert failed.refusal is not None
        hook = inbox.wait_for(blocked.id, timeout=0)
        assert hook is not None
        assert hook.type == "decision.failed"

        # when it submits a supported one, citing both documents by marker
        supported = agent.submit(
            question=QUESTION,
            answer=(
                "Expenses above 500,000 yen require prior approval by the division head [1]. "
                "The daily allowance for domestic business travel is 5,000 yen [2]."
            ),
            zone=ZONE,
            agent=AGENT,
            sources=sources,
        )
        waiting = agent.graded(supported.id, timeout=120)
        assert (waiting.state, waiting.gate) == ("approval_required", "required")
        cited = {
            (item["document"], item["paragraph"])
            for claim in waiting.claims
            for item in claim.get("evidence", [])
        }
        assert {(approval.document, approval.paragraph), (memo.id, allowance.paragraph)} <= cited

        # and the two reviewers approve it
        assert reviewer.claim(supported.id).claimed_by == "reviewer"
        assert reviewer.approve(supported.id, "section 2 says so").state == "approval_required"
        assert reviewer2.approve(supported.id, "agreed").state in ("executed", "completed")
        completed = agent.wait(supported.id, timeout=120, webhook=inbox)

        # then it is completed, and the webhook said so
        assert completed.state == "completed"
        done = inbox.wait_for(supported.id, timeout=0)
        assert done is not None
        assert done.type == "decision.completed"
        assert done.data["id"] == supported.id

        # and when a reviewer rejects another supported answer, the webhook says that too
        disputed = agent.submit(
            question="Who approves an 800,000 yen business trip?",
            answer="Expenses above 500,000 yen require prior approval by the division head [1].",
            zone=ZONE,
            agent=AGENT,
            sources=sources,
        )
        assert agent.graded(disputed.id, timeout=120).state == "approval_required"
        reviewer2.reject(
            disputed.id,
            "the trip was already approved under another rule",
            claims=[ClaimVerdict(0, False, "another rule applies")],
        )
        rejected = agent.wait(disputed.id, timeout=120, webhook=inbox)
        assert rejected.state == "failed"
        told = inbox.wait_for(disputed.id, timeout=0)
        assert told is not None
        assert (told.type, told.data["reason"]) == (
            "decision.rejected",
            "the trip was already approved under another rule",
        )

        # and every delivery verifies with the client's helper, and a tampered one does not
        assert receiver.refused == []
        assert len(receiver.received) >= 3
        for headers, body in receiver.received:
            sent_id = {name.lower(): value for name, value in headers.items()}["webhook-id"]
            assert verify_webhook(headers, body, secret).id == sent_id
            with pytest.raises(WebhookVerificationError):
                verify_webhook(headers, body + b" ", secret)
            with pytest.raises(WebhookVerificationError):
                verify_webhook(headers, body, "whsec_" + "QUFBQQ" * 8)

        # and the auditor reads the trail, which verifies offline
        export = tmp_path / "trail.jsonl"
        lines = list(auditor.trail_lines(zone=ZONE, include_evidence=True))
        export.write_text("\n".join(lines) + "\n")
        records = list(auditor.trail(zone=ZONE))
        events = [r for r in records if r["type"] == "trail.event"]
        for decision_id in (blocked.id, supported.id, disputed.id):
            assert any(f'"decision":{decision_id},' in e["canonical"] for e in events)
        call_command("verify_trail", file=str(export))

        for client in (agent, reviewer, reviewer2, auditor):
            client.close()
