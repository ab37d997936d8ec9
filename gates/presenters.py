"""What the reviewer and zone-admin pages show: rows, highlights, bars and trees shaped from
what `gates.selectors` read. No queries here; the views call a selector, then a presenter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext, gettext_lazy, ngettext

from coordinates.models import Zone
from coordinates.selectors import EffectivePolicy
from decisions.models import Decision, claim_holds
from evidence.reasons import CLAIM_REFUTED, CLAIM_UNVERIFIED, localise
from gates.grading import GATES, Gate, WhatIf
from graph.models import GraphRiskFlag

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

QUESTION_CHARS = 140  # a longer question is cut, with an ellipsis, on its queue row
REASON_CHARS = 160  # and so is the gate reason beside it (a claim quoted in it can be long)


# --- the reviewer queue --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueueRow:
    id: int
    zone: str
    question: str
    gate: str
    mode: str
    reason: str
    sufficiency: float | None
    tau: float | None
    refusal_floor: float | None
    created_at: datetime
    due_at: datetime | None
    claimed_by: str | None
    claimed_by_me: bool
    escalated_to: str
    url: str
    escalated_to_me: bool = False  # addressed to the viewer: sorted first, marked
    escalation: str = ""  # why it went up ("escalated from G1.U1.P1.Z1: overdue since ...")
    assigned_to: str = ""  # the reviewer it is assigned to, if any
    # Approvals given so far (selectors.GivenApproval), of `approvals_needed` from different
    # people: a half-approved row says "1 of 2" with the first approver and their reason.
    approvals: tuple[Any, ...] = ()
    approvals_needed: int = 1

    @property
    def first_approval(self) -> Any:
        return self.approvals[0] if self.approvals else None

    @property
    def below_tau(self) -> bool:
        return self.sufficiency is not None and self.tau is not None and self.sufficiency < self.tau

    @property
    def overdue(self) -> bool:
        return self.due_at is not None and self.due_at < timezone.now()


def gate_reason(
    gate: str,
    sufficiency: float | None,
    tau: float | None,
    *,
    held_for: Sequence[str] = (),
    contradicted: bool = False,
) -> str:
    """Why a person must look: the number that fell short, else what the report found beyond
    its scores: evidence that disagrees (`contradicted`) or the first of the findings that
    asked for a person (`held_for`: the report's `at_least` reasons, as stored)."""
    if gate == "required" and sufficiency is not None and tau is not None:
        if sufficiency < tau:
            # (no answer mode here: for a decision a person must make it says nothing)
            return gettext("sufficiency %(s).2f < τ %(tau).2f") % {"s": sufficiency, "tau": tau}
        if contradicted:
            return gettext("cited evidence contradicts itself")
        # A claim's verdict quotes the claim: counted here, not quoted (a long claim filled
        # the row), after the other findings, as the decision page's banner says them.
        found = _once(held_for)
        verdicts = [r for r in found if r.startswith(_VERDICT_REASONS)]
        reasons = [localise(r, gettext) for r in found if not r.startswith(_VERDICT_REASONS)]
        reasons += _verdict_counts(verdicts)
        if reasons:
            first = _short(reasons[0], REASON_CHARS)
            if len(reasons) == 1:
                return first
            return ngettext(
                "%(reason)s (and %(n)s more finding)",
                "%(reason)s (and %(n)s more findings)",
                len(reasons) - 1,
            ) % {"reason": first, "n": len(reasons) - 1}
        return gettext("a finding of the report asks for a person")
    return gate or "-"


def _verdict_counts(verdicts: Sequence[str]) -> list[str]:
    """How many claims the findings say are refuted, and how many not verified."""
    refuted = sum(1 for r in verdicts if r.startswith(_VERDICT_REASONS[0]))
    unverified = len(verdicts) - refuted
    said = []
    if refuted:
        said.append(
            ngettext(
                "%(n)s claim is refuted by its evidence",
                "%(n)s claims are refuted by their evidence",
                refuted,
            )
            % {"n": refuted}
        )
    if unverified:
        said.append(
            ngettext(
                "%(n)s claim is not verified by its evidence",
                "%(n)s claims are not verified by their evidence",
                unverified,
            )
            % {"n": unverified}
        )
    return said


def _short(text: str, limit: int = QUESTION_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def queue_rows(
    values: Iterable[Mapping[str, Any]], *, viewer_id: Any, now: datetime | None = None
) -> list[QueueRow]:
    """The queue's rows from `selectors.queue_values`, for the reviewer `viewer_id`; a claim
    counts as held if it still stands at `now`.

    Links and shortened questions are made here, not in the template: per row, template
    tags cost more than the query (a page of many rows must render in well under 200 ms).
    """
    now = timezone.now() if now is None else now
    # One reverse() for the page; every row's link is the same path with its id.
    base = reverse("decision-page", args=[0])[: -len("0/")]
    result = []
    for v in values:
        policy = v["report__policy"] or {}
        tau, refusal = policy.get("tau"), policy.get("refusal_floor")
        held_now = claim_holds(v["claimed_by_id"], v["claimed_until"], now)
        result.append(
            QueueRow(
                id=v["pk"],
                zone=v["zone"],
                question=_short(v["question"]),
                gate=v["gate"],
                mode=v["mode"],
                reason=gate_reason(
                    v["gate"],
                    v["sufficiency"],
                    tau,
                    held_for=_held_for(v.get("report__body__at_least")),
                    contradicted=bool(v.get("report__body__contradictions")),
                ),
                sufficiency=v["sufficiency"],
                tau=tau,
                refusal_floor=refusal,
                created_at=v["created_at"],
                due_at=v["due_at"],
                claimed_by=v["claimed_by__username"] if held_now else None,
                claimed_by_me=bool(held_now and v["claimed_by_id"] == viewer_id),
                escalated_to=v["escalated_to"],
                url=f"{base}{v['pk']}/",
                escalated_to_me=bool(v.get("to_me")),
                escalation=escalation_text(v["zone"], v.get("escalation")),
                assigned_to=v.get("assigned_to__username") or "",
                approvals=tuple(v.get("approvals") or ()),
                approvals_needed=max(int(v.get("approvals_needed") or 1), 1),
            )
        )
    return result


def _held_for(at_least: Any) -> list[str]:
    """The stored `at_least` reasons of a report (an older report has none)."""
    if not isinstance(at_least, Mapping):
        return []
    reasons = at_least.get("reasons")
    return [str(r) for r in reasons] if isinstance(reasons, list) else []


def escalation_text(zone: str, note: Any) -> str:
    """Why an escalated decision went up, in a line (`selectors.Escalation`); "" for none."""
    if note is None:
        return ""
    if note.why == "graph":
        text = gettext("escalated from %(zone)s: graph: cohesion %(cohesion)s < τc/2 %(half)s") % {
            "zone": zone,
            "cohesion": _num(note.cohesion),
            "half": _num(note.cohesion_tau / 2 if note.cohesion_tau is not None else None),
        }
    else:
        since = timezone.localtime(note.since).strftime("%Y-%m-%d %H:%M") if note.since else "?"
        text = gettext("escalated from %(zone)s: overdue since %(since)s") % {
            "zone": zone,
            "since": since,
        }
    if note.topped:
        text += " · " + top_text(note.topped)
    return text


def top_text(top: str) -> str:
    """What an item that reached the top of the tree says about where it stays."""
    return gettext("at the top of the tree: it stays with %(top)s's authority") % {"top": top}


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


# --- risk hotspots awaiting the user's review ----------------------------------------------


@dataclass(frozen=True, slots=True)
class RiskFlagRow:
    """An open risk flag as the queue shows it to the authority that reviews it."""

    id: int
    zone: str
    key: str
    label: str | None  # None once the node was deleted: the flag outlives it
    node_type: str | None
    share: float
    threshold: float
    review_by: str
    flagged_at: datetime
    above_threshold: bool  # False once the node fell below, or the threshold moved
    explore_url: str | None


def risk_flag_rows(
    flags: Iterable[GraphRiskFlag], nodes: Mapping[int, tuple[str, str]]
) -> list[RiskFlagRow]:
    """The flags of `selectors.risk_flags_for_review` with their nodes' type and label
    (`selectors.flagged_nodes`; a deleted node has none) and a link into the explorer."""
    explorer = reverse("graph-explorer")
    rows = []
    for flag in flags:
        node_type, label = nodes.get(flag.pk, (None, None))
        rows.append(
            RiskFlagRow(
                id=flag.pk,
                zone=flag.zone,
                key=flag.key,
                label=label,
                node_type=node_type,
                share=flag.share,
                threshold=flag.threshold,
                review_by=flag.review_by,
                flagged_at=flag.created_at,
                above_threshold=flag.ended_at is None,
                explore_url=(
                    f"{explorer}?{urlencode({'zone': flag.zone, 'q': label})}"
                    if label is not None
                    else None
                ),
            )
        )
    return rows


# --- a decision as the page shows it -------------------------------------------------------


@dataclass(slots=True)
class Highlight:
    """A cited paragraph cut into the text before, inside and after the cited span."""

    before: str
    span: str
    after: str


def highlight(paragraph: str, span: str, start: int | None, end: int | None) -> Highlight:
    """Cut at the cited offsets when given, else at the span's first occurrence."""
    if start is not None or end is not None:
        lo = 0 if start is None else max(0, int(start))
        hi = len(paragraph) if end is None else min(len(paragraph), int(end))
        return Highlight(paragraph[:lo], paragraph[lo:hi], paragraph[hi:])
    at = paragraph.find(span) if span else -1
    if at < 0:
        return Highlight("", paragraph, "")
    return Highlight(paragraph[:at], span, paragraph[at + len(span) :])


def marked(text: str, words: Sequence[str]) -> list[tuple[str, bool]]:
    """`text` cut into (piece, failed) parts: where a failed word stands in it, that part is
    marked. Matching ignores case; a phrase ("finance approve") that does not stand in the
    text verbatim marks each of its words that does."""
    wanted = {
        w for word in words for w in ([word] if word.lower() in text.lower() else word.split())
    }
    wanted = {w for w in wanted if w.strip() and w.lower() in text.lower()}
    if not wanted:
        return [(text, False)]
    pattern = re.compile(
        "|".join(re.escape(w) for w in sorted(wanted, key=len, reverse=True)), re.IGNORECASE
    )
    parts: list[tuple[str, bool]] = []
    at = 0
    for match in pattern.finditer(text):
        if match.start() > at:
            parts.append((text[at : match.start()], False))
        parts.append((match.group(), True))
        at = match.end()
    if at < len(text):
        parts.append((text[at:], False))
    return parts


# What vetoed an evidence item (evidence/validation.py `vetoed_by`), as the page says it.
VETO_LABELS: dict[str, StrOrPromise] = {
    "numbers": gettext_lazy("vetoed: a number differs from the cited paragraph"),
    "reversal": gettext_lazy("vetoed: the cited paragraph says the opposite"),
    "calibration": gettext_lazy("vetoed: this zone's reviewers reject claims like this"),
}


def _once(reasons: Iterable[Any]) -> list[str]:
    """The reasons in order, each once."""
    return list(dict.fromkeys(str(r) for r in reasons))


# The engine's three verdicts on a claim (evidence.grounding); a report from before them
# says only supported or unsupported.
VERDICTS = ("verified", "unverified", "refuted")


def claim_verdict(claim: Mapping[str, Any]) -> str:
    """What the page says of a claim: contradicted (its evidence disagrees), else the
    report's verdict, else (an older report) supported or unsupported."""
    if claim.get("contradicted"):
        return "contradicted"
    if claim.get("verdict") in VERDICTS:
        return str(claim["verdict"])
    return "supported" if claim.get("supported") else "unsupported"


def engine_choice(verdict: str) -> str:
    """The reviewer's toggle as the page presets it: "yes" (supported) for a verified claim,
    "no" for a refuted one, "" for the rest: a claim the engine could not verify waits for
    the reviewer's own choice."""
    if verdict in ("verified", "supported"):
        return "yes"
    if verdict in ("refuted", "unsupported"):
        return "no"
    return ""


def claims_awaiting_choice(body: Mapping[str, Any]) -> list[int]:
    """The places of the report's claims whose toggle the page leaves open (engine_choice ""):
    those the engine could not verify, which wait for the reviewer's own choice."""
    return [
        k
        for k, claim in enumerate(body.get("claims", []))
        if not engine_choice(claim_verdict(claim))
    ]


def citation(item: Mapping[str, Any], titles: Mapping[tuple[int, int], str]) -> dict[str, Any]:
    """How a page names a cited paragraph: its document's title (as of the cited version),
    version and paragraph number, and a link to that paragraph on the document's page
    (`titles`: selectors.cited_titles). A fabricated citation, or one without a version,
    links nowhere; without a title found it reads "document N" (`unnamed`)."""
    document, version, paragraph = item.get("document"), item.get("version"), item.get("paragraph")
    if document is None:
        return {"title": "", "unnamed": "", "href": ""}
    title = titles.get((int(document), int(version))) if version is not None else None
    href = ""
    if version is not None and paragraph is not None and not item.get("fabricated"):
        base = reverse("document-page", args=[int(document)])
        href = f"{base}?{urlencode({'version': int(version)})}#p{int(paragraph)}"
    return {
        "title": title or "",
        "unnamed": "" if title else gettext("document %(id)s") % {"id": document},
        "href": href,
    }


def decision_claims(
    decision: Decision,
    texts: Mapping[tuple[int, int, int], str],
    titles: Mapping[tuple[int, int], str] | None = None,
) -> list[dict[str, Any]]:
    """The report's claims with each evidence item's paragraph cut around its span and its
    citation named (`citation`); `texts` are the cited paragraphs
    (`selectors.cited_paragraphs`), `titles` their versions' titles."""
    body = decision.report.body if decision.report is not None else {}
    claims: list[dict[str, Any]] = [dict(c) for c in body.get("claims", [])]
    if not claims:
        return [
            {"text": c["text"], "verdict": "unsupported", "evidence": [], "reasons": []}
            for c in decision.bundle.claims
        ]
    for claim in claims:
        claim["verdict"] = claim_verdict(claim)
        # Each reason once: the claim lists only what no evidence item below already says,
        # and an item's "dropped" note only when it is not one of its reasons.
        said = {str(r) for item in claim.get("evidence", []) for r in item.get("reasons", [])}
        claim["reasons"] = _once(r for r in claim.get("reasons", []) if str(r) not in said)
        failed = [w for item in claim.get("evidence", []) for w in item.get("failed_words", [])]
        claim["parts"] = marked(str(claim.get("text", "")), failed)
        items = []
        for item in claim.get("evidence", []):
            item = dict(item)
            item["reasons"] = _once(item.get("reasons", []))
            if item.get("dropped") in item["reasons"]:
                item["dropped"] = ""
            item["veto"] = VETO_LABELS.get(str(item.get("vetoed_by") or ""), "")
            item["source"] = citation(item, titles or {})
            key = (item.get("document"), item.get("version"), item.get("paragraph"))
            text = texts.get(key) if None not in key else None  # type: ignore[arg-type]
            cited = item.get("cited") or {}
            # When the agent retrieved the source, as the sealed bundle records it (none in
            # bundles sealed before it was recorded).
            stamp = cited.get("retrieved_at")
            item["retrieved_at"] = parse_datetime(stamp) if isinstance(stamp, str) else None
            start, end = cited.get("start"), cited.get("end")
            if start is None and end is None and item.get("aligned"):
                # a whole paragraph cited: highlight the sentence(s) that bear on the claim
                start, end = item["aligned"]
            item["highlight"] = (
                highlight(text, item.get("span", ""), start, end) if text is not None else None
            )
            items.append(item)
        claim["evidence"] = items
    return claims


@dataclass(frozen=True, slots=True)
class Bar:
    """One score against its threshold, in the units of a 0..1 bar."""

    label: str
    value: float | None
    threshold: float | None
    floor: float | None = None

    @property
    def passes(self) -> bool | None:
        if self.value is None or self.threshold is None:
            return None
        return self.value >= self.threshold


def score_bars(decision: Decision) -> list[Bar]:
    policy = decision.report.policy if decision.report is not None else {}
    return [
        Bar(
            gettext("sufficiency"),
            decision.sufficiency,
            policy.get("tau"),
            policy.get("refusal_floor"),
        ),
        Bar(gettext("completeness"), decision.completeness, None),
        Bar(gettext("cohesion"), decision.cohesion, policy.get("cohesion_tau")),
    ]


# --- zone admin ----------------------------------------------------------------------------


SHOWN_FIELDS = (
    "tau",
    "delta",
    "floor",
    "refusal_floor",
    "required_evidence",
    "cohesion_tau",
    "review_sla_hours",
    "approvals_required",
)


@dataclass(slots=True)
class TreeNode:
    zone: Zone
    values: dict[str, Any]
    sources: dict[str, str]
    children: list[TreeNode] = field(default_factory=list)


def policy_tree(zones: Iterable[tuple[Zone, EffectivePolicy]]) -> list[TreeNode]:
    """The zones nested under their parents, each with its effective values and sources
    (`selectors.zone_policies`)."""
    nodes: dict[int, TreeNode] = {}
    roots: list[TreeNode] = []
    for zone, effective in sorted(zones, key=lambda z: (z[0].depth, z[0].coordinate)):
        node = TreeNode(zone, effective.values.as_dict(), effective.sources)
        nodes[zone.pk] = node
        parent = nodes.get(zone.parent_id) if zone.parent_id else None
        (parent.children if parent else roots).append(node)
    return roots


def flatten(nodes: Sequence[TreeNode], depth: int = 0) -> Iterator[tuple[int, TreeNode]]:
    for node in nodes:
        yield depth, node
        yield from flatten(node.children, depth + 1)


def gate_rows(result: WhatIf) -> list[tuple[Gate, int, int, int]]:
    """(gate, old count, new count, difference) per gate, least strict first."""
    return [
        (g, result.old.get(g, 0), result.new.get(g, 0), result.new.get(g, 0) - result.old.get(g, 0))
        for g in GATES
    ]


# --- why this answer is here, in one sentence ------------------------------------------------


def _weakest(claims: Sequence[Mapping[str, Any]]) -> tuple[int, float] | None:
    scored = [
        (k, float(c["sufficiency"]))
        for k, c in enumerate(claims)
        if c.get("kind", "factual") == "factual" and c.get("sufficiency") is not None
    ]
    return min(scored, key=lambda pair: pair[1]) if scored else None


@dataclass(frozen=True, slots=True)
class AnswerPiece:
    """A stretch of the answer as the user reads it: one of its claims with how it was
    checked (`claim`: the report claim's 1-based number; `verdict`: "supported",
    "unsupported" or "" between claims), or the text between them."""

    text: str
    claim: int | None = None
    verdict: str = ""
    checked: str = ""  # "claim", "claims" or "sources" (evidence.answers)


def answer_pieces(answer: str, body: Mapping[str, Any]) -> list[AnswerPiece]:
    """The answer cut at its claims' offsets (the report's `answer.claims`), each claim
    marked with the verdict of the report claim that checked it; the whole answer unmarked
    when the report read no answer (an older report)."""
    read = (body.get("answer") or {}).get("claims") or []
    claims = list(body.get("claims", []))
    pieces: list[AnswerPiece] = []
    cursor = 0
    for said in sorted(read, key=lambda c: int(c["start"])):
        start, end = int(said["start"]), int(said["end"])
        if not cursor <= start < end <= len(answer):
            continue
        if start > cursor:
            pieces.append(AnswerPiece(answer[cursor:start]))
        index = said.get("claim")
        checked = claims[index] if isinstance(index, int) and index < len(claims) else None
        verdict = ""
        if checked is not None:
            verdict = claim_verdict(checked)
        elif said.get("covered") == "claims":
            verdict = (
                "supported"
                if all(c.get("supported") for c in claims if c.get("in_answer", True))
                else "unsupported"
            )
        pieces.append(
            AnswerPiece(
                answer[start:end],
                claim=index + 1 if isinstance(index, int) else None,
                verdict=verdict,
                checked=str(said.get("covered") or ""),
            )
        )
        cursor = end
    if cursor < len(answer):
        pieces.append(AnswerPiece(answer[cursor:]))
    return pieces


# The stored English of a claim's own verdict (evidence.reasons CLAIM_REFUTED and
# CLAIM_UNVERIFIED), up to the quoted claim: the banner counts these, it does not quote them.
_VERDICT_REASONS = tuple(
    template.split("%(claim)s", 1)[0] for template in (CLAIM_REFUTED, CLAIM_UNVERIFIED)
)


def _numbers(claims: Sequence[int]) -> str:
    return ", ".join(str(k + 1) for k in claims)


def _verdict_parts(claims: Sequence[Mapping[str, Any]]) -> list[str]:
    """The claims refuted and those not verified, by number, one sentence each."""
    factual = [
        (k, claim_verdict(c))
        for k, c in enumerate(claims)
        if c.get("kind", "factual") == "factual" and c.get("in_answer", True)
    ]
    refuted = [k for k, verdict in factual if verdict == "refuted"]
    # (a claim with no supporting evidence at all is said so already: not again here)
    unverified = [
        k
        for k, verdict in factual
        if verdict in ("unverified", "contradicted") and claims[k].get("supported")
    ]
    parts = []
    if refuted:
        parts.append(
            ngettext(
                "claim %(claims)s is refuted by its evidence",
                "claims %(claims)s are refuted by their evidence",
                len(refuted),
            )
            % {"claims": _numbers(refuted)}
        )
    if unverified:
        parts.append(
            ngettext(
                "claim %(claims)s is not verified by its evidence",
                "claims %(claims)s are not verified by their evidence",
                len(unverified),
            )
            % {"claims": _numbers(unverified)}
        )
    return parts


def decided_text(kind: str, people: Sequence[str], at: datetime) -> str:
    """Who ended a decision and when, as the decision page's banner leads with it."""
    when = timezone.localtime(at).strftime("%Y-%m-%d %H:%M")
    names = ", ".join(people)
    return {
        "approved": gettext("Approved by %(people)s on %(when)s"),
        "rejected": gettext("Rejected by %(people)s on %(when)s"),
        "sent_back": gettext("Sent back for more evidence by %(people)s on %(when)s"),
        "evidence_changed": gettext(
            "Failed by %(people)s on %(when)s: the text it cites has changed since"
        ),
        "overridden": gettext("Released over its block by %(people)s on %(when)s"),
    }[kind] % {"people": names, "when": when}


def explanation(
    gate: str, body: Mapping[str, Any], policy: Mapping[str, Any], *, decided: str = ""
) -> str:
    """One plain sentence on why the answer got its gate, with each number beside its
    threshold: what a reviewer reads first. `body` and `policy` are the report's; `decided`
    (decided_text), once the decision is ended, leads instead of what its gate asked for."""
    claims = list(body.get("claims", []))
    tau, floor = policy.get("tau"), policy.get("refusal_floor")
    # What the answer's completeness was counted against: its question's (seed 000 §4.3) or
    # the zone's number; a report from before the question's recorded only the zone's.
    required = int(
        (body.get("score") or {}).get("required_evidence") or policy.get("required_evidence") or 0
    )
    kept = sum(1 for c in claims for item in c.get("evidence", []) if item.get("kept"))
    weakest = _weakest(claims)
    unsupported = [
        k + 1 for k, c in enumerate(claims) if not c.get("supported") and c.get("in_answer", True)
    ]
    parts: list[str] = []
    # What the findings beyond the scores asked of the gate: an answer to another question,
    # a part of it left unanswered, a superseded or unapproved source. Each once: a source
    # the zone does not release alone is found once per claim resting on it, and a claim's
    # own verdict is said once for all claims below (the claims list quotes each).
    parts.extend(
        localise(reason, gettext)
        for reason in _once((body.get("at_least") or {}).get("reasons", []))
        if not reason.startswith(_VERDICT_REASONS)
    )
    parts.extend(_verdict_parts(claims))
    if body.get("contradictions"):
        conflicts = [c for c in body["contradictions"] if c.get("conflict")]
        parts.append(
            gettext("the knowledge base disagrees with itself on what this answer cites")
            if conflicts
            else gettext("the paragraphs it cites disagree with each other")
        )
    if unsupported:
        parts.append(
            gettext("claim %(claims)s has no supporting evidence")
            % {"claims": ", ".join(str(k) for k in unsupported)}
            if len(unsupported) == 1
            else gettext("claims %(claims)s have no supporting evidence")
            % {"claims": ", ".join(str(k) for k in unsupported)}
        )
    if gate in ("required", "blocked") and required and kept < required:
        # Whose number it is: the zone's own, or (policy 0) what the question asks for.
        wanted = (
            gettext("%(kept)s of the %(required)s sources the zone requires")
            if policy.get("required_evidence")
            else gettext("%(kept)s of the %(required)s sources the question asks for")
        )
        parts.append(wanted % {"kept": kept, "required": required})
    if weakest is not None and tau is not None:
        number, score = weakest
        parts.append(
            gettext("the weakest claim (%(claim)s) scores %(score).2f against τ %(tau).2f")
            % {"claim": number + 1, "score": score, "tau": float(tau)}
        )
    lead = {
        "auto": gettext("Released without review"),
        "flagged": gettext("Released, flagged for the periodic review"),
        "required": gettext("A person must decide"),
        "blocked": gettext("Blocked"),
    }.get(gate, gettext("Not graded yet"))
    if decided:
        lead = decided
    if gate == "blocked" and floor is not None and weakest is not None:
        parts.append(gettext("below the refusal floor %(floor).2f") % {"floor": float(floor)})
    if not claims or all(c.get("kind", "factual") != "factual" for c in claims):
        parts = [gettext("the answer states no fact to check")]
    if not parts:
        return gettext("%(lead)s.") % {"lead": lead}
    # The separators are words too: Japanese joins with 、 and ends with 。
    return gettext("%(lead)s: %(reasons)s.") % {
        "lead": lead,
        "reasons": gettext("; ").join(parts),
    }
