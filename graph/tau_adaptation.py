"""The graph gate's tau_c adapted to how a zone's reviewers judged its graph-gated answers
(seed 002 §9.4, docs/math.md §20): propose (the EMA adaptation replayed over the zone's
reviewed verdicts, nothing stored), adopt (a new version of the zone's own policy with
`cohesion_tau` set to the adapted value, with a reason, on the trail). Nothing adapts
silently: tau_c changes only when a zone admin adopts a proposal, and a policy version is
rolled back like any other (a new version with the earlier values).

A verdict is a decision of the zone that carried a graph gate (an agent's answer naming
graph nodes: its report's `graph_gate`; or a /graph/ answer that escalated: its report is
the graph's) and that a person approved or rejected. Right: approved with no claim marked
unsupported; wrong: rejected, or a claim marked unsupported. Only the verdicts on answers
judged under the tau_c now in force are replayed: those under an earlier tau_c are what
moved it there already (and a rollback brings them back into play with their tau_c).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q
from django.utils.translation import gettext

from coordinates.models import Zone, ZonePolicyVersion
from coordinates.selectors import effective_policy
from coordinates.services import policy_update
from decisions.calibration import AnyUser, may_adopt, readable
from decisions.confidence_weights import adoption_reason, own_overrides, previewed
from decisions.events import Kind
from decisions.models import ClaimVerdict, Decision
from decisions.services import EVIDENCE_CHANGED
from graph.core.adaptation import EMA_WEIGHT, ThresholdState, adapted_cohesion_tau
from maria.errors import ApplicationError, Forbidden
from trail.ledger import SYSTEM
from trail.models import TrailEvent

# About the verdicts one EMA weight remembers (1 / EMA_WEIGHT): fewer say too little.
MIN_TAU_VERDICTS = round(1 / EMA_WEIGHT)


@dataclass(frozen=True, slots=True)
class GraphVerdict:
    decision: int
    at: datetime
    cohesion: float
    correct: bool


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def graph_verdicts(zone: Zone, tau: float) -> list[GraphVerdict]:
    """The zone's reviewed graph-gated decisions judged under `tau`, in the order of their
    verdicts (a person's `decision.approved` or `decision.failed`; not a re-review's
    "evidence changed", which says the text changed, not that the answer was wrong)."""
    # Only the gate's two numbers are read, not the reports' bodies: an agent's answer keeps
    # them in its report's `graph_gate`, a graph answer at its report's top level.
    rows = (
        Decision.objects.filter(zone=zone.coordinate, report__isnull=False)
        .filter(Q(report__body__has_key="graph_gate") | Q(report__mode__startswith="graph-"))
        .values_list(
            "pk",
            "report__body__graph_gate__cohesion",
            "report__body__graph_gate__cohesion_tau",
            "report__body__cohesion",
            "report__body__cohesion_tau",
        )
    )
    gated: dict[int, float] = {}
    for pk, answer_cohesion, answer_tau, graph_cohesion, graph_tau in rows.iterator():
        agents = answer_cohesion is not None
        cohesion = _number(answer_cohesion if agents else graph_cohesion)
        judged = _number(answer_tau if agents else graph_tau)
        if cohesion is not None and judged is not None and math.isclose(judged, tau, abs_tol=1e-9):
            gated[pk] = cohesion
    if not gated:
        return []
    events = (
        TrailEvent.objects.filter(
            decision_id__in=list(gated),
            kind__in=[Kind.DECISION_APPROVED, Kind.DECISION_FAILED],
        )
        .exclude(actor=SYSTEM)  # the gate's own release, or a validation that gave up
        .exclude(reason__startswith=f"{EVIDENCE_CHANGED}:")
        .order_by("created_at", "pk")
        .values_list("decision_id", "kind", "created_at")
    )
    first: dict[int, tuple[datetime, bool]] = {}
    for pk, kind, at in events:
        if pk is not None and pk not in first:
            first[pk] = (at, kind == Kind.DECISION_APPROVED)
    unsupported = set(
        ClaimVerdict.objects.filter(decision_id__in=list(first), supported=False).values_list(
            "decision_id", flat=True
        )
    )
    verdicts = [
        GraphVerdict(pk, at, gated[pk], approved and pk not in unsupported)
        for pk, (at, approved) in first.items()
    ]
    return sorted(verdicts, key=lambda v: (v.at, v.decision))


@dataclass(frozen=True, slots=True)
class TauProposal:
    """The zone's tau_c now and adapted, the two averages and how many verdicts fed them,
    or why there is no proposal."""

    zone: str
    current: float
    verdicts: int
    fingerprint: str
    adapted: float | None = None
    error_above: float | None = None
    agreement_below: float | None = None
    why_not: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "zone": self.zone,
            "current": self.current,
            "adapted": self.adapted,
            "verdicts": self.verdicts,
            "error_above": self.error_above,
            "agreement_below": self.agreement_below,
            "fingerprint": self.fingerprint,
            "why_not": self.why_not or None,
        }


def graph_tau_propose(*, zone: Zone, user: AnyUser, minimum: int = MIN_TAU_VERDICTS) -> TauProposal:
    """Replay the zone's verdicts under its current tau_c through the §9.4 adaptation,
    starting from that tau_c; nothing is stored, nothing is gated differently."""
    readable(user, zone)
    current = effective_policy(zone.coord).values.graph_tau
    verdicts = graph_verdicts(zone, current)
    used = "|".join(f"{v.decision}:{int(v.correct)}" for v in verdicts)
    fingerprint = hashlib.sha256(f"{current!r}|{used}".encode()).hexdigest()[:16]
    n = len(verdicts)
    if n < minimum:
        return TauProposal(
            zone=zone.coordinate,
            current=current,
            verdicts=n,
            fingerprint=fingerprint,
            why_not=gettext(
                "too few verdicts: %(zone)s has %(n)s reviewed graph-gated answers under its "
                "tau_c %(tau)s; adapting it needs %(minimum)s"
            )
            % {"zone": zone.coordinate, "n": n, "tau": current, "minimum": minimum},
        )
    state = adapted_cohesion_tau(
        ThresholdState(tau=current), ((v.cohesion, v.correct) for v in verdicts)
    )
    return TauProposal(
        zone=zone.coordinate,
        current=current,
        verdicts=n,
        fingerprint=fingerprint,
        # The steps are 0.01: rounding keeps the float sum's dust out of the policy.
        adapted=round(state.tau, 6),
        error_above=state.error_above,
        agreement_below=state.agreement_below,
    )


def graph_tau_adopt(
    *, zone: Zone, user: AnyUser, reason: Any, fingerprint: Any
) -> ZonePolicyVersion:
    """Adapt again over the same verdicts the admin previewed (`fingerprint`: 409 when they
    changed since) and make the adapted tau_c the zone's `cohesion_tau` in a new policy
    version (`policy_update`: checked for every zone beneath, `policy.changed` on the trail
    in its transaction). The version's reason records what the adaptation read."""
    if not may_adopt(user, zone) or not isinstance(user, User):
        readable(user, zone)
        raise Forbidden(
            gettext("only a zone admin of %(zone)s or above changes the graph gate's tau_c")
            % {"zone": zone.coordinate}
        )
    reason = adoption_reason(
        reason, missing=gettext("a reason is required to change the graph gate's tau_c")
    )
    proposal = previewed(fingerprint, lambda: graph_tau_propose(zone=zone, user=user))
    if proposal.adapted is None:
        raise ApplicationError(proposal.why_not, code="too_few_verdicts", field=None)
    overrides, _ = own_overrides(zone)
    overrides["cohesion_tau"] = proposal.adapted
    record = (
        f"{reason} [graph gate tau_c adapted (seed 002 §9.4) {proposal.current} -> "
        f"{proposal.adapted} from {proposal.verdicts} reviewed graph-gated answers; "
        f"error above {proposal.error_above:.4f}, agreement below "
        f"{proposal.agreement_below:.4f}]"
    )
    return policy_update(zone=zone, overrides=overrides, reason=record, actor=user)
