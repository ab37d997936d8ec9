"""Proposing, previewing and adopting a zone's calibration of the claim verifier, learned
from its reviewers' per-claim verdicts (`ClaimVerdict`); the fitting itself is the pure
`evidence.calibration`, the stored versions `evidence.models.ZoneCalibration`.

A proposal fits on the zone's verdicts (the zone's and those of zones beneath it) except the
latest quarter, held back to measure it: its reliability before (the global probability)
and after (calibrated) is on those. It judges nothing until a zone admin adopts it, with a
reason, on the trail; adopting retires the version adopted before.

The what-if replay is done here, not in gates: gates sits above this app, so its grading
cannot be imported; `evidence.validation.regrade_stored` re-scores a stored report with
`evidence.scoring` and grades it with the grader the gates app registered at start-up,
the same one every live decision goes through.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone
from django.utils.translation import gettext

from coordinates.models import Role, Zone
from coordinates.selectors import beneath, has_role
from decisions import events
from decisions.models import ClaimVerdict, Decision
from evidence import calibration
from evidence.models import ZoneCalibration
from evidence.validation import adopted_calibrations, in_force, regrade_stored
from maria.errors import ApplicationError, Conflict, Forbidden, NotFound
from trail import ledger

log = logging.getLogger(__name__)

READ_ROLES = (Role.ZONE_ADMIN, Role.AUDITOR)
ADOPT_ROLES = (Role.ZONE_ADMIN,)
REASON_LIMIT = 2000
PREVIEW_SAMPLE = 20  # changed decisions named in a preview, newest first
GATE_ORDER = ("auto", "flagged", "required", "blocked")  # least to most human attention

AnyUser = AbstractBaseUser | AnonymousUser


# --- reads ----------------------------------------------------------------------------------


def may_read(user: AnyUser, zone: Zone) -> bool:
    """A zone admin or auditor of the zone or above it (a superuser anywhere)."""
    return has_role(user, READ_ROLES, zone.coord)


def readable(user: AnyUser, zone: Zone) -> None:
    """Raise the 404 another zone's reader gets (as for a zone that does not exist)."""
    if not may_read(user, zone):
        raise NotFound(
            gettext("unknown zone %(zone)s") % {"zone": zone.coordinate},
            code="unknown_zone",
            field="coordinate",
        )


def may_adopt(user: AnyUser, zone: Zone) -> bool:
    return has_role(user, ADOPT_ROLES, zone.coord)


def calibration_versions(zone: Zone) -> list[ZoneCalibration]:
    """The zone's own calibration versions, newest first."""
    return list(
        ZoneCalibration.objects.filter(zone=zone)
        .select_related("zone", "adopted_by")
        .order_by("-version")
    )


def calibration_get(zone: Zone, version: int) -> ZoneCalibration:
    row = ZoneCalibration.objects.filter(zone=zone, version=version).select_related("zone").first()
    if row is None:
        raise NotFound(
            gettext("%(zone)s has no calibration version %(version)s")
            % {"zone": zone.coordinate, "version": version},
            code="unknown_calibration",
            field="version",
        )
    return row


def calibration_json(row: ZoneCalibration) -> dict[str, Any]:
    """A version as the API lists it and the page shows it."""
    return {
        "zone": row.zone.coordinate,
        "version": row.version,
        "status": row.status,
        "method": row.method,
        "params": row.params,
        "verdicts": row.verdicts,
        "window_from": row.window_from.isoformat(),
        "window_until": row.window_until.isoformat(),
        "fitted_by": row.fitted_by,
        "reliability_before": row.reliability_before,
        "reliability_after": row.reliability_after,
        "adopted_at": row.adopted_at.isoformat() if row.adopted_at else None,
        "adopted_by": row.adopted_by.get_username() if row.adopted_by else None,
        "adopt_reason": row.adopt_reason,
        "created_at": row.created_at.isoformat(),
    }


def _verdicts(zone: Zone) -> list[tuple[datetime, float, bool]]:
    """The zone's labelled examples, oldest first: (when, the engine's global probability,
    the reviewer's verdict). A verdict on a claim the engine gave no probability (a
    fabricated citation, a claim without one) teaches nothing about the probability."""
    rows = (
        ClaimVerdict.objects.filter(beneath(zone.coordinate), engine_probability__isnull=False)
        .order_by("created_at", "pk")
        .values_list("created_at", "engine_probability", "supported")
    )
    return [(at, float(p), supported) for at, p, supported in rows if p is not None]


