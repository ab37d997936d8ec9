"""Validate an evidence bundle against the engine's own documents: resolve every citation,
ground every claim, score the bundle and grade it. The result is an immutable report.

The submitter's own confidence figures are recorded beside ours and never used.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, Protocol

import numpy as np
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.utils import timezone

from coordinates.coordinate import Coordinate, CoordinateError
from coordinates.models import Zone
from coordinates.policy import FIELD_NAMES, PolicyValues
from coordinates.selectors import EffectivePolicy
from evidence import calibration, nli, questions, scoring, verifier
from evidence import reasons as why
from evidence.answers import SAYS_COVERAGE, Reading, read_answer, unmarked
from evidence.claims import align, closest, sentence_spans
from evidence.currency import check_current, current_of, current_reason, release_reason
from evidence.grounding import (
    Grounding,
    Verdict,
    check_claim,
    claims_without_numbers_share,
    classify_claim,
    cosine,
)
from evidence.judge import JudgeConfig, JudgeVerdict, judge_claim, judge_config
from evidence.knowledge import held_back, open_conflicts
from evidence.models import (
    Document,
    DocumentVersion,
    EvidenceBundle,
    KnowledgeConflict,
    Paragraph,
    ValidationReport,
    ZoneCalibration,
)
from evidence.numbers import extract_numbers
from evidence.retrieval import PlacedDocument, overrides
from evidence.services import embedder
from evidence.text import content_terms
from maria.openapi import DATABASE_INT_MAX
from trail.chain import canonical_json

logger = logging.getLogger(__name__)

# Least to most strict, as gates.grading.GATES (the gates app is above this one).
GATE_ORDER = ("auto", "flagged", "required", "blocked")
SHARED_ENTITY = 0.5  # relation of two items that share a number or most key terms
CONTRADICTION = -1.0


@dataclass(slots=True)
class Item:
    """One citation of one claim, as resolved and judged."""

    claim: int
    cited: Mapping[str, Any]
    paragraph: Paragraph | None = None
    version: DocumentVersion | None = None
    span: str = ""
    problem: str | None = None  # why the citation is fabricated or out of scope
    similarity: float = 0.0
    coverage: float = 0.0
    recency: float = 0.0
    authority: float = 0.0
    relevance: float = 0.0
    supported: bool = False
    # evidence.grounding's three verdicts; a citation of nothing that exists is refuted.
    verdict: Verdict = "unverified"
    reasons: list[str] = field(default_factory=list)
    vetoed_by: str | None = None  # "numbers" or "reversal" when the paragraph contradicts
    probability: float | None = None  # the learned verifier's global P(supported)
    # The same through the zone's adopted calibration (None without one): below
    # CALIBRATED_SUPPORT it vetoes the item ("calibration").
    calibrated_probability: float | None = None
    aligned: tuple[int, int] | None = None  # the span's best supporting sentence(s): offsets
    # The claim's own words that failed here: a number the span lacks, a reversed word or an
    # actor the span names otherwise; the decision page marks them.
    failed_words: list[str] = field(default_factory=list)
    # How well the span answers the question (evidence.questions.relevance); None: no
    # question was given, and relevance is the claim's grounding as before.
    question_relevance: float | None = None
    # A superseded version's claim read against the current version (evidence.currency).
    current: dict[str, Any] | None = None


Versions = dict[tuple[int, int | None], DocumentVersion]  # (document, version or None: current)
CitedParagraphs = dict[tuple[int, int], Paragraph]  # (version pk, paragraph number)


def overriding_document(version: DocumentVersion, zone: str) -> PlacedDocument | None:
    """The document that overrides `version`'s for `zone`: one of the same title on a level
    of the zone's lineage nearer the zone (evidence.retrieval.overrides). None for the zone's
    own documents; one query for a document of a level above it."""
    document = version.document
    return _overriding(PlacedDocument(document.pk, document.title, document.zone.coordinate), zone)


def _overriding(placed: PlacedDocument, zone: str) -> PlacedDocument | None:
    if placed.node == zone:
        return None
    nearer = [c for c in _lineage(zone) if c.count(".") + 1 > placed.depth]
    rows = (
        DocumentVersion.objects.filter(
            document__title=placed.title, document__zone__coordinate__in=nearer
        )
        .order_by()
        .values_list("document_id", "document__zone__coordinate")
        .distinct()
    )
    found = [placed, *(PlacedDocument(pk, placed.title, node) for pk, node in rows)]
    return overrides(found, [zone]).get(placed.id)


@dataclass(frozen=True)
class CurrentVersion:
    """A document's newest version number, and the document as override rules read it."""

    document: PlacedDocument
    version: int


def current_versions(documents: Iterable[int]) -> dict[int, CurrentVersion]:
    """Each document's newest version (the one a citation without a version reads), with its
    title and zone, in one query; documents that do not exist are absent, and so is an id no
    row can hold (the service path does not bound ids as the API does; SQLite would overflow).

    Hand-written SQL: this runs on every submission, and building the ORM's query cost four
    times the CPU of running it (bench/bench_pipeline.py under py-spy: a fifth of the web
    side's CPU at 100 answers/s)."""
    ids = sorted({document for document in documents if 0 < document <= DATABASE_INT_MAX})
    if not ids:
        return {}
    marks = ", ".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT d.id, d.title, z.coordinate, MAX(v.version)"  # noqa: S608 - constants and placeholders
            f" FROM {DocumentVersion._meta.db_table} v"
            f" JOIN {Document._meta.db_table} d ON d.id = v.document_id"
            f" JOIN {Zone._meta.db_table} z ON z.id = d.zone_id"
            f" WHERE v.document_id IN ({marks})"
            " GROUP BY d.id, d.title, z.coordinate",
            ids,
        )
        rows = cursor.fetchall()
    return {
        pk: CurrentVersion(PlacedDocument(pk, title, node), version)
        for pk, title, node, version in rows
    }


def citable_for(current: CurrentVersion, zone: str) -> bool:
    """Whether `zone` may cite the document as resolve_item reads it: a document of a level
    of its lineage that no nearer level's document of the same title overrides."""
    return current.document.node in _lineage(zone) and _overriding(current.document, zone) is None


