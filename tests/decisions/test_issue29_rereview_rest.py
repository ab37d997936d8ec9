"""Issue 29 (11 and what the last session noticed): the queue counts re-reviews of answers
already given apart from answers still waiting; an answer failed as "evidence changed" is no
rejection in the KPIs and its page says why it ended; the re-review page says what a verdict
did; a decision sent back for more evidence leads with who sent it back."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from coordinates.coordinate import parse
from coordinates.models import Role
from decisions import services
from decisions.models import Decision, ReReview
from decisions.rereview import rereview_close
from evidence.models import Paragraph
from gates.kpis import TRUST_0, Window, zone_kpis
from tests.decisions.conftest import ZONE, cite
from tests.decisions.test_rereview import DAYS, POLICY
from tests.decisions.test_rereview_verdicts import NOTE, UNSAID, _answer

pytestmark = pytest.mark.django_db

QUESTION = "How many days per week may employees work remotely?"


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def rui(person: Callable[..., Any]) -> Any:
    return person("rui", Role.REVIEWER, ZONE)


@pytest.fixture
def both(
    ingest: Callable[..., Any], submit: Callable[..., Any], set_policy: Callable[..., Any]
) -> tuple[Decision, Decision]:
    """An answer already given and one still waiting, both citing the days paragraph, and a
    version 2 that changes it: one open re-review each."""
    given = _answer(ingest, submit)
    assert given.state == "completed"
    set_policy(tau=0.99, refusal_floor=0.0)
    days = Paragraph.objects.get(text=DAYS)
    claims = [{"text": t, "citations": [cite(days)]} for t in (DAYS, UNSAID)]
    body = submit(claims, question=QUESTION, key="waiting").json()
    assert body["state"] == "approval_required", body
    ingest(POLICY.replace("3 days", "2 days"), title="Remote work policy", key="remote")
    assert ReReview.objects.filter(closed_at__isnull=True).count() == 2
    return given, Decision.objects.get(pk=body["id"])


def test_the_queue_counts_answers_given_apart_from_answers_still_waiting(
    both: tuple[Decision, Decision], rui: Any
) -> None:
    html = login(rui).get("/queue/").content.decode()
    banner = html.split('id="rereviews-waiting"', 1)[1].split("</p>", 1)[0]
    assert "1 answer already given rests on text that has changed since: review it" in banner
    assert "1 answer still waiting cites text that has changed since." in banner
    assert "2 answers already given" not in banner


def test_the_re_review_page_says_what_each_verdict_did(
    both: tuple[Decision, Decision], rui: Any, django_capture_on_commit_callbacks: Any
) -> None:
    given, waiting = both
    client = login(rui)
    of = {review.decision_id: review.pk for review in ReReview.objects.all()}

    def close(decision: Decision, verdict: str) -> str:
        url = f"/reviews/changed/{of[decision.pk]}/close/"
        with django_capture_on_commit_callbacks(execute=True):
            page = client.post(url, {"verdict": verdict, "note": NOTE}, follow=True)
        return page.content.decode()

    # "wrong now" on the waiting answer: it failed and left the queue, the agent is told
    said = close(waiting, "wrong")
    assert (
        f"Re-review closed: decision {waiting.pk} failed as evidence changed and left the "
        "queue; its agent is told." in said
    )
    # and on the answer already given: a correction went out
    said = close(given, "wrong")
    assert (
        f"Re-review closed: a correction of decision {given.pk} went onto its trail and to "
        "its agent." in said
    )
    assert "Re-review closed.<" not in said


def test_still_correct_says_the_decision_still_holds(
    both: tuple[Decision, Decision], rui: Any
) -> None:
    given, _ = both
    review = ReReview.objects.get(decision=given)
    page = login(rui).post(
        f"/reviews/changed/{review.pk}/close/", {"verdict": "still_correct"}, follow=True
    )
    assert f"Re-review closed: decision {given.pk} still holds." in page.content.decode()


def test_an_answer_failed_as_evidence_changed_is_no_rejection(
    both: tuple[Decision, Decision], rui: Any
) -> None:
    _, waiting = both
    now = timezone.now()
    window = Window(now - timedelta(days=1), now + timedelta(days=1))
    before = zone_kpis(parse(ZONE), window)
    # when a reviewer finds the waiting answer wrong now that its cited figure changed
    review = ReReview.objects.get(decision=waiting)
    rereview_close(rereview_id=review.pk, user=rui, verdict="wrong", note=NOTE)
    waiting.refresh_from_db()
    assert waiting.state == "failed"
    # then the trust and the review figures are what they were: no person rejected it
    after = zone_kpis(parse(ZONE), window)
    assert after["trust"] == before["trust"]
    assert before["trust"] > TRUST_0  # the released answer counts as correct
    assert after["first_pass_approval_rate"] is None
    assert after["mean_review_seconds"] is None
    # and its page says why it ended, not that it was rejected
    html = login(rui).get(f"/queue/decisions/{waiting.pk}/").content.decode()
    why = html.split('<p id="why"', 1)[1].split("</p>", 1)[0]
    assert "Failed by rui on " in why
    assert ": the text it cites has changed since" in why
    assert "Rejected by" not in why


def test_a_decision_sent_back_leads_with_who_sent_it_back(
    ingest: Callable[..., Any],
    submit: Callable[..., Any],
    set_policy: Callable[..., Any],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given a waiting answer whose review went late and up to the planet's authority
    set_policy(tau=0.99, refusal_floor=0.0)
    waiting = _answer(ingest, submit, doubtful=True)
    Decision.objects.filter(pk=waiting.pk).update(due_at=timezone.now() - timedelta(minutes=1))
    with django_capture_on_commit_callbacks(execute=True):
        services.decisions_escalate_overdue()
    pia = login(person("pia", Role.REVIEWER, "G1.U1.P1"))
    # when she sends it back for more evidence
    with django_capture_on_commit_callbacks(execute=True):
        pia.post(f"/queue/decisions/{waiting.pk}/send-back/", {"reason": "bring the memo"})
    # then its page leads with who sent it back and when, not with a rejection
    html = pia.get(f"/queue/decisions/{waiting.pk}/").content.decode()
    why = html.split('<p id="why"', 1)[1].split("</p>", 1)[0]
    assert why.split(">", 1)[1].lstrip().startswith("Sent back for more evidence by pia on ")
    assert "Rejected by" not in why
