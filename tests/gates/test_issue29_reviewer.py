"""Issue 29, what a reviewer misses: half-approved items say "1 of 2" with the first
approver's reason; bulk approve and reject say, for each decision, done or why not (never a
bulk approval of a refuted claim); the queue's filters live in its address; citations name
the document and link to the paragraph; the periodic review shows the evidence; the queue
header counts the reviewer's day."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import unquote

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from coordinates.models import Role
from decisions.events import Kind
from decisions.models import Approval, Decision, State
from evidence.models import ValidationReport
from tests.decisions.conftest import GOOD, UNVERIFIABLE, cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

ZONE_SCOPE = "G1.U1.P1"


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def waiting(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> Callable[..., int]:
    """Submit an answer of one claim that waits for a person (τ above what it reaches)."""
    set_policy(tau=0.99, refusal_floor=0.0)

    def run(text: str = GOOD, question: str | None = None) -> int:
        extra = {"question": question} if question else {}
        body = submit([{"text": text, "citations": [cite(policy_doc)]}], **extra).json()
        assert body["state"] == "approval_required", body
        return int(body["id"])

    return run


def with_refuted_claim(decision_id: int) -> int:
    """A waiting decision whose claim the engine refuted. Today's engine blocks such an
    answer at once, but a report of an older engine (or one the queue took before) still
    waits with it: the bulk form must never approve it."""
    report = Decision.objects.get(pk=decision_id).report
    assert report is not None
    body = dict(report.body)
    body["claims"] = [dict(body["claims"][0], verdict="refuted", supported=False)]
    # reports are append-only: the decision points at a second one, as a re-validation would
    older = ValidationReport.objects.create(
        bundle=report.bundle,
        policy_label=report.policy_label,
        policy=report.policy,
        sufficiency=report.sufficiency,
        completeness=report.completeness,
        cohesion=report.cohesion,
        mode=report.mode,
        gate=report.gate,
        body=body,
        content_hash=report.content_hash,
    )
    Decision.objects.filter(pk=decision_id).update(report=older)
    return decision_id


def said(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


# --- 1. half-approved ------------------------------------------------------------------------


def test_a_half_approved_decision_says_1_of_2_with_the_first_approver_and_reason(
    waiting: Callable[..., int],
    set_policy: Callable[..., Any],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given a zone that needs two approvals, and ann's approval with her reason
    decision_id = waiting()
    set_policy(approvals_required=2)
    ann = login(person("ann", Role.REVIEWER, ZONE_SCOPE))
    with django_capture_on_commit_callbacks(execute=True):
        ann.post(f"/queue/decisions/{decision_id}/approve/", {"reason": "figure checked"})
    assert Decision.objects.get(pk=decision_id).state == State.APPROVAL_REQUIRED
    bo = login(person("bo", Role.REVIEWER, ZONE_SCOPE))
    # when bo opens the queue and the decision
    queue = bo.get("/queue/").content.decode()
    page = bo.get(f"/queue/decisions/{decision_id}/").content.decode()
    # then the row and the page say 1 of 2, who approved first and why
    row = queue.split(f'data-id="{decision_id}"', 1)[1].split("</tr>", 1)[0]
    assert "1 of 2 approvals" in row
    assert "first by ann" in row
    assert "figure checked" in row
    so_far = page.split('id="approvals-so-far"', 1)[1].split("</p>", 1)[0]
    assert "1 of 2 approvals" in so_far
    assert "ann approved on" in so_far
    assert "figure checked" in so_far


def test_a_decision_nobody_approved_yet_says_no_count(
    waiting: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = waiting()
    bo = login(person("bo", Role.REVIEWER, ZONE_SCOPE))
    assert "approvals" not in bo.get("/queue/").content.decode().split("<tbody", 1)[1]
    page = bo.get(f"/queue/decisions/{decision_id}/").content.decode()
    assert 'id="approvals-so-far"' not in page


# --- 2. bulk approve and reject --------------------------------------------------------------


def test_bulk_approve_approves_the_verified_and_says_why_not_for_each_other(
    waiting: Callable[..., int],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given a verified answer, one with a refuted claim, one the engine could not verify,
    # one already decided, and one in a zone the reviewer does not review
    good = waiting(GOOD)
    refuted = with_refuted_claim(waiting(GOOD + " Indeed."))
    unverified = waiting(UNVERIFIABLE)
    decided = waiting(GOOD + " Really.")
    Decision.objects.filter(pk=decided).update(state=State.FAILED)
    ann = login(person("ann", Role.REVIEWER, ZONE_SCOPE))
    # when ann approves them all from the queue (with a filter to come back to)
    with django_capture_on_commit_callbacks(execute=True):
        response = ann.post(
            "/queue/bulk/",
            {
                "action": "approve",
                "decisions": [good, refuted, unverified, decided, 999999],
                "reason": "batch checked",
                "filters": "gate=required&sort=oldest&evil=1",
            },
        )
    # then only the verified one is approved, through the single approval (trail, webhook)
    assert Decision.objects.get(pk=good).state == State.COMPLETED
    assert TrailEvent.objects.filter(decision_id=good, kind=Kind.DECISION_APPROVED).exists()
    assert Approval.objects.get(decision_id=good).reason == "batch checked"
    for other in (refuted, unverified):
        assert Decision.objects.get(pk=other).state == State.APPROVAL_REQUIRED
    messages = said(response)
    assert f"1 decision: done. #{good}" in messages
    assert any(m.startswith(f"#{refuted}: claim 1 is refuted") for m in messages), messages
    assert any(
        m.startswith(f"#{unverified}: claim 1 is not verified and waits for your own choice")
        for m in messages
    )
    assert any(m.startswith(f"#{decided}: already decided") for m in messages)
    assert "#999999: not in your zones" in messages
    # and the queue comes back with the filters it was showing
    assert response.status_code == 302
    assert response["Location"] == "/queue/?gate=required&sort=oldest"


def test_bulk_approve_in_a_two_approval_zone_records_and_then_needs_another_person(
    waiting: Callable[..., int],
    set_policy: Callable[..., Any],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    decision_id = waiting()
    set_policy(approvals_required=2)
    ann = login(person("ann", Role.REVIEWER, ZONE_SCOPE))
    with django_capture_on_commit_callbacks(execute=True):
        first = ann.post("/queue/bulk/", {"action": "approve", "decisions": [decision_id]})
        again = ann.post("/queue/bulk/", {"action": "approve", "decisions": [decision_id]})
    assert any("your approval is recorded" in m for m in said(first)), said(first)
    assert (
        f"#{decision_id}: you approved it already; it needs a second approver who is not you"
        in said(again)
    )
    assert Approval.objects.filter(decision_id=decision_id).count() == 1
    bo = login(person("bo", Role.REVIEWER, ZONE_SCOPE))
    with django_capture_on_commit_callbacks(execute=True):
        bo.post("/queue/bulk/", {"action": "approve", "decisions": [decision_id]})
    assert Decision.objects.get(pk=decision_id).state == State.COMPLETED


def test_bulk_reject_needs_a_reason_and_rejects_only_what_has_a_refuted_claim(
    waiting: Callable[..., int],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    good = waiting(GOOD)
    refuted = with_refuted_claim(waiting(GOOD + " Indeed."))
    ann = login(person("ann", Role.REVIEWER, ZONE_SCOPE))
    # without a reason nothing is touched, and the form says what is missing
    response = ann.post("/queue/bulk/", {"action": "reject", "decisions": [good, refuted]})
    assert any("reason" in m for m in said(response)), said(response)
    assert Decision.objects.get(pk=refuted).state == State.APPROVAL_REQUIRED
    # with one: the refuted answer is rejected naming its refuted claim; the other says why not
    with django_capture_on_commit_callbacks(execute=True):
        response = ann.post(
            "/queue/bulk/",
            {"action": "reject", "decisions": [good, refuted], "reason": "wrong figure"},
        )
    rejected = Decision.objects.get(pk=refuted)
    assert rejected.state == State.FAILED
    assert rejected.outcome_reason == "wrong figure"
    verdict = rejected.claim_verdicts.get()
    assert (verdict.claim, verdict.supported) == (0, False)
    assert Decision.objects.get(pk=good).state == State.APPROVAL_REQUIRED
    assert f"#{good}: no claim is refuted: open it to say which claim is wrong" in said(response)


def test_bulk_approve_of_ones_own_proposal_or_a_claim_someone_else_holds_is_refused(
    waiting: Callable[..., int],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    decision_id = waiting()
    bo = login(person("bo", Role.REVIEWER, ZONE_SCOPE))
    bo.post(f"/queue/decisions/{decision_id}/claim/")
    ann = login(person("ann", Role.REVIEWER, ZONE_SCOPE))
    with django_capture_on_commit_callbacks(execute=True):
        response = ann.post("/queue/bulk/", {"action": "approve", "decisions": [decision_id]})
    assert f"#{decision_id}: decision {decision_id} is claimed by bo" in said(response)
    assert Decision.objects.get(pk=decision_id).state == State.APPROVAL_REQUIRED


# --- 3. filters in the address ---------------------------------------------------------------


def test_the_queue_filters_by_assignee_and_sorts_as_its_address_says(
    waiting: Callable[..., int],
    person: Callable[..., Any],
) -> None:
    first = waiting(question="Who approves travel above 500,000 yen? first")
    second = waiting(question="Who approves travel above 500,000 yen? second")
    person("bo", Role.REVIEWER, ZONE_SCOPE)
    ann = login(person("ann", Role.REVIEWER, ZONE_SCOPE))
    ann.post(f"/queue/decisions/{second}/assign/", {"assignee": "bo"})
    # a link that names the assignee shows only what is assigned to bo, and says so
    page = ann.get("/queue/?assignee=bo").content.decode()
    assert f'data-id="{second}"' in page
    assert f'data-id="{first}"' not in page
    assert '<option value="bo" selected>' in page
    # "-": assigned to nobody; the live reload (the rows alone) answers alike
    rows = ann.get("/queue/rows/?assignee=-").content.decode()
    assert f'data-id="{first}"' in rows
    assert f'data-id="{second}"' not in rows
    # the newest first, as the link says
    newest = ann.get("/queue/rows/?sort=newest").content.decode()
    assert newest.index(f'data-id="{second}"') < newest.index(f'data-id="{first}"')
    oldest = ann.get("/queue/rows/?sort=oldest").content.decode()
    assert oldest.index(f'data-id="{first}"') < oldest.index(f'data-id="{second}"')
    # an order the queue does not know is no order at all, never an error
    assert ann.get("/queue/?sort=drop+table").status_code == 200


def test_a_saved_filter_keeps_the_assignee_and_order(
    waiting: Callable[..., int], person: Callable[..., Any]
) -> None:
    ann = login(person("ann", Role.REVIEWER, ZONE_SCOPE))
    response = ann.post(
        "/queue/filters/", {"name": "bo's", "assignee": "bo", "sort": "sufficiency"}
    )
    assert unquote(response["Location"]) == "/queue/?assignee=bo&sort=sufficiency"


# --- 4. and 5. evidence and citations --------------------------------------------------------


def test_a_citation_names_the_document_version_and_paragraph_and_links_to_it(
    waiting: Callable[..., int], policy_doc: Any, person: Callable[..., Any]
) -> None:
    decision_id = waiting()
    ann = login(person("ann", Role.REVIEWER, ZONE_SCOPE))
    page = ann.get(f"/queue/decisions/{decision_id}/").content.decode()
    document = policy_doc.version.document_id
    href = f"/documents/{document}/?version=1#p{policy_doc.number}"
    assert f'<a class="cite" href="{href}"' in page
    link = page.split(f'href="{href}"', 1)[1].split("</a>", 1)[0]
    assert "Travel policy" in link
    assert f"v1 ¶{policy_doc.number}" in link
    # and the document page has the paragraph the link points at
    target = ann.get(f"/documents/{document}/?version=1").content.decode()
    assert f'id="p{policy_doc.number}"' in target


def test_the_periodic_review_shows_the_cited_paragraphs_with_their_text(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    person: Callable[..., Any],
) -> None:
    from decisions.models import PeriodicReview

    # given an answer the gate released, sampled for a look back
    set_policy(tau=0.05, delta=0.02, refusal_floor=0.0)
    body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    decision = Decision.objects.get(pk=body["id"])
    review = PeriodicReview.objects.create(decision=decision, zone=decision.zone, reason="weak")
    ann = login(person("ann", Role.REVIEWER, ZONE_SCOPE))
    # when a reviewer opens it
    page = ann.get(f"/reviews/periodic/{review.pk}/").content.decode()
    # then it shows the claim, the paragraph it cites by title, and that paragraph's text
    evidence = page.split('id="evidence"', 1)[1].split("</section>", 1)[0]
    assert "Travel policy" in evidence
    assert f"¶{policy_doc.number}" in evidence
    assert "500,000 yen require" in evidence
    assert f"#p{policy_doc.number}" in evidence


# --- 6. the reviewer's day -------------------------------------------------------------------


def test_the_queue_header_counts_the_reviewers_day_and_the_zones_progress(
    waiting: Callable[..., int],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    decided = [waiting(GOOD + "." * k) for k in range(2)]
    left = waiting(GOOD + " And more.")
    ann = login(person("ann", Role.REVIEWER, ZONE_SCOPE))
    with django_capture_on_commit_callbacks(execute=True):
        for decision_id in decided:
            ann.post(f"/queue/decisions/{decision_id}/approve/", {"reason": "ok"})
    assert Decision.objects.get(pk=left).state == State.APPROVAL_REQUIRED
    page = ann.get("/queue/").content.decode()
    assert "Today in your zones: 2 of 3 decided" in page
    assert "you: 2 today, 2 this week" in page
    # another reviewer of the zone sees the zone's progress, and none of their own
    bo = login(person("bo", Role.REVIEWER, ZONE_SCOPE)).get("/queue/").content.decode()
    assert "Today in your zones: 2 of 3 decided" in bo
    assert "you: 0 today, 0 this week" in bo


def test_the_week_starts_on_monday_at_midnight_local_time() -> None:
    from datetime import UTC

    from gates.selectors import day_and_week_start

    day, week = day_and_week_start(datetime(2026, 12, 4, 15, 30, tzinfo=UTC))  # a Friday
    assert (day.day, day.hour, week.day, week.weekday()) == (4, 0, 30, 0)
