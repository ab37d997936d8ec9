"""`ask`: the engine answers from its own documents, evidence first, and submits that answer
like any agent's. Claims are retrieved sentences that share the question's key terms, each
citing its paragraph and exact span; with nothing good enough it refuses, never invents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from coordinates.coordinate import Coordinate
from coordinates.models import ApiToken
from decisions import events
from decisions.services import Submitted, decision_submit
from evidence.models import Paragraph
from evidence.search import search_paragraphs
from evidence.text import content_terms, split_sentences

MIN_OVERLAP = 0.5  # share of the question's key terms a sentence must contain
MAX_CLAIMS = 3


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why no answer: what was found, how close it came, what the asker could try."""

    context: dict[str, Any]


def _refused(token: ApiToken, question: str, zone: Coordinate, context: dict[str, Any]) -> Refusal:
    """A refusal leaves its record too: an auditor sees every question the engine declined."""
    with transaction.atomic():
        event = events.ask_refused(
            zone=str(zone), actor=token.user, question=question, context=context
        )
    return Refusal({**context, "trail_event": f"{event.chain}#{event.seq}"})


def _sentences_with_spans(text: str) -> list[tuple[str, int, int]]:
    spans: list[tuple[str, int, int]] = []
    cursor = 0
    for sentence in split_sentences(text):
        start = text.find(sentence, cursor)
        if start < 0:
            continue
        spans.append((sentence, start, start + len(sentence)))
        cursor = start + len(sentence)
    return spans


def ask(
    *, token: ApiToken, question: str, zone: Coordinate, idempotency_key: str = ""
) -> Submitted | Refusal:
    agent = token.agent_coordinate
    terms = set(content_terms(question))
    hits = search_paragraphs(question, scopes=[zone], k=8)
    paragraphs = Paragraph.objects.select_related("version").in_bulk([h.id for h in hits])
    scored: list[tuple[float, float, Paragraph, tuple[str, int, int]]] = []
    for hit in hits:
        paragraph = paragraphs.get(hit.id)  # type: ignore[call-overload]
        if paragraph is None:
            continue
        for span in _sentences_with_spans(paragraph.text):
            overlap = len(terms & set(content_terms(span[0]))) / max(len(terms), 1)
            scored.append((overlap, hit.fused, paragraph, span))
    scored.sort(key=lambda row: (-row[0], -row[1]))
    chosen: list[tuple[float, float, Paragraph, tuple[str, int, int]]] = []
    seen: set[str] = set()
    for row in scored:
        sentence = " ".join(row[3][0].split()).casefold()
        if row[0] >= MIN_OVERLAP and sentence not in seen and len(chosen) < MAX_CLAIMS:
            seen.add(sentence)  # the same sentence in two documents is one claim
            chosen.append(row)
    if not chosen or agent is None:
        best = scored[0][0] if scored else 0.0
        return _refused(
            token,
            question,
            zone,
            {
                "question": question,
                "zone": str(zone),
                "found": [
                    {
                        "document": row[2].version.document_id,
                        "paragraph": row[2].number,
                        "sentence": row[3][0],
                        "overlap": round(row[0], 3),
                    }
                    for row in scored[:3]
                ],
                "score": round(best, 3),
                "threshold": MIN_OVERLAP,
                "try": [
                    "name the policy, contract or meeting the answer should come from",
                    "use the words the documents use (amounts, roles, article numbers)",
                    "ask in the zone whose documents cover the subject",
                ],
            },
        )
    claims: list[dict[str, Any]] = [
        {
            "text": sentence,
            "citations": [
                {
                    "document": paragraph.version.document_id,
                    "version": paragraph.version.version,
                    "paragraph": paragraph.number,
                    "start": start,
                    "end": end,
                }
            ],
        }
        for _, _, paragraph, (sentence, start, end) in chosen
    ]
    payload = {
        "question": question,
        "answer": " ".join(claim["text"] for claim in claims),
        "zone": str(zone),
        "agent": str(agent),
        "claims": claims,
    }
    return decision_submit(token=token, payload=payload, idempotency_key=idempotency_key)
