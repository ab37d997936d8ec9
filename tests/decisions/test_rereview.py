"""When a document changes, its past answers are reviewed (issue 18.3): a new version that
changes a cited paragraph, or a conflict resolved against it, opens a re-review with the old
and new text, tells the agent (`decision.superseded`) and goes on the trail."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from coordinates.models import Role
from decisions.models import Decision, Outbox, ReReview
from evidence.models import KnowledgeConflict, Paragraph
from tests.decisions.conftest import ZONE, cite
from trail.models import TrailEvent

POLICY = (
    "# Remote work\n\n"
    "Employees may request to work remotely up to 3 days per week.\n\n"
    "Requests for remote work are approved by the line manager."
)
DAYS = "Employees may request to work remotely up to 3 days per week."
MANAGER = "Requests for remote work are approved by the line manager."


@pytest.fixture
def remote_answer(
    ingest: Callable[..., Any], submit: Callable[..., Any], agent_client: Callable[[str], Any]
) -> Decision:
    """An answer resting on version 1's days paragraph, released; the agent has a webhook."""
    from coordinates.models import ApiToken

    ingest(POLICY, title="Remote work policy", key="remote")
    days = Paragraph.objects.get(text=DAYS)
    done = submit(
        [{"text": DAYS, "citations": [cite(days)]}],
        question="How many days per week may employees work remotely?",
    )
    assert done.status_code == 201, done.response.content
    ApiToken.objects.update(webhook_url="http://127.0.0.1:9/hook")
    decision = Decision.objects.get(pk=done.response.json()["id"])
    assert decision.state == "completed"
    return decision


def _new_version(ingest: Callable[..., Any], text: str) -> None:
    ingest(text, title="Remote work policy", key="remote")


def test_a_new_version_that_changes_a_cited_paragraph_opens_a_re_review(
    remote_answer: Decision, ingest: Callable[..., Any]
) -> None:
    _new_version(ingest, POLICY.replace("3 days", "2 days"))
    (review,) = ReReview.objects.all()
    assert (review.decision, review.cause, review.zone) == (remote_answer, "superseded", ZONE)
    assert review.old_paragraph.text == DAYS
    assert review.new_paragraph is not None
    assert review.new_paragraph.text == DAYS.replace("3 days", "2 days")
    assert review.new_paragraph.version.version == 2

    event = TrailEvent.objects.get(kind="rereview.opened")
    assert event.decision_id == remote_answer.pk
    assert event.body["payload"]["cited"] == {
        "version": 1,
        "paragraph": review.old_paragraph.number,
    }
    assert event.body["payload"]["now"]["version"] == 2

    (hook,) = [
        row
        for row in Outbox.objects.filter(decision=remote_answer, kind=Outbox.Kind.WEBHOOK)
        if row.payload["message"]["type"] == "decision.superseded"
    ]
    change = hook.payload["message"]["data"]["changes"][0]
    assert change["cited"]["text"] == DAYS
    assert "2 days" in change["now"]["text"]


def test_a_new_version_that_leaves_the_cited_paragraph_word_for_word_opens_none(
    remote_answer: Decision, ingest: Callable[..., Any]
) -> None:
    _new_version(ingest, POLICY.replace("line manager", "head of department"))
    assert not ReReview.objects.exists()


def test_answers_older_than_the_zones_window_and_failed_answers_are_left_alone(
    remote_answer: Decision, ingest: Callable[..., Any], set_policy: Callable[..., Any]
) -> None:
    set_policy(rereview_days=7)
    Decision.objects.filter(pk=remote_answer.pk).update(
        created_at=timezone.now() - timedelta(days=8)
    )
    _new_version(ingest, POLICY.replace("3 days", "2 days"))
    assert not ReReview.objects.exists()


