"""The evidence-bundle paper's system-level models (seed 000 §4.4, §6.5, §6.6, §7.4,
§8.1–8.3, §10), each checked on the paper's own worked numbers, and their laws."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidence.dynamics import (
    ALPHA_DISTORTION,
    ALPHA_EXTRAPOLATION,
    completeness_over_time,
    hallucination_by_type,
    hallucination_interval,
    knowledge_gaps,
    learning_curve,
    learning_rate,
    overconfident_sources,
    recovers_between_hallucinations,
    requery_load,
    requery_probability,
    requery_sufficiency,
    resolved_by_attempt,
    time_to_converge,
    total_accuracy,
    trust_recovery_half_life,
    validation_accuracy,
)
from evidence.scoring import hallucination_bundled

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
rate = st.floats(min_value=0.0, max_value=2.0, allow_nan=False)


# --- §4.4 ----------------------------------------------------------------------------------


def test_total_accuracy_reproduces_the_papers_0740_and_0583() -> None:
    """Seed 000 §4.4: A_retrieval 0.90, A_reasoning 0.85 and A_validation 0.968 (H_bundled
    0.032) give 0.90 x 0.85 x 0.968 = 0.740; without validation (A_validation 0.763, H_raw
    0.237) 0.583: from 58.3% to 74.0%, 27% better. (The products are 0.7405 and 0.5837:
    the paper cuts them to three places.)"""
    with_bundles = total_accuracy(0.90, 0.85, validation_accuracy(0.032))
    without = total_accuracy(0.90, 0.85, validation_accuracy(0.237))
    assert math.floor(with_bundles * 1000) / 1000 == pytest.approx(0.740)
    assert math.floor(without * 1000) / 1000 == pytest.approx(0.583)
    assert with_bundles / without - 1 == pytest.approx(0.27, abs=5e-3)


@given(unit, unit, unit, unit)
def test_total_accuracy_never_exceeds_its_weakest_stage_and_grows_with_each(
    a: float, b: float, c: float, more: float
) -> None:
    """§4.4: the stages multiply, so the whole is no better than any stage, and improving
    one stage never makes the whole worse."""
    total = total_accuracy(a, b, c)
    assert 0.0 <= total <= min(a, b, c)
    assert total_accuracy(max(a, more), b, c) >= total


def test_stage_accuracies_outside_the_unit_interval_are_refused() -> None:
    with pytest.raises(ValueError, match="a_reasoning"):
        total_accuracy(0.9, 1.2, 0.9)
    with pytest.raises(ValueError, match="h_bundled"):
        validation_accuracy(-0.1)


# --- §6.5 ----------------------------------------------------------------------------------


def test_hallucination_types_at_the_papers_completeness_leave_mostly_extrapolation() -> None:
    """Seed 000 §6.5 and §12.1: at the paper's completeness (H_raw 0.237 with H_bundled
    0.032 means BC = 0.865, §6.3) fabrication (coefficient 1) is cut the most and the
    residual is mainly extrapolation, the type whose coefficient (0.40–0.60) is lowest."""
    by_type = hallucination_by_type(0.237, 0.865)
    raw = hallucination_by_type(0.237, 0.0)
    assert raw.total == pytest.approx(0.237)
    assert by_type.extrapolation > by_type.distortion
    assert by_type.extrapolation > by_type.fabrication
    cut = {
        name: 1 - getattr(by_type, name) / getattr(raw, name)
        for name in ("fabrication", "distortion", "extrapolation")
    }
    assert cut["fabrication"] == pytest.approx(0.865)
    assert cut["distortion"] == pytest.approx(ALPHA_DISTORTION * 0.865)
    assert cut["extrapolation"] == pytest.approx(ALPHA_EXTRAPOLATION * 0.865)
    assert cut["fabrication"] > cut["distortion"] > cut["extrapolation"]


@given(unit, unit)
def test_with_every_coefficient_one_the_split_sums_to_the_section_62_rate(
    h_raw: float, bc: float
) -> None:
    """§6.5 refines §6.2: a framework that caught every type as well as fabrication would
    give back H_raw (1 - BC)."""
    split = hallucination_by_type(h_raw, bc, alpha_d=1.0, alpha_e=1.0)
    assert split.total == pytest.approx(hallucination_bundled(h_raw, bc), abs=1e-12)


@given(unit, unit, unit)
def test_each_type_falls_as_completeness_rises(h_raw: float, bc: float, more: float) -> None:
    low = hallucination_by_type(h_raw, min(bc, more))
    high = hallucination_by_type(h_raw, max(bc, more))
    assert high.fabrication <= low.fabrication + 1e-15
    assert high.distortion <= low.distortion + 1e-15
    assert high.extrapolation <= low.extrapolation + 1e-15
    assert 0.0 <= high.total <= h_raw + 1e-15


def test_type_shares_must_sum_to_one() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        hallucination_by_type(0.2, 0.5, shares=(0.5, 0.5, 0.5))


# --- §6.6 ----------------------------------------------------------------------------------


def test_completeness_grows_when_updates_outpace_staleness_and_decays_otherwise() -> None:
    """Seed 000 §6.6: with mu > nu completeness improves as the knowledge base grows; with
    nu > mu it falls and hallucination creeps back up. From the paper's BC 0.865 (§6.3)."""
    grows = completeness_over_time(0.865, mu=0.02, nu=0.01, t=10)
    decays = completeness_over_time(0.865, mu=0.01, nu=0.02, t=10)
    assert grows == pytest.approx(0.865 * math.exp(0.1))
    assert decays == pytest.approx(0.865 * math.exp(-0.1))
    assert hallucination_bundled(0.237, decays) > 0.032 > hallucination_bundled(0.237, grows)
    assert completeness_over_time(0.865, mu=0.01, nu=0.01, t=50) == pytest.approx(0.865)


