"""The what-if replays stored reports by the live pipeline's rules: replayed under the policy
they were judged by, real reports get exactly their stored gate back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from coordinates.coordinate import parse
from coordinates.selectors import effective_policy, zone_get
from coordinates.services import policy_update, token_issue
from decisions import services
from decisions.models import Decision
from evidence.models import Paragraph
from gates.grading import GATES, Gate, StoredScore, WhatIf, grade
from gates.presenters import gate_rows
from gates.selectors import zone_whatif
from gates.whatif import ZoneReplay, stored_score, whatif_zones
from tests.samples import CONTRACT_JA, POLICY_EN

ZONE = "G1.U1.P1.Z1"
AGENT = "G1.U1.P1.Z1.A1"
GOOD = "Expenses above 500,000 yen require prior approval by the division head."
MEMO = "Expense memo\n\nExpenses above 800,000 yen require prior approval by the division head.\n"


def _counts(**given: int) -> dict[Gate, int]:
    return {gate: given.get(gate, 0) for gate in GATES}


# --- pure ----------------------------------------------------------------------------------


def test_stored_score_reads_the_facts_the_gate_depended_on() -> None:
    factual = stored_score(
        sufficiency=0.8, kept_confidence=[0.9], claim_sufficiency=[0.8], contradictions=[]
    )
    assert factual == StoredScore(0.8, [0.9], has_contradictions=False, has_factual_claims=True)
    # a report without any factual claim has no claim sufficiencies; old bodies may lack keys
    silent = stored_score(
        sufficiency=1.0, kept_confidence=None, claim_sufficiency=[], contradictions=None
    )
    assert silent == StoredScore(1.0, [], has_contradictions=False, has_factual_claims=False)
    disputed = stored_score(
        sufficiency=0.9,
        kept_confidence=[0.95, 0.9],
        claim_sufficiency=[0.9],
        contradictions=[{"claim": 0}],
    )
    assert disputed.has_contradictions


def test_whatif_zones_adds_up_each_zone_under_its_own_policies() -> None:
    # given two zones, one whose reports move under the new tau and one without a factual claim
    class Values:
        def __init__(self, tau: float) -> None:
            self.tau, self.floor, self.refusal_floor = tau, 0.1, 0.05

    moving = ZoneReplay(
        zone="G1.U1.P1.Z1",
        reports=[StoredScore(0.8, [0.9]), StoredScore(0.8, [0.9], has_contradictions=True)],
        old=Values(0.7),
        new=Values(0.9),
    )
    silent = ZoneReplay(
        zone="G1.U1.P1.Z2",
        reports=[StoredScore(1.0, [], has_factual_claims=False)],
        old=Values(0.7),
        new=Values(0.9),
    )
    # when they are replayed together
    result = whatif_zones([moving, silent])
    # then only the clean factual report moves; the contradicted one was already required
    assert result == WhatIf(
        old=_counts(auto=1, flagged=1, required=1),
        new=_counts(flagged=1, required=2),
        moves={("auto", "required"): 1},
    )
    assert gate_rows(result)[0] == ("auto", 1, 0, -1)


# --- against reports the live pipeline stored ----------------------------------------------


@pytest.fixture
def paragraphs(ingest: Callable[..., Any]) -> dict[str, Paragraph]:
    ingest(POLICY_EN, title="Travel policy", key="travel")
    ingest(MEMO, title="Old memo", key="memo", kind="memo")
    ingest(CONTRACT_JA, title="業務委託契約書", key="contract", kind="contract")

    def find(text: str) -> Paragraph:
        return Paragraph.objects.get(text__contains=text, current=True)

    return {
        "approval": find("500,000 yen require"),
        "memo": find("800,000 yen require"),
        "reimbursed": find("reimbursed within 30 days"),
        "scope": find("applies to all employees"),
        "fee": find("月額120万円"),
    }


def _cite(paragraph: Paragraph, **extra: Any) -> dict[str, Any]:
    return {"document": paragraph.version.document_id, "paragraph": paragraph.number, **extra}


CLAIMS: dict[str, Callable[[dict[str, Paragraph]], dict[str, Any]]] = {
    "supported": lambda p: {"text": GOOD, "citations": [_cite(p["approval"])]},
    "contradicted": lambda p: {
        "text": GOOD,
        "citations": [_cite(p["approval"]), _cite(p["memo"])],
    },
    "wrong number": lambda p: {
        "text": GOOD.replace("500,000", "300,000"),
        "citations": [_cite(p["approval"])],
    },
    "weak citation": lambda p: {"text": GOOD, "citations": [_cite(p["scope"])]},
    "reimbursement": lambda p: {
        "text": "Approved expenses are reimbursed within 30 days of submission.",
        "citations": [_cite(p["reimbursed"]), _cite(p["approval"])],
    },
    "japanese": lambda p: {
        "text": "甲は乙に対し、委託料として月額120万円を支払う。",
        "citations": [_cite(p["fee"])],
    },
    "uncited": lambda p: {"text": "Business class flights are always allowed.", "citations": []},
    "fabricated": lambda p: {
        "text": GOOD,
        "citations": [{"document": p["approval"].version.document_id, "paragraph": 999}],
    },
    "meta": lambda p: {"text": "Here is a summary of the policy.", "citations": []},
    "opinion": lambda p: {"text": "I think this policy is sensible.", "citations": []},
}


def _decide(paragraphs: dict[str, Paragraph], kinds: list[str], key: str) -> Decision:
    """Submit and validate through the real services (validation run inline)."""
    token, _ = token_issue(agent=parse(AGENT))
    claims = [CLAIMS[kind](paragraphs) for kind in kinds]
    submitted = services.decision_submit(
        token=token,
        payload={
            "question": "Who approves travel expenses above 500,000 yen?",
            "answer": " ".join(c["text"] for c in claims),
            "zone": ZONE,
            "agent": AGENT,
            "claims": claims,
        },
        idempotency_key=key,
    )
    decision = submitted.decision
    return services.decision_validate(
        decision_id=decision.pk, bundle_hash=decision.bundle.content_hash
    )


def _set_policy(**overrides: Any) -> None:
    policy_update(zone=zone_get(parse(ZONE)), overrides=overrides, reason="test", actor=None)


def _replay_same_policy() -> WhatIf:
    zone = zone_get(parse(ZONE))
    return zone_whatif(zone, effective_policy(zone.coord).own)


@st.composite
def thresholds(draw: st.DrawFn) -> dict[str, float]:
    """Any valid (tau, delta, floor, refusal_floor) of a zone (coordinates.policy)."""
    tau = draw(st.floats(0.05, 0.99))
    return {
        "tau": tau,
        "delta": min(0.1, tau / 2),
        "refusal_floor": draw(st.floats(0.0, 1.0)) * tau,
        "floor": draw(st.floats(0.0, 1 / 3)),
    }


@pytest.mark.django_db
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    kinds=st.lists(st.sampled_from(sorted(CLAIMS)), min_size=1, max_size=4),
    policy=thresholds(),
)
def test_replaying_a_stored_report_under_its_own_policy_gives_its_stored_gate(
    paragraphs: dict[str, Paragraph], kinds: list[str], policy: dict[str, float]
) -> None:
    # Each example runs in a savepoint that is rolled back, so the zone holds one decision.
    with transaction.atomic():
        # given one decision judged by the live pipeline under a random policy
        _set_policy(**policy)
        decision = _decide(paragraphs, kinds, key="property")
        assert decision.report is not None
        event(f"gate {decision.report.gate}")
        event(f"contradicted {bool(decision.report.body['contradictions'])}")
        # when the what-if replays the zone under the same policy
        result = _replay_same_policy()
        # then it finds exactly the stored gate, before and after, and nothing moves
        stored = _counts(**{decision.report.gate: 1})
        assert result.old == stored
        assert result.new == stored
        assert result.moves == {}
        transaction.set_rollback(True)


@pytest.mark.django_db
def test_a_contradicted_report_stays_with_a_person_in_the_whatif(
    paragraphs: dict[str, Paragraph],
) -> None:
    # given a low tau that the evidence clears, and a claim whose two citations disagree
    _set_policy(tau=0.2, delta=0.05, refusal_floor=0.05, floor=0.05)
    decision = _decide(paragraphs, ["contradicted"], key="contradicted")
    report = decision.report
    assert report is not None
    assert report.body["contradictions"]
    kept = report.body["score"]["kept_confidence"]
    assert grade(report.sufficiency, kept, 0.2, 0.05, 0.05) in ("auto", "flagged")
    assert report.gate == "required"  # the contradiction alone sent it to a person
    # when the admin previews the same policy, and an even looser one
    same = _replay_same_policy()
    looser = zone_whatif(
        zone_get(parse(ZONE)), {"tau": 0.1, "delta": 0.05, "refusal_floor": 0.0, "floor": 0.0}
    )
    # then the replay keeps it required, as the live pipeline would
    assert same.old == same.new == _counts(required=1)
    assert looser.new == _counts(required=1)
    # and a refusal floor above its sufficiency sends it to a person, never refuses it:
    # nothing in it is refuted
    strict = zone_whatif(zone_get(parse(ZONE)), {"tau": 1.0, "refusal_floor": 1.0})
    assert report.sufficiency < 1.0
    assert strict.new == _counts(required=1)


@pytest.mark.django_db
def test_a_report_without_a_factual_claim_is_flagged_under_any_thresholds(
    paragraphs: dict[str, Paragraph],
) -> None:
    # given an answer that asserts no fact: it passed, flagged for the periodic review
    decision = _decide(paragraphs, ["meta", "opinion"], key="silent")
    assert decision.report is not None
    assert decision.report.gate == "flagged"
    assert decision.report.body["score"]["kept_confidence"] == []  # grade alone: "auto"
    # when the admin previews the same policy, a strict one and a loose one
    zone = zone_get(parse(ZONE))
    same = _replay_same_policy()
    strict = zone_whatif(zone, {"tau": 0.99, "refusal_floor": 0.99})
    loose = zone_whatif(zone, {"tau": 0.1, "delta": 0.05, "refusal_floor": 0.0, "floor": 0.0})
    # then it is flagged in every column: its numbers were never what gated it
    for result in (same, strict, loose):
        assert result.old == result.new == _counts(flagged=1)
        assert result.moves == {}


@pytest.mark.django_db
def test_whatif_counts_a_mixed_zone_as_the_pipeline_gated_it(
    paragraphs: dict[str, Paragraph],
) -> None:
    # given several decisions of every kind under the default policy
    batches = [["supported"], ["contradicted"], ["meta"], ["wrong number"], ["uncited", "meta"]]
    decisions = [_decide(paragraphs, kinds, key=f"mixed-{n}") for n, kinds in enumerate(batches)]
    # when the admin previews the current policy
    result = _replay_same_policy()
    # then each gate's count is what the pipeline stored
    stored = Counter(d.report.gate for d in decisions if d.report is not None)
    assert result.old == result.new == _counts(**stored)
