"""Re-hashing what the trail says judged an answer: the bundles, reports and document versions
its events name, from the database or from an export (`?include=evidence`).

The trail holds content hashes, never content (decisions.events, evidence.events). Each check
here recomputes a row's hash from the columns an auditor reads and compares it with the hash
on the event, and compares the columns the event repeats (a report's gate, scores and policy)
with the event itself; the first bad row is named with its table, id, event and what differs.
The database's triggers refuse such edits (evidence.models); this finds the ones that
bypassed them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from coordinates.coordinate import Coordinate, CoordinateError
from coordinates.selectors import in_scopes
from decisions.events import Kind
from decisions.models import Decision
from evidence.events import VERSION_STORED, paragraph_digest
from evidence.models import Document, DocumentVersion, EvidenceBundle, Paragraph, ValidationReport
from evidence.parsing import content_hash
from evidence.services import bundle_hash
from maria.wording import Said, gettext_noop, said
from trail.chain import canonical_json
from trail.models import TrailEvent

ANCHORING_KINDS = (Kind.DECISION_PROPOSED, Kind.DECISION_VALIDATED, VERSION_STORED)
# The columns of a report that its decision.validated event repeats: (column, payload key).
REPORT_COLUMNS = (
    ("gate", "gate"),
    ("mode", "mode"),
    ("sufficiency", "sufficiency"),
    ("completeness", "completeness"),
    ("cohesion", "cohesion"),
    ("policy_label", "policy"),
)
_CHUNK = 500


def batched(items: Iterable[Any], size: int) -> Iterator[tuple[Any, ...]]:
    # itertools.batched arrives in Python 3.12; the project supports 3.11.
    iterator = iter(items)
    while chunk := tuple(islice(iterator, size)):
        yield chunk


@dataclass(frozen=True, slots=True)
class EventRef:
    """Where an anchoring event sits, for the message that names a bad row."""

    chain: str
    seq: int
    id: int | None = None

    def __str__(self) -> str:
        return self.said()

    def said(self) -> Said:
        if self.id is None:
            return said(
                gettext_noop("event %(chain)s seq %(seq)s"), {"chain": self.chain, "seq": self.seq}
            )
        return said(
            gettext_noop("event %(chain)s seq %(seq)s (id %(id)s)"),
            {"chain": self.chain, "seq": self.seq, "id": self.id},
        )


def row_at(table: str, row_id: object, ref: EventRef | None = None) -> Said:
    """Where a problem is: a table's row, and the event that vouches for it."""
    if ref is None:
        return said(gettext_noop("%(table)s id %(id)s"), {"table": table, "id": row_id})
    return said(
        gettext_noop("%(table)s id %(id)s (%(event)s)"),
        {"table": table, "id": row_id, "event": ref.said()},
    )


def problem_at(where: str, template: str, parts: Mapping[str, object] | None = None) -> Said:
    """`where: what`, each `said`, so that a page shows the problem in its reader's language."""
    return said(
        gettext_noop("%(where)s: %(what)s"), {"where": where, "what": said(template, parts)}
    )


@dataclass(slots=True)
class Anchors:
    """What the trail's events say about evidence, in event order."""

    bundles: dict[int, tuple[str, EventRef]] = field(default_factory=dict)  # decision → hash
    reports: list[tuple[int, Mapping[str, Any], EventRef]] = field(default_factory=list)
    versions: dict[tuple[int, int], tuple[Mapping[str, Any], EventRef]] = field(
        default_factory=dict
    )

    def add(self, ref: EventRef, body: Mapping[str, Any]) -> None:
        kind, payload = body.get("kind"), body.get("payload")
        if not isinstance(payload, dict):
            return
        decision = body.get("decision")
        if kind == Kind.DECISION_PROPOSED and isinstance(decision, int):
            self.bundles[decision] = (str(payload.get("bundle")), ref)
        elif kind == Kind.DECISION_VALIDATED and isinstance(decision, int):
            if not isinstance(payload.get("report"), str):
                return  # names no report: nothing to re-hash
            self.reports.append((decision, payload, ref))
        elif kind == VERSION_STORED:
            document, number = payload.get("document"), payload.get("version")
            if isinstance(document, int) and isinstance(number, int):
                self.versions[(document, number)] = (payload, ref)

    @classmethod
    def of_bodies(cls, bodies: Iterable[Mapping[str, Any]]) -> Anchors:
        """From decoded event bodies (an export's), each placed by its own chain and seq."""
        anchors = cls()
        for body in bodies:
            anchors.add(EventRef(str(body.get("chain")), int(body.get("seq") or 0)), body)
        return anchors

    @property
    def empty(self) -> bool:
        return not (self.bundles or self.reports or self.versions)


