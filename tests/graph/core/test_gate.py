"""The graph gate: its bands and the risk-level defaults of its threshold."""

from __future__ import annotations

import math

import pytest

from graph.core.gate import COHESION_TAU_BY_RISK, RiskLevel, graph_grade


def test_graph_gate_bands() -> None:
    tau_c = 0.30
    assert graph_grade(0.30, tau_c) == "direct"
    assert graph_grade(0.15, tau_c) == "qualified"
    assert graph_grade(math.nextafter(0.15, 0.0), tau_c) == "escalate"
    assert graph_grade(math.nextafter(0.30, 0.0), tau_c) == "qualified"
    assert graph_grade(-0.2, tau_c) == "escalate"  # contradictions make cohesion negative


# Seed 002 §9.2's table, row by row: the risk level, its threshold, and a cohesion between
# the medium and the high threshold (0.20) that the paper's behaviour column lets through
# at the permissive and balanced levels and holds at the strict and conservative ones.
PAPER_RISK_TABLE = [
    ("low", 0.05, "direct"),
    ("medium", 0.15, "direct"),
    ("high", 0.30, "qualified"),
    ("critical", 0.50, "escalate"),
]


@pytest.mark.parametrize(("level", "tau", "at_0_20"), PAPER_RISK_TABLE)
def test_each_risk_level_gates_a_graph_answer_at_the_papers_threshold(
    level: RiskLevel, tau: float, at_0_20: str
) -> None:
    tau_c = COHESION_TAU_BY_RISK[level]
    # an answer whose evidence hangs together exactly as much as the paper's tau passes...
    assert graph_grade(tau, tau_c) == "direct"
    # ...one a hair below it does not
    assert graph_grade(math.nextafter(tau, 0.0), tau_c) != "direct"
    # and the same 0.20 cohesion is treated by the level's strictness
    assert graph_grade(0.20, tau_c) == at_0_20


def test_graph_gate_rejects_non_finite_cohesion() -> None:
    with pytest.raises(ValueError, match="cohesion must be finite"):
        graph_grade(math.nan, 0.15)


def test_the_cohesion_threshold_may_be_zero_or_one_but_no_more() -> None:
    assert graph_grade(0.0, 0.0) == "direct"  # no cohesion asked for
    assert graph_grade(0.99, 1.0) == "qualified"  # only a fully linked set goes direct
    assert graph_grade(1.0, 1.0) == "direct"
    with pytest.raises(
        ValueError, match=r"^cohesion_tau must be a finite number in \[0, 1\], got 1\.5$"
    ):
        graph_grade(0.5, 1.5)