def resolve_item(item: Item, zone: str, versions: Versions, paragraphs: CitedParagraphs) -> None:
    cited = item.cited
    document, wanted = int(cited["document"]), cited.get("version")
    version = versions.get((document, wanted))
    if version is None or version.document.zone.coordinate not in _lineage(zone):
        # A document of no level of the zone's lineage (another zone's, a sibling subtree's)
        # reads as one that does not exist: the report (which the zone's reviewers and
        # auditors read) must not say that it exists, nor whose it is.
        item.verdict = "refuted"  # it cites what does not exist
        item.problem = (
            why.say(why.NOT_IN_ZONE, document=document, zone=zone)
            if wanted is None
            else why.say(why.VERSION_NOT_IN_ZONE, document=document, version=wanted, zone=zone)
        )
        return
    overriding = overriding_document(version, zone)
    if overriding is not None:
        # Inherited from a level above, but the zone (or a nearer level) has its own
        # document of that title: the ancestor's no longer speaks for this zone.
        item.problem = (
            why.say(
                why.OVERRIDDEN,
                document=document,
                zone=zone,
                overriding=overriding.id,
                title=overriding.title,
            )
            if overriding.node == zone
            else why.say(
                why.OVERRIDDEN_BY_LEVEL,
                document=document,
                zone=zone,
                overriding=overriding.id,
                title=overriding.title,
                node=overriding.node,
            )
        )
        return
    number = int(cited["paragraph"])
    paragraph = paragraphs.get((version.pk, number))
    if paragraph is None:
        item.verdict = "refuted"  # it cites what does not exist
        item.problem = why.say(
            why.NO_PARAGRAPH,
            document=document,
            version=version.version,
            paragraph=number,
            count=Paragraph.objects.filter(version=version).count(),
        )
        return
    start, end = cited.get("start"), cited.get("end")
    length = len(paragraph.text)
    if start is not None or end is not None:
        start = 0 if start is None else int(start)
        end = length if end is None else int(end)
        if not 0 <= start < end <= length:
            item.verdict = "refuted"  # it cites what does not exist
            item.problem = why.say(
                why.OFFSETS_OUTSIDE, start=start, end=end, paragraph=number, length=length
            )
            return
    item.paragraph, item.version = paragraph, version
    item.span = paragraph.text[start or 0 : end or length]


# --- the zone's calibration (evidence.calibration) ------------------------------------------

# An item the zone's calibration gives less than this is not supported: the reviewers of the
# zone reject more claims like it than they accept.
CALIBRATED_SUPPORT = 0.5


@dataclass(frozen=True, slots=True)
class CalibrationInForce:
    """The adopted calibration that judges a zone's answers: the zone it was adopted for (the
    decision's own or its nearest ancestor with one), its version and its map."""

    zone: str
    version: int
    calibration: calibration.Calibration

    def as_dict(self) -> dict[str, Any]:
        return {"zone": self.zone, "version": self.version}


def in_force(row: ZoneCalibration) -> CalibrationInForce:
    return CalibrationInForce(
        zone=row.zone.coordinate,
        version=row.version,
        calibration=calibration.Calibration(
            params=dict(row.params), n=row.verdicts, method=row.method
        ),
    )


def _lineage(zone: str) -> list[str]:
    """The zone and its ancestors, galaxy first; none for what is not a coordinate."""
    try:
        return [str(c) for c in Coordinate.parse(zone).lineage() if c.depth <= 4]
    except CoordinateError:
        return []


def adopted_calibrations(zones: Iterable[str]) -> dict[str, CalibrationInForce | None]:
    """For each zone, the calibration adopted for it or for its nearest ancestor that has one
    (None: the global probability judges). One query for any number of zones. Read afresh for
    every bundle or batch, never cached across them, so that a calibration adopted (or
    retired) a moment ago judges the very next decision."""
    lineages = {zone: _lineage(zone) for zone in set(zones)}
    wanted = {coordinate for lineage in lineages.values() for coordinate in lineage}
    if not wanted:
        return {}
    rows = ZoneCalibration.objects.filter(
        status=ZoneCalibration.Status.ADOPTED, zone__coordinate__in=wanted
    ).select_related("zone")
    adopted = {row.zone.coordinate: in_force(row) for row in rows}
    return {
        zone: next((adopted[c] for c in reversed(lineage) if c in adopted), None)
        for zone, lineage in lineages.items()
    }


@dataclass(frozen=True, slots=True)
class Cited:
    """What some bundles cite, read in one go: every version of the cited documents, and of
    their paragraphs just the cited numbers; and the calibration in force in each bundle's
    zone (a zone left out is looked up when its bundle is evaluated)."""

    versions: Versions
    paragraphs: CitedParagraphs
    calibrations: Mapping[str, CalibrationInForce | None] = field(default_factory=dict)
    # Open knowledge-base conflicts that hold answers back, by cited paragraph id.
    disputed: Mapping[int, list[KnowledgeConflict]] = field(default_factory=dict)
    # For each document cited in a superseded version: its current version and paragraphs.
    current: Mapping[int, tuple[DocumentVersion, list[Paragraph]]] = field(default_factory=dict)


def read_cited(bundles: Sequence[EvidenceBundle]) -> Cited:
    """One read for many bundles: a policy of thousands of paragraphs in many versions costs
    what its few cited ones do, and a batch of bundles what one does."""
    calibrations = adopted_calibrations(bundle.zone for bundle in bundles)
    citations = [
        cited
        for bundle in bundles
        for claim in bundle.claims
        for cited in claim.get("citations", [])
    ]
    if not citations:
        return Cited({}, {}, calibrations)
    documents = {int(c["document"]) for c in citations}
    numbers = {int(c["paragraph"]) for c in citations}
    versions = list(
        DocumentVersion.objects.filter(document_id__in=documents)
        .defer("text")  # the whole document's text: the paragraphs carry what is cited
        .select_related("document__zone")
    )
    # The cited spans are embedded afresh, so the stored vectors stay in the database.
    paragraphs = Paragraph.objects.filter(version__in=versions, number__in=numbers).annotate(
        held_back=held_back()
    )
    marked = {(p.version_id, p.number): p for p in paragraphs.defer("embedding")}
    disputed = open_conflicts(p.pk for p in marked.values() if p.held_back)
    cited: CitedParagraphs = dict(marked)
    found: Versions = {}
    for row in versions:
        found[(row.document_id, row.version)] = row
        latest = found.get((row.document_id, None))
        if latest is None or row.version > latest.version:
            found[(row.document_id, None)] = row  # no version given: the current one
    # A claim resting on a superseded version is read against the current one as well.
    stale = {
        version.pk: version
        for c in citations
        if (version := found.get((int(c["document"]), c.get("version")))) is not None
        and version.is_superseded
    }
    current = current_of(stale.values()) if stale else {}
    return Cited(found, cited, calibrations, disputed, current)


