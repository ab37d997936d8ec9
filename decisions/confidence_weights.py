"""Learning a zone's confidence weights w1..w4 (seed 000 §4.5) from its reviewers' per-claim
verdicts: propose (a fit and its held-back figures, nothing stored), adopt (a new version of
the zone's own policy with the fitted weights, with a reason, on the trail) and roll back
(a new version with the weights of an earlier one). The fitting is the pure
`evidence.weights_fit`; the versions are the zone's policy versions, so every rule about
them (checked for the zone and everything beneath, append-only, `policy.changed` on the
trail) holds for learned weights too.

The example of a verdict is the claim's evidence item with the best global probability in
the report the reviewer saw (the one `ClaimVerdict.engine_probability` names): its stored
similarity, coverage, recency and authority, none of which depends on the weights, against
the reviewer's "supported".
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypeVar

from django.contrib.auth.models import User
from django.utils.translation import gettext

from coordinates.models import Zone, ZonePolicyVersion
from coordinates.selectors import beneath, effective_policy
from coordinates.services import policy_update
from decisions.calibration import REASON_LIMIT, AnyUser, may_adopt, readable
from decisions.models import ClaimVerdict, Decision
from evidence import weights_fit
from maria.errors import ApplicationError, Conflict, Forbidden, NotFound

WEIGHT_FIELDS = ("w1", "w2", "w3", "w4")


# --- the examples -------------------------------------------------------------------------


def claim_signals(claim: Any) -> tuple[float, float, float, float] | None:
    """The (sim, cov, rec, auth) of the claim's item with the highest global probability
    (the first item when none carries one); None for a claim with no real item (only
    fabricated citations, or none): a verdict on it says nothing about the weights."""
    if not isinstance(claim, dict):
        return None
    best: tuple[float, tuple[float, float, float, float]] | None = None
    for item in claim.get("evidence", []) or []:
        if not isinstance(item, dict) or item.get("fabricated"):
            continue
        found = item.get("signals") or {}
        try:
            values = tuple(
                min(1.0, max(0.0, float(found.get(name, 0.0)))) for name in weights_fit.SIGNALS
            )
        except (TypeError, ValueError):
            continue
        probability = found.get("probability")
        rank = float(probability) if isinstance(probability, int | float) else -1.0
        if best is None or rank > best[0]:
            best = (rank, values)  # type: ignore[assignment]  # four floats, by SIGNALS
    return None if best is None else best[1]


@dataclass(frozen=True, slots=True)
class Examples:
    """The zone's verdicts usable for the weights, oldest first, and their fingerprint."""

    signals: list[tuple[float, float, float, float]]
    supported: list[bool]
    first: datetime | None
    last: datetime | None
    fingerprint: str


def weight_examples(zone: Zone) -> Examples:
    """The verdicts of the zone and the zones beneath it, with the signals of their claims
    from the reports the decisions carry (each report read once)."""
    rows = list(
        ClaimVerdict.objects.filter(beneath(zone.coordinate))
        .order_by("created_at", "pk")
        .values_list("pk", "created_at", "decision_id", "claim", "supported")
    )
    bodies = dict(
        Decision.objects.filter(pk__in={row[2] for row in rows}, report__isnull=False).values_list(
            "pk", "report__body"
        )
    )
    signals, supported, used = [], [], []
    first = last = None
    for pk, at, decision_id, claim, verdict in rows:
        claims = (bodies.get(decision_id) or {}).get("claims") or []
        values = claim_signals(claims[claim]) if claim < len(claims) else None
        if values is None:
            continue
        signals.append(values)
        supported.append(bool(verdict))
        used.append(f"{pk}:{int(verdict)}:{at.isoformat()}")
        first = first or at
        last = at
    # Which verdicts, as they stood: adopting refuses a fit the admin did not preview.
    fingerprint = hashlib.sha256("|".join(used).encode()).hexdigest()[:16]
    return Examples(signals, supported, first, last, fingerprint)


def current_weights(zone: Zone) -> tuple[float, float, float, float]:
    values = effective_policy(zone.coord).values
    return (values.w1, values.w2, values.w3, values.w4)


# --- propose --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WeightsProposal:
    """A fit of the zone's weights and its held-back figures, or why there is none."""

    zone: str
    verdicts: int
    fingerprint: str
    fit: weights_fit.WeightsFit | None = None
    why_not: str = ""
    window: tuple[str | None, str | None] = field(default=(None, None))

    def as_dict(self) -> dict[str, Any]:
        return {
            "zone": self.zone,
            "verdicts": self.verdicts,
            "fingerprint": self.fingerprint,
            "why_not": self.why_not or None,
            "window_from": self.window[0],
            "window_until": self.window[1],
            "fit": self.fit.as_dict() if self.fit is not None else None,
        }


