"""Knowledge-base conflicts as work: found on ingest and nightly (evidence.conflicts decides
which paragraphs disagree), listed for the zone's admins, resolved on the trail, and read by
the validation so that an answer resting on a disputed paragraph goes to a person."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import timedelta
from itertools import islice
from time import monotonic
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone
from django.utils.translation import gettext

from coordinates.coordinate import Coordinate
from coordinates.models import Role
from coordinates.selectors import beneath, can_see, has_role
from evidence import events, signals
from evidence.conflicts import Budget, Disagreement, Passage, each_disagreement
from evidence.models import DocumentVersion, EvidenceBundle, KnowledgeConflict, Paragraph
from evidence.reasons import CITATIONS_DISAGREE
from maria.errors import ApplicationError, Conflict, Forbidden, NotFound

logger = logging.getLogger(__name__)

# An answer citing a side of one of these goes to a person; a soft conflict is work for the
# admins but does not hold answers back.
HOLDING = (KnowledgeConflict.Kind.HARD, KnowledgeConflict.Kind.TEMPORAL)
CITED_WITHIN_DAYS = 90  # a temporal conflict matters only while recent answers cite the old text
REASON_LIMIT = 2000
PASSAGE_CHUNK = 2000  # paragraphs fetched per round trip
STORE_CHUNK = 500  # disagreements stored per round of the override and citation checks


def _scope(zone: str) -> Q:
    """Paragraphs a zone's answers may rest on: its own, and those of the levels above it
    (documents above a zone govern every zone beneath)."""
    lineage = [str(c) for c in Coordinate.parse(zone).lineage()]
    return Q(zone__in=lineage)


def _passages(paragraphs: QuerySet[Paragraph]) -> list[Passage]:
    """The paragraphs as the detector reads them, fetched in chunks as plain tuples: a zone of
    many paragraphs costs their text, not a model instance each."""
    rows = paragraphs.order_by("version_id", "number").values_list(
        "pk", "version__document_id", "version__version", "text"
    )
    return [
        Passage(key=key, document=document, version=version, text=text)
        for key, document, version, text in rows.iterator(chunk_size=PASSAGE_CHUNK)
    ]


def _budget() -> Budget:
    return Budget(deadline=monotonic() + settings.MARIA_CONFLICT_SCAN_SECONDS)


def _store_as_found(
    found: Iterator[Disagreement], *, zone: str, found_by: str, budget: Budget, subject: str
) -> int:
    """Stores the disagreements a scan yields, STORE_CHUNK at a time (memory stays that of
    one chunk however many it finds), and says so when the scan stopped at its budget."""
    stored = 0
    while chunk := list(islice(found, STORE_CHUNK)):
        stored += _store(_worth_keeping(_not_overrides(chunk), zone), zone=zone, found_by=found_by)
    if budget.cut:
        logger.warning(
            "knowledge conflict scan stopped at its budget",
            extra={"subject": subject, "comparisons_left": budget.comparisons, "new": stored},
        )
    return stored


def _cited_versions(zone: str, since_days: int = CITED_WITHIN_DAYS) -> set[tuple[int, int | None]]:
    """(document, version) pairs that the zone's recent bundles cite; version None when a
    citation named no version (it meant the version current then)."""
    since = timezone.now() - timedelta(days=since_days)
    cited: set[tuple[int, int | None]] = set()
    bundles = EvidenceBundle.objects.filter(beneath(zone), created_at__gte=since)
    for claims in bundles.values_list("claims", flat=True).iterator(chunk_size=500):
        for claim in claims or ():
            for citation in claim.get("citations", ()) if isinstance(claim, dict) else ():
                document = citation.get("document") if isinstance(citation, dict) else None
                if isinstance(document, int):
                    version = citation.get("version")
                    cited.add((document, version if isinstance(version, int) else None))
    return cited


def _store(found: Sequence[Disagreement], *, zone: str, found_by: str) -> int:
    stored = 0
    for d in found:
        first, second = sorted((d.first, d.second)) if d.kind != "temporal" else (d.first, d.second)
        try:
            with transaction.atomic():
                _, created = KnowledgeConflict.objects.get_or_create(
                    first_id=first,
                    second_id=second,
                    defaults={
                        "zone": zone,
                        "kind": d.kind,
                        "reason": d.reason,
                        "words": list(d.words),
                        "found_by": found_by,
                    },
                )
        except IntegrityError:  # a concurrent scan stored it first
            created = False
        stored += created
    return stored


def _worth_keeping(found: list[Disagreement], zone: str) -> list[Disagreement]:
    """A temporal conflict is work only while answers cite the older text: a new version
    that changes a value nobody relied on is just the document moving on."""
    if not any(d.kind == "temporal" for d in found):
        return found
    cited = _cited_versions(zone)
    # Plain values: a paragraph's version row carries the whole document's text (1.9 MB for
    # the memo of issue 28), and a scan's chunk names up to a thousand paragraphs.
    olds = {
        pk: (document, version)
        for pk, document, version in Paragraph.objects.filter(
            pk__in=[d.first for d in found if d.kind == "temporal"]
        ).values_list("pk", "version__document_id", "version__version")
    }
    kept = []
    for d in found:
        if d.kind == "temporal":
            document, version = olds[d.first]
            if (document, version) not in cited and (document, None) not in cited:
                continue
        kept.append(d)
    return kept


def _not_overrides(found: list[Disagreement]) -> list[Disagreement]:
    """A zone's (or a nearer level's) document that overrides one of the same title above it
    is meant to say otherwise (docs/architecture.md, "Documents at every level"): the two are
    no inconsistency of the knowledge base."""
    if not found:
        return found
    # (document, title, zone) of each side, as plain values: not the version rows, which
    # carry their whole document's text each.
    sides = {
        pk: (document, title, node)
        for pk, document, title, node in Paragraph.objects.filter(
            pk__in={key for d in found for key in (d.first, d.second)}
        ).values_list(
            "pk",
            "version__document_id",
            "version__document__title",
            "version__document__zone__coordinate",
        )
    }

    def overrides(d: Disagreement) -> bool:
        (one, one_title, one_node), (two, two_title, two_node) = sides[d.first], sides[d.second]
        return (
            one != two
            and one_title == two_title
            and one_node != two_node
            and (one_node.startswith(two_node + ".") or two_node.startswith(one_node + "."))
        )

    return [d for d in found if not overrides(d)]


def conflicts_scan_version(*, version_id: int) -> int:
    """After a version is stored: its paragraphs against the current paragraphs its zone's
    answers may cite, and against the version it supersedes. Returns how many are new."""
    version = DocumentVersion.objects.select_related("document__zone").get(pk=version_id)
    zone = version.document.zone.coordinate
    new = Paragraph.objects.filter(version=version)
    existing = Paragraph.objects.filter(_scope(zone) | beneath(zone), current=True).exclude(
        version=version
    )
    if version.supersedes_id:
        existing = existing | Paragraph.objects.filter(version_id=version.supersedes_id)
    budget = _budget()
    found = each_disagreement(_passages(new), _passages(existing), budget)
    stored = _store_as_found(
        found, zone=zone, found_by="ingest", budget=budget, subject=f"version:{version_id}"
    )
    if stored:
        logger.info("knowledge conflicts found", extra={"version": version_id, "new": stored})
    return stored


def conflicts_scan_zone(*, zone: str) -> int:
    """The nightly look over a zone: every pair of its current paragraphs (and those above
    it) that disagree and were not found before. Returns how many are new."""
    budget = _budget()
    found = each_disagreement(
        _passages(Paragraph.objects.filter(_scope(zone), current=True)), (), budget
    )
    return _store_as_found(
        found, zone=zone, found_by="nightly", budget=budget, subject=f"zone:{zone}"
    )


def conflicts_from_validation(contradictions: Iterable[Mapping[str, Any]], *, zone: str) -> int:
    """Two cited paragraphs that a validation found disagreeing about one claim (a report's
    "cited paragraphs ... disagree" contradictions) are a knowledge conflict too (seed 000
    §9.6): work for the zone's admins beside the ingest and nightly scans' findings, stored
    once per pair whoever finds it first. Two versions of one document are left to the
    re-review of changed evidence. Returns how many are new."""
    wanted = [
        c for c in contradictions if c.get("reason") == CITATIONS_DISAGREE and len(c["items"]) == 2
    ]
    if not wanted:
        return 0
    places = {(i["document"], i["version"], i["paragraph"]) for c in wanted for i in c["items"]}
    # Only the cited paragraphs themselves: a document may hold tens of thousands.
    exact = Q()
    for document, version, number in places:
        exact |= Q(version__document_id=document, version__version=version, number=number)
    paragraphs = {
        (document, version, number): pk
        for pk, document, version, number in Paragraph.objects.filter(exact).values_list(
            "pk", "version__document_id", "version__version", "number"
        )
    }
    found = []
    for c in wanted:
        one, two = ((i["document"], i["version"], i["paragraph"]) for i in c["items"])
        if one[0] == two[0] or one not in paragraphs or two not in paragraphs:
            continue
        found.append(Disagreement(paragraphs[one], paragraphs[two], "hard", CITATIONS_DISAGREE, ()))
    return _store(_not_overrides(found), zone=zone, found_by="validation")


def held_back() -> RawSQL:
    """Whether an open conflict that holds answers back names the paragraph: an annotation
    for a query of paragraphs (their own table, not joined), so that the few it marks are
    the only ones `open_conflicts` reads, and a validation citing undisputed paragraphs asks
    no more. Written out: Django's Exists(...) cost as much CPU to build, for each
    validation, as the query it saves; this costs about 1 ms less (read_cited, measured)."""
    return RawSQL(_HELD_BACK, HOLDING, output_field=BooleanField())  # noqa: S611 - fixed text


# One placeholder for each kind in HOLDING.
_HELD_BACK = (
    'EXISTS (SELECT 1 FROM "evidence_knowledgeconflict" held'
    ' WHERE (held.first_id = "evidence_paragraph".id OR held.second_id = "evidence_paragraph".id)'
    " AND held.resolved_at IS NULL AND held.kind IN (%s, %s))"
)


def open_conflicts(paragraph_ids: Iterable[int]) -> dict[int, list[KnowledgeConflict]]:
    """The open conflicts that hold answers back, by each paragraph they name."""
    ids = set(paragraph_ids)
    by_paragraph: dict[int, list[KnowledgeConflict]] = {}
    if not ids:
        return by_paragraph
    rows = KnowledgeConflict.objects.filter(
        Q(first_id__in=ids) | Q(second_id__in=ids), resolved_at__isnull=True, kind__in=HOLDING
    ).select_related("first__version", "second__version")
    for conflict in rows:
        for side in (conflict.first_id, conflict.second_id):
            if side in ids:
                by_paragraph.setdefault(side, []).append(conflict)
    return by_paragraph


def conflict_resolve(
    *, conflict_id: int, user: AbstractBaseUser, resolution: str, reason: str
) -> KnowledgeConflict:
    """A zone admin says which side governs (or that a new version settles it, or that it is
    no conflict): recorded on the zone's chain, and answers citing it are held no more."""
    if resolution not in KnowledgeConflict.Resolution.values:
        raise ApplicationError(
            gettext("resolution must be one of %(choices)s")
            % {"choices": ", ".join(KnowledgeConflict.Resolution.values)},
            field="resolution",
        )
    reason = (reason or "").strip()
    if not reason:
        raise ApplicationError(gettext("a reason is required"), field="reason")
    if len(reason) > REASON_LIMIT:
        raise ApplicationError(
            gettext("at most %(limit)s characters") % {"limit": REASON_LIMIT}, field="reason"
        )
    with transaction.atomic():
        try:
            conflict = KnowledgeConflict.objects.select_for_update().get(pk=conflict_id)
        except KnowledgeConflict.DoesNotExist as missing:
            raise NotFound(
                gettext("no knowledge conflict %(id)s") % {"id": conflict_id}
            ) from missing
        where = Coordinate.parse(conflict.zone)
        if not can_see(user, where):  # another zone's conflict: as if there were none
            raise NotFound(gettext("no knowledge conflict %(id)s") % {"id": conflict_id})
        if not has_role(user, (Role.ZONE_ADMIN,), where):
            raise Forbidden(
                gettext("resolving a knowledge conflict needs the zone admin role there")
            )
        if conflict.resolved_at is not None:
            raise Conflict(
                gettext("knowledge conflict %(id)s is resolved already") % {"id": conflict_id}
            )
        conflict.resolution = resolution
        conflict.resolution_reason = reason
        conflict.resolved_by = user  # type: ignore[assignment]
        conflict.resolved_at = timezone.now()
        conflict.save(
            update_fields=["resolution", "resolution_reason", "resolved_by", "resolved_at"]
        )
        events.conflict_resolved(conflict, actor=user)
        transaction.on_commit(
            lambda: signals.conflict_resolved.send(
                sender=KnowledgeConflict, conflict_id=conflict_id
            )
        )
    logger.info(
        "knowledge conflict resolved",
        extra={"conflict": conflict_id, "resolution": resolution},
    )
    return conflict