# --- the checks (one row as the dict an auditor would read) -------------------------------


def bundle_problem(row: Mapping[str, Any], expected: str, ref: EventRef) -> str | None:
    where = row_at("evidence_evidencebundle", row["id"], ref)
    recomputed = bundle_hash(row["zone"], row["claims"])
    if row["content_hash"] != expected:
        return problem_at(
            where,
            gettext_noop("the bundle's hash column says %(found)s, the trail %(expected)s"),
            {"found": row["content_hash"], "expected": expected},
        )
    if recomputed != expected:
        return problem_at(
            where,
            gettext_noop("its zone and claims hash to %(found)s, the trail says %(expected)s"),
            {"found": recomputed, "expected": expected},
        )
    return None


def report_problem(
    row: Mapping[str, Any], payload: Mapping[str, Any], bundle: str | None, ref: EventRef
) -> str | None:
    where = row_at("evidence_validationreport", row["id"], ref)
    expected = payload.get("report")
    recomputed = hashlib.sha256(canonical_json(row["body"])).hexdigest()
    if recomputed != expected:
        return problem_at(
            where,
            gettext_noop("its body hashes to %(found)s, the trail says %(expected)s"),
            {"found": recomputed, "expected": expected},
        )
    for column, key in REPORT_COLUMNS:
        if row[column] != payload.get(key):
            return problem_at(
                where,
                gettext_noop("the %(column)s column says %(found)s, the trail says %(expected)s"),
                {
                    "column": repr(column),
                    "found": repr(row[column]),
                    "expected": repr(payload.get(key)),
                },
            )
    if bundle is not None and row["bundle_hash"] != bundle:
        return problem_at(
            where,
            gettext_noop("it judged bundle %(found)s, the trail says bundle %(expected)s"),
            {"found": row["bundle_hash"], "expected": bundle},
        )
    policy = row["body"].get("policy") if isinstance(row["body"], dict) else None
    if policy is not None and row["policy"] != policy:
        return problem_at(
            where,
            gettext_noop("the 'policy' column differs from the policy in its hashed body"),
        )
    return None


def version_problem(
    row: Mapping[str, Any], payload: Mapping[str, Any], ref: EventRef
) -> str | None:
    where = row_at("evidence_documentversion", row["id"], ref)
    expected = payload.get("content_hash")
    if row["content_hash"] != expected:
        return problem_at(
            where,
            gettext_noop("the hash column says %(found)s, the trail %(expected)s"),
            {"found": row["content_hash"], "expected": expected},
        )
    if "text" in row and content_hash(row["text"]) != expected:
        return problem_at(
            where,
            gettext_noop("its text hashes to %(found)s, the trail %(expected)s"),
            {"found": content_hash(row["text"]), "expected": expected},
        )
    if row["status"] != payload.get("status"):
        return problem_at(
            where,
            gettext_noop("the status column says %(found)s, the trail %(expected)s"),
            {"found": repr(row["status"]), "expected": repr(payload.get("status"))},
        )
    digest = paragraph_digest(row["paragraphs"])
    if digest != payload.get("paragraph_digest"):
        return problem_at(
            where,
            gettext_noop("its paragraphs' places and hashes differ from those the trail sealed"),
        )
    return None


