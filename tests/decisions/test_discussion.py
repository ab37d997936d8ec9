"""Reviewers discuss and hand off work (issue 18.5): comments on a decision, on its trail;
assignment to a reviewer of the zone; bulk release and assign from the queue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from coordinates.models import Role
from decisions.models import Decision
from tests.decisions.conftest import GOOD, ZONE, cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> Callable[[], int]:
    set_policy(tau=0.99, refusal_floor=0.05)

    def make() -> int:
        body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
        assert body["state"] == "approval_required"
        return int(body["id"])

    return make


def test_people_of_the_zone_comment_and_the_comment_is_on_the_trail(
    queued: Callable[[], int], person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    decision = queued()
    ann = client_for(person("ann", Role.REVIEWER, ZONE))
    audrey = client_for(person("audrey", Role.AUDITOR, "G1"))
    stranger = client_for(person("sam", Role.REVIEWER, "G1.U1.P1.Z2"))
    url = f"/api/v1/decisions/{decision}/comments/"

    assert (
        ann.post(url, {"text": "the paragraph names the division head"}, format="json").status_code
        == 201
    )
    assert audrey.post(url, {"text": "why was this not auto?"}, format="json").status_code == 201
    listed = ann.get(url).json()
    assert [(c["author"], c["text"]) for c in listed] == [
        ("ann", "the paragraph names the division head"),
        ("audrey", "why was this not auto?"),
    ]
    assert stranger.get(url).status_code == 404
    assert stranger.post(url, {"text": "hi"}, format="json").status_code == 404
    blank = ann.post(url, {"text": "   "}, format="json")
    assert blank.status_code == 400
    assert blank.json()["error"]["field"] == "text"
    long = ann.post(url, {"text": "x" * 2001}, format="json")
    assert long.status_code == 400

    events = TrailEvent.objects.filter(decision_id=decision, kind="decision.commented").order_by(
        "pk"
    )
    assert [(e.actor, e.reason) for e in events] == [
        ("ann", "the paragraph names the division head"),
        ("audrey", "why was this not auto?"),
    ]


def test_a_decision_is_assigned_to_a_reviewer_of_its_zone_only(
    queued: Callable[[], int], person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    decision = queued()
    ann = client_for(person("ann", Role.ZONE_ADMIN, ZONE))
    person("ben", Role.REVIEWER, ZONE)
    person("sam", Role.REVIEWER, "G1.U1.P1.Z2")
    url = f"/api/v1/decisions/{decision}/assign/"

    done = ann.post(url, {"assignee": "ben"}, format="json")
    assert done.status_code == 200
    assert done.json()["assigned_to"] == "ben"
    assert Decision.objects.get(pk=decision).assigned_to.username == "ben"  # type: ignore[union-attr]
    wrong = ann.post(url, {"assignee": "sam"}, format="json")
    assert wrong.status_code == 400
    assert wrong.json()["error"]["field"] == "assignee"
    nobody = ann.post(url, {"assignee": "nobody-here"}, format="json")
    assert nobody.status_code == 400
    assert nobody.json()["error"]["field"] == "assignee"
    assert ann.post(url, {"assignee": None}, format="json").json()["assigned_to"] is None
    event = TrailEvent.objects.filter(decision_id=decision, kind="decision.assigned").order_by("pk")
    assert [(e.actor, e.body["payload"]["to"]) for e in event] == [("ann", "ben"), ("ann", None)]


def test_assigning_to_an_unknown_name_answers_as_for_someone_who_does_not_review(
    queued: Callable[[], int], person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    # Given a zone admin assigning work, and sam who exists but reviews another zone
    decision = queued()
    ann = client_for(person("ann", Role.ZONE_ADMIN, ZONE))
    person("sam", Role.REVIEWER, "G1.U1.P1.Z2")
    url = f"/api/v1/decisions/{decision}/assign/"
    # When ann assigns it to sam, and to a name nobody has, one at a time and in bulk
    sam = ann.post(url, {"assignee": "sam"}, format="json")
    nobody = ann.post(url, {"assignee": "nobody-here"}, format="json")
    bulk = "/api/v1/decisions/bulk/"
    in_bulk = {
        name: ann.post(
            bulk, {"action": "assign", "decisions": [decision], "assignee": name}, format="json"
        ).json()["outcome"][str(decision)]
        for name in ("sam", "nobody-here")
    }
    # Then the answers are the same but for the name: none tells which usernames exist
    assert sam.status_code == nobody.status_code == 400
    assert sam.json()["error"] == {
        "code": "invalid",
        "message": f"sam does not review {ZONE}",
        "field": "assignee",
    }
    assert nobody.json()["error"]["message"] == f"nobody-here does not review {ZONE}"
    assert in_bulk == {
        "sam": f"sam does not review {ZONE}",
        "nobody-here": f"nobody-here does not review {ZONE}",
    }
    assert Decision.objects.get(pk=decision).assigned_to is None


def test_bulk_assign_and_release_say_for_each_decision_whether_it_worked(
    queued: Callable[[], int],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
    django_capture_on_commit_callbacks: Any,
) -> None:
    first, second = queued(), queued()
    ann = client_for(person("ann", Role.REVIEWER, ZONE))
    person("ben", Role.REVIEWER, ZONE)
    with django_capture_on_commit_callbacks(execute=True):
        assert ann.post(f"/api/v1/decisions/{first}/claim/", {}, format="json").status_code == 200
    outcome = ann.post(
        "/api/v1/decisions/bulk/",
        {"action": "assign", "decisions": [first, second, 999999], "assignee": "ben"},
        format="json",
    ).json()["outcome"]
    assert outcome[str(first)] == "ok"
    assert outcome[str(second)] == "ok"
    assert "no decision" in outcome["999999"]
    released = ann.post(
        "/api/v1/decisions/bulk/",
        {"action": "release", "decisions": [first, second]},
        format="json",
    ).json()["outcome"]
    assert released[str(first)] == "ok"
    assert released[str(second)] != "ok"  # nobody held it: nothing to release, and it says so
    assert Decision.objects.get(pk=first).claimed_by is None
    bad = ann.post(
        "/api/v1/decisions/bulk/", {"action": "delete", "decisions": [first]}, format="json"
    )
    assert bad.status_code == 400
