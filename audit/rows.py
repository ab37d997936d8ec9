"""The governance rows that change in place, replayed from their chains: what each row's
columns must be after the events that changed it, beside what the database holds
(docs/architecture.md, "Every governance row is append-only or on the chain").

Rows that never change are refused any edit by database triggers (decisions.models,
coordinates.models, evidence.models). The others change only with an event that carries
the new values: a decision's state, gate, scores and assignee on its lane, a reviewer's
per-claim verdicts on the act that gave them, a calibration's status, a conflict's
resolution, a review's verdict, a role's grant and revocation. `replay` is pure (event
bodies in, expected columns out); `verify_rows_database` reads the rows and names each one
whose columns differ, the first first: its table, id, column, the value the chain says and
the value found.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from audit.integrity import EventRef, _in_chunks, batched, problem_at, row_at
from coordinates.events import Kind as ZoneKind
from coordinates.models import RoleAssignment, ZonePolicyVersion
from decisions.events import Kind, keys_hash, text_hash
from decisions.models import ClaimVerdict, Comment, Decision, PeriodicReview, ReReview
from evidence.events import CONFLICT_RESOLVED
from evidence.models import Document, DocumentVersion, KnowledgeConflict, ZoneCalibration
from maria.wording import Said, gettext_noop, said
from trail.models import TrailEvent

# The acts that carry a reviewer's verdicts per claim, and the action each records.
VERDICT_ACTIONS = {
    Kind.DECISION_APPROVAL_RECORDED: ClaimVerdict.Action.APPROVE,
    Kind.DECISION_APPROVED: ClaimVerdict.Action.APPROVE,
    Kind.DECISION_FAILED: ClaimVerdict.Action.REJECT,
}
GATE_KINDS = (Kind.DECISION_VALIDATED, Kind.DECISION_FAILED, Kind.DECISION_ESCALATED)
ROW_KINDS = (
    Kind.CALIBRATION_PROPOSED,
    Kind.CALIBRATION_ADOPTED,
    CONFLICT_RESOLVED,
    ZoneKind.POLICY_CHANGED,
    ZoneKind.ZONE_CREATED,
    ZoneKind.ROLE_GRANTED,
    ZoneKind.ROLE_REVOKED,
)


@dataclass(frozen=True, slots=True)
class RowProblem:
    """One row whose column is not what its chain says."""

    table: str
    id: object
    column: str
    expected: object
    found: object
    ref: EventRef | None = None

    def __str__(self) -> str:
        return self.said()

    def said(self) -> Said:
        """The problem in English, `said` so that a page shows it in its reader's language."""
        where = row_at(self.table, self.id, self.ref)
        if self.column == "":
            return said(
                gettext_noop("%(where)s: %(what)s"), {"where": where, "what": self.expected}
            )
        return problem_at(
            where,
            gettext_noop("the %(column)s column says %(found)s, its chain says %(expected)s"),
            {
                "column": repr(self.column),
                "found": repr(self.found),
                "expected": repr(self.expected),
            },
        )


@dataclass(slots=True)
class Expected:
    """What the events say, keyed by row; each value with the event that set it last."""

    decisions: dict[int, dict[str, tuple[Any, EventRef]]] = field(default_factory=dict)
    # (decision, reviewer, claim) -> {action, supported, note}
    verdicts: dict[tuple[int, str, int], tuple[dict[str, Any], EventRef]] = field(
        default_factory=dict
    )
    calibrations: dict[tuple[str, int], dict[str, tuple[Any, EventRef]]] = field(
        default_factory=dict
    )
    conflicts: dict[int, tuple[str, EventRef]] = field(default_factory=dict)
    periodic: dict[int, tuple[str, EventRef]] = field(default_factory=dict)
    rereviews: dict[int, tuple[str, EventRef]] = field(default_factory=dict)
    comments: dict[int, tuple[str, EventRef]] = field(default_factory=dict)
    policies: dict[tuple[str, int], tuple[Any, EventRef]] = field(default_factory=dict)
    roles: dict[tuple[str, str, str], EventRef] = field(default_factory=dict)
    zones: set[str] = field(default_factory=set)  # zones whose history starts on the trail


def replay(bodies: Iterable[tuple[EventRef, Mapping[str, Any]]]) -> Expected:
    """Each row's columns after its events, in chain order (a row's events share a chain)."""
    expected = Expected()
    for ref, body in bodies:
        payload = body.get("payload")
        if not isinstance(payload, dict):
            continue
        kind, decision = body.get("kind"), body.get("decision")
        if isinstance(decision, int):
            _decision_event(expected, ref, kind, decision, str(body.get("actor")), body, payload)
        else:
            _zone_event(expected, ref, kind, payload)
    return expected