# --- propose ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Proposal:
    """What `calibration_propose` did: the stored version, or why there is none."""

    zone: str
    verdicts: int  # the zone's verdicts with an engine probability
    calibration: ZoneCalibration | None = None
    why_not: str = ""


def calibration_propose(
    *,
    zone: Zone,
    fitted_by: str,
    actor: AbstractBaseUser | None = None,
    minimum: int = calibration.MIN_VERDICTS,
) -> Proposal:
    """Fit a calibration on the zone's verdicts and store it as its next proposed version,
    with its reliability before and after on the held-back verdicts; or say why not (fewer
    than `minimum` verdicts). The fit runs before the transaction, which only numbers and
    stores the version (the zone chain's lock serialises the numbering)."""
    if not isinstance(fitted_by, str) or not fitted_by.strip():
        raise ApplicationError(gettext("say who or what fits the calibration"), field="fitted_by")
    rows = _verdicts(zone)
    n = len(rows)
    if n < minimum:
        return Proposal(
            zone=zone.coordinate,
            verdicts=n,
            why_not=(
                f"too few verdicts: {zone.coordinate} and the zones beneath it have {n} "
                f"reviewer verdicts with an engine probability; a calibration needs {minimum}"
            ),
        )
    split = calibration.split_at(n)
    learn, held = rows[:split], rows[split:]
    fitted = calibration.fit(
        [p for _, p, _ in learn], [y for _, _, y in learn], minimum=min(minimum, split)
    )
    held_p = [p for _, p, _ in held]
    held_y = [y for _, _, y in held]
    before = calibration.reliability(held_p, held_y).as_dict()
    after = calibration.reliability(calibration.apply_all(fitted, held_p), held_y).as_dict()
    with transaction.atomic():
        # The trail lock first (on SQLite the write lock before any read), as policy edits do.
        ledger.lock(ledger.chain_for(zone.coordinate))
        latest = ZoneCalibration.objects.filter(zone=zone).aggregate(top=Max("version"))["top"]
        row = ZoneCalibration.objects.create(
            zone=zone,
            version=(latest or 0) + 1,
            method=fitted.method,
            params=dict(fitted.params),
            verdicts=split,
            window_from=learn[0][0],
            window_until=learn[-1][0],
            fitted_by=fitted_by.strip()[:150],
            reliability_before=before,
            reliability_after=after,
        )
        events.calibration_proposed(row, actor=actor)
        _log_after_commit(
            "calibration proposed", zone=zone.coordinate, version=row.version, verdicts=split
        )
    return Proposal(zone=zone.coordinate, verdicts=n, calibration=row)


def _log_after_commit(message: str, **fields: Any) -> None:
    transaction.on_commit(lambda: log.info(message, extra=fields))


def zones_due_for_calibration(*, minimum: int = calibration.MIN_VERDICTS) -> list[Zone]:
    """The nodes with at least `minimum` new verdicts (of their own or beneath them) since
    their last calibration version was fitted (all of them, when it has none): every zone
    (Z level), and a planet, universe or galaxy only once it has a version (someone chose to
    calibrate at that level, with `manage.py calibrate`), lest every ancestor of a busy zone
    be proposed a calibration of its own each week."""
    last = dict(ZoneCalibration.objects.values_list("zone_id").annotate(at=Max("created_at")))
    reviewed = set(
        ClaimVerdict.objects.filter(engine_probability__isnull=False)
        .values_list("zone", flat=True)
        .distinct()
    )
    due = []
    for zone in Zone.objects.all().order_by("depth", "coordinate"):
        if zone.depth < 4 and zone.pk not in last:
            continue
        if not any(z == zone.coordinate or z.startswith(f"{zone.coordinate}.") for z in reviewed):
            continue  # nothing reviewed here: no query
        new = ClaimVerdict.objects.filter(
            beneath(zone.coordinate), engine_probability__isnull=False
        )
        since = last.get(zone.pk)
        if since is not None:
            new = new.filter(created_at__gt=since)
        if new.count() >= minimum:
            due.append(zone)
    return due