def test_a_conflict_resolved_against_the_cited_side_opens_a_re_review(
    remote_answer: Decision,
    ingest: Callable[..., Any],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    from evidence.knowledge import conflict_resolve

    ingest(
        "# Memo\n\nRemote work: employees may work remotely up to 2 days per week.",
        title="Memo",
        key="memo",
        kind="memo",
    )
    (conflict,) = KnowledgeConflict.objects.all()
    admin = person("ada", Role.ZONE_ADMIN, ZONE)
    cited = Paragraph.objects.get(text=DAYS)
    governs = "second" if conflict.first_id == cited.pk else "first"
    with django_capture_on_commit_callbacks(execute=True):
        conflict_resolve(
            conflict_id=conflict.pk, user=admin, resolution=governs, reason="the memo governs"
        )
    (review,) = ReReview.objects.all()
    assert (review.cause, review.conflict, review.old_paragraph) == ("conflict", conflict, cited)
    assert review.new_paragraph is not None
    assert "2 days" in review.new_paragraph.text


def test_a_conflict_resolved_for_the_cited_side_or_dismissed_opens_none(
    remote_answer: Decision,
    ingest: Callable[..., Any],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    from evidence.knowledge import conflict_resolve

    ingest(
        "# Memo\n\nRemote work: employees may work remotely up to 2 days per week.",
        title="Memo",
        key="memo",
        kind="memo",
    )
    (conflict,) = KnowledgeConflict.objects.all()
    admin = person("ada", Role.ZONE_ADMIN, ZONE)
    cited = Paragraph.objects.get(text=DAYS)
    governs = "first" if conflict.first_id == cited.pk else "second"
    with django_capture_on_commit_callbacks(execute=True):
        conflict_resolve(
            conflict_id=conflict.pk, user=admin, resolution=governs, reason="the policy governs"
        )
    assert not ReReview.objects.exists()


def test_a_reviewer_of_the_zone_closes_it_and_it_goes_on_the_trail(
    remote_answer: Decision,
    ingest: Callable[..., Any],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    _new_version(ingest, POLICY.replace("3 days", "2 days"))
    review = ReReview.objects.get()
    rui = person("rui", Role.REVIEWER, ZONE)
    other = person("oz", Role.REVIEWER, "G1.U1.P1.Z2")

    listed = client_for(rui).get("/api/v1/rereviews/").json()["rereviews"]
    assert [row["id"] for row in listed] == [review.pk]
    assert listed[0]["cited"]["text"] == DAYS
    assert "2 days" in listed[0]["now"]["text"]
    assert client_for(other).get("/api/v1/rereviews/").json()["rereviews"] == []

    url = f"/api/v1/rereviews/{review.pk}/close/"
    assert (
        client_for(other).post(url, {"verdict": "still_correct"}, format="json").status_code
        == 404  # as for a missing one: no oracle
    )
    no_note = client_for(rui).post(url, {"verdict": "wrong"}, format="json")
    assert no_note.status_code == 400
    assert no_note.json()["error"]["field"] == "note"
    bad = client_for(rui).post(url, {"verdict": "maybe"}, format="json")
    assert bad.status_code == 400
    done = client_for(rui).post(
        url, {"verdict": "wrong", "note": "the limit is now 2 days"}, format="json"
    )
    assert done.status_code == 200
    assert (
        client_for(rui).post(url, {"verdict": "wrong", "note": "x"}, format="json").status_code
        == 409
    )

    event = TrailEvent.objects.get(kind="rereview.closed")
    assert (event.decision_id, event.actor, event.reason) == (
        remote_answer.pk,
        "rui",
        "the limit is now 2 days",
    )
    assert event.body["payload"]["verdict"] == "wrong"
    assert (
        client_for(rui).get("/api/v1/rereviews/?state=closed").json()["rereviews"][0]["verdict"]
        == "wrong"
    )


def test_the_page_shows_the_old_and_new_text_with_the_change_marked(
    remote_answer: Decision, ingest: Callable[..., Any], person: Callable[..., Any], client: Any
) -> None:
    _new_version(ingest, POLICY.replace("3 days", "2 days"))
    review = ReReview.objects.get()
    client.force_login(person("rui", Role.REVIEWER, ZONE))
    queue = client.get("/queue/").content.decode()
    assert "1 answer already given rests on text that has changed since" in queue
    html = client.get("/reviews/changed/").content.decode()
    assert f'id="rereview-{review.pk}"' in html
    assert '<mark class="failed">3 </mark>' in html
    assert "<mark>2 </mark>" in html
    closed = client.post(
        f"/reviews/changed/{review.pk}/close/",
        {"verdict": "still_correct", "note": ""},
        follow=True,
    ).content.decode()
    assert f"Re-review closed: decision {remote_answer.pk} still holds." in closed
    assert "Nothing to review again." in closed


def test_auditors_follow_the_trail_to_the_text_cited_and_the_text_now(
    remote_answer: Decision, ingest: Callable[..., Any], person: Callable[..., Any], client: Any
) -> None:
    _new_version(ingest, POLICY.replace("3 days", "2 days"))
    review = ReReview.objects.get()
    client.force_login(person("otto", Role.AUDITOR, "G1"))
    page = client.get(f"/audit/decisions/{remote_answer.pk}/").content.decode()
    document = review.old_paragraph.version.document_id
    cited = f"/documents/{document}/?version=1#p{review.old_paragraph.number}"
    assert f'href="{cited}"' in page
    assert f"/documents/{document}/?version=2#p" in page
    assert client.get(cited.split("#")[0]).status_code == 200  # and may open it
