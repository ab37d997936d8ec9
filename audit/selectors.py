"""What the auditor's pages read: decisions by filter, the range of the trail shown, and
that range verified or exported."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from audit import integrity
from coordinates.coordinate import Coordinate, CoordinateError, parse
from coordinates.models import Role
from coordinates.selectors import AnyUser, beneath, in_scopes, within
from decisions.models import Decision
from gates.selectors import scopes_of
from maria.errors import NotFound
from maria.wording import gettext_noop, said
from trail import export, signing, verify, witness
from trail.models import TrailCheckpoint, TrailEvent

AUDIT_ROLES = (Role.AUDITOR,)
AUDIT_PAGE = 50


@dataclass(frozen=True, slots=True)
class AuditFilters:
    zone: str = ""
    state: str = ""
    gate: str = ""
    agent: str = ""
    reviewer: str = ""
    since: date | None = None
    until: date | None = None
    q: str = ""

    def as_query(self) -> dict[str, str]:
        pairs = {
            "zone": self.zone,
            "state": self.state,
            "gate": self.gate,
            "agent": self.agent,
            "reviewer": self.reviewer,
            "q": self.q,
            "since": self.since.isoformat() if self.since else "",
            "until": self.until.isoformat() if self.until else "",
        }
        return {k: v for k, v in pairs.items() if v}


def audit_decisions(user: AnyUser, filters: AuditFilters) -> QuerySet[Decision]:
    scopes = scopes_of(user, AUDIT_ROLES)
    rows = Decision.objects.filter(within(scopes)).select_related("claimed_by")
    if filters.zone:
        rows = rows.filter(beneath(filters.zone))
    if filters.state:
        rows = rows.filter(state=filters.state)
    if filters.gate:
        rows = rows.filter(gate=filters.gate)
    if filters.agent:
        rows = rows.filter(agent=filters.agent)
    if filters.reviewer:
        acted = TrailEvent.objects.filter(actor=filters.reviewer, decision_id__isnull=False)
        rows = rows.filter(pk__in=acted.values("decision_id"))
    if filters.since:
        rows = rows.filter(created_at__date__gte=filters.since)
    if filters.until:
        rows = rows.filter(created_at__date__lte=filters.until)
    if filters.q:
        rows = rows.filter(Q(question__icontains=filters.q) | Q(answer__icontains=filters.q))
    return rows.order_by("-created_at", "-pk")


def audit_range(user: AnyUser, zone: str) -> list[Coordinate] | None:
    """The chains an auditor may export or verify: the zone asked for, within their scope;
    raises 404 for a zone they cannot see."""
    scopes = scopes_of(user, AUDIT_ROLES)
    if not zone:
        if scopes is not None and not scopes:
            raise NotFound("no auditor role")
        return scopes
    try:
        coordinate = parse(zone)
    except CoordinateError:
        raise NotFound("no such zone") from None
    if not in_scopes(str(coordinate), scopes):
        raise NotFound("no such zone")
    return [coordinate]


def _since_moment(since: date | None) -> datetime | None:
    if since is None:
        return None
    return datetime.combine(since, datetime.min.time(), tzinfo=timezone.get_current_timezone())


def trail_export(scopes: Sequence[Coordinate] | None, since: date | None) -> Iterator[str]:
    """The page's export: the range's chains with the evidence their events name."""
    label = ",".join(str(s) for s in scopes) if scopes is not None else "all"
    return export.export_lines(
        scopes=scopes,
        since=_since_moment(since),
        label=label,
        appendix=integrity.evidence_records,
    )


def trail_verify(scopes: Sequence[Coordinate] | None, since: date | None) -> verify.TrailReport:
    """Verify exactly the range the page shows: the export of those chains and their
    evidence, checked as an auditor's copy would be (trail.export.verify_export, with the
    evidence re-hashed by audit.integrity), with the keys this server knows
    (signing.public_keys) and against the configured witness, read back within its timeout:
    the same verdict as `verify_trail --file --public-key --witness` on that export."""
    witnessed: witness.WitnessLog | None = None
    unread = ""
    if settings.MARIA_TRAIL_WITNESS:
        try:
            witnessed = witness.read_back(settings.MARIA_TRAIL_WITNESS)
        except witness.WitnessError as error:
            unread = said(gettext_noop("not checked: %(error)s"), {"error": error.why})
    try:
        keys = signing.public_keys()
    except signing.SigningKeyError:
        keys = []  # a misconfigured key: the checkpoint task says so; the page still verifies
    report = export.verify_export(
        trail_export(scopes, since),
        source=said(gettext_noop("the shown range")),
        appendix_check=integrity.verify_evidence_records,
        public_keys=keys,
        witnessed=witnessed,
    )
    if unread:
        report.witness = unread
    return report


# --- the checkpoints, as an auditor checks them (the page under /audit/checkpoints/) ----------


@dataclass(frozen=True, slots=True)
class CheckpointLine:
    """One checkpoint with what this server can say of it: its signature checked with the
    keys it publishes (signing.public_keys), and whether the witness holds the same seal."""

    seq: int
    created_at: datetime
    hash: str
    chains: int
    events: int
    key_id: str
    signature: str  # "verified", "not verified", "unknown key" or "unsigned"
    witnessed: str  # "held", "differs", "not held" or "" (no witness read)


def checkpoint_lines(
    checkpoints: Sequence[TrailCheckpoint],
    keys: Sequence[signing.PublicKey],
    witnessed: witness.WitnessLog | None,
) -> list[CheckpointLine]:
    """Pure: each checkpoint's signature against the known keys, and its seal against the
    witness's copy (None: no witness, or it could not be read)."""
    by_id = {key.key_id: key for key in keys}
    lines = []
    for checkpoint in checkpoints:
        key_id = checkpoint.key_id or ""
        if not checkpoint.signature:
            signed = "unsigned"
        elif (key := by_id.get(key_id)) is None:
            signed = "unknown key"
        else:
            signed = (
                "verified"
                if key.verifies(checkpoint.hash, checkpoint.signature)
                else ("not verified")
            )
        held = ""
        if witnessed is not None:
            seal = witnessed.seals.get(checkpoint.seq)
            if seal is None:
                held = "not held"
            else:
                same = (seal.hash, seal.signature) == (checkpoint.hash, checkpoint.signature or "")
                held = "held" if same else "differs"
        lines.append(
            CheckpointLine(
                seq=checkpoint.seq,
                created_at=checkpoint.created_at,
                hash=checkpoint.hash,
                chains=checkpoint.chains,
                events=checkpoint.events,
                key_id=key_id,
                signature=signed,
                witnessed=held,
            )
        )
    return lines


def checkpoints_read(
    checkpoints: Sequence[TrailCheckpoint],
) -> tuple[list[CheckpointLine], str]:
    """The checkpoints' lines, with the configured witness read back within its timeout, and
    one line on the witness: "" when it was read, else why not ("none", or its error)."""
    witnessed: witness.WitnessLog | None = None
    unread = "none"
    if settings.MARIA_TRAIL_WITNESS:
        try:
            witnessed = witness.read_back(settings.MARIA_TRAIL_WITNESS)
            unread = ""
        except witness.WitnessError as error:
            unread = error.why
    try:
        keys = signing.public_keys()
    except signing.SigningKeyError:
        keys = []  # a misconfigured key: the checkpoint task says so; the page still lists
    return checkpoint_lines(checkpoints, keys, witnessed), unread