def _decision_event(
    expected: Expected,
    ref: EventRef,
    kind: object,
    decision: int,
    actor: str,
    body: Mapping[str, Any],
    payload: Mapping[str, Any],
) -> None:
    columns = expected.decisions.setdefault(decision, {})
    if "state" in payload:
        columns["state"] = (payload["state"], ref)
    if kind == Kind.DECISION_PROPOSED:
        for column in ("question", "answer", "graph_evidence"):
            # Events written before each hash was sealed have none: the column goes unchecked.
            if column in payload:
                columns[column] = (payload[column], ref)
        for column, empty in (("gate", ""), ("sufficiency", None), ("policy_label", "")):
            columns[column] = (empty, ref)
    if kind in GATE_KINDS and "gate" in payload:
        columns["gate"] = (payload["gate"], ref)
    if kind == Kind.DECISION_VALIDATED:
        for column, key in (
            ("gate", "gate"),
            ("sufficiency", "sufficiency"),
            ("policy_label", "policy"),
        ):
            if key in payload:
                columns[column] = (payload[key], ref)
            else:  # an event that does not say leaves the column unchecked, never guessed
                columns.pop(column, None)
    elif kind == Kind.DECISION_ASSIGNED:
        columns["assigned_to"] = (payload.get("to"), ref)
    elif kind == Kind.DECISION_COMMENTED and isinstance(payload.get("comment"), int):
        expected.comments[payload["comment"]] = (str(body.get("reason")), ref)
    elif kind == Kind.PERIODIC_REVIEW_CLOSED and isinstance(payload.get("review"), int):
        expected.periodic[payload["review"]] = (str(payload.get("verdict")), ref)
    elif kind == Kind.REREVIEW_CLOSED and isinstance(payload.get("rereview"), int):
        expected.rereviews[payload["rereview"]] = (str(payload.get("verdict")), ref)
    action = VERDICT_ACTIONS.get(kind)  # type: ignore[call-overload]
    if action is not None and isinstance(payload.get("claims"), list):
        for claim in payload["claims"]:
            verdict = {
                "action": str(action),
                "supported": claim.get("supported"),
                "note": claim.get("note", ""),
            }
            expected.verdicts[(decision, actor, claim.get("index"))] = (verdict, ref)


def _zone_event(
    expected: Expected, ref: EventRef, kind: object, payload: Mapping[str, Any]
) -> None:
    if kind == Kind.CALIBRATION_PROPOSED:
        key = (str(payload.get("zone")), int(payload.get("version") or 0))
        expected.calibrations[key] = {
            "status": (ZoneCalibration.Status.PROPOSED.value, ref),
            "params": (payload.get("params"), ref),
        }
    elif kind == Kind.CALIBRATION_ADOPTED:
        zone = str(payload.get("zone"))
        key = (zone, int(payload.get("version") or 0))
        expected.calibrations.setdefault(key, {})["status"] = (
            ZoneCalibration.Status.ADOPTED.value,
            ref,
        )
        if isinstance(payload.get("retired_version"), int):
            retired = expected.calibrations.setdefault((zone, payload["retired_version"]), {})
            retired["status"] = (ZoneCalibration.Status.RETIRED.value, ref)
    elif kind == CONFLICT_RESOLVED and isinstance(payload.get("conflict"), int):
        expected.conflicts[payload["conflict"]] = (str(payload.get("resolution")), ref)
    elif kind == ZoneKind.POLICY_CHANGED:
        key = (str(payload.get("zone")), int(payload.get("version") or 0))
        expected.policies[key] = (payload.get("overrides"), ref)
    elif kind == ZoneKind.ZONE_CREATED:
        expected.zones.add(str(payload.get("zone")))
    elif kind in (ZoneKind.ROLE_GRANTED, ZoneKind.ROLE_REVOKED):
        role = (str(payload.get("user")), str(payload.get("role")), str(payload.get("scope")))
        if kind == ZoneKind.ROLE_GRANTED:
            expected.roles[role] = ref
        else:
            expected.roles.pop(role, None)


# --- against the database -----------------------------------------------------------------


def bodies_from_database() -> Iterable[tuple[EventRef, Mapping[str, Any]]]:
    """The events that change rows, each chain in order."""
    rows = TrailEvent.objects.filter(decision_id__isnull=False) | TrailEvent.objects.filter(
        kind__in=ROW_KINDS
    )
    for pk, chain, seq, canonical in (
        rows.order_by("chain", "seq").values_list("pk", "chain", "seq", "canonical").iterator(2000)
    ):
        try:
            body = json.loads(bytes(canonical))
        except ValueError:
            continue  # the chain's own verification reports an altered body
        if isinstance(body, dict):
            yield EventRef(chain, seq, pk), body


