"""What a bundle must hold (seed 000 §2.3, §4.3, issue 30): completeness counted against
the evidence the question asks for (the zone's one number kept as an option), and source
diversity for high-stakes zones: an answer resting on one document is at least flagged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from coordinates.models import Role
from decisions.models import Decision, State
from evidence.models import Paragraph
from tests.decisions.conftest import GOOD, cite

pytestmark = pytest.mark.django_db

ASKED = "Who approves travel expenses above 500,000 yen?"  # one part: a simple lookup
MEMO = "# Approvals\n\nExpenses above 500,000 yen require prior approval by the division head."


def _decision(done: Any) -> Any:
    """The submitted decision, validated: its report is there."""
    decision = Decision.objects.select_related("report").get(pk=done.response.json()["id"])
    assert decision.report is not None
    return decision


def test_completeness_counts_against_what_the_question_asks_for(
    policy_doc: Paragraph, submit: Callable[..., Any]
) -> None:
    # given a simple question, answered with two kept items (the paper: 1-2 needed)
    decision = _decision(
        submit([{"text": GOOD, "citations": [cite(policy_doc), cite(policy_doc)]}], question=ASKED)
    )
    score = decision.report.body["score"]
    kept = [c for c, k in zip(score["confidence"], score["kept"], strict=True) if k]
    # then it is complete up to its mean confidence: two of the two it needs
    assert score["required_evidence"] == 2
    assert len(kept) == 2
    assert decision.completeness == pytest.approx(sum(kept) / 2)


def test_a_zone_may_keep_one_number_for_every_question(
    policy_doc: Paragraph, submit: Callable[..., Any], set_policy: Callable[..., Any]
) -> None:
    set_policy(required_evidence=4)
    decision = _decision(
        submit([{"text": GOOD, "citations": [cite(policy_doc), cite(policy_doc)]}], question=ASKED)
    )
    score = decision.report.body["score"]
    kept = [c for c, k in zip(score["confidence"], score["kept"], strict=True) if k]
    assert score["required_evidence"] == 4
    assert decision.completeness == pytest.approx(2 / 4 * sum(kept) / 2)


def test_a_high_stakes_answer_resting_on_one_document_is_flagged_with_the_reason(
    policy_doc: Paragraph, submit: Callable[..., Any], set_policy: Callable[..., Any]
) -> None:
    # given a zone that asks its answers to rest on two documents
    set_policy(min_sources=2)
    # when an answer cites one document (twice)
    decision = _decision(
        submit([{"text": GOOD, "citations": [cite(policy_doc), cite(policy_doc)]}], question=ASKED)
    )
    # then it is not released unseen: flagged (or stricter), saying why
    assert decision.gate != "auto"
    reasons = decision.report.body["at_least"]["reasons"]
    assert any("comes from 1 document(s)" in r and "at least 2" in r for r in reasons), reasons


def test_the_same_answer_on_two_documents_is_not_held_for_diversity(
    policy_doc: Paragraph,
    submit: Callable[..., Any],
    set_policy: Callable[..., Any],
    ingest: Callable[..., Any],
) -> None:
    set_policy(min_sources=2)
    ingest(MEMO, title="Approval memo", key="memo", kind="policy")
    other = Paragraph.objects.get(text__startswith="Expenses above", version__document__key="memo")
    decision = _decision(
        submit([{"text": GOOD, "citations": [cite(policy_doc), cite(other)]}], question=ASKED)
    )
    reasons = decision.report.body["at_least"]["reasons"]
    assert not any("document(s)" in r for r in reasons), reasons


def test_a_zone_without_the_requirement_releases_a_one_document_answer(
    policy_doc: Paragraph, submit: Callable[..., Any]
) -> None:
    decision = _decision(submit([{"text": GOOD, "citations": [cite(policy_doc)]}], question=ASKED))
    assert not any("document(s)" in r for r in decision.report.body["at_least"]["reasons"])


def test_the_kpis_give_the_mean_completeness_of_accepted_answers(
    policy_doc: Paragraph,
    submit: Callable[..., Any],
    person: Callable[..., Any],
    set_policy: Callable[..., Any],
) -> None:
    # given two released answers and one a person must still decide
    set_policy(required_evidence=4)
    for citations in ([cite(policy_doc)], [cite(policy_doc)] * 3):
        submit([{"text": GOOD, "citations": citations}], question=ASKED)
    submit(
        [{"text": "Business class flights are always allowed.", "citations": [cite(policy_doc)]}],
        question=ASKED,
    )
    accepted = Decision.objects.filter(state__in=[State.APPROVED, State.EXECUTED, State.COMPLETED])
    assert accepted.count() == 2
    assert Decision.objects.count() == 3
    want = sum(d.completeness for d in accepted) / 2
    # when a zone admin reads the KPIs
    client = APIClient()
    client.force_authenticate(user=person("zed", Role.ZONE_ADMIN, "G1.U1.P1.Z1"))
    body = client.get("/api/v1/zones/G1.U1.P1.Z1/kpis/").json()
    # then the completeness of accepted answers is their mean (the waiting one left out)
    assert body["completeness_of_accepted"] == pytest.approx(want)
    assert 0 < body["completeness_of_accepted"] < 1