def _far_items(resolved: Sequence[Item], statements: Sequence[str]) -> set[int]:
    """The positions in `resolved` of the items whose claim cites closer paragraphs (see
    evidence.claims.closest): checked no further, so a long source costs its claims an
    alignment, not a full check of every paragraph (bench/bench_long_source.py)."""
    by_claim: dict[int, list[int]] = {}
    for position, item in enumerate(resolved):
        by_claim.setdefault(item.claim, []).append(position)
    far: set[int] = set()
    for claim, positions in by_claim.items():
        near = closest(statements[claim], [resolved[p].span for p in positions])
        far.update(p for n, p in enumerate(positions) if n not in near)
    return far


def _judge(
    item: Item, statement: str, similarity: float, now: datetime, *, far: bool = False
) -> None:
    if item.problem is not None or item.version is None:
        item.reasons = [item.problem or why.UNRESOLVED]
        return
    verdict = (
        Grounding(False, [why.NOT_CLOSEST], "factual", coverage=0.0, similarity=similarity)
        if far
        else check_claim(statement, item.span, similarity=similarity)
    )
    version = item.version
    item.similarity = max(similarity, 0.0)
    item.coverage = verdict.coverage
    effective = version.effective_date
    as_of = (
        datetime(effective.year, effective.month, effective.day, tzinfo=now.tzinfo)
        if effective
        else version.created_at
    )
    item.recency = scoring.recency(
        scoring.document_age_days(as_of, now), superseded=version.is_superseded
    )
    item.authority = scoring.authority(version.kind, version.status)
    item.supported = verdict.supported
    item.verdict = verdict.verdict
    item.probability = verdict.probability
    if "start" not in item.cited and "end" not in item.cited and not far:
        # A whole paragraph cited: the reviewer sees the sentence(s) that bear on the claim.
        best = align(statement, [item.span])
        item.aligned = (best[0].start, best[0].end) if best else None
    item.reasons = list(verdict.reasons)
    if version.is_superseded:
        item.reasons.append(why.say(why.SUPERSEDED, version=version.version))
    item.failed_words = [q.surface.strip() for q in verdict.missing_numbers if q.surface.strip()]
    item.failed_words += [claimed for claimed, _ in verdict.reversal_words]
    if not verdict.numbers_ok:
        item.vetoed_by = "numbers"
    elif verdict.reversal:
        item.vetoed_by = "reversal"
    # Relevance r_j: how well the span answers the question (docs/math.md §1); with no
    # question, how much of the claim it speaks to, lexically or semantically.
    grounding = max(item.coverage, item.similarity)
    relevance = grounding if item.question_relevance is None else item.question_relevance
    item.relevance = relevance if item.supported else 0.0


@dataclass(frozen=True, slots=True)
class _Related:
    """What the relation of two items depends on, from a live item or a stored one."""

    claim: int
    document: int | None  # None: the citation did not resolve
    span: str
    supported: bool  # by the paragraph's content, before any zone calibration
    vetoed: bool  # by the paragraph's content (numbers, reversal), not by a calibration
    coverage: float


def _calibrate(item: Item, calibrated: CalibrationInForce) -> None:
    """Map the item's global probability through the zone's calibration; a supported item
    it puts below CALIBRATED_SUPPORT is supported no more, and drops out of sufficiency as
    every unsupported item does. It never makes an unsupported item supported: the vetoes
    that are certain (numbers, a fabricated citation) stay certain."""
    if item.probability is None:
        return
    p = calibration.apply(calibrated.calibration, item.probability)
    item.calibrated_probability = p
    if item.supported and p < CALIBRATED_SUPPORT:
        item.supported = False
        item.vetoed_by = "calibration"
        item.relevance = 0.0
        # First: a claim's reasons show the first two of each item's.
        item.reasons.insert(0, calibration_reason(p, calibrated))


def calibration_reason(p: float, calibrated: CalibrationInForce) -> str:
    """Why the calibration vetoed an item, in the report's plain words."""
    return why.say(why.CALIBRATED, p=f"{p:.2f}", version=calibrated.version)


def _sides(contradiction: Mapping[str, Any]) -> tuple[int, frozenset[tuple[Any, Any, Any]]]:
    """A contradiction's claim and the two paragraphs it names, whichever way round."""
    return contradiction["claim"], frozenset(
        (i["document"], i["version"], i["paragraph"]) for i in contradiction["items"]
    )


def _conflict_json(claim: int, conflict: KnowledgeConflict) -> dict[str, Any]:
    return {
        "claim": claim,
        "conflict": conflict.pk,
        "kind": conflict.kind,
        "items": [
            {
                "document": side.version.document_id,
                "version": side.version.version,
                "paragraph": side.number,
                "span": side.text,
                "supports_claim": None,
            }
            for side in (conflict.first, conflict.second)
        ],
        "reason": why.say(
            why.OPEN_CONFLICT, reason=conflict.reason, kind=conflict.kind, conflict=conflict.pk
        ),
    }


def _relations(items: list[Item]) -> np.ndarray:
    return _relation_matrix(
        [
            _Related(
                claim=i.claim,
                document=i.version.document_id if i.version is not None else None,
                span=i.span if i.paragraph is not None else "",
                supported=i.supported,
                vetoed=bool(i.vetoed_by),
                coverage=i.coverage,
            )
            for i in items
        ]
    )