def weights_propose(
    *, zone: Zone, user: AnyUser, minimum: int = weights_fit.MIN_WEIGHT_VERDICTS
) -> WeightsProposal:
    """Fit the weights on the zone's older verdicts and measure them and the zone's current
    weights on the latest quarter; nothing is stored, nothing judges differently."""
    readable(user, zone)
    examples = weight_examples(zone)
    n = len(examples.supported)
    window = (
        examples.first.isoformat() if examples.first else None,
        examples.last.isoformat() if examples.last else None,
    )
    if n < minimum:
        return WeightsProposal(
            zone=zone.coordinate,
            verdicts=n,
            fingerprint=examples.fingerprint,
            window=window,
            why_not=gettext(
                "too few verdicts: %(zone)s and the zones beneath it have %(n)s reviewer "
                "verdicts on claims with evidence; learning the weights needs %(minimum)s"
            )
            % {"zone": zone.coordinate, "n": n, "minimum": minimum},
        )
    current = current_weights(zone)
    fit = weights_fit.weights_with_figures(examples.signals, examples.supported, current)
    # The fit depends on the current weights too (the prior's centre): a policy edit since
    # the preview changes the fingerprint as a new verdict does.
    fingerprint = hashlib.sha256(f"{examples.fingerprint}|{current}".encode()).hexdigest()[:16]
    return WeightsProposal(
        zone=zone.coordinate,
        verdicts=n,
        fingerprint=fingerprint,
        fit=fit,
        window=window,
    )


# --- adopt and roll back ------------------------------------------------------------------


def adoption_reason(reason: Any, *, missing: str) -> str:
    """The reason an admin gives for adopting a proposal, stripped; `missing` is the refusal
    when there is none (it names what the proposal changes)."""
    if not isinstance(reason, str) or not reason.strip():
        raise ApplicationError(missing, field="reason")
    if len(reason.strip()) > REASON_LIMIT:
        raise ApplicationError(
            gettext("a reason has at most %(limit)s characters; this one has %(length)s")
            % {"limit": REASON_LIMIT, "length": len(reason.strip())},
            field="reason",
        )
    return reason.strip()


class _Previewable(Protocol):
    @property
    def fingerprint(self) -> str: ...


P = TypeVar("P", bound=_Previewable)


def previewed(fingerprint: Any, propose: Callable[[], P]) -> P:
    """The proposal an admin adopts, made again and held to the one they previewed: a
    fingerprint is required, and one that is not the fresh proposal's (the verdicts changed
    since) is a 409."""
    if not isinstance(fingerprint, str) or not fingerprint:
        raise ApplicationError(
            gettext("say which proposal you adopt: its fingerprint"), field="fingerprint"
        )
    proposal = propose()
    if proposal.fingerprint != fingerprint:
        raise Conflict(gettext("the zone's verdicts changed since this proposal; propose again"))
    return proposal


def _adopter(user: AnyUser, zone: Zone) -> User:
    if not may_adopt(user, zone):
        readable(user, zone)
        raise Forbidden(
            gettext("only a zone admin of %(zone)s or above changes the confidence weights")
            % {"zone": zone.coordinate}
        )
    if not isinstance(user, User):  # may_adopt is false for an anonymous user already
        raise Forbidden(gettext("sign in first"))
    return user


def own_overrides(zone: Zone) -> tuple[dict[str, Any], ZonePolicyVersion | None]:
    latest = zone.policy_versions.order_by("-version").first()
    return (dict(latest.overrides) if latest else {}), latest


def weights_adopt(*, zone: Zone, user: AnyUser, reason: Any, fingerprint: Any) -> ZonePolicyVersion:
    """Fit again on the same verdicts the admin previewed (`fingerprint`: 409 when the
    verdicts changed since) and make the fitted weights the zone's own in a new policy
    version (`policy_update`: checked for every zone beneath, `policy.changed` on the trail
    in its transaction). The version's reason records the held-back figures."""
    person = _adopter(user, zone)
    reason = adoption_reason(
        reason, missing=gettext("a reason is required to change the confidence weights")
    )
    proposal = previewed(fingerprint, lambda: weights_propose(zone=zone, user=person))
    if proposal.fit is None:
        raise ApplicationError(proposal.why_not, code="too_few_verdicts", field=None)
    fit = proposal.fit
    overrides, _ = own_overrides(zone)
    overrides.update(zip(WEIGHT_FIELDS, fit.weights, strict=True))
    before, after = fit.before.brier, fit.after.brier
    record = (
        f"{reason} [learned confidence weights ({fit.method}) from {fit.fitted_on} verdicts; "
        f"held-back Brier {before:.4f} -> {after:.4f} on {fit.after.n}]"
    )
    return policy_update(zone=zone, overrides=overrides, reason=record, actor=person)


def weights_rollback(*, zone: Zone, user: AnyUser, reason: Any, version: Any) -> ZonePolicyVersion:
    """A new policy version whose weights are those of the zone's own version `version`
    (absent there: inherited again from above); every other field stays as it is now."""
    person = _adopter(user, zone)
    reason = adoption_reason(
        reason, missing=gettext("a reason is required to change the confidence weights")
    )
    if isinstance(version, bool) or not isinstance(version, int):
        raise ApplicationError(gettext("version must be a whole number"), field="version")
    earlier = zone.policy_versions.filter(version=version).first()
    if earlier is None:
        raise NotFound(
            gettext("%(zone)s has no policy version %(version)s")
            % {"zone": zone.coordinate, "version": version},
            code="unknown_policy_version",
            field="version",
        )
    overrides, _ = own_overrides(zone)
    for name in WEIGHT_FIELDS:
        overrides.pop(name, None)
        if name in earlier.overrides:
            overrides[name] = earlier.overrides[name]
    record = f"{reason} [confidence weights as in version {version}]"
    return policy_update(zone=zone, overrides=overrides, reason=record, actor=person)
