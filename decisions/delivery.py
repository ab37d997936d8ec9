"""What the asker receives: the answer as its mode allows (seed 000 §5.4), or the answer a
person wrote in its place (seed 002 §9.3).

The agent's answer stays stored as it was submitted (`Decision.answer`, for audit); what is
delivered is derived from it, the report and the reviewers' approvals, never stored apart:

- `full`: the answer as it is;
- `hedged`: a hedge sentence in the answer's language, then the answer;
- `partial`: only the answer's supported claims, then "Not answered: ..." with the parts of
  the question left without a supported claim (`not_answered`, also a list of its own);
- `refusal`: no answer text. A refusal the gate sends to a person is released only with a
  replacement that person writes (decisions.services.decision_approve);
- a replacement (the latest an approver gave): delivered as written, whatever the mode;
- a blocked answer released by two people's override: as submitted (they took it as it is).

`deliver` is pure; the hedge and the "Not answered" label are translated into the answer's
language (Japanese when the answer is, English otherwise), not the reader's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils import translation
from django.utils.translation import gettext

from decisions.models import Decision, Gate, State
from evidence.text import has_japanese


@dataclass(frozen=True, slots=True)
class Delivery:
    """The text the asker receives (None: nothing), the mode it follows, the parts of the
    question it leaves unanswered, and whether a person wrote it."""

    answer: str | None
    mode: str
    not_answered: list[str] = field(default_factory=list)
    replaced: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "mode": self.mode,
            "not_answered": list(self.not_answered),
            "replaced": self.replaced,
        }


def language_of(text: str) -> str:
    return "ja" if has_japanese(text) else "en"


def hedge(language: str) -> str:
    """The uncertainty marker a hedged answer opens with (seed 000 §5.4)."""
    with translation.override(language):
        return gettext("Based on limited evidence; this answer may be incomplete.")


def not_answered_line(parts: Sequence[str], language: str) -> str:
    with translation.override(language):
        label = gettext("Not answered: %(parts)s")
    return label % {"parts": ("、" if language == "ja" else "; ").join(parts)}


def _upheld(claims: Sequence[Mapping[str, Any]], index: object) -> bool:
    """The report's claim `index` is supported and not refuted (what a partial answer keeps)."""
    if not isinstance(index, int) or not 0 <= index < len(claims):
        return False
    claim = claims[index]
    return bool(claim.get("supported")) and claim.get("verdict") != "refuted"


_CLOSING = ".!?。！？)）」』\"'"


def _sentence(answer: str, start: int, end: int) -> str:
    """A claim's span of the answer with the punctuation that closes it (the answer check's
    spans stop before the full stop)."""
    while end < len(answer) and answer[end] in _CLOSING:
        end += 1
    return answer[start:end]


def supported_text(answer: str, body: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The answer cut down to its supported claims, and the parts of the question that are
    then not answered: the parts the addressing check found no claim for, and those whose
    claim was withheld. A plain answer keeps its own sentences (the answer check's spans);
    an answer submitted as claims keeps the text of its supported claims."""
    claims: Sequence[Mapping[str, Any]] = body.get("claims") or []
    check = body.get("answer") or None
    if check is not None:
        spans = check.get("claims") or []
        kept = [
            _sentence(answer, s["start"], s["end"])
            for s in spans
            if _upheld(claims, s.get("claim"))
        ]

        def report_claim(by: object) -> object:
            if isinstance(by, int) and 0 <= by < len(spans):
                return spans[by].get("claim")
            return None
    else:
        said = [k for k, c in enumerate(claims) if c.get("in_answer", True)]
        kept = [claims[k]["text"] for k in said if _upheld(claims, k)]

        def report_claim(by: object) -> object:
            return by

    missing: list[str] = []
    addressing = body.get("addressing") or {}
    for part in addressing.get("parts") or []:
        answered = part.get("answered") and _upheld(claims, report_claim(part.get("by")))
        if not answered and part.get("asks") not in missing:
            missing.append(str(part.get("asks")))
    joiner = "" if has_japanese(answer) else " "
    return joiner.join(piece.strip() for piece in kept if piece.strip()), missing


def deliver(
    answer: str, mode: str, body: Mapping[str, Any], replacement: str | None = None
) -> Delivery:
    """What the asker receives for `answer` in `mode`, given its report's `body`."""
    if replacement:
        return Delivery(answer=replacement, mode=mode or "full", replaced=True)
    language = language_of(answer)
    if mode == "refusal":
        return Delivery(answer=None, mode=mode)
    if mode == "hedged":
        joiner = "" if language == "ja" else " "
        return Delivery(answer=f"{hedge(language)}{joiner}{answer}", mode=mode)
    if mode == "partial":
        text, missing = supported_text(answer, body)
        if missing:
            line = not_answered_line(missing, language)
            text = f"{text}\n\n{line}" if text else line
        return Delivery(answer=text or None, mode=mode, not_answered=missing)
    return Delivery(answer=answer, mode=mode or "full")


def replacement_of(decision: Decision) -> str | None:
    """The answer the latest approver wrote in place of the agent's (None: nobody did)."""
    found = (
        decision.approvals.exclude(replacement__isnull=True)
        .exclude(replacement="")
        .order_by("-pk")
        .values_list("replacement", flat=True)
        .first()
    )
    return found or None


def delivery_of(decision: Decision) -> Delivery:
    """What the asker receives, or will once the decision is released: nothing before it is
    validated or once it failed (blocked, rejected, given up on)."""
    mode = decision.mode or ""
    if decision.report is None or decision.state == State.FAILED:
        return Delivery(answer=None, mode=mode)
    if decision.gate == Gate.BLOCKED:
        # Released over its block: two people took the agent's text as it stands
        # (services.decision_override), so it goes out as submitted, whatever its mode.
        return Delivery(answer=decision.answer, mode=mode)
    return deliver(decision.answer, mode, decision.report.body, replacement_of(decision))
