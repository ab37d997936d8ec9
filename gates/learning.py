"""What a zone's own answers teach it (seed 000 §6.1, §10.3, §13.2): the report behind
`GET /api/v1/zones/{coordinate}/learning/` and the page `/zones/{coordinate}/learning/`.

Over the decisions proposed in the zone (or beneath it) in a window, as on the dashboard
(`gates.kpis.window_from`):
- `hallucinations` (§6.1): each wrong answer labelled by type. An answer is wrong when the
  engine refuted one of its claims (gate `blocked`) or a reviewer marked one of its claims
  unsupported. Its type is that of its worst wrong claim: `fabrication` (the claim cites
  nothing that exists, or nothing at all), `distortion` (the engine refuted it against the
  paragraph it cites: a wrong number, a reversal, the other side of a conflict), else
  `extrapolation` (real evidence, a conclusion it does not carry). Beside the measured split,
  the split §6.5's model expects at the zone's mean completeness of the same answers
  (`evidence.dynamics.hallucination_by_type`, as shares).
- `agents` (§13.2, agent-level accuracy monitoring): per agent coordinate, its answers, mean
  sufficiency (the evidence quality §10.2 learns from), and the shares blocked and wrong;
  `underperforming` when its wrong share is at least twice the zone's over at least
  `MIN_AGENT_ANSWERS` answers. Worst first.
- `knowledge_gaps` (§10.3): the topics (a question's content words) where refusals for want
  of evidence (answer mode `refusal`) cluster: `evidence.dynamics.knowledge_gaps`. Refused
  `ask`s are not counted: the trail keeps their question as a hash only.
- `overconfident_sources` (§10.3 retrieval refinement and confidence calibration): the
  documents whose evidence confidence outruns the reviewers' verdicts on the claims it
  carried (`evidence.dynamics.overconfident_sources`).
- `learning_curve` (§10.2): the zone's accuracy week by week (1 - wrong answers / answers,
  weeks counted from `since`, each with at least `MIN_WEEK_ANSWERS` answers) and, with at
  least four such weeks, the A_0, A_max and lambda of `evidence.dynamics.fit_learning_curve`
  and the weeks to 95% of the way (§10.4).
- `drift` (§6.6): the knowledge base's update rate mu (new document versions per document
  and week) and staleness rate nu (documents whose current version passed the recency
  half-life, `scoring.RECENCY_HALF_LIFE_DAYS`, in the window, per document and week), and
  the completeness of the window's released answers carried forward by
  `evidence.dynamics.completeness_over_time`.
Bounded: at most `MAX_ANSWERS` answers are read (the newest); `sampled` says when the window
held more (then the early weeks of the curve are short of answers).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any, Literal

from coordinates.coordinate import Coordinate
from coordinates.selectors import beneath
from decisions.models import ClaimVerdict, Decision, Gate, State
from evidence import dynamics, scoring
from evidence.models import Document, DocumentVersion
from evidence.questions import analyse_question
from evidence.text import term_surfaces
from gates.kpis import Window

HallucinationType = Literal["fabrication", "distortion", "extrapolation"]
TYPES: tuple[HallucinationType, ...] = ("fabrication", "distortion", "extrapolation")
MAX_ANSWERS = 5_000
MIN_AGENT_ANSWERS = 5
UNDERPERFORMING_FACTOR = 2.0
MIN_WEEK_ANSWERS = 5  # a week with fewer answers says too little about its accuracy
DRIFT_WEEKS = (4, 13, 26, 52)  # how far the completeness is carried forward
RELEASED = (State.APPROVED, State.EXECUTED, State.COMPLETED)


# --- the pure part -----------------------------------------------------------------------


def claim_type(claim: Mapping[str, Any]) -> HallucinationType:
    """The kind of error a wrong claim (a report's claim, `evidence.validation`) makes:
    fabrication when no citation of it names a paragraph that exists, distortion when the
    engine refuted it against real text, else extrapolation."""
    evidence = claim.get("evidence") or []
    if not any(not item.get("fabricated") for item in evidence):
        return "fabrication"
    if claim.get("verdict") == "refuted":
        return "distortion"
    return "extrapolation"


def answer_type(
    claims: Sequence[Mapping[str, Any]], wrong: Iterable[int]
) -> HallucinationType | None:
    """An answer's type: its worst wrong claim's (fabrication before distortion before
    extrapolation); None when no claim is wrong. `wrong` holds claim indexes; indexes past
    the report's claims are ignored."""
    found = {claim_type(claims[k]) for k in wrong if 0 <= k < len(claims)}
    return next((kind for kind in TYPES if kind in found), None)


def refuted_claims(claims: Sequence[Mapping[str, Any]]) -> list[int]:
    return [k for k, claim in enumerate(claims) if claim.get("verdict") == "refuted"]


def type_shares(counts: Mapping[str, int]) -> dict[str, float | None]:
    total = sum(counts.get(kind, 0) for kind in TYPES)
    return {kind: (counts.get(kind, 0) / total if total else None) for kind in TYPES}


def expected_type_shares(completeness: float) -> dict[str, float]:
    """§6.5's split of the hallucinations that remain at this completeness, as shares."""
    split = dynamics.hallucination_by_type(1.0, completeness)
    total = split.total or 1.0
    return {kind: round(getattr(split, kind) / total, 6) for kind in TYPES}


def agent_rows(answers: Iterable[tuple[str, float | None, bool, bool]]) -> list[dict[str, Any]]:
    """Per agent, from (agent, sufficiency, blocked, wrong) per answer: counts, shares and
    whether it underperforms the zone (wrong share >= UNDERPERFORMING_FACTOR x the zone's,
    over at least MIN_AGENT_ANSWERS answers). The worst wrong share first."""
    seen: dict[str, list[tuple[float | None, bool, bool]]] = defaultdict(list)
    for agent, sufficiency, blocked, wrong in answers:
        seen[agent].append((sufficiency, blocked, wrong))
    total = sum(len(rows) for rows in seen.values())
    zone_wrong = sum(w for rows in seen.values() for _, _, w in rows) / total if total else 0.0
    out = []
    for agent, rows in seen.items():
        scored = [s for s, _, _ in rows if s is not None]
        wrong_share = sum(w for _, _, w in rows) / len(rows)
        out.append(
            {
                "agent": agent,
                "answers": len(rows),
                "mean_sufficiency": round(sum(scored) / len(scored), 6) if scored else None,
                "blocked_share": round(sum(b for _, b, _ in rows) / len(rows), 6),
                "wrong_share": round(wrong_share, 6),
                "underperforming": len(rows) >= MIN_AGENT_ANSWERS
                and wrong_share > 0
                and wrong_share >= UNDERPERFORMING_FACTOR * zone_wrong,
            }
        )
    return sorted(out, key=lambda row: (-row["wrong_share"], -row["answers"], row["agent"]))


def weekly_accuracy(answers: Iterable[tuple[int, bool]]) -> list[dict[str, Any]]:
    """From (week, wrong) per answer: each week's answers and accuracy (1 - wrong share),
    in week order."""
    weeks: dict[int, list[bool]] = defaultdict(list)
    for week, wrong in answers:
        weeks[week].append(wrong)
    return [
        {
            "week": week,
            "answers": len(rows),
            "accuracy": round(1.0 - sum(rows) / len(rows), 6),
        }
        for week, rows in sorted(weeks.items())
    ]


def learning_fit(weeks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """§10.2's curve fitted to the weeks with at least MIN_WEEK_ANSWERS answers, or why not."""
    kept = [w for w in weeks if w["answers"] >= MIN_WEEK_ANSWERS]
    if len(kept) < dynamics.MIN_LEARNING_POINTS:
        return {"fit": None, "weeks_used": len(kept)}
    fit = dynamics.fit_learning_curve(
        [w["week"] for w in kept], [w["accuracy"] for w in kept], [w["answers"] for w in kept]
    )
    if fit is None:
        return {"fit": None, "weeks_used": len(kept)}
    return {
        "fit": {
            "a_0": round(fit.a_0, 6),
            "a_max": round(fit.a_max, 6),
            "rate_per_week": round(fit.rate, 6),
            "weeks_to_95": (
                round(dynamics.time_to_converge(fit.rate), 1) if fit.rate > 0 else None
            ),
        },
        "weeks_used": len(kept),
    }


def drift_projection(
    *,
    versions_added: int,
    went_stale: int,
    documents: int,
    weeks: float,
    completeness: float | None,
) -> dict[str, Any]:
    """§6.6: mu and nu per document and week, and the completeness carried forward."""
    if documents <= 0 or weeks <= 0:
        return {"mu": None, "nu": None, "documents": documents, "projected": []}
    mu = versions_added / documents / weeks
    nu = went_stale / documents / weeks
    projected = (
        []
        if completeness is None
        else [
            {
                "weeks": t,
                "completeness": round(dynamics.completeness_over_time(completeness, mu, nu, t), 6),
            }
            for t in DRIFT_WEEKS
        ]
    )
    return {"mu": round(mu, 6), "nu": round(nu, 6), "documents": documents, "projected": projected}


def question_topics(question: str) -> dict[str, str]:
    """A question's topics: its content words (not the asking words), each with the first
    word it came from, in lower case, so that a topic reads as a word ("reimburs" ->
    "reimbursement")."""
    terms = analyse_question(question).terms
    surfaces = term_surfaces(question)
    return {term: surfaces.get(term, term) for term in sorted(terms)}


# --- reading the zone --------------------------------------------------------------------


def _verdicts_against(decision_ids: list[int]) -> dict[int, list[ClaimVerdict]]:
    rows: dict[int, list[ClaimVerdict]] = defaultdict(list)
    for verdict in ClaimVerdict.objects.filter(decision_id__in=decision_ids).order_by("pk"):
        rows[verdict.decision_id].append(verdict)
    return rows


def _latest(verdicts: list[ClaimVerdict]) -> dict[int, bool]:
    """Each claim's last word from a reviewer (a later verdict on the same claim governs)."""
    said: dict[int, bool] = {}
    for verdict in verdicts:
        said[verdict.claim] = verdict.supported
    return said


def zone_learning(coordinate: Coordinate, window: Window) -> dict[str, Any]:
    cohort = (
        Decision.objects.filter(
            beneath(coordinate),
            created_at__gte=window.since,
            created_at__lt=window.until,
        )
        .select_related("report")
        .order_by("-created_at", "-pk")
    )
    decisions = list(cohort[: MAX_ANSWERS + 1])
    sampled = len(decisions) > MAX_ANSWERS
    decisions = decisions[:MAX_ANSWERS]
    reviewed = _verdicts_against([d.pk for d in decisions])

    types: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    wrong_completeness: list[float] = []
    answers: list[tuple[str, float | None, bool, bool]] = []
    refused: Counter[str] = Counter()
    asked: Counter[str] = Counter()
    surfaces: dict[str, str] = {}
    source_verdicts: list[tuple[str, float, bool]] = []
    by_week: list[tuple[int, bool]] = []
    released_completeness: list[float] = []
    for decision in decisions:
        claims = decision.report.body.get("claims", []) if decision.report else []
        said = _latest(reviewed.get(decision.pk, []))
        blocked = decision.gate == Gate.BLOCKED
        wrong = set(refuted_claims(claims)) if blocked else set()
        wrong |= {k for k, supported in said.items() if not supported}
        kind = answer_type(claims, wrong)
        if kind is not None:
            types[kind] += 1
            caught["engine" if blocked else "reviewer"] += 1
            if decision.completeness is not None:
                wrong_completeness.append(decision.completeness)
        answers.append((decision.agent, decision.sufficiency, blocked, kind is not None))
        by_week.append(((decision.created_at - window.since).days // 7, kind is not None))
        if decision.state in RELEASED and decision.completeness is not None:
            released_completeness.append(decision.completeness)
        topics = question_topics(decision.question)
        surfaces.update(topics)
        asked.update(topics.keys())
        if decision.mode == "refusal":
            refused.update(topics.keys())
        for k, supported in said.items():
            if 0 <= k < len(claims):
                source_verdicts.extend(_cited(claims[k], supported))

    titles = dict(
        Document.objects.filter(
            pk__in={int(source) for source, _, _ in source_verdicts}
        ).values_list("pk", "title")
    )
    mean_bc = sum(wrong_completeness) / len(wrong_completeness) if wrong_completeness else None
    weeks = weekly_accuracy(by_week)
    released_bc = (
        sum(released_completeness) / len(released_completeness) if released_completeness else None
    )
    return {
        "zone": str(coordinate),
        "since": window.since.isoformat(),
        "until": window.until.isoformat(),
        "answers": len(decisions),
        "sampled": sampled,
        "hallucinations": {
            "answers": sum(types.values()),
            "by_type": {kind: types.get(kind, 0) for kind in TYPES},
            "shares": type_shares(types),
            "caught_by": {"engine": caught.get("engine", 0), "reviewer": caught.get("reviewer", 0)},
            "mean_completeness": None if mean_bc is None else round(mean_bc, 6),
            "model_shares": None if mean_bc is None else expected_type_shares(mean_bc),
        },
        "agents": agent_rows(answers),
        "knowledge_gaps": [
            {
                "topic": surfaces.get(gap.topic, gap.topic),
                "refused": gap.refused,
                "asked": gap.asked,
                "refusal_rate": round(gap.refusal_rate, 6),
            }
            for gap in dynamics.knowledge_gaps(refused, asked)
        ],
        "learning_curve": {"weeks": weeks, **learning_fit(weeks)},
        "drift": _drift(coordinate, window, released_bc),
        "overconfident_sources": [
            {
                "document": int(source.source),
                "title": titles.get(int(source.source), ""),
                "mean_confidence": round(source.mean_confidence, 6),
                "accuracy": round(source.accuracy, 6),
                "verdicts": source.verdicts,
            }
            for source in dynamics.overconfident_sources(source_verdicts)
        ],
    }


def _cited(claim: Mapping[str, Any], supported: bool) -> list[tuple[str, float, bool]]:
    """(document, the confidence its evidence had, the reviewer's verdict) for each document a
    reviewed claim kept evidence from (its best item per document)."""
    best: dict[str, float] = {}
    for item in claim.get("evidence") or []:
        document = item.get("document")
        if item.get("kept") and isinstance(document, int) and not item.get("fabricated"):
            source = str(document)
            best[source] = max(best.get(source, 0.0), float(item.get("confidence") or 0.0))
    return [
        (source, min(max(confidence, 0.0), 1.0), supported) for source, confidence in best.items()
    ]


def _drift(coordinate: Coordinate, window: Window, completeness: float | None) -> dict[str, Any]:
    """§6.6's rates over the window from the zone's documents and their versions."""
    documents = Document.objects.filter(beneath(coordinate, "zone__coordinate"))
    versions = DocumentVersion.objects.filter(document__in=documents)
    half_life = timedelta(days=scoring.RECENCY_HALF_LIFE_DAYS)
    return drift_projection(
        versions_added=versions.filter(
            created_at__gte=window.since, created_at__lt=window.until, version__gt=1
        ).count(),
        went_stale=versions.filter(
            superseded_at__isnull=True,
            created_at__gte=window.since - half_life,
            created_at__lt=window.until - half_life,
        ).count(),
        documents=documents.filter(created_at__lt=window.until).count(),
        weeks=(window.until - window.since).total_seconds() / (7 * 86400),
        completeness=completeness,
    )
