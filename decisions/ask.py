"""`ask`: the engine answers from its own documents, evidence first, and submits that answer
like any agent's. Each part of the question is answered by the one retrieved sentence that
best supplies what it asks, citing its paragraph and exact span; with no part answered it
refuses, never invents, and never pads an answer with sentences that only share its words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils.translation import gettext, gettext_noop

from coordinates.coordinate import Coordinate
from coordinates.models import ApiToken
from decisions import events
from decisions.services import Submitted, decision_submit
from evidence.models import Paragraph
from evidence.questions import Part, Question, analyse_question, describe_part, model, pass_mark
from evidence.questions import signals as addressing_signals
from evidence.search import search_paragraphs
from evidence.text import content_terms, split_sentences

SEARCHED = 8  # paragraphs the hybrid search returns, as before
MAX_CANDIDATES = 40  # sentences scored per question: cost is parts x candidates signal reads
FOUND_SHOWN = 3  # candidates a refusal shows

TRY_NAME_SOURCE = gettext_noop("name the policy, contract or meeting the answer should come from")
TRY_DOCUMENT_WORDS = gettext_noop(
    "use the words the documents use (amounts, roles, article numbers)"
)
TRY_OTHER_ZONE = gettext_noop("ask in the zone whose documents cover the subject")


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why no answer: what was found, how close it came, what the asker could try."""

    context: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Answered(Submitted):
    """The submitted answer, and the parts of the question no document sentence answered
    (empty when every part is answered; the decision's payload has no field for them)."""

    missing: tuple[Part, ...] = ()


@dataclass(frozen=True, slots=True)
class Candidate:
    """A retrieved sentence, where it is, and its addressing probability for each part."""

    paragraph: Paragraph
    sentence: str
    start: int
    end: int
    probabilities: tuple[float, ...]
    supplies: tuple[bool, ...]  # per part: it gives something of the asked kind

    @property
    def best(self) -> float:
        return max(self.probabilities, default=0.0)


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


def _candidates(question: str, asked: Question, zone: Coordinate) -> list[Candidate]:
    """The retrieved paragraphs' sentences in search order, each once (the same sentence in
    two documents is one claim), at most MAX_CANDIDATES, scored against every part."""
    hits = search_paragraphs(question, scopes=[zone], k=SEARCHED)
    paragraphs = Paragraph.objects.select_related("version").in_bulk([h.id for h in hits])
    fitted = model().for_language(asked.language)
    seen: set[str] = set()
    found: list[Candidate] = []
    for hit in hits:
        paragraph = paragraphs.get(hit.id)  # type: ignore[call-overload]
        if paragraph is None:
            continue
        for sentence, start, end in _sentences_with_spans(paragraph.text):
            same = " ".join(sentence.split()).casefold()
            if same in seen:
                continue
            seen.add(same)
            # signals() directly, not addresses() per sentence: the same probabilities without
            # building a verdict's reason for each candidate.
            read = [addressing_signals(asked, part, sentence) for part in asked.parts]
            probabilities = tuple(fitted.probability(signals) for signals in read)
            supplies = tuple(signals["kind_supplied"] > 0 for signals in read)
            found.append(Candidate(paragraph, sentence, start, end, probabilities, supplies))
            if len(found) == MAX_CANDIDATES:
                return found
    return found


def choose(asked: Question, candidates: list[Candidate]) -> list[tuple[Part, Candidate | None]]:
    """Each part with the candidate of highest probability for it, None when that is below
    the language's pass mark. The calibration is a step function, so candidates tie: then
    the one that gives the asked kind (an amount for "how much") wins, and then the earlier
    (the search ranked it higher)."""
    chosen: list[tuple[Part, Candidate | None]] = []
    for index, part in enumerate(asked.parts):
        best: Candidate | None = None
        for candidate in candidates:
            mine = (candidate.probabilities[index], candidate.supplies[index])
            if best is None or mine > (best.probabilities[index], best.supplies[index]):
                best = candidate
        answered = best is not None and best.probabilities[index] >= pass_mark(asked.language)
        chosen.append((part, best if answered else None))
    return chosen


def _overlap(terms: set[str], sentence: str) -> float:
    """Share of the question's key terms the sentence holds (the trail's record of a find)."""
    return len(terms & set(content_terms(sentence))) / max(len(terms), 1)


def _refusal_context(
    question: str, zone: Coordinate, asked: Question, candidates: list[Candidate]
) -> dict[str, Any]:
    terms = set(content_terms(question))
    top = sorted(candidates, key=lambda c: -c.best)[:FOUND_SHOWN]  # stable: search order
    asks = [describe_part(part) for part in asked.parts]
    score = round(top[0].best, 3) if top else 0.0
    suggestions = [gettext(TRY_NAME_SOURCE), gettext(TRY_DOCUMENT_WORDS), gettext(TRY_OTHER_ZONE)]
    if not candidates:
        # Nothing in the zone came close: another zone's documents are the likeliest source.
        suggestions = suggestions[2:] + suggestions[:2]
    return {
        "question": question,
        "zone": str(zone),
        "found": [
            {
                "document": c.paragraph.version.document_id,
                "paragraph": c.paragraph.number,
                "sentence": c.sentence,
                "probability": round(c.best, 3),
                "overlap": round(_overlap(terms, c.sentence), 3),
            }
            for c in top
        ],
        "score": score,
        "threshold": round(pass_mark(asked.language), 3),
        "asks": asks,
        "reason": gettext(
            "no sentence of the documents found gives %(asks)s: the best reaches %(score)s, "
            "an answer needs %(threshold)s"
        )
        % {
            "asks": "; ".join(asks),
            "score": score,
            "threshold": round(pass_mark(asked.language), 3),
        },
        "try": suggestions,
    }


def ask(
    *, token: ApiToken, question: str, zone: Coordinate, idempotency_key: str = ""
) -> Answered | Refusal:
    """Answer each part of `question` with the zone's sentence that best supplies it (its
    addressing probability at least the language's pass mark), one sentence per answered
    part and no other; refuse when no part is answered. Parts left unanswered are returned
    as `missing`."""
    agent = token.agent_coordinate
    asked = analyse_question(question)
    candidates = _candidates(question, asked, zone)
    chosen = choose(asked, candidates)
    answers: list[Candidate] = []
    for _, candidate in chosen:
        if candidate is not None and all(c is not candidate for c in answers):
            answers.append(candidate)  # a sentence answering two parts is one claim
    if not answers or agent is None:
        return _refused(token, question, zone, _refusal_context(question, zone, asked, candidates))
    claims: list[dict[str, Any]] = [
        {
            "text": c.sentence,
            "citations": [
                {
                    "document": c.paragraph.version.document_id,
                    "version": c.paragraph.version.version,
                    "paragraph": c.paragraph.number,
                    "start": c.start,
                    "end": c.end,
                }
            ],
        }
        for c in answers
    ]
    payload = {
        "question": question,
        "answer": " ".join(claim["text"] for claim in claims),
        "zone": str(zone),
        "agent": str(agent),
        "claims": claims,
    }
    submitted = decision_submit(token=token, payload=payload, idempotency_key=idempotency_key)
    return Answered(
        decision=submitted.decision,
        replayed=submitted.replayed,
        proposed=submitted.proposed,
        missing=tuple(part for part, candidate in chosen if candidate is None),
    )
