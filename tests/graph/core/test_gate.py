"""The graph gate: its bands and the risk-level defaults of its threshold."""

from __future__ import annotations

import math

import pytest

from graph.core.gate import COHESION_TAU_BY_RISK, graph_grade


def test_graph_gate_bands() -> None:
    tau_c = 0.30
    assert graph_grade(0.30, tau_c) == "direct"
    assert graph_grade(0.15, tau_c) == "qualified"
    assert graph_grade(math.nextafter(0.15, 0.0), tau_c) == "escalate"
    assert graph_grade(math.nextafter(0.30, 0.0), tau_c) == "qualified"
    assert graph_grade(-0.2, tau_c) == "escalate"  # contradictions make cohesion negative


def test_risk_level_defaults_for_the_graph_gate() -> None:
    assert dict(COHESION_TAU_BY_RISK) == {
        "low": 0.05,
        "medium": 0.15,
        "high": 0.30,
        "critical": 0.50,
    }


def test_graph_gate_rejects_non_finite_cohesion() -> None:
    with pytest.raises(ValueError, match="cohesion must be finite"):
        graph_grade(math.nan, 0.15)