def verify_rows_database(expected: Expected | None = None) -> tuple[list[str], int]:
    """Problems, the first naming the first row whose columns differ from its chain, and
    how many rows were compared."""
    expected = replay(bodies_from_database()) if expected is None else expected
    problems: list[RowProblem] = []
    checked = 0
    for check in (
        _decisions,
        _verdicts,
        _calibrations,
        _conflicts,
        _policies,
        _roles,
        _reviews,
        _comments,
        _documents,
    ):
        checked += check(expected, problems)
    return [problem.said() for problem in problems], checked


def _compare(
    problems: list[RowProblem],
    table: str,
    row_id: object,
    columns: Mapping[str, tuple[Any, EventRef]],
    row: Mapping[str, Any],
) -> None:
    for column, (value, ref) in columns.items():
        if row[column] != value:
            problems.append(RowProblem(table, row_id, column, value, row[column], ref))
            return  # the first column that differs names the row


def _missing(table: str, row_id: object, ref: EventRef) -> RowProblem:
    return RowProblem(table, row_id, "", said(gettext_noop("the row is missing")), None, ref)


def _decisions(expected: Expected, problems: list[RowProblem]) -> int:
    rows = _in_chunks(
        Decision.objects.values(
            "id",
            "state",
            "gate",
            "sufficiency",
            "policy_label",
            "question",
            "answer",
            "graph_evidence",
            "assigned_to__username",
        ),
        expected.decisions,
    )
    for decision_id, columns in sorted(expected.decisions.items()):
        row = rows.get(decision_id)
        if row is None:
            first = next(iter(columns.values()), None)
            if first is not None:
                problems.append(_missing("decisions_decision", decision_id, first[1]))
            continue
        seen = {
            **row,
            "question": text_hash(row["question"]),
            "answer": text_hash(row["answer"]),
            "graph_evidence": keys_hash(row["graph_evidence"]),
            "assigned_to": row["assigned_to__username"],
        }
        _compare(problems, "decisions_decision", decision_id, columns, seen)
    return len(rows)


def _verdicts(expected: Expected, problems: list[RowProblem]) -> int:
    decisions = sorted({decision for decision, _, _ in expected.verdicts} | set(expected.decisions))
    found: dict[tuple[int, str, int], dict[str, Any]] = {}
    for chunk in batched(decisions, 500):
        for row in ClaimVerdict.objects.filter(decision_id__in=chunk).values(
            "id", "decision_id", "reviewer__username", "claim", "action", "supported", "note"
        ):
            found[(row["decision_id"], row["reviewer__username"], row["claim"])] = dict(row)
    for key, seen in sorted(found.items(), key=lambda item: item[1]["id"]):
        if key not in expected.verdicts:
            problems.append(
                RowProblem(
                    "decisions_claimverdict",
                    seen["id"],
                    "",
                    said(
                        gettext_noop(
                            "no act of %(reviewer)s on decision %(decision)s gave a verdict on "
                            "claim %(claim)s"
                        ),
                        {"reviewer": key[1], "decision": key[0], "claim": key[2]},
                    ),
                    None,
                )
            )
            continue
        verdict, ref = expected.verdicts[key]
        _compare(
            problems,
            "decisions_claimverdict",
            seen["id"],
            {column: (value, ref) for column, value in verdict.items()},
            seen,
        )
    for key, (_, ref) in expected.verdicts.items():
        if key not in found:
            problems.append(
                RowProblem(
                    "decisions_claimverdict",
                    said(
                        gettext_noop("of decision %(decision)s by %(reviewer)s on claim %(claim)s"),
                        {"decision": key[0], "reviewer": key[1], "claim": key[2]},
                    ),
                    "",
                    said(gettext_noop("the row is missing")),
                    None,
                    ref,
                )
            )
    return len(found)


def _calibrations(expected: Expected, problems: list[RowProblem]) -> int:
    rows = {
        (row["zone__coordinate"], row["version"]): row
        for row in ZoneCalibration.objects.values(
            "id", "zone__coordinate", "version", "status", "params"
        )
    }
    for key, columns in sorted(expected.calibrations.items()):
        row = rows.get(key)
        if row is None:
            ref = next(iter(columns.values()))[1]
            problems.append(_missing("evidence_zonecalibration", f"{key[0]}@{key[1]}", ref))
            continue
        _compare(problems, "evidence_zonecalibration", row["id"], columns, row)
    return len(rows)


