"""What each policy field does and the values it takes, as the zone admin's thresholds form
shows it under the field (coordinates.policy.check_overrides and check_effective enforce the
same ranges); and the policy version history as rows of what changed, not the stored dict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from coordinates import policy as zone_policy

_WEIGHT = _(
    "Weight of %(what)s in an evidence item's confidence, 0 to 1; w1 + w2 + w3 + w4 must equal 1."
)

FIELD_HELP: dict[str, Promise | str] = {
    "tau": _(
        "Sufficiency an answer needs to be released in full, 0 to 1. Higher sends more "
        "answers to people."
    ),
    "delta": _(
        "Width of the hedged and partial bands below tau, 0 to 1; tau − 2 × delta must not "
        "fall below 0."
    ),
    "floor": _(
        "Evidence items below this confidence count as noise, 0 to 1/3 (above 1/3 no answer "
        "passes on its own)."
    ),
    "refusal_floor": _("Below this sufficiency an answer is blocked, 0 to tau."),
    "required_evidence": _(
        "Evidence items an answer needs to be fully complete: 0 as many as its question asks "
        "for (2 for a simple lookup, up to 10 for a complex question), or 1 to 100 for every "
        "question."
    ),
    "min_sources": _(
        "Distinct documents an answer must rest on; one resting on fewer is at least flagged. "
        "1 (no requirement) to 10: 2 or more for high-stakes zones."
    ),
    "w1": _WEIGHT,
    "w2": _WEIGHT,
    "w3": _WEIGHT,
    "w4": _WEIGHT,
    "graph_risk": _(
        "Risk of the zone's decisions; sets the cohesion a graph answer needs: low 0.05,"
        " medium 0.15, high 0.30, critical 0.50."
    ),
    "cohesion_tau": _(
        "Cohesion a graph answer needs to go out without a person, 0 to 1; blank: the risk level's."
    ),
    "gamma": _("How much risk fades at each hop through the graph, above 0 up to 1."),
    "hops": _("How many hops risk spreads through the graph, 0 to 10."),
    "ppr_rho": _(
        "How often a PageRank walk through the graph follows an edge rather than returning "
        "to the question, strictly between 0 and 1."
    ),
    "risk_threshold": _(
        "Share of causal paths through a node above which the node needs review, 0 to 1."
    ),
    "review_sla_hours": _(
        "Hours a reviewer has before a waiting decision escalates, above 0 up to 8760 (a year)."
    ),
    "approvals_required": _("Distinct reviewers who must approve a decision, 1 to 5."),
    "periodic_review_rate": _(
        "Share of flagged answers sampled for periodic review, from 0 (none) to 1 (all)."
    ),
    "rereview_days": _(
        "How many days back answers are reviewed again when the text they cited changes, 1 to 3650."
    ),
    "release_kinds": _(
        "Kinds of document that may carry an answer to release without a person. Tick none "
        "to inherit."
    ),
    "release_statuses": _(
        "Statuses of document that may carry an answer to release without a person. Tick "
        "none to inherit."
    ),
    "judge_moves": _(
        "What a plug-in judge (LLM or local NLI model) may do, on its own word, to a claim the "
        "engine could not verify: verify it (release) or refute it (refuse). Tick none to "
        "inherit; the default is neither."
    ),
    "judge_confidence": _("The judge's confidence a move needs, from 0 to 1."),
}
_WEIGHT_OF = {
    "w1": _("embedding similarity"),
    "w2": _("key-term coverage"),
    "w3": _("document recency"),
    "w4": _("document authority"),
}


def field_help(name: str) -> str:
    """The help text of one policy field, in the active language."""
    if name in _WEIGHT_OF:
        return str(FIELD_HELP[name]) % {"what": _WEIGHT_OF[name]}
    return str(FIELD_HELP[name])


@dataclass(frozen=True, slots=True)
class Change:
    """One field of a version against the version before it; None: not set (inherited)."""

    field: str
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class HistoryRow:
    version: int
    at: Any
    who: str  # empty: the system (an import, a migration)
    reason: str
    changes: list[Change]


def _shown(value: Any) -> Any:
    return ", ".join(value) if isinstance(value, list | tuple) else value


def history_rows(versions: Sequence[Any], *, earlier: Any = None) -> list[HistoryRow]:
    """Each version (newest first, as `policy_history` gives them) with the fields whose own
    value differs from the version before it (`earlier`: the one before the oldest shown, if
    any), in the form's order. A field set before and absent now went back to inheriting."""
    rows = []
    chain = [*versions, earlier]
    for version, before in zip(versions, chain[1:], strict=True):
        old = before.overrides if before is not None else {}
        new = version.overrides
        changes = [
            Change(name, _shown(old.get(name)), _shown(new.get(name)))
            for name in zone_policy.FIELD_NAMES
            if old.get(name) != new.get(name)
        ]
        user = version.created_by
        rows.append(
            HistoryRow(
                version=version.version,
                at=version.created_at,
                who=user.get_username() if user is not None else "",
                reason=version.reason,
                changes=changes,
            )
        )
    return rows