@given(unit, rate, rate, st.floats(min_value=0, max_value=100), st.floats(0, 100))
def test_completeness_over_time_stays_in_the_unit_interval_and_is_monotone_in_t(
    bc: float, mu: float, nu: float, t: float, later: float
) -> None:
    now = completeness_over_time(bc, mu, nu, t)
    after = completeness_over_time(bc, mu, nu, t + later)
    assert 0.0 <= now <= 1.0
    if mu >= nu:
        assert after >= now - 1e-12
    else:
        assert after <= now + 1e-12


# --- §7.4 ----------------------------------------------------------------------------------


def test_trust_recovers_in_25_correct_answers_and_only_system_b_recovers_in_time() -> None:
    """Seed 000 §7.4: with beta 5.0 and alpha 1.0 the half-life is 2.5 correct answers.
    System B hallucinates about once in 31 answers (H 0.032): time to recover fully;
    system A about once in 4.2 (H 0.237): a downward spiral."""
    assert trust_recovery_half_life(alpha=1.0, beta=5.0) == pytest.approx(2.5)
    interval_b = hallucination_interval(0.032)
    interval_a = hallucination_interval(0.237)
    assert interval_b == pytest.approx(31, abs=0.5)
    assert interval_a == pytest.approx(4.2, abs=0.05)
    assert recovers_between_hallucinations(0.032, alpha=1.0, beta=5.0)
    assert not recovers_between_hallucinations(0.237, alpha=1.0, beta=5.0)


def test_no_hallucination_has_no_interval_and_nothing_to_recover_from() -> None:
    assert hallucination_interval(0.0) is None
    assert recovers_between_hallucinations(0.0, alpha=1.0, beta=5.0)


@given(st.floats(0.1, 2.0), st.floats(0.0, 10.0), st.floats(0.0, 10.0))
def test_the_half_life_lengthens_with_beta(alpha: float, beta: float, more: float) -> None:
    """§7.2: trust is destroyed faster than it is built; the heavier a hallucination
    weighs, the longer the way back."""
    assert trust_recovery_half_life(alpha, beta + more) >= trust_recovery_half_life(alpha, beta)


# --- §8.1–8.3 ------------------------------------------------------------------------------


@given(unit, unit, st.floats(0.5, 30.0), unit)
def test_requery_probability_falls_as_sufficiency_rises(
    s: float, t: float, k: float, midpoint: float
) -> None:
    """Seed 000 §8.1: high sufficiency, a confident answer and few requeries; low
    sufficiency, a refusal with little to go on and a likely requery. A logistic in 1 - S."""
    low, high = sorted((s, t))
    p_low = requery_probability(low, steepness=k, midpoint=midpoint)
    p_high = requery_probability(high, steepness=k, midpoint=midpoint)
    assert 0.0 <= p_high <= p_low <= 1.0


def test_requery_probability_is_one_half_at_the_midpoint() -> None:
    """§8.1: s is the sigmoid's midpoint, k its steepness."""
    assert requery_probability(0.6, steepness=8.0, midpoint=0.4) == pytest.approx(0.5)
    steep = requery_probability(0.5, steepness=20.0, midpoint=0.4)
    gentle = requery_probability(0.5, steepness=2.0, midpoint=0.4)
    assert steep > gentle > 0.5


