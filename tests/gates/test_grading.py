"""Gate grading: exact boundaries, monotonicity in tau and what-if counts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gates.grading import (
    GATES,
    STRICTNESS,
    Gate,
    StoredScore,
    final_gate,
    grade,
    whatif,
)

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
confidences = st.lists(unit, max_size=15)


@dataclass(frozen=True)
class Thresholds:
    tau: float
    floor: float
    refusal_floor: float


DEFAULT = Thresholds(tau=0.7, floor=0.3, refusal_floor=0.4)


def _grade(s: float, c: Sequence[float] | np.ndarray, t: Thresholds = DEFAULT) -> str:
    return grade(s, c, t.tau, t.floor, t.refusal_floor)


def test_grade_boundaries_are_exact() -> None:
    strong = [0.9, 0.95]
    assert _grade(0.7, strong) == "auto"  # S == tau is enough
    assert _grade(math.nextafter(0.7, 0.0), strong) == "required"
    assert _grade(0.4, strong) == "required"  # S == refusal_floor is reviewable
    assert _grade(math.nextafter(0.4, 0.0), strong) == "blocked"
    assert _grade(0.0, []) == "blocked"


def test_auto_needs_every_item_at_three_times_the_floor() -> None:
    floor = 0.3
    at_edge = 3 * floor  # computed the same way grade does
    assert _grade(0.8, [0.95, at_edge]) == "auto"
    assert _grade(0.8, [0.95, math.nextafter(at_edge, 0.0)]) == "flagged"
    assert _grade(0.8, np.array([0.95, 0.5])) == "flagged"


def test_weak_items_do_not_matter_below_tau() -> None:
    assert _grade(0.5, [0.31]) == "required"
    assert _grade(0.1, [0.99]) == "blocked"


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ((0.5, [0.9], 0.5, 0.3, 0.6), r"refusal_floor \(0.6\) must not exceed tau \(0.5\)"),
        ((1.5, [0.9], 0.7, 0.3, 0.4), "sufficiency must be a finite number in"),
        ((0.5, [0.9], math.nan, 0.3, 0.4), "tau must be a finite number in"),
        ((0.5, [0.9], 0.7, -0.1, 0.4), "floor must be a finite number in"),
        ((0.5, [0.9], 0.7, 0.3, 1.2), "refusal_floor must be a finite number in"),
        ((0.8, [math.nan], 0.7, 0.3, 0.4), r"^confidence must be finite \(no NaN or infinity\)"),
        ((0.8, [[0.9, 0.8]], 0.7, 0.3, 0.4), r"confidence must be a 1-d sequence, got shape"),
    ],
)
def test_grade_rejects_bad_thresholds_naming_them(
    args: tuple[float, list[float], float, float, float], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        grade(*args)


@st.composite
def thresholds(draw: st.DrawFn) -> Thresholds:
    tau = draw(unit)
    refusal_floor = draw(st.floats(min_value=0.0, max_value=tau))
    floor = draw(unit)
    return Thresholds(tau=tau, floor=floor, refusal_floor=refusal_floor)


@given(unit, confidences, thresholds(), unit)
def test_raising_tau_never_moves_a_decision_to_a_less_strict_gate(
    s: float, c: list[float], t: Thresholds, raised_tau: float
) -> None:
    higher = Thresholds(tau=max(t.tau, raised_tau), floor=t.floor, refusal_floor=t.refusal_floor)
    assert STRICTNESS[_grade(s, c, higher)] >= STRICTNESS[_grade(s, c, t)]


@given(unit, confidences, thresholds())
def test_grade_is_never_auto_or_flagged_below_tau(s: float, c: list[float], t: Thresholds) -> None:
    gate = _grade(s, c, t)
    if s < t.tau:
        assert gate in ("required", "blocked")
    else:
        assert gate in ("auto", "flagged")
    assert (gate == "blocked") == (s < t.refusal_floor)


def _final(
    s: float,
    c: list[float],
    t: Thresholds,
    *,
    contradictions: bool,
    factual: bool,
    at_least: Gate = "auto",
) -> str:
    return final_gate(
        s,
        c,
        t.tau,
        t.floor,
        t.refusal_floor,
        has_contradictions=contradictions,
        has_factual_claims=factual,
        at_least=at_least,
    )


@given(unit, confidences, thresholds())
def test_final_gate_of_a_factual_answer_is_its_grade_but_weak_evidence_refuses_nothing(
    s: float, c: list[float], t: Thresholds
) -> None:
    # Sufficiency below the refusal floor is "I could not tell": a person decides. Only a
    # refuted claim (at_least="blocked", from evidence.validation) refuses an answer.
    graded = _grade(s, c, t)
    expected = "required" if graded == "blocked" else graded
    assert _final(s, c, t, contradictions=False, factual=True) == expected


@given(unit, confidences, thresholds(), st.booleans(), st.booleans())
def test_a_refuted_claim_is_blocked_whatever_the_thresholds(
    s: float, c: list[float], t: Thresholds, contradictions: bool, factual: bool
) -> None:
    gate = _final(s, c, t, contradictions=contradictions, factual=factual, at_least="blocked")
    assert gate == "blocked"


@given(unit, confidences, thresholds(), st.booleans())
def test_an_unverified_claim_is_never_refused_nor_released_alone(
    s: float, c: list[float], t: Thresholds, contradictions: bool
) -> None:
    gate = _final(s, c, t, contradictions=contradictions, factual=True, at_least="required")
    assert gate == "required"


@given(unit, confidences, thresholds())
def test_contradictions_make_a_factual_answer_required(
    s: float, c: list[float], t: Thresholds
) -> None:
    assert _final(s, c, t, contradictions=True, factual=True) == "required"


@given(unit, confidences, thresholds(), st.booleans())
def test_an_answer_without_a_factual_claim_is_flagged_whatever_its_numbers(
    s: float, c: list[float], t: Thresholds, contradictions: bool
) -> None:
    gate = _final(s, c, t, contradictions=contradictions, factual=False)
    assert gate == ("required" if contradictions else "flagged")


def test_final_gate_examples() -> None:
    strong = [0.95, 0.92]
    # No other finding asks for more: a well-supported factual answer is released alone.
    assert (
        final_gate(0.9, strong, 0.7, 0.3, 0.4, has_contradictions=False, has_factual_claims=True)
        == "auto"
    )
    assert _final(0.9, strong, DEFAULT, contradictions=False, factual=True) == "auto"
    assert _final(0.9, strong, DEFAULT, contradictions=True, factual=True) == "required"
    assert _final(0.5, strong, DEFAULT, contradictions=True, factual=True) == "required"
    assert _final(0.1, strong, DEFAULT, contradictions=True, factual=True) == "required"
    assert _final(0.1, strong, DEFAULT, contradictions=False, factual=True) == "required"
    assert _final(0.9, strong, DEFAULT, contradictions=False, factual=True, at_least="blocked") == (
        "blocked"
    )
    # no factual claim: its stored sufficiency 1.0 and no kept items would grade "auto"
    assert _grade(1.0, []) == "auto"
    assert _final(1.0, [], DEFAULT, contradictions=False, factual=False) == "flagged"


reports = st.lists(
    st.builds(
        StoredScore,
        sufficiency=unit,
        confidence=confidences,
        has_contradictions=st.booleans(),
        has_factual_claims=st.booleans(),
        at_least=st.sampled_from(GATES),
    ),
    max_size=30,
)


@given(reports, thresholds(), thresholds())
def test_whatif_counts_sum_to_the_number_of_reports(
    stored: list[StoredScore], old: Thresholds, new: Thresholds
) -> None:
    result = whatif(stored, old, new)
    assert sum(result.old.values()) == len(stored)
    assert sum(result.new.values()) == len(stored)
    assert set(result.old) == set(result.new) == set(GATES)
    # the moves turn the old counts into the new ones
    for gate in GATES:
        leaving = sum(n for (a, _), n in result.moves.items() if a == gate)
        arriving = sum(n for (_, b), n in result.moves.items() if b == gate)
        assert result.old[gate] - leaving + arriving == result.new[gate]
    assert result.changed == result.stricter + result.looser


@given(reports, thresholds())
def test_whatif_under_the_same_thresholds_moves_nothing_and_counts_final_gates(
    stored: list[StoredScore], t: Thresholds
) -> None:
    result = whatif(stored, t, t)
    assert result.moves == {}
    assert result.old == result.new
    for gate in GATES:
        assert result.old[gate] == sum(
            1
            for r in stored
            if _final(
                r.sufficiency,
                list(r.confidence),
                t,
                contradictions=r.has_contradictions,
                factual=r.has_factual_claims,
                at_least=r.at_least,
            )
            == gate
        )


def test_whatif_counts_a_known_set() -> None:
    stored = [
        StoredScore(0.9, [0.95, 0.92]),  # auto -> required under tau 0.95
        StoredScore(0.8, [0.5]),  # flagged -> required
        StoredScore(0.5, [0.9]),  # required -> required
        StoredScore(0.3, [0.9]),  # required -> required (weak evidence refuses nothing)
        StoredScore(0.9, [0.95], at_least="blocked"),  # a refuted claim: blocked -> blocked
    ]
    result = whatif(stored, DEFAULT, Thresholds(tau=0.95, floor=0.3, refusal_floor=0.2))
    assert result.old == {"auto": 1, "flagged": 1, "required": 2, "blocked": 1}
    assert result.new == {"auto": 0, "flagged": 0, "required": 4, "blocked": 1}
    assert result.moves == {
        ("auto", "required"): 1,
        ("flagged", "required"): 1,
    }
    assert (result.stricter, result.looser) == (2, 0)


def test_whatif_applies_the_live_rules_for_contradictions_and_claimless_answers() -> None:
    stored = [
        StoredScore(0.9, [0.95], has_contradictions=True),  # required -> required
        StoredScore(0.3, [0.95], has_contradictions=True),  # required -> required
        StoredScore(1.0, [], has_factual_claims=False),  # flagged -> flagged
        StoredScore(0.9, [0.95], has_factual_claims=False, at_least="blocked"),  # blocked
    ]
    result = whatif(stored, DEFAULT, Thresholds(tau=0.95, floor=0.3, refusal_floor=0.2))
    assert result.old == {"auto": 0, "flagged": 1, "required": 2, "blocked": 1}
    assert result.new == result.old
    assert result.moves == {}