def paragraph_problem(row: Mapping[str, Any], text: str | None = None) -> str | None:
    """A paragraph is its version's text[start:end] and hashes to its text_hash."""
    where = row_at("evidence_paragraph", row["id"])
    if text is not None and text[row["start"] : row["end"]] != row["text"]:
        return problem_at(
            where,
            gettext_noop("its text is not its version's text at %(start)s..%(end)s"),
            {"start": row["start"], "end": row["end"]},
        )
    if hashlib.sha256(row["text"].encode()).hexdigest() != row["text_hash"]:
        return problem_at(where, gettext_noop("its text does not hash to its text_hash"))
    return None


# --- from the database --------------------------------------------------------------------


def anchors_from_database(chains: Sequence[str] | None = None) -> Anchors:
    anchors = Anchors()
    rows = TrailEvent.objects.filter(kind__in=ANCHORING_KINDS)
    if chains is not None:
        rows = rows.filter(chain__in=chains)
    for pk, chain, seq, canonical in (
        rows.order_by("pk").values_list("pk", "chain", "seq", "canonical").iterator(2000)
    ):
        try:
            body = json.loads(bytes(canonical))
        except ValueError:
            continue  # the chain's own verification reports an altered body
        if isinstance(body, dict):
            anchors.add(EventRef(chain, seq, pk), body)
    return anchors


def verify_evidence_database(anchors: Anchors | None = None) -> tuple[list[str], int]:
    """Problems in event order (the first names the first bad row), and how many rows were
    re-hashed."""
    anchors = anchors_from_database() if anchors is None else anchors
    problems: list[str] = []
    checked = 0
    decisions, bundles = _decisions_and_bundles(anchors)
    for decision_id, (expected, ref) in anchors.bundles.items():
        decision = decisions.get(decision_id)
        if decision is None:
            problems.append(
                problem_at(
                    row_at("decisions_decision", decision_id, ref),
                    gettext_noop("the row is missing"),
                )
            )
            continue
        checked += 1
        problem = bundle_problem(bundles[decision["bundle_id"]], expected, ref)
        if problem:
            problems.append(problem)

    reports = _reports(anchors, bundles, decisions)
    latest: dict[int, str] = {}
    for decision_id, payload, ref in anchors.reports:
        expected = str(payload.get("report"))
        latest[decision_id] = expected
        decision = decisions.get(decision_id)
        found = reports.get((decision["bundle_id"], expected)) if decision else None
        if not found:
            problems.append(
                problem_at(
                    said(
                        gettext_noop("%(table)s (%(event)s)"),
                        {"table": "evidence_validationreport", "event": ref.said()},
                    ),
                    gettext_noop("no report of decision %(decision)s's bundle hashes to %(hash)s"),
                    {"decision": decision_id, "hash": expected},
                )
            )
            continue
        bundle = anchors.bundles.get(decision_id, (None, ref))[0]
        for row in found:
            checked += 1
            problem = report_problem(row, payload, bundle, ref)
            if problem:
                problems.append(problem)
    by_id = {row["id"]: row for rows in reports.values() for row in rows}
    for decision_id, expected in latest.items():
        decision = decisions.get(decision_id)
        if decision is None or decision["report_id"] is None:
            continue
        shown = by_id.get(decision["report_id"])
        if shown is None or shown["content_hash"] != expected:
            problems.append(
                problem_at(
                    row_at("decisions_decision", decision_id),
                    gettext_noop(
                        "it shows report %(report)s, not the report of its last "
                        "decision.validated event (%(hash)s)"
                    ),
                    {"report": decision["report_id"], "hash": expected},
                )
            )

    checked += _check_versions(anchors, problems)
    return problems, checked


def _decisions_and_bundles(
    anchors: Anchors,
) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]]]:
    """The decisions the events name, and their bundles, by id."""
    decisions = _in_chunks(
        Decision.objects.values("id", "bundle_id", "report_id"),
        set(anchors.bundles) | {d for d, _, _ in anchors.reports},
    )
    bundles = _in_chunks(
        EvidenceBundle.objects.values("id", "zone", "claims", "content_hash"),
        {row["bundle_id"] for row in decisions.values()},
    )
    return decisions, bundles


