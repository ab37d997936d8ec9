"""The graph gate (docs/math.md §19): how far the evidence subgraph's cohesion lets a graph
answer go without a person."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

GraphGate = Literal["direct", "qualified", "escalate"]
RiskLevel = Literal["low", "medium", "high", "critical"]

# Graph-gate cohesion thresholds by the risk of the zone's decisions (docs/math.md §19).
COHESION_TAU_BY_RISK: Mapping[RiskLevel, float] = {
    "low": 0.05,
    "medium": 0.15,
    "high": 0.30,
    "critical": 0.50,
}


def graph_grade(cohesion: float, cohesion_tau: float) -> GraphGate:
    """direct Cohesion>=tau_c; qualified tau_c/2<=Cohesion<tau_c; escalate below tau_c/2."""
    if not math.isfinite(cohesion):
        raise ValueError(f"cohesion must be finite, got {cohesion!r}")
    tau_c = float(cohesion_tau)
    if not math.isfinite(tau_c) or not 0.0 <= tau_c <= 1.0:
        raise ValueError(f"cohesion_tau must be a finite number in [0, 1], got {cohesion_tau!r}")
    if cohesion >= tau_c:
        return "direct"
    if cohesion >= tau_c / 2:
        return "qualified"
    return "escalate"
