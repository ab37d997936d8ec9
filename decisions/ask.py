"""`ask`: the engine answers from its own documents, evidence first, and submits that answer
like any agent's. The pipeline of seed 000 §3.2: retrieve the hybrid top k = 15 (§11.6) and
rerank them (evidence.rerank); extract, for each part of the question, the one sentence that
best supplies what it asks, citing its paragraph and exact span; score the bundle those
sentences make (its sufficiency S, as validation scores any answer); respond iff S >= the
zone's tau (§4.2, evidence.scoring.responds), else refuse with no answer text, naming the
evidence that is missing. It never invents, and never pads an answer with sentences that
only share its words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils.translation import gettext, gettext_noop

from coordinates.coordinate import Coordinate
from coordinates.models import ApiToken
from coordinates.selectors import effective_policy
from decisions import events
from decisions.services import Submitted, decision_submit, replayed, submitted_under
from evidence.models import EvidenceBundle, Paragraph
from evidence.questions import Part, Question, analyse_question, describe_part, model, pass_mark
from evidence.questions import signals as addressing_signals
from evidence.rerank import rerank
from evidence.retrieval import DEFAULT_K
from evidence.scoring import responds
from evidence.search import search_paragraphs
from evidence.text import content_terms, split_sentences
from evidence.validation import evaluate_bundle

# Seed 000 §11.6: the hybrid search keeps its top k = 15 candidates before reranking.
RETRIEVED = DEFAULT_K
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


def retrieved(question: str, asked: Question, zone: Coordinate) -> list[Paragraph]:
    """The zone's top RETRIEVED paragraphs by hybrid search, reranked: those whose best
    sentence best answers the question first, the search order breaking ties."""
    hits = search_paragraphs(question, scopes=[zone], k=RETRIEVED)
    found = Paragraph.objects.select_related("version").in_bulk([h.id for h in hits])
    paragraphs = [found[hit.id] for hit in hits if hit.id in found]  # type: ignore[index]
    return [paragraphs[i] for i in rerank(asked, [p.text for p in paragraphs])]


def _candidates(question: str, asked: Question, zone: Coordinate) -> list[Candidate]:
    """The retrieved paragraphs' sentences in reranked order, each once (the same sentence in
    two documents is one claim), at most MAX_CANDIDATES, scored against every part."""
    fitted = model().for_language(asked.language)
    seen: set[str] = set()
    found: list[Candidate] = []
    for paragraph in retrieved(question, asked, zone):
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
    (the reranker ranked it higher). The pass mark picks the evidence (§3.2 stage 2); whether
    it is enough to answer is the bundle's sufficiency against tau (`ask`)."""
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


@dataclass(frozen=True, slots=True)
class Shortfall:
    """What the chosen evidence came to: the bundle's sufficiency S, the zone's tau, and each
    part of the question whose evidence is missing or below tau (its sentence, if any, and
    that claim's own sufficiency)."""

    sufficiency: float
    tau: float
    missing: tuple[tuple[Part, Candidate | None, float], ...]


def _refusal_context(
    question: str,
    zone: Coordinate,
    asked: Question,
    candidates: list[Candidate],
    shortfall: Shortfall,
) -> dict[str, Any]:
    """The paper's refusal with context (§5.4): no answer, the sources found, S against tau,
    and the evidence that is missing, part by part."""
    terms = set(content_terms(question))
    top = sorted(candidates, key=lambda c: -c.best)[:FOUND_SHOWN]  # stable: reranked order
    asks = [describe_part(part) for part in asked.parts]
    score = round(shortfall.sufficiency, 3)
    tau = round(shortfall.tau, 3)
    missing = [
        {
            "asks": describe_part(part),
            "sentence": candidate.sentence if candidate is not None else None,
            "sufficiency": round(sufficiency, 3),
        }
        for part, candidate, sufficiency in shortfall.missing
    ]
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
        "score": score,  # the evidence's sufficiency S ...
        "threshold": tau,  # ... and the zone's tau it must reach
        "asks": asks,
        "missing": missing,
        "reason": gettext(
            "the evidence found reaches a sufficiency of %(score)s; an answer needs the "
            "zone's tau, %(threshold)s. Missing evidence for: %(missing)s"
        )
        % {
            "score": score,
            "threshold": tau,
            "missing": "; ".join(describe_part(part) for part, _, _ in shortfall.missing),
        },
        "try": suggestions,
    }


