"""Reviewers at work: claim, release, approve, reject, override; four eyes; scope; pushes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.db import transaction
from rest_framework.test import APIClient

from coordinates.models import Role
from decisions import services
from decisions.models import Decision, Outbox
from maria.errors import ApplicationError
from tests.decisions.conftest import GOOD, WRONG_NUMBER, ZONE, cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]) -> int:
    """A decision waiting in the compliance zone's queue."""
    set_policy(tau=0.99, refusal_floor=0.05)
    body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    assert body["state"] == "approval_required"
    return int(body["id"])


@pytest.fixture
def reviewers(
    person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> tuple[APIClient, APIClient]:
    return (
        client_for(person("ann", Role.REVIEWER, "G1.U1.P1")),
        client_for(person("ben", Role.REVIEWER, ZONE)),
    )


def act(client: APIClient, decision_id: int, action: str, reason: str = "", **capture: Any) -> Any:
    body: dict[str, Any] = {"reason": reason}
    if action == "reject":  # a rejection names the claim that is wrong
        body["claims"] = [{"index": 0, "supported": False}]
    return client.post(f"/api/v1/decisions/{decision_id}/{action}/", body, format="json")


def pushes(decision_id: int) -> list[str]:
    return [
        o.payload["type"]
        for o in Outbox.objects.filter(decision_id=decision_id, kind="push").order_by("pk")
    ]


def test_claim_locks_the_decision_for_others_until_released(
    queued: int, reviewers: tuple[APIClient, APIClient], django_capture_on_commit_callbacks: Any
) -> None:
    ann, ben = reviewers
    with django_capture_on_commit_callbacks(execute=True):
        claimed = act(ann, queued, "claim")
    assert claimed.status_code == 200
    assert claimed.json()["claimed_by"] == "ann"
    blocked = act(ben, queued, "approve")
    assert blocked.status_code == 409
    assert "claimed by ann" in blocked.json()["error"]["message"]
    assert act(ben, queued, "release").status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        assert act(ann, queued, "release").status_code == 200
    assert act(ben, queued, "claim").status_code == 200
    assert pushes(queued) == [
        "decision.added",
        "decision.claimed",
        "decision.released",
        "decision.claimed",
    ]


def test_approval_releases_the_answer_and_tells_every_queue(
    queued: int, reviewers: tuple[APIClient, APIClient], django_capture_on_commit_callbacks: Any
) -> None:
    ann, _ = reviewers
    with django_capture_on_commit_callbacks(execute=True):
        response = act(ann, queued, "approve", "matches section 2")
    assert response.status_code == 200
    decision = Decision.objects.get(pk=queued)
    assert decision.state == "completed"
    assert pushes(queued)[-1] == "decision.resolved"
    approved = TrailEvent.objects.get(decision_id=queued, kind="decision.approved")
    assert approved.actor == "ann"
    assert approved.reason == "matches section 2"


def test_rejecting_needs_a_reason(queued: int, reviewers: tuple[APIClient, APIClient]) -> None:
    ann, _ = reviewers
    response = act(ann, queued, "reject", "  ")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "reason"
    assert Decision.objects.get(pk=queued).state == "approval_required"
    assert act(ann, queued, "reject", "cites the wrong article").status_code == 200
    decision = Decision.objects.get(pk=queued)
    assert decision.state == "failed"
    assert decision.outcome_reason == "cites the wrong article"


def test_a_transition_from_the_wrong_state_is_409(
    queued: int, reviewers: tuple[APIClient, APIClient]
) -> None:
    ann, ben = reviewers
    assert act(ann, queued, "approve").status_code == 200
    assert act(ben, queued, "approve").status_code == 409
    assert act(ben, queued, "reject", "late").status_code == 409
    assert act(ben, queued, "claim").status_code == 409


def test_two_approvals_need_two_different_reviewers(
    queued: int, set_policy: Callable[..., Any], reviewers: tuple[APIClient, APIClient]
) -> None:
    set_policy(tau=0.99, refusal_floor=0.05, approvals_required=2)
    ann, ben = reviewers
    assert act(ann, queued, "approve").status_code == 200
    assert Decision.objects.get(pk=queued).state == "approval_required"
    again = act(ann, queued, "approve")
    assert again.status_code == 409
    assert act(ben, queued, "approve").status_code == 200
    assert Decision.objects.get(pk=queued).state == "completed"


def test_nobody_approves_what_they_proposed(queued: int) -> None:
    from coordinates.models import RoleAssignment

    proposer = Decision.objects.get(pk=queued).proposed_by
    # role_grant refuses agents' accounts now; one granted a role before that still exists
    RoleAssignment.objects.create(user=proposer, role=Role.REVIEWER, scope=ZONE)
    with pytest.raises(ApplicationError, match="nobody approves"):
        services.decision_approve(decision_id=queued, user=proposer)


def test_a_reviewer_of_another_zone_cannot_see_or_act(
    queued: int, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    legal = client_for(person("lex", Role.REVIEWER, "G1.U1.P2"))
    assert act(legal, queued, "claim").status_code == 404
    assert act(legal, queued, "approve").status_code == 404
    assert legal.get(f"/api/v1/decisions/{queued}/").status_code == 404
    assert Decision.objects.get(pk=queued).state == "approval_required"


def test_an_auditor_cannot_act(
    queued: int, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    auditor = client_for(person("audrey", Role.AUDITOR, "G1"))
    assert act(auditor, queued, "approve").status_code == 404
    assert auditor.get(f"/api/v1/decisions/{queued}/").status_code == 200


def test_agents_cannot_review(queued: int, agent_client: Callable[[str], APIClient]) -> None:
    assert act(agent_client("G1.U1.P1.Z1.A1"), queued, "approve").status_code == 403


def test_a_rolled_back_transition_sends_nothing(
    queued: int, person: Callable[..., Any], django_capture_on_commit_callbacks: Any
) -> None:
    ann = person("ann", Role.REVIEWER, ZONE)
    before = Outbox.objects.count()

    def claim_then_fail() -> None:
        with transaction.atomic():
            services.decision_claim(decision_id=queued, user=ann)
            raise RuntimeError("something failed after the claim")

    with django_capture_on_commit_callbacks() as callbacks, pytest.raises(RuntimeError):
        claim_then_fail()
    assert callbacks == []
    assert Outbox.objects.count() == before
    assert Decision.objects.get(pk=queued).claimed_by is None


def test_override_of_a_blocked_answer_needs_the_permission_and_a_reason(
    policy_doc: Any,
    submit: Callable[..., Any],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    blocked = submit([{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}]).json()
    assert blocked["gate"] == "blocked"
    admin_user = person("zed", Role.ZONE_ADMIN, ZONE)
    admin = client_for(admin_user)
    assert act(admin, blocked["id"], "override", "business need").status_code == 403
    admin_user.user_permissions.add(Permission.objects.get(codename="override_blocked"))
    admin = client_for(type(admin_user).objects.get(pk=admin_user.pk))
    assert act(admin, blocked["id"], "override", "").status_code == 400
    response = act(admin, blocked["id"], "override", "confirmed by the division head by phone")
    assert response.status_code == 200
    # One person's override is a request: the answer stays blocked until a second person
    # with the permission completes it (tests/decisions/test_override_two_people.py).
    assert Decision.objects.get(pk=blocked["id"]).state == "failed"
    second_user = person("zoe", Role.ZONE_ADMIN, ZONE)
    second_user.user_permissions.add(Permission.objects.get(codename="override_blocked"))
    second = client_for(type(second_user).objects.get(pk=second_user.pk))
    assert act(second, blocked["id"], "override", "the head's email confirms it").status_code == 200
    assert Decision.objects.get(pk=blocked["id"]).state == "completed"
    overridden = TrailEvent.objects.get(decision_id=blocked["id"], kind="decision.overridden")
    assert overridden.actor == "zoe"
    assert overridden.payload["requested_by"] == "zed"


def test_overdue_decisions_escalate_to_the_parent_level(queued: int) -> None:
    from datetime import timedelta

    from django.utils import timezone

    Decision.objects.filter(pk=queued).update(due_at=timezone.now() - timedelta(minutes=1))
    assert services.decisions_escalate_overdue() == 1
    decision = Decision.objects.get(pk=queued)
    assert decision.escalated_to == "G1.U1.P1"
    assert decision.due_at > timezone.now()
    assert TrailEvent.objects.filter(decision_id=queued, kind="decision.escalated").exists()
    assert services.decisions_escalate_overdue() == 0


def test_a_body_that_is_not_an_object_is_a_400_and_changes_nothing(
    queued: int, reviewers: tuple[APIClient, APIClient]
) -> None:
    # A list was read as "no reason" and the approval went through.
    ann, _ = reviewers
    response = ann.post(f"/api/v1/decisions/{queued}/approve/", ["looks fine"], format="json")
    assert response.status_code == 400
    assert Decision.objects.get(pk=queued).state == "approval_required"