@dataclass(slots=True)
class WeeklyRun:
    proposed: list[str] = field(default_factory=list)  # "G1.U1.P1.Z1@3"
    skipped: list[str] = field(default_factory=list)  # zones with too few verdicts
    failed: list[str] = field(default_factory=list)  # zones whose proposal raised


def calibrations_propose_due(*, fitted_by: str = "weekly job") -> WeeklyRun:
    """Propose a version for every zone with enough new verdicts since its last one; one
    zone's failure is logged and the others go on."""
    run = WeeklyRun()
    for zone in zones_due_for_calibration():
        try:
            proposal = calibration_propose(zone=zone, fitted_by=fitted_by)
        except Exception:
            log.exception("calibration proposal failed", extra={"zone": zone.coordinate})
            run.failed.append(zone.coordinate)
            continue
        if proposal.calibration is None:
            run.skipped.append(zone.coordinate)
        else:
            run.proposed.append(f"{zone.coordinate}@{proposal.calibration.version}")
    return run


# --- preview ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Preview:
    """How the gates of the zone's recent decisions would change if the version judged
    them, against the calibration that did (each report's own, or none)."""

    zone: str
    version: int
    days: int
    decisions: int
    old: dict[str, int]
    new: dict[str, int]
    moves: dict[tuple[str, str], int]  # (gate then, gate with it) -> count, changes only
    changed_decisions: list[int]  # the newest PREVIEW_SAMPLE of those that would change

    @property
    def changed(self) -> int:
        return sum(self.moves.values())

    def _strictness(self, sign: int) -> int:
        rank = {gate: i for i, gate in enumerate(GATE_ORDER)}
        return sum(
            n for (a, b), n in self.moves.items() if (rank.get(b, 0) - rank.get(a, 0)) * sign > 0
        )

    @property
    def stricter(self) -> int:
        return self._strictness(+1)

    @property
    def looser(self) -> int:
        return self._strictness(-1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "zone": self.zone,
            "version": self.version,
            "days": self.days,
            "decisions": self.decisions,
            "changed": self.changed,
            "stricter": self.stricter,
            "looser": self.looser,
            "old": self.old,
            "new": self.new,
            "moves": [{"from": a, "to": b, "count": n} for (a, b), n in sorted(self.moves.items())],
            "changed_decisions": self.changed_decisions,
        }


def calibration_preview(
    *, zone: Zone, version: int, user: AnyUser, days: int | None = None
) -> Preview:
    """Replay the stored reports of the last `days` days (MARIA_WHATIF_DAYS, 30) of the
    zone's decisions and those beneath it: each graded as it was (under the calibration its
    report names) and as it would be with this version in force. A zone beneath with an
    adopted calibration of its own keeps it, so its decisions do not move. Changes nothing."""
    readable(user, zone)
    candidate = in_force(calibration_get(zone, version))
    days = settings.MARIA_WHATIF_DAYS if days is None else days
    since = timezone.now() - timedelta(days=days)
    rows = list(
        Decision.objects.filter(beneath(zone.coordinate), report__isnull=False)
        .filter(created_at__gte=since)
        .order_by("-created_at", "-pk")
        .values_list("pk", "zone", "report__body", "report__policy")
    )
    # Which calibration judges each zone once this one is adopted: this one, unless the zone
    # is beneath one with its own adopted calibration (the nearest one wins).
    current = adopted_calibrations({z for _, z, _, _ in rows})
    depth = len(zone.coordinate.split("."))
    used = _calibrations_named(rows)
    old: Counter[str] = Counter(dict.fromkeys(GATE_ORDER, 0))
    new: Counter[str] = Counter(dict.fromkeys(GATE_ORDER, 0))
    moves: Counter[tuple[str, str]] = Counter()
    changed: list[int] = []
    for pk, decision_zone, body, policy in rows:
        named = body.get("calibration") if isinstance(body, dict) else None
        then = used.get((named["zone"], named["version"])) if named else None
        mine = current.get(decision_zone)
        keeps_own = mine is not None and len(mine.zone.split(".")) > depth
        after = mine.calibration if keeps_own and mine is not None else candidate.calibration
        before_gate = regrade_stored(body, policy, then)
        after_gate = regrade_stored(body, policy, after)
        old[before_gate] += 1
        new[after_gate] += 1
        if before_gate != after_gate:
            moves[(before_gate, after_gate)] += 1
            if len(changed) < PREVIEW_SAMPLE:
                changed.append(pk)
    return Preview(
        zone=zone.coordinate,
        version=version,
        days=days,
        decisions=len(rows),
        old=dict(old),
        new=dict(new),
        moves=dict(moves),
        changed_decisions=changed,
    )