def _conflicts(expected: Expected, problems: list[RowProblem]) -> int:
    rows = {row["id"]: row for row in KnowledgeConflict.objects.values("id", "resolution")}
    for conflict_id, (resolution, ref) in sorted(expected.conflicts.items()):
        row = rows.get(conflict_id)
        if row is None:
            problems.append(_missing("evidence_knowledgeconflict", conflict_id, ref))
        elif row["resolution"] != resolution:
            problems.append(
                RowProblem(
                    "evidence_knowledgeconflict",
                    conflict_id,
                    "resolution",
                    resolution,
                    row["resolution"],
                    ref,
                )
            )
    for conflict_id, row in sorted(rows.items()):
        if row["resolution"] and conflict_id not in expected.conflicts:
            problems.append(
                RowProblem(
                    "evidence_knowledgeconflict",
                    conflict_id,
                    "resolution",
                    "",
                    row["resolution"],
                )
            )
    return len(rows)


def _policies(expected: Expected, problems: list[RowProblem]) -> int:
    rows = {
        (row["zone__coordinate"], row["version"]): row
        for row in ZonePolicyVersion.objects.values(
            "id", "zone__coordinate", "version", "overrides"
        )
    }
    for key, (overrides, ref) in sorted(expected.policies.items()):
        row = rows.get(key)
        if row is None:
            problems.append(_missing("coordinates_zonepolicyversion", f"{key[0]}@{key[1]}", ref))
        elif row["overrides"] != overrides:
            problems.append(
                RowProblem(
                    "coordinates_zonepolicyversion",
                    row["id"],
                    "overrides",
                    overrides,
                    row["overrides"],
                    ref,
                )
            )
    return len(rows)


def _roles(expected: Expected, problems: list[RowProblem]) -> int:
    """Only scopes whose history the trail holds from the start (their zone.created event)
    are compared: a grant made before that has no event to answer for it."""
    rows = RoleAssignment.objects.values("id", "user__username", "role", "scope")
    checked = 0
    for row in sorted(rows, key=lambda r: r["id"]):
        if row["scope"] not in expected.zones:
            continue
        checked += 1
        key = (row["user__username"], row["role"], row["scope"])
        if key not in expected.roles:
            problems.append(
                RowProblem(
                    "coordinates_roleassignment",
                    row["id"],
                    "",
                    said(
                        gettext_noop(
                            "no role.granted event on %(scope)s gives %(user)s the role %(role)s"
                        ),
                        {"scope": row["scope"], "user": key[0], "role": key[1]},
                    ),
                    None,
                )
            )
    return checked


def _reviews(expected: Expected, problems: list[RowProblem]) -> int:
    checked = 0
    for table, model, closed in (
        ("decisions_periodicreview", PeriodicReview, expected.periodic),
        ("decisions_rereview", ReReview, expected.rereviews),
    ):
        rows = {row["id"]: row for row in model.objects.values("id", "verdict")}  # type: ignore[attr-defined]
        checked += len(rows)
        for review_id, (verdict, ref) in sorted(closed.items()):
            row = rows.get(review_id)
            if row is None:
                problems.append(_missing(table, review_id, ref))
            elif row["verdict"] != verdict:
                problems.append(
                    RowProblem(table, review_id, "verdict", verdict, row["verdict"], ref)
                )
        for review_id, row in sorted(rows.items()):
            if row["verdict"] and review_id not in closed:
                problems.append(RowProblem(table, review_id, "verdict", None, row["verdict"]))
    return checked


def _comments(expected: Expected, problems: list[RowProblem]) -> int:
    rows = _in_chunks(Comment.objects.values("id", "text"), expected.comments)
    for comment_id, (text, ref) in sorted(expected.comments.items()):
        row = rows.get(comment_id)
        if row is None:
            problems.append(_missing("decisions_comment", comment_id, ref))
        elif row["text"] != text:
            problems.append(
                RowProblem("decisions_comment", comment_id, "text", text, row["text"], ref)
            )
    return len(rows)


def _documents(expected: Expected, problems: list[RowProblem]) -> int:
    """A document's title is its latest version's (evidence.services.document_ingest), and
    versions never change (their trigger), so the title answers to the newest version."""
    latest: dict[int, str] = {}
    for document_id, title in DocumentVersion.objects.order_by(
        "document_id", "version"
    ).values_list("document_id", "title"):
        latest[document_id] = title
    rows = Document.objects.values_list("id", "title")
    checked = 0
    for document_id, title in sorted(rows):
        if document_id not in latest:
            continue  # a document whose first version is still being stored
        checked += 1
        if title != latest[document_id]:
            problems.append(
                RowProblem("evidence_document", document_id, "title", latest[document_id], title)
            )
    return checked
