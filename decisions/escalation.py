"""Why a graph answer went up, told to the reader in their language (seed 002 §14.5): the
cohesion its evidence reached, the tau_c/2 it fell below and the risk level that set it, the
authority it went to, and the pairs of its evidence nodes with no relation between them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext, gettext_noop

# The risk levels' names as a reader reads them (coordinates/policy.py::GRAPH_RISK_TAU).
RISK_LEVEL_NAMES = {
    "low": gettext_noop("low"),
    "medium": gettext_noop("medium"),
    "high": gettext_noop("high"),
    "critical": gettext_noop("critical"),
}


def graph_escalation(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """`why` (a sentence in the active language) and `gaps` of an escalated graph answer's
    stored body; None when the body is not of an escalated graph answer, or is one stored
    before the gaps were (it lists none, and saying so would invent its numbers)."""
    if body.get("gate") != "escalate" or "gaps" not in body:
        return None
    cohesion = float(body.get("cohesion") or 0.0)
    tau_c = float(body.get("cohesion_tau") or 0.0)
    level = body.get("graph_risk")
    values = {
        "to": body.get("escalated_to") or body.get("zone") or "",
        "cohesion": f"{cohesion:.4g}",
        "half": f"{tau_c / 2:.4g}",
        "tau": f"{tau_c:.4g}",
        "count": len(body["gaps"]),
    }
    if level in RISK_LEVEL_NAMES:
        why = gettext(
            "Escalated to the authority of %(to)s: the evidence's cohesion %(cohesion)s is "
            "below τc/2 = %(half)s for risk level %(level)s (τc %(tau)s), so a person there "
            "decides; %(count)s pairs of its nodes have no relation."
        ) % {**values, "level": gettext(RISK_LEVEL_NAMES[level])}
    else:
        why = (
            gettext(
                "Escalated to the authority of %(to)s: the evidence's cohesion %(cohesion)s is "
                "below τc/2 = %(half)s (τc %(tau)s, set by the zone), so a person there decides; "
                "%(count)s pairs of its nodes have no relation."
            )
            % values
        )
    return {"why": why, "gaps": list(body["gaps"])}


def escalation_explained(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """`graph_escalation` of a stored report body: a graph answer's own, or the graph gate's
    on an agent's answer (`graph_gate`)."""
    return graph_escalation(body.get("graph_gate") or body)