def test_a_refusal_that_shows_its_evidence_gets_a_34_percent_better_requery() -> None:
    """Seed 000 §8.2: after a refusal with its sources and sufficiency, the requery has 34%
    more sufficiency; after a bare refusal, 8%."""
    assert requery_sufficiency(0.5, with_context=True) == pytest.approx(0.67)
    assert requery_sufficiency(0.5, with_context=False) == pytest.approx(0.54)
    assert requery_sufficiency(0.9, with_context=True) == 1.0


def test_91_percent_of_refusals_are_resolved_by_the_third_attempt() -> None:
    """Seed 000 §8.2 and §12.5: 63% resolve on the second attempt, 28% more on the third."""
    assert resolved_by_attempt([0.63, 0.28]) == pytest.approx([0.63, 0.91])
    with pytest.raises(ValueError, match="more than 1"):
        resolved_by_attempt([0.63, 0.5])


def test_requeries_add_seven_percent_to_the_load() -> None:
    """Seed 000 §8.3: 10% of queries refused, 70% of those requeried: 7% more queries.
    The deployment's own figures (§12.5: 9.0% refused, 71% requeried) give 6.4%."""
    assert requery_load(0.10, 0.70) == pytest.approx(0.07)
    assert requery_load(0.090, 0.71) == pytest.approx(0.0639)


# --- §10 -----------------------------------------------------------------------------------


def test_the_learning_curve_converges_in_20_weeks_at_015_and_60_to_100_without_bundles() -> None:
    """Seed 000 §10.4: lambda 0.15 a week gives t_95% of about 20 weeks; a system without
    evidence bundles learns at 0.03–0.05 a week, 60–100 weeks."""
    assert time_to_converge(0.15) == pytest.approx(20, abs=0.1)
    assert time_to_converge(0.05) == pytest.approx(60, abs=0.1)
    assert time_to_converge(0.03) == pytest.approx(100, abs=0.2)
    t = time_to_converge(0.15)
    assert learning_curve(0.74, 0.90, 0.15, t) == pytest.approx(0.74 + 0.95 * 0.16)


@given(unit, unit, st.floats(0, 2), st.floats(0, 200), st.floats(0, 200))
def test_the_learning_curve_rises_from_a0_towards_amax(
    a: float, b: float, lam: float, t: float, later: float
) -> None:
    """§10.4: A(0) = A_0, A never passes A_max, and never falls."""
    a_0, a_max = sorted((a, b))
    assert learning_curve(a_0, a_max, lam, 0.0) == pytest.approx(a_0)
    now = learning_curve(a_0, a_max, lam, t)
    assert a_0 - 1e-12 <= now <= learning_curve(a_0, a_max, lam, t + later) + 1e-12
    assert now <= a_max + 1e-12


def test_better_evidence_learns_faster() -> None:
    """Seed 000 §10.2: lambda = lambda_0 (1 + eta AvgEvidenceQuality). A base of 0.03 a week
    amplified 4x at full quality is the paper's 0.15 (its "3–5x faster")."""
    assert learning_rate(0.03, 4.0, 1.0) == pytest.approx(0.15)
    assert learning_rate(0.03, 4.0, 0.5) < learning_rate(0.03, 4.0, 0.9)
    assert learning_rate(0.03, 4.0, 0.0) == pytest.approx(0.03)


def test_knowledge_gaps_are_the_topics_where_refusals_cluster() -> None:
    """Seed 000 §10.3: refusals concentrated in a topic reveal a gap in the corpus, shown to
    content managers; refusals spread thinly are not a gap."""
    asked = {"travel": 40, "payroll": 10, "security": 50, "vendors": 4}
    refused = {"travel": 2, "payroll": 6, "security": 3, "vendors": 2}
    gaps = knowledge_gaps(refused, asked)
    # overall 13/104 = 12.5%: payroll 60% is a gap; vendors 50% has too few refusals.
    assert [gap.topic for gap in gaps] == ["payroll"]
    assert gaps[0].refusal_rate == pytest.approx(0.6)
    assert knowledge_gaps(refused, asked, min_refused=2)[1].topic == "vendors"
    assert knowledge_gaps({}, {}) == []


def test_sources_whose_confidence_outruns_their_verdicts_are_flagged_for_refinement() -> None:
    """Seed 000 §10.3: comparing predicted confidence with verified accuracy finds the
    overconfident evidence to re-weight, re-index or show a person."""
    verdicts = (
        [("memo-7", 0.9, i < 3) for i in range(6)]  # 0.9 claimed, 50% right
        + [("policy-1", 0.8, i < 5) for i in range(6)]  # 0.8 claimed, 83% right
        + [("email-2", 0.95, False)] * 4  # too few verdicts to judge
    )
    flagged = overconfident_sources(verdicts)
    assert [c.source for c in flagged] == ["memo-7"]
    assert flagged[0].overconfidence == pytest.approx(0.4)