def _relation_matrix(items: Sequence[_Related]) -> np.ndarray:
    n = len(items)
    a = np.zeros((n, n))
    numbers = [{str(q) for q in extract_numbers(i.span)} if i.span else set() for i in items]
    terms = [set(content_terms(i.span)) if i.span else set() for i in items]
    for x in range(n):
        for y in range(x + 1, n):
            one, two = items[x], items[y]
            if one.document is None or two.document is None:
                continue
            if one.document == two.document:
                value = 1.0  # the same document: directly related
            elif numbers[x] & numbers[y] or (
                terms[x]
                and terms[y]
                and len(terms[x] & terms[y]) >= 0.5 * min(len(terms[x]), len(terms[y]))
            ):
                value = SHARED_ENTITY
            else:
                value = 0.0
            # Evidence for one claim that disagrees: one paragraph supports it, another on the
            # same subject contradicts its numbers or reverses it. Surface both.
            if (
                one.claim == two.claim
                and (one.supported != two.supported)
                and ((one.vetoed or two.vetoed) and min(one.coverage, two.coverage) >= 0.5)
            ):
                value = CONTRADICTION
            a[x, y] = a[y, x] = value
    return a


def _item_json(
    item: Item, confidence: float, kept: bool, floor: float, *, unheld: str | None = None
) -> dict[str, Any]:
    """`unheld`: why the item's claim is not held to evidence (not factual: None; not part
    of the answer: NOT_IN_ANSWER)."""
    dropped = None
    if item.problem:
        dropped = item.problem
    elif unheld:
        dropped = unheld
    elif not kept:
        dropped = why.say(why.BELOW_FLOOR, confidence=f"{confidence:.3f}", floor=floor)
    return {
        "cited": dict(item.cited),
        "submitted_confidence": item.cited.get("confidence"),
        "document": item.version.document_id if item.version else item.cited.get("document"),
        "version": item.version.version if item.version else item.cited.get("version"),
        "paragraph": item.paragraph.number if item.paragraph else item.cited.get("paragraph"),
        "section": item.paragraph.section if item.paragraph else None,
        "span": item.span,
        "superseded": bool(item.version and item.version.is_superseded),
        "fabricated": item.problem is not None,
        "supported": item.supported,
        "vetoed_by": item.vetoed_by,
        "signals": {
            "similarity": round(item.similarity, 6),
            "coverage": round(item.coverage, 6),
            "recency": round(item.recency, 6),
            "authority": round(item.authority, 6),
            "probability": None if item.probability is None else round(item.probability, 6),
            "calibrated_probability": (
                None
                if item.calibrated_probability is None
                else round(item.calibrated_probability, 6)
            ),
            "question_relevance": (
                None if item.question_relevance is None else round(item.question_relevance, 6)
            ),
        },
        "aligned": list(item.aligned) if item.aligned else None,
        "current": item.current,
        "failed_words": item.failed_words,
        "relevance": round(item.relevance, 6),
        "confidence": round(confidence, 6),
        "kept": kept,
        "dropped": dropped,
        "reasons": item.reasons,
    }


class Grader(Protocol):
    """Grades a scored bundle (gates.grading.final_gate): auto, flagged, required, blocked."""

    def __call__(
        self,
        sufficiency: float,
        confidence: Sequence[float] | np.ndarray,
        tau: float,
        floor: float,
        refusal_floor: float,
        *,
        has_contradictions: bool,
        has_factual_claims: bool,
        at_least: Any = "auto",
    ) -> str: ...


# Grading is the gates app's, above this one: it registers its grader when Django starts.
_grader: Grader | None = None


def grader_use(grader: Grader) -> None:
    """Called once by the gates app when Django starts (gates.apps)."""
    global _grader
    _grader = grader


def _the_grader() -> Grader:
    if _grader is None:
        raise ImproperlyConfigured("no grader registered: is 'gates' in INSTALLED_APPS?")
    return _grader


Judge = Callable[[str, str], JudgeVerdict]  # (claim, evidence) -> the judge's verdict


def plugged_judge() -> Judge | None:
    """The plug-in judge the settings name, if any: the local NLI model (MARIA_NLI_MODEL,
    evidence.nli) when set, else the LLM judge (MARIA_JUDGE_URL). A model directory that
    cannot serve is logged and skipped: the answers are still checked by the rules."""
    try:
        local = nli.nli_judge()
    except nli.NliModelError:
        logger.exception("MARIA_NLI_MODEL cannot serve as a judge; validating without it")
        local = None
    if local is not None:
        return local.judge
    config = judge_config()
    if config is None:
        return None
    return partial(judge_claim, config=config)


def judge_bundle(bundle: EvidenceBundle, ask: Judge | JudgeConfig) -> dict[int, JudgeVerdict]:
    """Ask the judge about each factual claim against the paragraphs it cites. May call the
    network or a model: run it outside any transaction. A judge that cannot answer gives a
    verdict with its error, never an exception."""
    if isinstance(ask, JudgeConfig):
        ask = partial(judge_claim, config=ask)
    cited = read_cited([bundle])
    verdicts: dict[int, JudgeVerdict] = {}
    for k, claim in enumerate(bundle.claims):
        kind, statement = classify_claim(claim["text"])
        if kind != "factual":
            continue
        spans = []
        for citation in claim.get("citations", []):
            item = Item(claim=k, cited=citation)
            resolve_item(item, bundle.zone, cited.versions, cited.paragraphs)
            if item.problem is None and item.span:
                spans.append(item.span)
        if spans:
            verdicts[k] = ask(statement, "\n\n".join(spans))
    return verdicts


def validate_bundle(bundle: EvidenceBundle, policy: EffectivePolicy) -> ValidationReport:
    """Resolve, ground, score and grade a bundle under a zone's effective policy; store it."""
    report = evaluate_bundle(bundle, policy)
    report.save()
    return report


