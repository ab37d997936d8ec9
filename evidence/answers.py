"""What the user reads, against what was checked: the answer text cut into its claims
(`split_claims`), each matched to the submitted claim that says it.

An answer claim that no submitted claim covers is the engine's to check against the cited
sources itself (evidence.validation); a submitted claim the answer does not contain is
reported as not part of the answer and does not count toward its score. Without this an
agent could list one well-cited claim and release any text beside it.

Pure: the project's text and grounding rules only, no database.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from evidence.claims import split_claims, without_markers
from evidence.grounding import rule_verdict
from evidence.text import normalise

Covered = Literal["claim", "claims", "sources"]


@dataclass(frozen=True, slots=True)
class AnswerClaim:
    """One claim of the answer text, with exact offsets (`answer[start:end] == text`)."""

    text: str
    start: int
    end: int
    # The submitted claim that says it (None: none does, or only several together).
    claim: int | None
    # How it was checked: "claim" (one submitted claim says it), "claims" (the submitted
    # claims together say it) or "sources" (no submitted claim does: the engine checks it
    # against the cited paragraphs itself).
    covered: Covered


@dataclass(frozen=True, slots=True)
class Reading:
    """The answer read against its claims."""

    claims: tuple[AnswerClaim, ...]
    in_answer: tuple[bool, ...]  # per submitted claim: does the answer say it?

    @property
    def unchecked(self) -> list[int]:
        """Indices (into `claims`) of the answer's claims no submitted claim covers."""
        return [i for i, c in enumerate(self.claims) if c.covered == "sources"]


_EDGES = re.compile(r"^[\W_]+|[\W_]+$")
unmarked = without_markers  # the text without its citation markers (evidence.claims)


def _plain(text: str) -> str:
    """Folded, without citation markers, with single spaces and no edge punctuation: the
    form in which "3 days per week." and "3 days per week [1]" are the same words."""
    return _EDGES.sub("", without_markers(normalise(text)))


# The share of its key terms a sentence of the answer must find to count as said, whether
# by a submitted claim or by a cited paragraph: stricter than a claim's support (0.6), since
# no agent vouched for it. A claim or paragraph that shares a sentence's subject but not its
# actor ("requests ... are approved by HR" beside "employees may request to work remotely")
# does not say it.
SAYS_COVERAGE = 0.8


def _says(claim: str, statement: str) -> bool:
    """Whether `claim` (read as the evidence) says `statement`: by the grounding rules, so
    "5 days" is not said by a claim of "3 days" and a reversed duty is not said at all, and
    with nearly all of the statement's key terms."""
    verdict = rule_verdict(unmarked(statement), claim)
    return verdict.supported and verdict.coverage >= SAYS_COVERAGE


def read_answer(answer: str, claims: Sequence[str]) -> Reading:
    """Each claim of the answer matched to the submitted claim that says it: its words
    inside one claim's (the usual case, the answer being its claims joined), else one claim
    that says it by the grounding rules, else all the claims together; the rest are the
    engine's to check against the sources. A submitted claim is part of the answer when it
    says one of the answer's claims or its words are in the answer."""
    plain_claims = [_plain(c) for c in claims]
    claims = [unmarked(c) for c in claims]
    plain_answer = _plain(answer)
    joined = " ".join(claims)
    found: list[AnswerClaim] = []
    said = [bool(p) and p in plain_answer for p in plain_claims]
    for piece in split_claims(answer):
        plain = _plain(piece.text)
        covered: Covered = "sources"
        by: int | None = next(
            (k for k, words in enumerate(plain_claims) if plain and plain in words), None
        )
        if by is None:
            by = next((k for k, claim in enumerate(claims) if _says(claim, piece.text)), None)
        if by is not None:
            covered = "claim"
            said[by] = True
        elif len(claims) > 1 and _says(joined, piece.text):
            covered = "claims"
            for k, claim in enumerate(claims):
                said[k] = said[k] or (bool(plain_claims[k]) and _says(piece.text, claim))
        found.append(AnswerClaim(piece.text, piece.start, piece.end, by, covered))
    return Reading(tuple(found), tuple(said))


__all__ = ["SAYS_COVERAGE", "AnswerClaim", "Reading", "read_answer", "unmarked"]