def _claim(candidate: Candidate) -> dict[str, Any]:
    paragraph = candidate.paragraph
    return {
        "text": candidate.sentence,
        "citations": [
            {
                "document": paragraph.version.document_id,
                "version": paragraph.version.version,
                "paragraph": paragraph.number,
                "start": candidate.start,
                "end": candidate.end,
            }
        ],
    }


def shortfall(
    question: str,
    zone: Coordinate,
    chosen: list[tuple[Part, Candidate | None]],
    answers: list[Candidate],
) -> Shortfall:
    """Score the bundle the chosen sentences make, as validation will score it (without a
    plug-in judge, and storing nothing): S, the zone's tau, and the parts short of it. No
    sentence chosen is the empty bundle, S = 0."""
    policy = effective_policy(zone)
    tau = policy.values.tau
    if not answers:
        return Shortfall(0.0, tau, tuple((part, None, 0.0) for part, _ in chosen))
    claims = [_claim(c) for c in answers]
    report = evaluate_bundle(
        EvidenceBundle(zone=str(zone), claims=claims),
        policy,
        question=question,
        answer=" ".join(claim["text"] for claim in claims),
    )
    by_claim = report.body["claims"]
    missing: list[tuple[Part, Candidate | None, float]] = []
    for part, candidate in chosen:
        if candidate is None:
            missing.append((part, None, 0.0))
            continue
        own = by_claim[next(i for i, c in enumerate(answers) if c is candidate)]["sufficiency"]
        if own is not None and not responds(own, tau):
            missing.append((part, candidate, own))
    if not missing and not responds(report.sufficiency, tau):
        # S below tau with no claim below it on its own (validation read the answer's text
        # into further claims): every answered part is short of evidence.
        missing = [(part, c, report.sufficiency) for part, c in chosen if c is not None]
    return Shortfall(report.sufficiency, tau, tuple(missing))


def ask(
    *, token: ApiToken, question: str, zone: Coordinate, idempotency_key: str = ""
) -> Answered | Refusal:
    """Answer each part of `question` with the zone's sentence that best supplies it (its
    addressing probability at least the language's pass mark), one sentence per answered
    part and no other, when the bundle they make has a sufficiency of at least the zone's
    tau (seed 000 §4.2); refuse otherwise. Parts left unanswered are returned as `missing`
    (a partial answer, graded as one)."""
    agent = token.agent_coordinate
    earlier = submitted_under(token=token, idempotency_key=idempotency_key)
    if earlier is not None:
        # A retry is answered from the key before anything is retrieved: the zone's documents
        # may have changed since, and the same question must still get the same decision.
        same = earlier.question == question and earlier.zone == str(zone)
        submitted = replayed(earlier, same=same)
        return Answered(decision=submitted.decision, replayed=True)
    asked = analyse_question(question)
    candidates = _candidates(question, asked, zone)
    chosen = choose(asked, candidates)
    answers: list[Candidate] = []
    for _, candidate in chosen:
        if candidate is not None and all(c is not candidate for c in answers):
            answers.append(candidate)  # a sentence answering two parts is one claim
    found = shortfall(question, zone, chosen, answers)
    if not answers or agent is None or not responds(found.sufficiency, found.tau):
        context = _refusal_context(question, zone, asked, candidates, found)
        return _refused(token, question, zone, context)
    claims = [_claim(c) for c in answers]
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