def evaluate_bundle(
    bundle: EvidenceBundle,
    policy: EffectivePolicy,
    cited: Cited | None = None,
    judged: Mapping[int, JudgeVerdict] | None = None,
    *,
    question: str | None = None,
    answer: str | None = None,
) -> ValidationReport:
    """`validate_bundle` without the save. `cited`: what `read_cited` read for a batch of
    bundles this one is part of; read here when not given. `judged`: the plug-in judge's
    verdict per claim (`judge_bundle`), recorded beside the engine's own; it moves a claim
    the rules left unverified only where the zone's policy allows (`judge_move`).

    `answer`: the text the user reads. Each of its claims is matched to the submitted claim
    that says it (evidence.answers); one that none says is checked against every source the
    bundle cites, and counts as any claim does; a submitted claim the answer does not say is
    reported and not scored. `question`: what was asked. Each item's relevance r_j is how
    well its span answers it, and an answer that does not address it goes to a person
    (evidence.questions). Without them (older callers, tests of the scoring alone) the
    submitted claims are the answer and relevance is their grounding."""
    values = policy.values
    now = timezone.now()
    submitted = list(bundle.claims)
    reading = read_answer(answer, [c["text"] for c in submitted]) if answer is not None else None
    claims = submitted + _unchecked_answer_claims(reading, submitted)
    in_answer = [True] * len(claims)
    if reading is not None:
        in_answer[: len(submitted)] = reading.in_answer
    kinds = [classify_claim(c["text"]) for c in claims]
    items = [
        Item(claim=k, cited=cited)
        for k, claim in enumerate(claims)
        for cited in claim.get("citations", [])
    ]
    if cited is None:
        cited = read_cited([bundle])
    for item in items:
        resolve_item(item, bundle.zone, cited.versions, cited.paragraphs)

    asked = questions.analyse_question(question) if question else None
    model = embedder()
    statements = [statement for _, statement in kinds]
    resolved = [i for i in items if i.paragraph is not None]
    vectors = model.embed(statements + [i.span for i in resolved])
    relevance: dict[str, float] = {}  # one reading of each span, however many claims cite it
    far = _far_items(resolved, statements)
    for index, item in enumerate(resolved):
        if asked is not None:
            if item.span not in relevance:
                relevance[item.span] = questions.relevance(asked, item.span)
            item.question_relevance = relevance[item.span]
        similarity = cosine(vectors[item.claim], vectors[len(statements) + index])
        _judge(item, statements[item.claim], similarity, now, far=index in far)
    for item in items:
        if item.paragraph is None:
            _judge(item, statements[item.claim], 0.0, now)
    items = _answer_claims_evidence(items, first_added=len(submitted))

    # Only factual claims the answer says are held to evidence (docs/math.md §9); the rest
    # are reported.
    factual = [k for k, (kind, _) in enumerate(kinds) if kind == "factual" and in_answer[k]]
    held = [i for i in items if i.claim in factual]
    holds = Holds()
    _read_current(held, statements, cited, holds)
    # Relations first: whether two paragraphs disagree is a fact about their content, which
    # a zone's calibration (the reviewers' judgement of claims like this) does not change.
    relations = _relations(held)
    calibrated = (
        cited.calibrations[bundle.zone]
        if bundle.zone in cited.calibrations
        else adopted_calibrations([bundle.zone]).get(bundle.zone)
    )
    if calibrated is not None:
        for item in items:
            _calibrate(item, calibrated)
    # A plug-in judge moves a claim the rules could not verify, where the zone allows it
    # (policy.judge_moves) and the judge is sure enough: its items then count as it says.
    moved: dict[int, tuple[Verdict, str]] = {}
    for k in factual:
        mine = [i for i in held if i.claim == k]
        rules = claim_verdict([(i.verdict, i.coverage, i.supported) for i in mine])
        move = judge_move(rules, judged.get(k) if judged else None, values)
        if move is not None:
            moved[k] = move
            for item in mine:
                if item.problem is None and item.paragraph is not None:
                    item.supported = move[0] == "verified"
    signals = []
    for k in factual:
        mine = [i for i in held if i.claim == k]
        # A vetoed or unresolved item scores nothing: its signals do not count as support.
        usable = [i.supported and i.problem is None for i in mine]
        signals.append(
            scoring.ClaimSignals(
                similarity=[i.similarity if u else 0.0 for i, u in zip(mine, usable, strict=True)],
                coverage=[i.coverage if u else 0.0 for i, u in zip(mine, usable, strict=True)],
                recency=[i.recency if u else 0.0 for i, u in zip(mine, usable, strict=True)],
                authority=[i.authority if u else 0.0 for i, u in zip(mine, usable, strict=True)],
                relevance=[i.relevance if u else 0.0 for i, u in zip(mine, usable, strict=True)],
            )
        )
    score = scoring.score_bundle(
        signals, relations, values, required=required_evidence(values, question)
    )
    mode = score.mode if factual else "full"

    item_json: dict[int, list[dict[str, Any]]] = {k: [] for k in range(len(claims))}
    for position, item in enumerate(held):
        item_json[item.claim].append(
            _item_json(item, score.confidence[position], score.kept[position], values.floor)
        )
    for item in items:
        if item.claim not in factual:
            unheld = None if in_answer[item.claim] else why.NOT_IN_ANSWER
            item_json[item.claim].append(_item_json(item, 0.0, False, values.floor, unheld=unheld))
    claim_sufficiency = dict(zip(factual, score.claim_sufficiency, strict=True))
    claim_json = []
    for k, claim in enumerate(claims):
        kind, statement = kinds[k]
        evidence = item_json[k]
        reasons: list[str] = []
        from_answer = k >= len(submitted)
        verdict = claim_verdict(
            [(i.verdict, i.coverage, i.supported) for i in items if i.claim == k]
            if kind == "factual"
            else []
        )
        if k in moved:
            verdict = moved[k][0]
            reasons.append(moved[k][1])
        if not in_answer[k]:
            supported = kind != "factual" or any(e["supported"] for e in evidence)
            reasons.append(why.NOT_IN_ANSWER)
        else:
            supported = kind != "factual" or any(e["kept"] and e["supported"] for e in evidence)
            if kind != "factual":
                reasons.append(why.say(why.NOT_FACTUAL, kind=kind))
            elif from_answer and not supported:
                # Every cited paragraph was read for it: what each says is below, per item.
                reasons.append(why.say(why.ANSWER_UNSUPPORTED, said=claim["text"]))
            elif not evidence:
                reasons.append(why.NO_CITATION)
            elif not supported:
                reasons.extend(r for e in evidence for r in e["reasons"][:2])
        claim_json.append(
            {
                "text": claim["text"],
                "kind": kind,
                "statement": statement,
                "supported": supported,
                "verdict": verdict,
                "contradicted": False,
                "sufficiency": claim_sufficiency.get(k),
                "reasons": reasons,
                "evidence": evidence,
                "in_answer": in_answer[k],
                **({"answer_span": claim["answer_span"]} if from_answer else {}),
                **({"judge": judged[k].as_dict()} if judged and k in judged else {}),
                **({"verdict_by": "judge"} if k in moved else {}),
            }
        )
    # Disagreeing evidence is surfaced, never silently resolved: both paragraphs are shown,
    # and the answer cannot pass without a person (gates.grading.final_gate).
    contradictions = []
    for x, y in zip(*np.nonzero(np.triu(relations < 0)), strict=True):
        one, two = held[int(x)], held[int(y)]
        claim_json[one.claim]["contradicted"] = True
        contradictions.append(
            {
                "claim": one.claim,
                "items": [
                    {
                        "document": i.version.document_id if i.version else None,
                        "version": i.version.version if i.version else None,
                        "paragraph": i.paragraph.number if i.paragraph else None,
                        "span": i.span,
                        "supports_claim": i.supported,
                    }
                    for i in (one, two)
                ],
                "reason": why.CITATIONS_DISAGREE,
            }
        )
    # A paragraph the knowledge base disputes (an open hard or temporal conflict, found on
    # ingest or nightly: evidence.knowledge) carries no answer past a person until the zone's
    # admins say which side governs.
    surfaced = {_sides(c) for c in contradictions}
    for claim, conflict in dict.fromkeys(
        (item.claim, conflict)
        for item in held
        if item.paragraph is not None
        for conflict in cited.disputed.get(item.paragraph.pk, ())
    ):
        found = _conflict_json(claim, conflict)
        if _sides(found) in surfaced:
            continue  # the answer cites both sides: its own contradiction above says it
        claim_json[claim]["contradicted"] = True
        contradictions.append(found)
    _release_authority(held, score.kept, factual, values, holds)
    # Source diversity (seed 000 §2.3): a zone that asks for several independent documents
    # sees an answer resting on fewer, however strong that one source is.
    documents = [
        i.version.document_id
        for i, kept in zip(held, score.kept, strict=True)
        if kept and i.supported and i.problem is None and i.version is not None
    ]
    if factual and scoring.lacks_diversity(documents, values.min_sources):
        distinct = scoring.distinct_sources(documents)
        holds.add("flagged", why.say(why.FEW_SOURCES, found=distinct, needed=values.min_sources))
    # The gate follows the verdicts (docs/math.md §6): a refuted claim refuses the answer, an
    # unverified one sends it to a person, and only verified claims may pass without one.
    for k in factual:
        claim = claim_json[k]
        if claim["verdict"] == "refuted":
            holds.add("blocked", why.say(why.CLAIM_REFUTED, claim=claim["text"]))
        elif claim["verdict"] == "unverified" or claim["contradicted"]:
            holds.add("required", why.say(why.CLAIM_UNVERIFIED, claim=claim["text"]))
    addressing = None
    if asked is not None and factual:
        said = [c.text for c in reading.claims] if reading is not None else statements
        addressing = questions.addresses(asked, said, elsewhere=_elsewhere(held))
        if addressing.mode == "off_topic":
            holds.add("required", addressing.reason)
        elif addressing.mode == "partial":
            # Part of the question answered: released as such at most, never as the whole.
            holds.add("flagged", addressing.reason)
            if mode != "refusal":
                mode = "partial"
        for part in addressing.parts:
            if part.elsewhere is not None:
                asks = questions.describe_part(part.part)
                there = why.say(why.ANSWERED_ELSEWHERE, asked=asks, sentence=part.elsewhere)
                holds.add("required" if addressing.mode == "off_topic" else "flagged", there)
    # An answer that asserts no fact needs no evidence, but a person should still see it
    # now and then: it passes, flagged for the periodic review. The what-if replays stored
    # reports through the same function.
    gate = _the_grader()(
        score.gated_sufficiency,
        np.asarray(score.kept_confidence),
        values.tau,
        values.floor,
        values.refusal_floor,
        has_contradictions=bool(contradictions),
        has_factual_claims=bool(factual),
        at_least=holds.gate,
    )
    body = {
        "claims": claim_json,
        "contradictions": contradictions,
        "score": score.to_dict(),
        "numberless_claim_share": claims_without_numbers_share([c["text"] for c in claims]),
        "embedder": model.name,
        # The claim verifier whose probabilities the items carry (evidence.verifier), and the
        # zone calibration their calibrated probabilities came from (None: none adopted).
        "verifier": verifier.model().version,
        "calibration": calibrated.as_dict() if calibrated is not None else None,
        "answer": _answer_json(reading, len(submitted)),
        "addressing": _addressing_json(addressing),
        "at_least": holds.as_dict(),
        "validated_at": now.isoformat(),
    }
    return ValidationReport(
        bundle=bundle,
        policy_label=policy.label,
        policy=values.as_dict(),
        sufficiency=score.gated_sufficiency if factual else 1.0,
        completeness=score.completeness,
        cohesion=score.cohesion,
        mode=mode,
        gate=gate,
        body=body,
        content_hash=hashlib.sha256(canonical_json(body)).hexdigest(),
    )