def _calibrations_named(
    rows: list[tuple[int, str, Any, Any]],
) -> dict[tuple[str, int], calibration.Calibration]:
    """The calibrations the reports name (`body.calibration`), read in one query."""
    named = {
        (body["calibration"]["zone"], body["calibration"]["version"])
        for _, _, body, _ in rows
        if isinstance(body, dict) and body.get("calibration")
    }
    if not named:
        return {}
    q = Q(pk__in=[])
    for coordinate, version in named:
        q |= Q(zone__coordinate=coordinate, version=version)
    found = ZoneCalibration.objects.filter(q).select_related("zone")
    return {(row.zone.coordinate, row.version): in_force(row).calibration for row in found}


# --- adopt ------------------------------------------------------------------------------


def _reason(reason: Any) -> str:
    if not isinstance(reason, str):
        raise ApplicationError(gettext("reason must be a string"), field="reason")
    reason = reason.strip()
    if not reason:
        raise ApplicationError(
            gettext("a reason is required to adopt a calibration"), field="reason"
        )
    if len(reason) > REASON_LIMIT:
        raise ApplicationError(
            gettext("a reason has at most %(limit)s characters; this one has %(length)s")
            % {"limit": REASON_LIMIT, "length": len(reason)},
            field="reason",
        )
    return reason


def calibration_adopt(
    *, zone: Zone, version: int, user: AbstractBaseUser, reason: str
) -> ZoneCalibration:
    """Adopt a version for the zone (a zone admin of the zone or above, with a reason): from
    the next decision on it judges the zone's answers and those of zones beneath it without
    one of their own. The version adopted before is retired; a retired one may be adopted
    again (a rollback). One transaction, its trail event in it; the log after commit."""
    reason = _reason(reason)
    if not may_adopt(user, zone):
        if may_read(user, zone):
            raise Forbidden(
                gettext("only a zone admin of %(zone)s or above adopts a calibration")
                % {"zone": zone.coordinate}
            )
        raise NotFound(
            gettext("unknown zone %(zone)s") % {"zone": zone.coordinate},
            code="unknown_zone",
            field="coordinate",
        )
    with transaction.atomic():
        ledger.lock(ledger.chain_for(zone.coordinate))
        rows = ZoneCalibration.objects.select_for_update().filter(zone=zone)
        row = rows.filter(version=version).select_related("zone").first()
        if row is None:
            raise NotFound(
                gettext("%(zone)s has no calibration version %(version)s")
                % {"zone": zone.coordinate, "version": version},
                code="unknown_calibration",
                field="version",
            )
        if row.status == ZoneCalibration.Status.ADOPTED:
            raise Conflict(
                gettext("calibration version %(version)s of %(zone)s is adopted already")
                % {"version": version, "zone": zone.coordinate}
            )
        previous = rows.filter(status=ZoneCalibration.Status.ADOPTED).first()
        if previous is not None:
            # Retired first: the database allows one adopted version per zone.
            previous.status = ZoneCalibration.Status.RETIRED
            previous.save(update_fields=["status"])
        row.status = ZoneCalibration.Status.ADOPTED
        row.adopted_at = timezone.now()
        row.adopted_by = user  # type: ignore[assignment]  # a User: the auth model
        row.adopt_reason = reason
        row.save(update_fields=["status", "adopted_at", "adopted_by", "adopt_reason"])
        events.calibration_adopted(row, actor=user, reason=reason, retired=previous)
        _log_after_commit(
            "calibration adopted",
            zone=zone.coordinate,
            version=version,
            retired=previous.version if previous is not None else None,
            user=user.get_username(),
        )
    return row
