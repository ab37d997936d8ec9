"""What the engine answers, as typed dataclasses read from its JSON.

Each model names the OpenAPI component it reads (`SCHEMA`) and reads only fields that
component declares; `raw` keeps the whole answer for anything newer. The engine's test
suite checks every field here against `/api/v1/schema/` (tests/clients/test_schema_contract.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, ClassVar

# The states after which nothing changes any more.
FINAL_STATES = frozenset({"completed", "failed"})


def _moment(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


def _day(value: Any) -> date | None:
    return date.fromisoformat(value) if isinstance(value, str) and value else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class UploadedDocument:
    """`POST /api/v1/documents/`: the stored version (`created` False: it was there already)."""

    SCHEMA: ClassVar[str] = "DocumentIngested"

    id: int
    key: str
    version: int
    paragraphs: int
    content_hash: str
    created: bool
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> UploadedDocument:
        return cls(
            id=int(body["id"]),
            key=str(body["key"]),
            version=int(body["version"]),
            paragraphs=int(body["paragraphs"]),
            content_hash=str(body["content_hash"]),
            created=bool(body["created"]),
            raw=body,
        )


@dataclass(frozen=True)
class Passage:
    """One search hit: exactly what a citation needs (document, version, paragraph and the
    span's offsets), with the text and what the engine knows of the document."""

    SCHEMA: ClassVar[str] = "Passage"

    document: int
    version: int
    paragraph: int
    start: int
    end: int
    text: str
    section: str
    title: str
    kind: str
    status: str
    effective_date: date | None
    zone: str
    superseded: bool
    score: float
    # When the engine retrieved it: the citation passes it on, and the sealed bundle records
    # it (None from an engine that does not say).
    retrieved_at: datetime | None = None
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Passage:
        return cls(
            document=int(body["document"]),
            version=int(body["version"]),
            paragraph=int(body["paragraph"]),
            start=int(body["start"]),
            end=int(body["end"]),
            text=str(body["text"]),
            section=str(body.get("section") or ""),
            title=str(body.get("title") or ""),
            kind=str(body.get("kind") or ""),
            status=str(body.get("status") or ""),
            effective_date=_day(body.get("effective_date")),
            zone=str(body.get("zone") or ""),
            superseded=bool(body.get("superseded", False)),
            score=float(body["score"]),
            retrieved_at=_moment(body.get("retrieved_at")),
            raw=body,
        )

    def citation(self) -> dict[str, Any]:
        """The source entry of a plain answer (`sources`) or a claim's citation: document,
        version and paragraph, and when it was retrieved (ISO 8601) where the engine said."""
        cited: dict[str, Any] = {
            "document": self.document,
            "version": self.version,
            "paragraph": self.paragraph,
        }
        if self.retrieved_at is not None:
            cited["retrieved_at"] = self.retrieved_at.isoformat()
        return cited


@dataclass(frozen=True)
class DecisionEvent:
    """One trail event of a decision: its kind, who, why, and where it sits on its chain."""

    SCHEMA: ClassVar[str] = "DecisionEvent"

    kind: str
    actor: str
    reason: str
    at: datetime | None
    chain: str
    seq: int
    hash: str

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> DecisionEvent:
        return cls(
            kind=str(body["kind"]),
            actor=str(body.get("actor") or ""),
            reason=str(body.get("reason") or ""),
            at=_moment(body.get("at")),
            chain=str(body["chain"]),
            seq=int(body["seq"]),
            hash=str(body["hash"]),
        )


@dataclass(frozen=True)
class DecisionRow:
    """A decision as lists and reviewer actions return it: state, gate, who holds it."""

    SCHEMA: ClassVar[str] = "DecisionRow"

    id: int
    state: str
    gate: str | None
    mode: str | None
    zone: str
    agent: str
    question: str
    sufficiency: float | None
    policy_version: str | None
    due_at: datetime | None
    claimed_by: str | None
    created_at: datetime | None
    updated_at: datetime | None
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def is_final(self) -> bool:
        return self.state in FINAL_STATES

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> DecisionRow:
        return cls(
            id=int(body["id"]),
            state=str(body["state"]),
            gate=body.get("gate") or None,
            mode=body.get("mode"),
            zone=str(body["zone"]),
            agent=str(body["agent"]),
            question=str(body["question"]),
            sufficiency=_number(body.get("sufficiency")),
            policy_version=body.get("policy_version"),
            due_at=_moment(body.get("due_at")),
            claimed_by=body.get("claimed_by"),
            created_at=_moment(body.get("created_at")),
            updated_at=_moment(body.get("updated_at")),
            raw=body,
        )


@dataclass(frozen=True)
class Decision:
    """A decision with its verdict: the gate, the scores, each claim with its evidence,
    the refusal of a blocked answer, the outcome's reason and its trail."""

    SCHEMA: ClassVar[str] = "Decision"

    id: int
    state: str
    gate: str | None
    mode: str | None
    zone: str
    agent: str
    question: str
    answer: str
    sufficiency: float | None
    completeness: float | None
    cohesion: float | None
    policy_version: str | None
    claims: list[dict[str, Any]]
    contradictions: list[dict[str, Any]]
    refusal: dict[str, Any] | None
    outcome_reason: str | None
    bundle_hash: str
    events: list[DecisionEvent]
    # What the asker receives (`answer` is the agent's text as submitted): {answer, mode,
    # not_answered, replaced}; empty from an engine older than the field.
    delivered: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def is_final(self) -> bool:
        """Completed or failed: nothing will change it any more."""
        return self.state in FINAL_STATES

    @property
    def delivered_answer(self) -> str | None:
        """The text the asker receives, as the answer's mode allows: after a hedge sentence
        (hedged), cut to its supported claims with a "Not answered" line (partial), none for
        a refusal, or the answer a reviewer wrote in its place (`replaced`). None before it
        is validated and for a failed decision."""
        value = self.delivered.get("answer")
        return value if isinstance(value, str) else None

    @property
    def not_answered(self) -> list[str]:
        """The parts of the question a partial answer leaves unanswered."""
        return [str(part) for part in self.delivered.get("not_answered") or []]

    @property
    def replaced(self) -> bool:
        """A reviewer wrote the delivered answer in place of the agent's."""
        return bool(self.delivered.get("replaced"))

    @property
    def approved(self) -> bool:
        """Released to the agent (by the gate or by reviewers)."""
        return self.state in ("executed", "completed")

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Decision:
        return cls(
            id=int(body["id"]),
            state=str(body["state"]),
            gate=body.get("gate") or None,
            mode=body.get("mode"),
            zone=str(body["zone"]),
            agent=str(body["agent"]),
            question=str(body["question"]),
            answer=str(body["answer"]),
            sufficiency=_number(body.get("sufficiency")),
            completeness=_number(body.get("completeness")),
            cohesion=_number(body.get("cohesion")),
            policy_version=body.get("policy_version"),
            claims=list(body.get("claims") or []),
            contradictions=list(body.get("contradictions") or []),
            refusal=body.get("refusal"),
            outcome_reason=body.get("outcome_reason"),
            bundle_hash=str(body.get("bundle_hash") or ""),
            events=[DecisionEvent.from_json(e) for e in body.get("events") or []],
            delivered=dict(body.get("delivered") or {}),
            raw=body,
        )


@dataclass(frozen=True)
class ClaimVerdict:
    """What a reviewer says of one claim when approving or rejecting (a request body, not an
    answer): the claim's place in the bundle (from 0), whether the evidence supports it,
    and an optional note."""

    index: int
    supported: bool
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"index": self.index, "supported": self.supported}
        if self.note:
            body["note"] = self.note
        return body


MODELS: tuple[type, ...] = (UploadedDocument, Passage, DecisionEvent, DecisionRow, Decision)