def required_evidence(values: PolicyValues, question: str | None) -> int:
    """The RequiredEvidence an answer's completeness counts against (seed 000 §4.3): the
    zone's number when it set one, else what the question asks for."""
    if values.required_evidence:
        return values.required_evidence
    return questions.required_evidence_of(question) if question else scoring.REQUIRED_SIMPLE


def judge_move(
    verdict: Verdict, judged: JudgeVerdict | None, values: PolicyValues
) -> tuple[Verdict, str] | None:
    """What a plug-in judge makes of a claim the rules left unverified, with the reason: the
    zone must allow the move (`judge_moves`), and the judge answer with at least the zone's
    `judge_confidence`. A verified or refuted claim stays as the rules found it: the judge
    never overrules what the engine can show."""
    if verdict != "unverified" or judged is None or not judged.answered:
        return None
    if judged.confidence is None or judged.confidence < values.judge_confidence:
        return None
    confidence = f"{judged.confidence:.2f}"
    if judged.supported and "verify" in values.judge_moves:
        return "verified", why.say(why.JUDGE_VERIFIED, model=judged.model, confidence=confidence)
    if judged.refutes and "refute" in values.judge_moves:
        return "refuted", why.say(why.JUDGE_REFUTED, model=judged.model, confidence=confidence)
    return None