def _in_chunks(rows: Any, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    for chunk in batched(sorted(ids), _CHUNK):
        for row in rows.filter(id__in=chunk):
            found[row["id"]] = row
    return found


def _reports(
    anchors: Anchors, bundles: Mapping[int, Mapping[str, Any]], decisions: Mapping[int, Any]
) -> dict[tuple[int, str], list[dict[str, Any]]]:
    wanted = {decisions[d]["bundle_id"] for d, _, _ in anchors.reports if d in decisions}
    found: dict[tuple[int, str], list[dict[str, Any]]] = {}
    columns = ["id", "bundle_id", "body", "policy", "content_hash"]
    columns += [column for column, _ in REPORT_COLUMNS]
    for chunk in batched(sorted(wanted), _CHUNK):
        for row in ValidationReport.objects.filter(bundle_id__in=chunk).values(*columns):
            row["bundle_hash"] = bundles[row["bundle_id"]]["content_hash"]
            found.setdefault((row["bundle_id"], row["content_hash"]), []).append(row)
    return found


def _check_versions(anchors: Anchors, problems: list[str]) -> int:
    checked = 0
    keys = sorted(anchors.versions)
    for chunk in batched(keys, _CHUNK // 10 or 1):
        documents = {document for document, _ in chunk}
        rows: dict[tuple[int, int], dict[str, Any]] = {
            (row["document_id"], row["version"]): dict(row)
            for row in DocumentVersion.objects.filter(document_id__in=documents).values(
                "id", "document_id", "version", "status", "text", "content_hash"
            )
        }
        ids = [row["id"] for row in rows.values()]
        paragraphs: dict[int, list[dict[str, Any]]] = {}
        for paragraph in Paragraph.objects.filter(version_id__in=ids).values(
            "id", "version_id", "number", "start", "end", "text", "text_hash"
        ):
            paragraphs.setdefault(paragraph["version_id"], []).append(dict(paragraph))
        for key in chunk:
            payload, ref = anchors.versions[key]
            row = rows.get(key)
            if row is None:
                problems.append(
                    problem_at(
                        said(
                            gettext_noop("%(table)s (%(event)s)"),
                            {"table": "evidence_documentversion", "event": ref.said()},
                        ),
                        gettext_noop("document %(document)s version %(version)s is missing"),
                        {"document": key[0], "version": key[1]},
                    )
                )
                continue
            checked += 1
            placed = paragraphs.get(row["id"], [])
            row["paragraphs"] = [
                (p["number"], p["start"], p["end"], p["text_hash"]) for p in placed
            ]
            problem = version_problem(row, payload, ref)
            for one in placed:
                problem = problem or paragraph_problem(one, row["text"])
            if problem:
                problems.append(
                    problem
                    if "(event" in problem
                    else said(
                        gettext_noop("%(problem)s (%(event)s)"),
                        {"problem": problem, "event": ref.said()},
                    )
                )
    return checked


# --- in an export ---------------------------------------------------------------------------


def evidence_records(bodies: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """The evidence an export's events name, as records for `?include=evidence`: each
    decision's bundle and reports, and the versions and paragraphs the bundles cite (the
    paragraphs' text; of a version its hash and paragraph places, not its whole text)."""
    anchors = Anchors.of_bodies(bodies)
    decisions, bundles = _decisions_and_bundles(anchors)
    for decision_id in sorted(decisions):
        bundle = bundles[decisions[decision_id]["bundle_id"]]
        yield {"type": "evidence.bundle", "decision": decision_id, **bundle}
    reports = _reports(anchors, bundles, decisions)
    for (_, _), rows in sorted(reports.items()):
        for row in rows:
            yield {"type": "evidence.report", **row}
    cited = {
        (int(c["document"]), c.get("version"), int(c["paragraph"]), str(bundle["zone"]))
        for bundle in bundles.values()
        for claim in bundle["claims"]
        for c in claim.get("citations", [])
        if isinstance(c, dict) and "document" in c and "paragraph" in c
    }
    yield from _cited_records(cited)


def _citable(document_zone: str, bundle_zone: str) -> bool:
    """A bundle's citation names evidence only where its zone reads documents: its own zone's
    and its ancestors'. A citation of another zone's document (which its report counts for
    nothing) brings none of that zone's text into the citing zone's export."""
    try:
        return in_scopes(bundle_zone, [Coordinate.parse(document_zone)])
    except CoordinateError:
        return False


def _cited_records(cited: set[tuple[int, Any, int, str]]) -> Iterator[dict[str, Any]]:
    documents = sorted({document for document, _, _, _ in cited})
    for chunk in batched(documents, _CHUNK // 10 or 1):
        zones = dict(Document.objects.filter(pk__in=chunk).values_list("pk", "zone__coordinate"))
        for version in DocumentVersion.objects.filter(document_id__in=chunk).values(
            "id", "document_id", "version", "status", "content_hash"
        ):
            zone = zones[version["document_id"]]
            numbers = {
                n
                for d, v, n, citing in cited
                if d == version["document_id"]
                and v in (None, version["version"])
                and _citable(zone, citing)
            }
            if not numbers:
                continue
            placed = list(
                Paragraph.objects.filter(version_id=version["id"]).values(
                    "id", "number", "start", "end", "text", "text_hash"
                )
            )
            yield {
                "type": "evidence.version",
                **version,
                "paragraphs": [[p["number"], p["start"], p["end"], p["text_hash"]] for p in placed],
            }
            for paragraph in placed:
                if paragraph["number"] in numbers:
                    yield {"type": "evidence.paragraph", "version_id": version["id"], **paragraph}


def verify_evidence_records(
    bodies: Iterable[Mapping[str, Any]], records: Sequence[Mapping[str, Any]]
) -> tuple[list[str], int]:
    """Offline: re-hash an export's evidence records against its events' hashes."""
    anchors = Anchors.of_bodies(bodies)
    problems: list[str] = []
    checked = 0
    bundles = {r["decision"]: r for r in records if r.get("type") == "evidence.bundle"}
    for decision_id, (expected, ref) in anchors.bundles.items():
        row = bundles.get(decision_id)
        if row is None:
            problems.append(
                said(
                    gettext_noop(
                        "the export carries no bundle of decision %(decision)s (%(event)s)"
                    ),
                    {"decision": decision_id, "event": ref.said()},
                )
            )
            continue
        checked += 1
        problem = bundle_problem(row, expected, ref)
        if problem:
            problems.append(problem)
    reports: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        if record.get("type") == "evidence.report":
            reports.setdefault(str(record.get("content_hash")), []).append(record)
    for decision_id, payload, ref in anchors.reports:
        found = reports.get(str(payload.get("report")), [])
        if not found:
            problems.append(
                said(
                    gettext_noop("the export carries no report hashing to %(hash)s (%(event)s)"),
                    {"hash": payload.get("report"), "event": ref.said()},
                )
            )
        bundle = anchors.bundles.get(decision_id, (None, ref))[0]
        for row in found:
            checked += 1
            problem = report_problem(row, payload, bundle, ref)
            if problem:
                problems.append(problem)
    texts: dict[int, Mapping[str, Any]] = {}
    for record in records:
        if record.get("type") == "evidence.version":
            key = (record["document_id"], record["version"])
            texts[record["id"]] = record
            anchor = anchors.versions.get(key)
            if anchor is not None:
                checked += 1
                row = {**record, "paragraphs": [tuple(p) for p in record["paragraphs"]]}
                problem = version_problem(row, anchor[0], anchor[1])
                if problem:
                    problems.append(problem)
    for record in records:
        if record.get("type") == "evidence.paragraph":
            checked += 1
            version = texts.get(record["version_id"])
            problem = paragraph_problem(record)
            placed = {tuple(p) for p in version["paragraphs"]} if version else set()
            place = (record["number"], record["start"], record["end"], record["text_hash"])
            if problem is None and place not in placed:
                problem = problem_at(
                    row_at("evidence_paragraph", record["id"]),
                    gettext_noop("not among its version's sealed paragraphs"),
                )
            if problem:
                problems.append(problem)
    return problems, checked
