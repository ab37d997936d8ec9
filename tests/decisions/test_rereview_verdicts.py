"""A re-review's "wrong now" takes effect (issue 29.1): an answer still waiting for review
fails with "evidence changed" and its agent is told; a released answer is corrected
(`decision.corrected` to its agent, on its trail, in the KPIs). "Still correct" changes
nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from coordinates.models import ApiToken, Role
from decisions.models import Decision, Outbox, ReReview
from decisions.rereview import rereview_close
from evidence.models import Paragraph
from tests.decisions.conftest import ZONE, cite
from tests.decisions.test_rereview import DAYS, POLICY
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

UNSAID = "Remote work is paid at a higher hourly rate on Fridays."
NOTE = "the limit is now 2 days"


def _messages(decision: Decision, kind: str) -> list[dict[str, Any]]:
    rows = Outbox.objects.filter(decision=decision, kind=Outbox.Kind.WEBHOOK).order_by("pk")
    return [r.payload["message"] for r in rows if r.payload["message"]["type"] == kind]


def _answer(
    ingest: Callable[..., Any], submit: Callable[..., Any], *, doubtful: bool = False
) -> Decision:
    """An answer resting on version 1's days paragraph; the agent has a webhook. A
    `doubtful` one adds a claim its citation never says, so a person must decide."""
    ingest(POLICY, title="Remote work policy", key="remote")
    days = Paragraph.objects.get(text=DAYS)
    claims = [{"text": DAYS, "citations": [cite(days)]}]
    if doubtful:
        claims.append({"text": UNSAID, "citations": [cite(days)]})
    done = submit(
        claims,
        question="How many days per week may employees work remotely?",
    )
    assert done.status_code == 201, done.response.content
    ApiToken.objects.update(webhook_url="http://127.0.0.1:9/hook")
    return Decision.objects.get(pk=done.response.json()["id"])


@pytest.fixture
def waiting(
    ingest: Callable[..., Any], submit: Callable[..., Any], set_policy: Callable[..., Any]
) -> Decision:
    """An answer in the review queue, needing two approvals."""
    set_policy(tau=0.99, refusal_floor=0.0, approvals_required=2)
    decision = _answer(ingest, submit, doubtful=True)
    assert decision.state == "approval_required"
    return decision


@pytest.fixture
def released(ingest: Callable[..., Any], submit: Callable[..., Any]) -> Decision:
    decision = _answer(ingest, submit)
    assert decision.state == "completed"
    return decision


@pytest.fixture
def superseded(ingest: Callable[..., Any]) -> Callable[[], ReReview]:
    """Version 2 changes the cited figure: the re-review it opens."""

    def run() -> ReReview:
        ingest(POLICY.replace("3 days", "2 days"), title="Remote work policy", key="remote")
        return ReReview.objects.get()

    return run


@pytest.fixture
def rui(person: Callable[..., Any]) -> Any:
    return person("rui", Role.REVIEWER, ZONE)


def test_wrong_now_on_a_waiting_answer_fails_it_with_evidence_changed(
    waiting: Decision, superseded: Callable[[], ReReview], rui: Any
) -> None:
    # given a waiting answer whose cited figure changed
    review = superseded()
    # when a reviewer says it is wrong now
    rereview_close(rereview_id=review.pk, user=rui, verdict="wrong", note=NOTE)
    # then it has left the queue, failed, and the trail says why and who
    waiting.refresh_from_db()
    assert waiting.state == "failed"
    assert waiting.outcome_reason == f"evidence changed: {NOTE}"
    failed = TrailEvent.objects.get(decision_id=waiting.pk, kind="decision.failed")
    assert (failed.actor, failed.reason) == ("rui", f"evidence changed: {NOTE}")
    # and the agent is told, with the change it failed on
    (message,) = _messages(waiting, "decision.failed")
    data = message["data"]
    assert (data["state"], data["outcome"], data["note"]) == ("failed", "evidence_changed", NOTE)
    assert data["reason"] == f"evidence changed: {NOTE}"
    assert data["changes"][0]["cited"]["text"] == DAYS
    assert "2 days" in data["changes"][0]["now"]["text"]


def test_a_waiting_answer_found_wrong_now_can_no_longer_be_approved_through_the_api(
    waiting: Decision,
    superseded: Callable[[], ReReview],
    rui: Any,
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    review = superseded()
    closed = client_for(rui).post(
        f"/api/v1/rereviews/{review.pk}/close/", {"verdict": "wrong", "note": NOTE}, format="json"
    )
    assert closed.status_code == 200, closed.content
    assert client_for(rui).get(f"/api/v1/decisions/{waiting.pk}/").json()["state"] == "failed"

    for name in ("ann", "ben"):
        reviewer = client_for(person(name, Role.REVIEWER, ZONE))
        approve = reviewer.post(
            f"/api/v1/decisions/{waiting.pk}/approve/",
            {"reason": "fine", "claims": [{"index": i, "supported": True} for i in (0, 1)]},
            format="json",
        )
        assert approve.status_code == 409, approve.content
    waiting.refresh_from_db()
    assert waiting.state == "failed"
    assert not _messages(waiting, "decision.completed")


def test_wrong_now_on_a_released_answer_sends_a_correction(
    released: Decision,
    superseded: Callable[[], ReReview],
    rui: Any,
    client_for: Callable[[Any], APIClient],
) -> None:
    review = superseded()
    closed = client_for(rui).post(
        f"/api/v1/rereviews/{review.pk}/close/", {"verdict": "wrong", "note": NOTE}, format="json"
    )
    assert closed.status_code == 200, closed.content

    # the answer stands as given (the agent has it) ...
    released.refresh_from_db()
    assert released.state == "completed"
    # ... and the agent is told it is wrong now, with the verdict, the note and the change
    (message,) = _messages(released, "decision.corrected")
    data = message["data"]
    assert (data["id"], data["verdict"], data["note"], data["reviewer"]) == (
        released.pk,
        "wrong",
        NOTE,
        "rui",
    )
    assert data["changes"][0]["rereview"] == review.pk
    assert "2 days" in data["changes"][0]["now"]["text"]
    event = TrailEvent.objects.get(decision_id=released.pk, kind="decision.corrected")
    assert (event.actor, event.reason, event.body["payload"]["verdict"]) == ("rui", NOTE, "wrong")


def test_the_zone_figures_count_corrections(
    released: Decision,
    superseded: Callable[[], ReReview],
    rui: Any,
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    admin = client_for(person("zed", Role.ZONE_ADMIN, ZONE))
    kpis = f"/api/v1/zones/{ZONE}/kpis/"
    assert admin.get(kpis).json()["corrections"] == 0
    rereview_close(rereview_id=superseded().pk, user=rui, verdict="wrong", note=NOTE)
    body = admin.get(kpis).json()
    assert body["corrections"] == 1
    assert sum(point["value"] for point in body["series"]["corrections"]) == 1


def test_still_correct_changes_nothing(
    released: Decision, superseded: Callable[[], ReReview], rui: Any
) -> None:
    review = superseded()
    rereview_close(rereview_id=review.pk, user=rui, verdict="still_correct")
    released.refresh_from_db()
    assert released.state == "completed"
    assert not _messages(released, "decision.corrected")
    assert not TrailEvent.objects.filter(kind__in=["decision.corrected", "decision.failed"])


def test_a_waiting_answers_page_warns_that_its_cited_text_changed(
    waiting: Decision, superseded: Callable[[], ReReview], rui: Any, client: Any
) -> None:
    # Issue 29.2: the page showed "v1 ¶2" and the old text, the change only on the trail.
    client.force_login(rui)
    page = f"/queue/decisions/{waiting.pk}/"
    assert 'id="evidence-changed"' not in client.get(page).content.decode()

    review = superseded()
    html = client.get(page).content.decode()
    assert 'id="evidence-changed"' in html
    assert "The text this answer cites has changed since it was given" in html
    old, new = review.old_paragraph, review.new_paragraph
    assert new is not None
    assert f"v1 ¶{old.number} → v2 ¶{new.number}" in html
    assert DAYS.replace("3 days", "2 days") in html
    assert f'href="/reviews/changed/#rereview-{review.pk}"' in html

    # once a reviewer has said it still holds, the warning is gone
    rereview_close(rereview_id=review.pk, user=rui, verdict="still_correct")
    assert 'id="evidence-changed"' not in client.get(page).content.decode()


def test_a_released_answer_is_never_failed_as_evidence_changed(
    released: Decision, rui: Any
) -> None:
    from decisions.services import decision_evidence_changed
    from maria.errors import Conflict

    # Sent to its agent, the delivery not confirmed yet (the state machine would let it fail).
    Decision.objects.filter(pk=released.pk).update(state="executed")
    with pytest.raises(Conflict):
        decision_evidence_changed(decision_id=released.pk, user=rui, note=NOTE, changes=[])
    released.refresh_from_db()
    assert released.state == "executed"