def claim_verdict(items: Sequence[tuple[Verdict, float, bool]]) -> Verdict:
    """A claim's verdict from its citations' (verdict, coverage, supported). Refuted when
    one cites what does not exist (refuted at coverage 0: the agent made a source up), or
    when the citations that hold most of its words all refute it and no other citation
    states it; verified when one verifies it; else (no citation, paraphrase, evidence that
    disagrees with itself) unverified. Another paragraph that merely states another number
    of the same unit refutes nothing, nor does one that holds more of the claim's words than
    the paragraph that states it ("$5bn in 2023" where another company's $10bn is told
    with more of the same words)."""
    if any(verdict == "refuted" and coverage == 0.0 for verdict, coverage, _ in items):
        return "refuted"
    if any(verdict == "verified" for verdict, _, _ in items):
        return "verified"
    if any(supported for _, _, supported in items):
        return "unverified"
    best = max((coverage for _, coverage, _ in items), default=None)
    if best is not None and all(v == "refuted" for v, c, _ in items if c == best):
        return "refuted"
    return "unverified"


# --- the answer the user reads, the question it answers -----------------------------------


def _unchecked_answer_claims(
    reading: Reading | None, submitted: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The answer's claims that no submitted claim says, as claims of their own citing every
    source the bundle cites (each once): the engine checks them itself."""
    if reading is None:
        return []
    sources = list(
        {
            canonical_json(cited): dict(cited)
            for claim in submitted
            for cited in claim.get("citations", [])
        }.values()
    )
    return [
        {
            "text": unmarked(reading.claims[i].text),
            "citations": sources,
            "answer_span": [reading.claims[i].start, reading.claims[i].end],
        }
        for i in reading.unchecked
    ]


def _read_current(items: list[Item], statements: list[str], cited: Cited, holds: Holds) -> None:
    """A supported item from a superseded version, read against the document's current
    version: the report points to the current text, and unless it still says the same (it
    contradicts the claim, or no longer says it) the answer goes to a person."""
    checked: dict[tuple[int, int], dict[str, Any]] = {}
    for item in items:
        if item.version is None or not item.version.is_superseded or not item.supported:
            continue
        now = cited.current.get(item.version.document_id)
        if now is None:
            continue
        version, paragraphs = now
        key = (item.claim, item.version.document_id)
        if key not in checked:
            check = check_current(statements[item.claim], [p.text for p in paragraphs])
            reason = current_reason(
                check,
                current=version.version,
                title=version.title,
                effective=version.effective_date,
            )
            checked[key] = {
                "version": version.version,
                "effective_date": (
                    version.effective_date.isoformat() if version.effective_date else None
                ),
                "paragraph": (
                    paragraphs[check.paragraph].number if check.paragraph is not None else None
                ),
                "span": check.span,
                "agrees": check.agrees,
                "contradicts": check.contradicts,
                "reason": reason,
            }
            if not check.agrees:
                holds.add("required", reason)
        item.current = checked[key]
        item.reasons.append(checked[key]["reason"])


def _release_authority(
    held: list[Item],
    kept: Sequence[bool],
    factual: Sequence[int],
    values: PolicyValues,
    holds: Holds,
) -> None:
    """A claim whose kept support comes only from sources the zone does not let release an
    answer alone (by default: drafts, memos, emails, minutes, archived texts) sends the
    answer to a person, with the source named."""
    for k in factual:
        support = [
            i
            for i, keep in zip(held, kept, strict=True)
            if i.claim == k and keep and i.supported and i.version is not None
        ]
        if not support:
            continue  # unsupported: the score already decides
        reasons = [
            release_reason(i.version.kind, i.version.status, i.version.title, values)
            for i in support
            if i.version is not None
        ]
        if all(reasons):
            holds.add("required", str(reasons[0]))


def _answer_claims_evidence(items: list[Item], *, first_added: int) -> list[Item]:
    """A claim the engine added from the answer was read against every cited source; its
    evidence is the sources that support it, or (none does) the one closest to it, so
    that sources about the answer's other claims do not water its score down."""
    kept: list[Item] = []
    added: dict[int, list[Item]] = {}
    for item in items:
        if item.claim < first_added:
            kept.append(item)
        else:
            added.setdefault(item.claim, []).append(item)
    for mine in added.values():
        for item in mine:
            if item.supported and item.coverage < SAYS_COVERAGE:
                # No agent vouched for this sentence: most of its words must be there.
                item.supported, item.relevance = False, 0.0
                item.reasons.insert(
                    0,
                    why.say(
                        why.ANSWER_NEEDS_MORE,
                        needed=f"{SAYS_COVERAGE:.0%}",
                        coverage=f"{item.coverage:.0%}",
                    ),
                )
        supporting = [i for i in mine if i.supported]
        kept.extend(supporting or [max(mine, key=lambda i: (i.coverage, i.similarity))])
    return kept


def _answer_json(reading: Reading | None, submitted: int) -> dict[str, Any] | None:
    """Each claim of the answer text with the report claim that checked it (its index in
    `claims`: a submitted claim's, or one the engine added after them), for the decision
    page to mark; and the submitted claims the answer does not say."""
    if reading is None:
        return None
    added = {i: submitted + n for n, i in enumerate(reading.unchecked)}
    return {
        "claims": [
            {
                "text": c.text,
                "start": c.start,
                "end": c.end,
                "covered": c.covered,
                "claim": added.get(i, c.claim),
            }
            for i, c in enumerate(reading.claims)
        ],
        "not_in_answer": [k for k, said in enumerate(reading.in_answer) if not said],
    }


def _elsewhere(held: Sequence[Item]) -> list[str]:
    """The sentences of the cited paragraphs that no claim rests on (outside every cited
    span and every aligned sentence): where the evidence may answer the question when the
    answer does not. A citation aligned to nothing rests on its whole span."""
    rests: dict[int, list[tuple[int, int]]] = {}
    paragraphs: dict[int, Paragraph] = {}
    for item in held:
        if item.paragraph is None:
            continue
        paragraphs[item.paragraph.pk] = item.paragraph
        # Only a whole paragraph is aligned (resolve_item), so its offsets are the paragraph's.
        start = int(item.cited.get("start") or 0)
        region = item.aligned or (start, start + len(item.span))
        rests.setdefault(item.paragraph.pk, []).append(region)
    return [
        paragraph.text[s:e]
        for pk, paragraph in paragraphs.items()
        for s, e in sentence_spans(paragraph.text)
        if not any(s < hi and lo < e for lo, hi in rests[pk])
    ]


def _addressing_json(found: questions.Addressing | None) -> dict[str, Any] | None:
    if found is None:
        return None
    return {
        "probability": round(found.probability, 6),
        "mode": found.mode,
        "parts": [
            {
                "asks": questions.describe_part(a.part),
                "kind": a.part.kind,
                "answered": a.answered,
                "by": a.claim,
                "probability": round(a.probability, 6),
                "answered_elsewhere": a.elsewhere,
                # a "who" part given by a claim naming who does the act (questions.names_actor)
                "names": a.names,
            }
            for a in found.parts
        ],
        "missing": [questions.describe_part(p) for p in found.missing],
        "reason": found.reason,
    }


@dataclass(slots=True)
class Holds:
    """What a report's findings beyond its scores ask of the gate: at least this gate, and
    why (an answer to another question, a superseded or unapproved source)."""

    gate: str = "auto"
    reasons: list[str] = field(default_factory=list)

    def add(self, gate: str, reason: str) -> None:
        if GATE_ORDER.index(gate) > GATE_ORDER.index(self.gate):
            self.gate = gate
        self.reasons.append(reason)

    def as_dict(self) -> dict[str, Any]:
        return {"gate": self.gate, "reasons": list(self.reasons)}


# --- what-if: a stored report under another calibration ----------------------------------


def _stored_policy(policy: Mapping[str, Any]) -> PolicyValues:
    """The effective values a report recorded (`ValidationReport.policy`); a field that an
    older report lacks takes its default."""
    return PolicyValues(**{name: policy[name] for name in FIELD_NAMES if name in policy})


def regrade_stored(
    body: Mapping[str, Any],
    policy: Mapping[str, Any],
    calibrated: calibration.Calibration | None,
) -> str:
    """The gate a stored report (`body`, `policy`) gets when its items' global probabilities
    go through `calibrated` (None: the global model alone): its stored signals re-scored with
    evidence.scoring and graded by the registered grader, as `evaluate_bundle` does. Nothing
    is re-read or re-grounded: spans, signals and verdicts are as stored, so the only change
    is the calibration's (the zone admin's what-if before adopting one)."""
    values = _stored_policy(policy)
    claims = list(body.get("claims", []))
    factual = [
        claim for claim in claims if claim.get("kind") == "factual" and claim.get("in_answer", True)
    ]
    related: list[_Related] = []
    signals = []
    for k, claim in enumerate(factual):
        columns: dict[str, list[float]] = {
            name: [] for name in ("similarity", "coverage", "recency", "authority", "relevance")
        }
        for stored in claim.get("evidence", []):
            found = stored.get("signals", {})
            # Supported by its content: what the global model said before any calibration.
            content = bool(stored.get("supported")) or stored.get("vetoed_by") == "calibration"
            supported = content
            probability = found.get("probability")
            if supported and calibrated is not None and probability is not None:
                supported = calibration.apply(calibrated, probability) >= CALIBRATED_SUPPORT
            usable = supported and not stored.get("fabricated")
            coverage = float(found.get("coverage", 0.0))
            similarity = float(found.get("similarity", 0.0))
            columns["similarity"].append(similarity if usable else 0.0)
            columns["coverage"].append(coverage if usable else 0.0)
            columns["recency"].append(float(found.get("recency", 0.0)) if usable else 0.0)
            columns["authority"].append(float(found.get("authority", 0.0)) if usable else 0.0)
            # As `_judge` sets it: relevance to the question, or (in a report made without
            # one) the larger of coverage and similarity, for a supported item.
            to_question = found.get("question_relevance")
            relevance = max(coverage, similarity) if to_question is None else float(to_question)
            columns["relevance"].append(relevance if usable else 0.0)
            related.append(
                _Related(
                    claim=k,
                    document=None if stored.get("fabricated") else stored.get("document"),
                    span=str(stored.get("span") or ""),
                    supported=content,
                    vetoed=stored.get("vetoed_by") not in (None, "calibration"),
                    coverage=coverage,
                )
            )
        signals.append(scoring.ClaimSignals(**columns))
    relations = _relation_matrix(related)
    # Completeness grades nothing: the count it was scored against, as stored, will do.
    stored = int((body.get("score") or {}).get("required_evidence") or scoring.REQUIRED_SIMPLE)
    score = scoring.score_bundle(
        signals, relations, values, required=values.required_evidence or stored
    )
    return _the_grader()(
        score.gated_sufficiency,
        np.asarray(score.kept_confidence),
        values.tau,
        values.floor,
        values.refusal_floor,
        has_contradictions=bool(np.any(relations < 0)),
        has_factual_claims=bool(factual),
        at_least=(body.get("at_least") or {}).get("gate", "auto"),
    )
