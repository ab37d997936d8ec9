"""The bundle math: properties of sufficiency, completeness and cohesion, the worked
numbers of docs/math.md, and the aggregate score_bundle."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import sparse

from evidence.scoring import (
    KIND_AUTHORITY,
    STATUS_AUTHORITY,
    SUPERSEDED_RECENCY_FACTOR,
    BundlePolicy,
    ClaimSignals,
    above_floor,
    answer_mode,
    authority,
    bundle_completeness,
    check_weights,
    cohesion,
    cohesion_adjusted,
    cohesion_weighted_confidence,
    contradiction_pairs,
    distinct_sources,
    document_age_days,
    hallucination_bundled,
    item_confidence,
    lacks_diversity,
    recency,
    refusal_break_even,
    refusal_economics,
    required_evidence,
    responds,
    score_bundle,
    sufficiency,
    sufficiency_of_claims,
    trust,
)

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
unit_lists = st.lists(unit, min_size=1, max_size=20)


@st.composite
def bundles(draw: st.DrawFn, min_size: int = 1) -> tuple[list[float], list[float]]:
    n = draw(st.integers(min_value=min_size, max_value=20))
    c = draw(st.lists(unit, min_size=n, max_size=n))
    r = draw(st.lists(unit, min_size=n, max_size=n))
    return c, r


# --- sufficiency -----------------------------------------------------------------------


@given(bundles())
def test_sufficiency_is_bounded_in_unit_interval(bundle: tuple[list[float], list[float]]) -> None:
    c, r = bundle
    assert 0.0 <= sufficiency(c, r) <= 1.0


def test_sufficiency_of_empty_bundle_is_zero() -> None:
    assert sufficiency([], []) == 0.0


@given(bundles(), st.data())
def test_sufficiency_never_drops_when_one_confidence_or_relevance_rises(
    bundle: tuple[list[float], list[float]], data: st.DataObject
) -> None:
    c, r = bundle
    j = data.draw(st.integers(min_value=0, max_value=len(c) - 1))
    before = sufficiency(c, r)
    c_up = list(c)
    c_up[j] = data.draw(st.floats(min_value=c[j], max_value=1.0))
    r_up = list(r)
    r_up[j] = data.draw(st.floats(min_value=r[j], max_value=1.0))
    assert sufficiency(c_up, r) >= before
    assert sufficiency(c, r_up) >= before


@given(bundles(), unit, unit)
def test_adding_an_item_weaker_than_the_mean_lowers_sufficiency(
    bundle: tuple[list[float], list[float]], c_new: float, r_new: float
) -> None:
    c, r = bundle
    before = sufficiency(c, r)
    # "weaker than the current mean" in the sense the mean is taken over: c*r
    assume(c_new * r_new < before - 1e-12)
    assert sufficiency([*c, c_new], [*r, r_new]) < before


def test_sufficiency_matches_the_mean_of_products() -> None:
    assert sufficiency([0.9, 0.6], [1.0, 0.5]) == pytest.approx((0.9 + 0.3) / 2)


@pytest.mark.parametrize(
    ("confidence", "relevance", "problem"),
    [
        ([0.5, 0.5], [0.5], "same length"),
        ([0.5, math.nan], [0.5, 0.5], "confidence must be finite"),
        ([0.5], [math.inf], "relevance must be finite"),
        ([1.2], [0.5], r"confidence must lie in \[0, 1\]"),
        ([0.5], [-0.1], r"relevance must lie in \[0, 1\]"),
        ([[0.5]], [[0.5]], "1-d"),
    ],
)
def test_sufficiency_rejects_bad_input_naming_the_problem(
    confidence: list[float], relevance: list[float], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        sufficiency(confidence, relevance)


@given(st.lists(unit, max_size=10))
def test_min_over_claims_is_never_above_any_claim(per_claim: list[float]) -> None:
    overall = sufficiency_of_claims(per_claim)
    assert all(overall <= s for s in per_claim)
    if per_claim:
        assert overall in per_claim


def test_no_claims_means_zero_sufficiency() -> None:
    assert sufficiency_of_claims([]) == 0.0


# --- completeness and the hallucination model -----------------------------------------


@given(st.integers(min_value=0, max_value=50), st.integers(min_value=1, max_value=20), unit_lists)
def test_completeness_is_in_unit_interval_and_monotone_in_item_count(
    n_items: int, required: int, confidence: list[float]
) -> None:
    now = bundle_completeness(n_items, required, confidence)
    more = bundle_completeness(n_items + 1, required, confidence)
    assert 0.0 <= now <= 1.0
    assert more >= now


def test_completeness_caps_the_count_ratio_at_one() -> None:
    # docs/math.md §3: 20 items with average confidence 0.4 score 0.4, no more
    assert bundle_completeness(20, 4, [0.4] * 20) == pytest.approx(0.4)


def test_completeness_rejects_required_evidence_below_one() -> None:
    with pytest.raises(ValueError, match="required evidence"):
        bundle_completeness(3, 0, [0.5])


def test_paper_worked_example_average_082_gives_427_percent() -> None:
    # docs/math.md §3 (the paper's example): |B| = 5, RequiredEvidence = 4, AvgConfidence = 0.82
    bc = bundle_completeness(5, 4, [0.82] * 5)
    assert bc == pytest.approx(0.82)
    h = hallucination_bundled(0.237, bc)
    assert h == pytest.approx(0.237 * 0.18)
    assert h == pytest.approx(0.0427, abs=5e-5)  # the paper prints 4.27%


def test_paper_worked_example_average_0865_gives_32_percent() -> None:
    bc = bundle_completeness(5, 4, [0.865] * 5)
    h = hallucination_bundled(0.237, bc)
    # 0.237 * 0.135 = 0.0320 ; the paper rounds to one decimal of a percent: 3.2%
    assert h == pytest.approx(0.032, abs=5e-4)


def test_hallucination_is_raw_rate_without_evidence_and_zero_with_complete_evidence() -> None:
    assert hallucination_bundled(0.237, 0.0) == pytest.approx(0.237)
    assert hallucination_bundled(0.237, 1.0) == 0.0


# --- item confidence signals ----------------------------------------------------------


def test_item_confidence_is_the_weighted_sum_of_signals() -> None:
    c = item_confidence([1.0, 0.5], [0.5, 0.5], [0.0, 1.0], [1.0, 0.0], (0.4, 0.3, 0.1, 0.2))
    assert c == pytest.approx([0.4 + 0.15 + 0.0 + 0.2, 0.2 + 0.15 + 0.1 + 0.0])


@pytest.mark.parametrize("weights", [(0.4, 0.3, 0.2, 0.2), (0.5, 0.5, 0.0, 0.1), (1.0, 0.0, 0.0)])
def test_weights_must_be_four_and_sum_to_one(weights: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match=r"weights \(w1, w2, w3, w4\)"):
        check_weights(weights)


def test_weights_within_tolerance_are_accepted() -> None:
    assert check_weights((0.4, 0.3, 0.15, 0.15 + 5e-7)) == (0.4, 0.3, 0.15, 0.15 + 5e-7)


def test_item_confidence_rejects_signals_of_different_lengths() -> None:
    with pytest.raises(ValueError, match="same length"):
        item_confidence([0.5], [0.5, 0.5], [0.5], [0.5], (0.25, 0.25, 0.25, 0.25))


def test_recency_halves_each_half_life_and_superseded_versions_score_low() -> None:
    assert recency(0.0) == 1.0
    assert recency(365.0) == pytest.approx(0.5)
    assert recency(730.0, half_life_days=730.0) == pytest.approx(0.5)
    assert recency(0.0, superseded=True) == pytest.approx(SUPERSEDED_RECENCY_FACTOR)
    assert recency(-10.0) == 1.0  # post-dated counts as new, never above 1


def test_document_age_needs_aware_datetimes() -> None:
    as_of = datetime(2025, 1, 31, tzinfo=UTC)
    assert document_age_days(as_of - timedelta(days=30), as_of) == pytest.approx(30.0)
    with pytest.raises(ValueError, match="timezone-aware"):
        document_age_days(datetime(2025, 1, 1), as_of)  # noqa: DTZ001 - the naive case


def test_authority_follows_kind_then_status_order() -> None:
    kinds = ["policy", "contract", "report", "minutes", "memo", "email"]
    statuses = ["approved", "draft", "archived"]
    assert set(kinds) == set(KIND_AUTHORITY)
    assert set(statuses) == set(STATUS_AUTHORITY)
    for status in statuses:
        by_kind = [authority(kind, status) for kind in kinds]
        assert by_kind == sorted(by_kind, reverse=True)
        assert len(set(by_kind)) == len(by_kind)
    for kind in kinds:
        by_status = [authority(kind, status) for status in statuses]
        assert by_status == sorted(by_status, reverse=True)
        assert len(set(by_status)) == len(by_status)
    assert authority("policy", "approved") == 1.0


def test_authority_rejects_unknown_kind_and_status() -> None:
    with pytest.raises(ValueError, match="unknown document kind 'tweet'"):
        authority("tweet", "approved")
    with pytest.raises(ValueError, match="unknown document status 'secret'"):
        authority("memo", "secret")


def test_floor_keeps_items_at_or_above_it() -> None:
    assert above_floor([0.1, 0.3, 0.29999, 0.9], 0.3).tolist() == [False, True, False, True]


# --- cohesion -------------------------------------------------------------------------


def test_cohesion_of_the_empty_set_and_a_single_item_is_zero() -> None:
    assert cohesion(np.zeros((0, 0))) == 0.0
    assert cohesion(np.array([[1.0]])) == 0.0


def test_cohesion_ignores_the_diagonal() -> None:
    disconnected = np.eye(4)
    assert cohesion(disconnected) == 0.0
    full = np.ones((4, 4))
    assert cohesion(full) == pytest.approx(12 / 16)


@given(st.integers(min_value=1, max_value=8), st.data())
def test_cohesion_matches_a_brute_force_double_sum(n: int, data: st.DataObject) -> None:
    values = data.draw(
        st.lists(st.floats(min_value=-1, max_value=1), min_size=n * n, max_size=n * n)
    )
    a = np.array(values).reshape(n, n)
    brute = sum(a[i, j] for i in range(n) for j in range(n) if i != j) / n**2
    assert cohesion(a) == pytest.approx(brute, abs=1e-12)
    assert cohesion(sparse.csr_array(a)) == pytest.approx(brute, abs=1e-12)
    assert -1.0 <= cohesion(a) <= 1.0


def test_cohesion_rejects_non_square_and_non_finite() -> None:
    with pytest.raises(ValueError, match="square"):
        cohesion(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="finite"):
        cohesion(np.array([[0.0, math.nan], [0.0, 0.0]]))


@given(unit, st.floats(min_value=-5, max_value=5))
def test_cohesion_adjustment_never_raises_sufficiency_nor_leaves_unit_interval(
    s: float, c: float
) -> None:
    adjusted = cohesion_adjusted(s, c)
    assert 0.0 <= adjusted <= s


def test_cohesion_adjustment_halves_disconnected_and_keeps_fully_connected() -> None:
    assert cohesion_adjusted(0.8, 0.0) == pytest.approx(0.4)
    assert cohesion_adjusted(0.8, 1.0) == pytest.approx(0.8)
    assert cohesion_adjusted(0.8, -1.0) == 0.0


def test_cohesion_weighted_confidence_reinforces_corroborated_items_only() -> None:
    c = np.array([0.5, 0.6, 0.4])
    a = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    boosted = cohesion_weighted_confidence(c, a, 0.1)
    assert boosted == pytest.approx([0.5 + 0.1 * 0.6, 0.6 + 0.1 * 0.5, 0.4])


@given(st.integers(min_value=1, max_value=6), st.data())
def test_cohesion_weighted_confidence_matches_the_loop_and_stays_in_unit_interval(
    n: int, data: st.DataObject
) -> None:
    c = np.array(data.draw(st.lists(unit, min_size=n, max_size=n)))
    a = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=n * n, max_size=n * n))).reshape(
        n, n
    )
    delta = data.draw(st.floats(0.0, 0.5))
    expected = [
        min(1.0, max(0.0, c[j] + delta * sum(a[j, k] * c[k] for k in range(n) if k != j)))
        for j in range(n)
    ]
    assert cohesion_weighted_confidence(c, a, delta) == pytest.approx(expected, abs=1e-12)


def test_contradictions_need_a_negative_relation_and_two_confident_items() -> None:
    a = np.zeros((4, 4))
    a[0, 1] = a[1, 0] = -1.0  # both confident: a contradiction
    a[2, 3] = -0.5  # one direction only, but item 3 is weak
    a[0, 2] = -0.2  # recorded in one direction: still counts
    c = [0.9, 0.8, 0.95, 0.4]
    assert contradiction_pairs(a, c, 0.6) == [(0, 1), (0, 2)]
    assert contradiction_pairs(a, c, 0.3) == [(0, 1), (0, 2), (2, 3)]


# --- answer mode ----------------------------------------------------------------------


@given(st.floats(min_value=0.2, max_value=1.0), st.floats(min_value=0.001, max_value=0.1))
def test_answer_mode_boundaries_are_exact(tau: float, delta: float) -> None:
    def just_below(x: float) -> float:
        return float(np.nextafter(x, -np.inf))

    assert answer_mode(tau, tau, delta) == "full"
    assert answer_mode(just_below(tau), tau, delta) == "hedged"
    assert answer_mode(tau - delta, tau, delta) == "hedged"
    assert answer_mode(just_below(tau - delta), tau, delta) == "partial"
    assert answer_mode(tau - 2 * delta, tau, delta) == "partial"
    if tau - 2 * delta > 0.0:  # otherwise nothing in [0, 1] lies below the partial band
        assert answer_mode(just_below(tau - 2 * delta), tau, delta) == "refusal"


def test_answer_mode_with_zero_delta_is_full_or_refusal() -> None:
    assert answer_mode(0.7, 0.7, 0.0) == "full"
    assert answer_mode(0.6999, 0.7, 0.0) == "refusal"


def test_answer_mode_bands_with_the_default_policy() -> None:
    assert [answer_mode(s, 0.7, 0.1) for s in (0.95, 0.65, 0.55, 0.2, 0.0)] == [
        "full",
        "hedged",
        "partial",
        "refusal",
        "refusal",
    ]


def test_answer_mode_rejects_out_of_range_sufficiency() -> None:
    with pytest.raises(ValueError, match="sufficiency"):
        answer_mode(1.5, 0.7, 0.1)


# --- economics and trust: the paper's numbers -----------------------------------------


# The paper's section 8.4 enterprise figures, read from the paper (seed 000): a hallucination
# that escapes costs 2,400, a requery 0.50, an abandoned query 5.00, and 71% of refused
# askers requery.
PAPER_COSTS = {"cost_hallucination": 2400.0, "p_requery": 0.71, "cost_requery": 0.5,
               "cost_abandon": 5.0}  # fmt: skip


def test_refusing_costs_the_papers_expected_requery_and_abandonment() -> None:
    # E[refuse] = 0.71 * 0.50 + 0.29 * 5.00 = 0.355 + 1.45 = 1.805
    found = refusal_economics(0.01, **PAPER_COSTS)
    assert found.refuse_cost == pytest.approx(1.805)
    # E[respond] at 1%: 0.01 * 2400 + 0.99 * C_correct (0) = 24.0
    assert found.respond_cost == pytest.approx(24.0)


def test_answering_costs_a_correct_answers_cost_too() -> None:
    # The term the formula had lost: (1 - P_h) * C_correct. At P_h 0.1% and C_correct 1.00,
    # E[respond] = 0.001 * 2400 + 0.999 * 1.00 = 2.4 + 0.999 = 3.399.
    found = refusal_economics(0.001, **PAPER_COSTS, cost_correct=1.0)
    assert found.respond_cost == pytest.approx(3.399)


def test_the_break_even_is_0_075_percent_for_the_papers_figures_and_no_correct_cost() -> None:
    # (1.805 - 0) / (2400 - 0) = 0.000752...: refusing pays above 0.075%, so at 0.1% (between
    # the 0.075% the figures give and the "about 0.2%" the paper states) it already pays.
    assert refusal_break_even(**PAPER_COSTS) == pytest.approx(1.805 / 2400)
    assert refusal_economics(0.001, **PAPER_COSTS).refuse
    assert not refusal_economics(0.0007, **PAPER_COSTS).refuse


def test_the_papers_about_0_2_percent_needs_a_correct_answer_worth_about_3() -> None:
    # (1.805 + 3) / (2400 + 3) = 4.805 / 2403 = 0.19996%: the paper's figure when answering
    # correctly is worth 3.00 (C_correct = -3). Then refusing does not pay at 0.1%...
    assert refusal_break_even(**PAPER_COSTS, cost_correct=-3.0) == pytest.approx(0.002, abs=1e-6)
    assert not refusal_economics(0.001, **PAPER_COSTS, cost_correct=-3.0).refuse
    # ...and does at 0.25%.
    assert refusal_economics(0.0025, **PAPER_COSTS, cost_correct=-3.0).refuse


def test_no_break_even_when_a_hallucination_costs_no_more_than_a_correct_answer() -> None:
    assert refusal_break_even(1.0, 0.71, 0.5, 5.0, cost_correct=1.0) is None
    with pytest.raises(ValueError, match="cost_correct"):
        refusal_economics(0.1, 2400.0, 0.71, 0.5, 5.0, cost_correct=float("nan"))


def test_trust_reproduces_the_paper_systems_a_and_b() -> None:
    # docs/math.md §8 (the paper's example): alpha 1.0, beta 5.0, gamma 0.7, Trust_0 3.0
    assert trust(3.0, 0.763, 0.237, 0.0) == pytest.approx(2.578)
    assert trust(3.0, 0.878, 0.032, 0.09) == pytest.approx(3.655)


# --- score_bundle ---------------------------------------------------------------------


def _claim(n: int, value: float, relevance: float = 1.0) -> ClaimSignals:
    return ClaimSignals(
        similarity=[value] * n,
        coverage=[value] * n,
        recency=[value] * n,
        authority=[value] * n,
        relevance=[relevance] * n,
    )


def test_score_bundle_takes_the_weakest_claim_and_drops_noise() -> None:
    policy = BundlePolicy()
    claims = [_claim(3, 0.9), _claim(2, 0.5, relevance=0.8), _claim(1, 0.1)]
    score = score_bundle(claims, None, policy)
    assert score.item_claim == (0, 0, 0, 1, 1, 2)
    assert score.kept == (True, True, True, True, True, False)
    assert score.claim_sufficiency == pytest.approx((0.9, 0.4, 0.0))
    assert score.sufficiency == 0.0  # the unsupported third claim decides
    assert score.mode == "refusal"
    assert score.kept_confidence == pytest.approx((0.9, 0.9, 0.9, 0.5, 0.5))
    assert score.completeness == pytest.approx(1.0 * (0.9 * 3 + 0.5 * 2) / 5)
    assert score.hallucination == pytest.approx(0.237 * (1 - score.completeness))


def test_score_bundle_finds_contradictions_by_whole_bundle_index() -> None:
    claims = [_claim(2, 0.95), _claim(2, 0.95)]
    relations = np.zeros((4, 4))
    relations[0, 1] = relations[1, 0] = 1.0
    relations[1, 3] = relations[3, 1] = -1.0
    score = score_bundle(claims, relations, BundlePolicy())
    assert score.contradictions == ((1, 3),)
    assert score.cohesion == pytest.approx((2 - 2) / 16)
    assert score.sufficiency == pytest.approx(0.95)
    assert score.mode == "full"


def test_score_bundle_can_gate_on_cohesion_adjusted_sufficiency() -> None:
    claims = [_claim(2, 0.9)]
    plain = score_bundle(claims, np.eye(2), BundlePolicy())
    adjusted = score_bundle(claims, np.eye(2), BundlePolicy(), gate_on_adjusted=True)
    assert plain.gated_sufficiency == pytest.approx(0.9)
    assert adjusted.gated_sufficiency == pytest.approx(0.45)
    assert (plain.mode, adjusted.mode) == ("full", "refusal")


def test_score_bundle_reinforcement_raises_corroborated_confidence() -> None:
    claims = [_claim(2, 0.6)]
    related = np.array([[0.0, 1.0], [1.0, 0.0]])
    base = score_bundle(claims, related, BundlePolicy())
    reinforced = score_bundle(claims, related, BundlePolicy(), reinforcement=0.1)
    assert reinforced.confidence == pytest.approx((0.66, 0.66))
    assert reinforced.sufficiency > base.sufficiency


def test_score_bundle_with_no_claims_is_a_refusal() -> None:
    score = score_bundle([], None, BundlePolicy())
    assert (score.sufficiency, score.completeness, score.cohesion) == (0.0, 0.0, 0.0)
    assert score.mode == "refusal"


def test_score_bundle_result_round_trips_through_json() -> None:
    claims = [_claim(2, 0.8), _claim(1, 0.7)]
    score = score_bundle(claims, sparse.csr_array(np.ones((3, 3))), BundlePolicy())
    payload = score.to_dict()
    assert json.loads(json.dumps(payload, allow_nan=False)) == payload
    assert payload["mode"] == score.mode
    assert payload["contradictions"] == []


def test_score_bundle_rejects_a_relation_matrix_of_the_wrong_size() -> None:
    with pytest.raises(ValueError, match="relations is 2x2 but the claims cite 3 items"):
        score_bundle([_claim(3, 0.8)], np.zeros((2, 2)), BundlePolicy())


def test_score_bundle_rejects_bad_policy_weights() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        score_bundle([_claim(1, 0.8)], None, BundlePolicy(w1=0.9))


def test_score_bundle_ignores_contradictions_between_unconfident_items() -> None:
    claims = [_claim(1, 0.45), _claim(1, 0.45)]
    relations = np.array([[0.0, -1.0], [-1.0, 0.0]])
    assert score_bundle(claims, relations, BundlePolicy()).contradictions == ()
    strict = score_bundle(claims, relations, BundlePolicy(), contradiction_confidence=0.4)
    assert strict.contradictions == ((0, 1),)


def test_score_bundle_reads_a_zone_policy() -> None:
    # the validation service passes coordinates.policy.PolicyValues straight in
    from coordinates.policy import PolicyValues

    zone = PolicyValues(tau=0.9, delta=0.1)
    score = score_bundle([_claim(2, 0.85)], None, zone)
    assert score.mode == "hedged"


# --- what a caller is told when an input is wrong ----------------------------------------
# A zone admin's policy, a stored report or a what-if run that feeds the math a bad number is
# told which number and why, word for word, before anything is scored.

NAN = math.nan
FOUR_EQUAL = (0.25, 0.25, 0.25, 0.25)
BAD_INPUTS = [
    (lambda: above_floor([0.5, 1.5]), r"^confidence must lie in \[0, 1\]"),
    (lambda: above_floor([0.5], floor=1.5), r"^floor must be a finite number in \[0, 1\]"),
    (lambda: answer_mode(0.5, 1.5, 0.1), r"^tau must be a finite number in \[0, 1\]"),
    (lambda: answer_mode(1.5, 0.7, 0.1), r"^sufficiency must be a finite number in \[0, 1\]"),
    (lambda: answer_mode(0.5, 0.7, -0.1), r"^delta must be a finite number >= 0, got -0\.1$"),
    (lambda: bundle_completeness(2.5, 3, [0.5]), r"^n_items must be a whole number >= 0"),  # type: ignore[arg-type]
    (lambda: bundle_completeness(-1, 3, [0.5]), r"^n_items must be a whole number >= 0"),
    (lambda: bundle_completeness(True, 3, [0.5]), r"^n_items must be a whole number >= 0"),
    (lambda: bundle_completeness(3, True, [0.5]), r"^required evidence must be a whole number"),
    (lambda: bundle_completeness(3, 3, [1.5]), r"^confidence must lie in \[0, 1\]"),
    (lambda: check_weights((1.2, -0.2, 0.0, 0.0)), r"must be finite and >= 0, got \(1\.2, -0\.2"),
    (lambda: cohesion(sparse.csr_array(np.zeros((2, 3)))), r"^adjacency must be a square matrix"),
    (
        lambda: cohesion(sparse.csr_array(np.array([[0.0, NAN], [0.0, 0.0]]))),
        r"^adjacency must be finite \(no NaN or infinity\)$",
    ),
    (lambda: cohesion(np.zeros((2, 3))), r"^adjacency must be a square matrix"),
    (lambda: cohesion_adjusted(0.5, NAN), r"^cohesion must be finite, got nan$"),
    (lambda: cohesion_adjusted(1.5, 0.5), r"^sufficiency must be a finite number in \[0, 1\]"),
    (
        lambda: cohesion_weighted_confidence([1.5], np.zeros((1, 1)), 0.1),
        r"^confidence must lie in \[0, 1\]",
    ),
    (
        lambda: cohesion_weighted_confidence([0.5], np.zeros((1, 2)), 0.1),
        r"^adjacency must be a square matrix",
    ),
    (
        lambda: cohesion_weighted_confidence([0.5], np.zeros((2, 2)), 0.1),
        r"^adjacency is 2x2 but there are 1 confidences$",
    ),
    (
        lambda: cohesion_weighted_confidence([0.5], np.zeros((1, 1)), -0.1),
        r"^delta \(reinforcement\) must be a finite number >= 0, got -0\.1$",
    ),
    (lambda: contradiction_pairs(np.zeros((1, 1)), [1.5], 0.5), r"^confidence must lie in"),
    (lambda: contradiction_pairs(np.zeros((1, 2)), [0.5], 0.5), r"^adjacency must be a square"),
    (
        lambda: contradiction_pairs(np.zeros((2, 2)), [0.5], 0.5),
        r"^adjacency is 2x2 but there are 1 confidences$",
    ),
    (
        lambda: contradiction_pairs(np.zeros((1, 1)), [0.5], 1.5),
        r"^min_confidence must be a finite number in \[0, 1\]",
    ),
    (
        lambda: document_age_days(datetime(2025, 1, 1), datetime(2025, 1, 2, tzinfo=UTC)),  # noqa: DTZ001
        r"^effective and as_of must be timezone-aware datetimes$",
    ),
    (lambda: hallucination_bundled(1.5, 0.5), r"^h_raw must be a finite number in \[0, 1\]"),
    (lambda: hallucination_bundled(0.2, 1.5), r"^completeness must be a finite number in"),
    (lambda: item_confidence([1.5], [0.5], [0.5], [0.5], FOUR_EQUAL), r"^similarity must lie"),
    (lambda: item_confidence([0.5], [1.5], [0.5], [0.5], FOUR_EQUAL), r"^coverage must lie"),
    (lambda: item_confidence([0.5], [0.5], [1.5], [0.5], FOUR_EQUAL), r"^recency must lie"),
    (lambda: item_confidence([0.5], [0.5], [0.5], [1.5], FOUR_EQUAL), r"^authority must lie"),
    (
        lambda: item_confidence([0.5], [0.5, 0.5], [0.5], [0.5], FOUR_EQUAL),
        r"^similarity, coverage, recency and authority must have the same length, got 1, 2, 1, 1$",
    ),
    (lambda: recency(NAN), r"^age_days must be finite, got nan$"),
    (lambda: recency(10.0, half_life_days=0.0), r"^half_life_days must be a positive number"),
    (lambda: recency(10.0, half_life_days=-5.0), r"^half_life_days must be a positive number"),
    (lambda: refusal_break_even(NAN, 0.71, 0.5, 5.0), r"^cost_hallucination must be a finite"),
    (lambda: refusal_break_even(2400.0, 0.71, 0.5, 5.0, NAN), r"^cost_correct must be a finite"),
    (lambda: refusal_economics(1.5, 2400.0, 0.71, 0.5, 5.0), r"^p_hallucination must be a"),
    (lambda: refusal_economics(0.1, 2400.0, 1.5, 0.5, 5.0), r"^p_requery must be a finite"),
    (
        lambda: refusal_economics(0.1, -1.0, 0.71, 0.5, 5.0),
        r"^cost_hallucination must be a finite number >= 0, got -1\.0$",
    ),
    (lambda: refusal_economics(0.1, 2400.0, 0.71, -0.5, 5.0), r"^cost_requery must be a finite"),
    (lambda: refusal_economics(0.1, 2400.0, 0.71, 0.5, -5.0), r"^cost_abandon must be a finite"),
    (
        lambda: refusal_economics(0.1, 2400.0, 0.71, 0.5, 5.0, cost_correct=NAN),
        r"^cost_correct must be a finite number, got nan$",
    ),
    (lambda: score_bundle([], None, BundlePolicy(floor=1.5)), r"^floor must be a finite number"),
    (
        lambda: score_bundle(
            [ClaimSignals([0.5], [0.5], [0.5], [0.5], [1.5])], None, BundlePolicy()
        ),
        r"^relevance of claim 0 must lie in \[0, 1\]",
    ),
    (
        lambda: score_bundle([ClaimSignals([0.5], [0.5], [0.5], [0.5], [])], None, BundlePolicy()),
        r"^claim 0: relevance has 0 values but there are 1 items$",
    ),
    (
        lambda: score_bundle([_claim(1, 0.8)], np.zeros((1, 2)), BundlePolicy()),
        r"^relations must be a square matrix",
    ),
    (lambda: sufficiency_of_claims([0.5, 1.5]), r"^claim sufficiency must be a finite number"),
    (lambda: trust(3.0, 1.5, 0.0, 0.0), r"^correct_rate must be a finite number in \[0, 1\]"),
    (lambda: trust(3.0, 0.5, 1.5, 0.0), r"^hallucination_rate must be a finite number in"),
    (lambda: trust(3.0, 0.5, 0.0, 1.5), r"^refusal_rate must be a finite number in \[0, 1\]"),
]


@pytest.mark.parametrize(("call", "message"), BAD_INPUTS)
def test_a_wrong_input_is_refused_with_its_name_and_the_rule_it_breaks(
    call: Callable[[], object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_an_unknown_kind_or_status_lists_the_ones_there_are() -> None:
    with pytest.raises(ValueError, match=r"expected one of policy, contract, report, minutes, "):
        authority("tweet", "approved")
    with pytest.raises(ValueError, match=r"expected one of approved, draft, archived$"):
        authority("memo", "secret")


# --- edges of the formulas that decide what a user sees ----------------------------------


def test_a_single_number_is_a_one_item_bundle() -> None:
    assert above_floor(0.5).tolist() == [True]
    assert above_floor(0.1).tolist() == [False]


def test_completeness_counts_items_against_the_required_evidence() -> None:
    # docs/math.md §3: half the required items at confidence 0.8 give 0.5 * 0.8 = 0.4; one
    # item when one is required counts in full.
    assert bundle_completeness(2, 4, [0.8, 0.8]) == pytest.approx(0.4)
    assert bundle_completeness(1, 1, [0.8]) == pytest.approx(0.8)
    # items counted but no confidences to average: nothing vouches for the bundle
    assert bundle_completeness(3, 3, []) == 0.0


def test_a_signal_may_carry_no_weight_but_none_may_be_negative() -> None:
    assert check_weights((0.5, 0.5, 0.0, 0.0)) == (0.5, 0.5, 0.0, 0.0)
    c = item_confidence([0.9], [0.7], [0.0], [0.0], (0.5, 0.5, 0.0, 0.0))
    assert c == pytest.approx([0.8])


def test_confidence_never_exceeds_one_when_the_weights_round_above_one() -> None:
    weights = (0.4, 0.3, 0.15, 0.15 + 5e-7)  # accepted: within the tolerance
    assert item_confidence([1.0], [1.0], [1.0], [1.0], weights).tolist() == [1.0]


def test_recency_with_a_short_half_life() -> None:
    assert recency(1.0, half_life_days=0.5) == pytest.approx(0.25)


def test_costs_of_zero_are_allowed() -> None:
    # a requery that costs nothing and a hallucination nobody pays for are still figures
    free = refusal_economics(0.01, 0.0, 0.71, 0.0, 5.0)
    assert free.refuse_cost == pytest.approx(0.29 * 5.0)
    assert free.respond_cost == 0.0
    assert not free.refuse


def test_when_refusing_costs_more_than_a_hallucination_the_break_even_is_one() -> None:
    # E[refuse] = 1.805 exceeds C_h = 1: answering is cheaper at every P_h.
    assert refusal_break_even(1.0, 0.71, 0.5, 5.0) == 1.0


def test_cohesion_of_an_empty_sparse_matrix_is_zero() -> None:
    assert cohesion(sparse.csr_array((0, 0))) == 0.0


def test_an_item_never_contradicts_itself_and_the_threshold_is_inclusive() -> None:
    a = np.array([[-1.0, -1.0], [-1.0, -1.0]])  # a negative diagonal (a bad relation row)
    assert contradiction_pairs(a, [0.9, 0.9], 0.5) == [(0, 1)]
    assert contradiction_pairs(a, [0.5, 0.5], 0.5) == [(0, 1)]  # at min_confidence: counted


def test_score_bundle_keeps_an_item_exactly_at_the_floor() -> None:
    similarity_only = BundlePolicy(w1=1.0, w2=0.0, w3=0.0, w4=0.0, floor=0.3)
    claim = ClaimSignals([0.3], [0.0], [0.0], [0.0], [1.0])
    score = score_bundle([claim], None, similarity_only)
    assert score.kept == (True,)
    assert score.sufficiency == pytest.approx(0.3)


def test_score_bundle_reports_the_cohesion_adjusted_sufficiency() -> None:
    claims = [_claim(2, 0.9)]
    score = score_bundle(claims, np.zeros((2, 2)), BundlePolicy())
    assert score.adjusted_sufficiency == pytest.approx(0.45)  # cohesion 0 halves it
    assert score.gated_sufficiency == pytest.approx(0.9)


def test_score_bundle_with_no_claims_has_no_items() -> None:
    score = score_bundle([], None, BundlePolicy())
    assert (score.confidence, score.kept, score.kept_confidence) == ((), (), ())


def test_the_stored_report_names_every_number_as_the_report_does() -> None:
    # Validation pages, the API and the what-if replay read these keys from the JSON field.
    claims = [_claim(2, 0.95), _claim(1, 0.7)]
    relations = np.zeros((3, 3))
    relations[0, 2] = relations[2, 0] = -1.0
    score = score_bundle(claims, relations, BundlePolicy(), contradiction_confidence=0.5)
    payload = score.to_dict()
    assert payload == {
        "confidence": list(score.confidence),
        "kept": [True, True, True],
        "item_claim": [0, 0, 1],
        "claim_sufficiency": list(score.claim_sufficiency),
        "sufficiency": score.sufficiency,
        "completeness": score.completeness,
        "cohesion": score.cohesion,
        "adjusted_sufficiency": score.adjusted_sufficiency,
        "hallucination": score.hallucination,
        "contradictions": [[0, 2]],
        "mode": score.mode,
        "gated_sufficiency": score.gated_sufficiency,
        "kept_confidence": list(score.kept_confidence),
        "required_evidence": 3,
    }


# --- RequiredEvidence by question (seed 000 §4.3) and source diversity (§2.3) --------------


def test_a_simple_lookup_needs_two_items_the_papers_upper_end_of_one_to_two() -> None:
    # "What is the company's parental leave policy?": one part, a fact to look up
    assert required_evidence(1) == 2


def test_the_papers_complex_question_needs_five_to_ten() -> None:
    # "How has our data retention policy evolved over the past 3 years, and what are the
    # compliance implications?": two parts, one asking for analysis, over a span of time
    assert 5 <= required_evidence(2, analytic=1, spans_time=True) <= 10
    assert required_evidence(2, analytic=1, spans_time=True) == 7


def test_a_two_part_lookup_needs_four_the_papers_worked_example() -> None:
    # §6.3: RequiredEvidence = 4; with |B| = 5 and AvgConfidence 0.82, BC = 0.82, H = 4.27%
    required = required_evidence(2)
    assert required == 4
    bc = bundle_completeness(5, required, [0.82] * 5)
    assert bc == pytest.approx(0.82)
    assert hallucination_bundled(0.237, bc) == pytest.approx(0.0427, abs=5e-5)


def test_a_simple_answer_with_two_good_items_is_complete_where_the_zones_three_was_not() -> None:
    # what changes for a one-part question: two kept items at 0.9 are complete (0.9), where
    # the zone's single value of 3 counted them two-thirds complete (0.6)
    assert bundle_completeness(2, required_evidence(1), [0.9, 0.9]) == pytest.approx(0.9)
    assert bundle_completeness(2, 3, [0.9, 0.9]) == pytest.approx(0.6)


@given(
    st.integers(min_value=0, max_value=30),
    st.integers(min_value=0, max_value=30),
    st.booleans(),
)
def test_required_evidence_stays_in_two_to_ten_and_grows_with_the_question(
    parts: int, analytic: int, spans_time: bool
) -> None:
    assume(analytic <= parts)
    r = required_evidence(parts, analytic=analytic, spans_time=spans_time)
    assert 2 <= r <= 10
    assert required_evidence(parts + 1, analytic=analytic, spans_time=spans_time) >= r
    assert required_evidence(parts, analytic=analytic, spans_time=True) >= r
    if r < 10 and parts >= 1:
        assert required_evidence(parts + 1, analytic=analytic, spans_time=spans_time) > r


@pytest.mark.parametrize(
    ("parts", "analytic", "spans_time", "want"),
    [(0, 0, False, 2), (1, 1, False, 3), (1, 0, True, 4), (3, 0, False, 6), (9, 9, True, 10)],
)
def test_required_evidence_counts_parts_analysis_and_time(
    parts: int, analytic: int, spans_time: bool, want: int
) -> None:
    assert required_evidence(parts, analytic=analytic, spans_time=spans_time) == want


@pytest.mark.parametrize(("parts", "analytic"), [(-1, 0), (1.5, 0), (True, 0), (1, 2), (1, -1)])
def test_required_evidence_refuses_counts_that_are_not_counts(parts: Any, analytic: Any) -> None:
    with pytest.raises(ValueError, match=r"parts|analytic"):
        required_evidence(parts, analytic=analytic)


def test_one_document_cited_twice_is_one_source() -> None:
    assert distinct_sources([7, 7, None, 7]) == 1
    assert distinct_sources([7, 8, None]) == 2
    assert distinct_sources([]) == 0


def test_a_high_stakes_answer_on_one_document_lacks_diversity() -> None:
    assert lacks_diversity([7, 7], 2) is True
    assert lacks_diversity([7, 8], 2) is False
    assert lacks_diversity([7, 8], 3) is True
    assert lacks_diversity([7, 8, 9], 3) is False


def test_a_zone_asking_for_one_source_never_flags_for_diversity() -> None:
    assert lacks_diversity([7], 1) is False
    assert lacks_diversity([7], 0) is False


def test_no_evidence_at_all_is_not_a_diversity_finding() -> None:
    # sufficiency judges an answer without evidence; diversity only how many documents
    assert lacks_diversity([], 2) is False
    assert lacks_diversity([None], 2) is False


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_min_sources_must_be_a_count(bad: Any) -> None:
    with pytest.raises(ValueError, match="min_sources"):
        lacks_diversity([1], bad)


def test_score_bundle_counts_completeness_against_the_questions_required_evidence() -> None:
    claims = [
        ClaimSignals(
            similarity=[0.9, 0.9],
            coverage=[0.9, 0.9],
            recency=[0.9, 0.9],
            authority=[0.9, 0.9],
            relevance=[0.9, 0.9],
        )
    ]
    zone_three = score_bundle(claims, None, BundlePolicy())
    by_question = score_bundle(claims, None, BundlePolicy(), required=2)
    assert zone_three.completeness == pytest.approx(0.6)
    assert zone_three.required_evidence == 3
    assert by_question.completeness == pytest.approx(0.9)
    assert by_question.to_dict()["required_evidence"] == 2


UNIT = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


# --- seed 000 §4.2: respond iff Sufficiency(B) >= tau --------------------------------------


def test_respond_decision_with_the_papers_zone_thresholds() -> None:
    # §13.2: a compliance zone may require tau = 0.85, customer support accepts 0.50; an
    # answer whose evidence reaches S = 0.75 is given in the one and refused in the other
    assert responds(0.75, 0.50)
    assert not responds(0.75, 0.85)
    # the default tau (0.70): the threshold itself answers, anything below refuses
    assert responds(0.70, 0.70)
    assert not responds(math.nextafter(0.70, 0.0), 0.70)
    # tau = 0 never refuses, tau = 1 refuses all but perfect evidence (§5.3)
    assert responds(0.0, 0.0)
    assert not responds(0.999, 1.0)
    assert responds(1.0, 1.0)


@given(UNIT, UNIT)
def test_respond_exactly_when_sufficiency_reaches_tau(s: float, tau: float) -> None:
    assert responds(s, tau) == (s >= tau)


@given(UNIT, UNIT, UNIT)
def test_raising_tau_never_turns_a_refusal_into_an_answer(s: float, a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert responds(s, high) <= responds(s, low)


@pytest.mark.parametrize(
    ("s", "tau", "named"),
    [
        (1.5, 0.7, "sufficiency"),
        (-0.1, 0.7, "sufficiency"),
        (0.5, math.nan, "tau"),
        (0.5, 2.0, "tau"),
    ],
)
def test_respond_decision_rejects_values_outside_the_unit_interval(
    s: float, tau: float, named: str
) -> None:
    with pytest.raises(ValueError, match=f"^{named} must be a finite number in"):
        responds(s, tau)
