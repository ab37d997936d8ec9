"""Issue 29, the rest (7, 9, 11 and what the last session noticed): the decision page says
what was asked and what was given in words a reviewer reads, the auditor sees the trail's
checkpoints, and the reviewer's pages count, keep and say what happened."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role
from evidence.demo import FOLDER as DEMO_DOCUMENTS
from tests.decisions.conftest import cite
from tests.decisions.test_periodic_review import clock, flag

__all__ = ["clock", "flag"]  # fixtures of the periodic review tests

pytestmark = pytest.mark.django_db

# The README's curl example: the answer names the division head, who approves it.
TRIP = "Who approves a 700,000 yen business trip?"
HEAD = "Any expense over 500,000 yen needs the division head approval in advance."
DEMO_POLICY = DEMO_DOCUMENTS / "expense-policy.md"


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_answer_naming_who_approves_gives_what_a_who_question_asks(
    ingest: Callable[..., Any],
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    person: Callable[..., Any],
) -> None:
    # given the demo's expense policy, one sentence a paragraph, and the README's question
    # answered with the role it names
    from evidence.models import Paragraph

    ingest(DEMO_POLICY.read_text(encoding="utf-8"), title="Expense policy", key="expense")
    approval = Paragraph.objects.get(text__contains="by the division head", current=True)
    set_policy(tau=0.99, refusal_floor=0.0)
    body = submit(
        [{"text": HEAD, "citations": [cite(approval)]}], question=TRIP, answer=HEAD
    ).json()
    # when a reviewer opens its page
    page = login(person("ann", Role.REVIEWER, "G1.U1.P1")).get(f"/queue/decisions/{body['id']}/")
    html = page.content.decode()
    table = html.split('id="asked-given"', 1)[1].split("</table>", 1)[0]
    # then the asked item is the role the question asks for, in the question's own words,
    # and the answer naming the division head gives it
    assert "a person or role (Who approves a 700,000 yen business trip)" in table
    assert 'class="ok"' in table
    assert 'class="bad"' not in table
    assert "given by claim 1, which names division head" in table
    assert "not given" not in table
    # and the sentence under it reads as one, not as a list of the question's tokens
    said = html.split("</table>", 1)[1].split("</p>", 1)[0]
    assert "the answer addresses the question: a person or role (Who approves" in said
    assert "approves, 700 000 yen" not in html


def test_an_answer_naming_a_role_for_another_act_does_not_give_it() -> None:
    from evidence.questions import addresses

    # a role, but for another act: the question is not answered
    other = addresses(TRIP, ["The division head approves leave requests."])
    assert other.mode == "off_topic"
    assert other.reason == (
        "the question asks for a person or role (Who approves a 700,000 yen business trip); "
        "the answer gives division head (about leave, requests)"
    )
    # in Japanese, the role that approves answers 誰が承認しますか
    ja = addresses("出張の申請は誰が承認しますか？", ["出張の申請は部長の承認が必要です。"])
    assert ja.mode == "full", ja


def test_the_thresholds_form_says_its_error_at_the_top_and_takes_the_focus_there(
    org: Any, person: Callable[..., Any]
) -> None:
    # given a zone admin who saves a threshold without the reason the last field asks for
    admin = login(person("zed", Role.ZONE_ADMIN, "G1.U1.P1"))
    html = admin.post("/zones/G1.U1.P1.Z1/", {"approvals_required": "9"}).content.decode()
    # then the form opens with what is wrong, each problem linked to its field, in focus
    form = html.split('id="policy-form"', 1)[1]
    summary = form.split('id="policy-errors"', 1)[1].split("</div>", 1)[0]
    assert form.index('id="policy-errors"') < form.index('<table class="form">')
    assert " autofocus>" in summary
    assert 'href="#id_approvals_required">approvals_required</a>: ' in summary
    assert "approvals_required must be 1 to 5, got 9" in summary


def test_periodic_wrong_without_a_note_keeps_the_choice_and_names_the_note(
    flag: Callable[..., Any], person: Callable[..., Any]
) -> None:
    from decisions.models import PeriodicReview

    # given a flagged answer sampled for a look back, and a reviewer of its zone
    decision = flag(rate=1.0)
    review = PeriodicReview.objects.get(decision=decision)
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    # when she says it was wrong and gives no note
    page = ann.post(f"/reviews/periodic/{review.pk}/close/", {"verdict": "wrong", "note": " "})
    html = page.content.decode()
    # then the page comes back with "wrong" still chosen and the note field named, in focus
    assert page.status_code == 400
    assert 'value="wrong" id="verdict-wrong" required checked>' in html
    assert 'value="ok" id="verdict-ok" required>' in html
    error = html.split('id="close-error"', 1)[1].split("</p>", 1)[0]
    assert "Note: a note is required when the verdict is wrong" in error
    note = html.split('<textarea name="note" id="note"', 1)[1].split(">", 1)[0]
    assert 'aria-invalid="true"' in note
    assert "autofocus" in note
    review.refresh_from_db()
    assert not review.verdict


def test_the_decision_page_is_never_kept_by_the_browser(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    # back after approving showed the live buttons of a page the browser had kept
    decision_id = queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    page = ann.get(f"/queue/decisions/{decision_id}/")
    assert "no-store" in page["Cache-Control"]


def test_the_queue_reason_counts_unverified_claims_instead_of_quoting_one() -> None:
    from evidence import reasons as why
    from gates.presenters import gate_reason

    claim = "Business class flights are always allowed for the division head " * 6
    held = [
        why.say(why.CLAIM_UNVERIFIED, claim=claim),
        why.say(why.CLAIM_UNVERIFIED, claim="Another claim."),
        why.say(why.CLAIM_REFUTED, claim="A third."),
    ]
    said = gate_reason("required", 0.9, 0.5, held_for=held)
    assert said == ("1 claim is refuted by its evidence (and 1 more finding)"), said
    said = gate_reason("required", 0.9, 0.5, held_for=held[:2])
    assert said == "2 claims are not verified by their evidence"
    assert "Business class" not in said
