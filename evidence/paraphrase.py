"""Ways of saying the same thing that the verification by construction must not count as a
difference (evidence.grounding `_lacking`): each is a rewrite of form, never of meaning.

- Contractions: "I'll prepare the garden" says "will" as a summary's "Elisabeth will prepare
  the garden" does; the scope words (will, are, have) are read on the expanded text.
- "no X" and "not ... any X": "found no evidence" / "have not found any evidence", one
  negation each side.
- A closed compound's head: "girls" for "schoolgirls" (the general word for the kind).
- A vague count is no limit: "hundreds of schoolgirls fell sick" counts them (read as at
  least 200, evidence.numbers), and "the schoolgirls" speaks of the same ones; "expenses over
  500,000 yen" selects some expenses, and a claim dropping it widens what it says.

Found by reading which words the verification lacked in consistent summary sentences of
SummEdits' fitting split (the held-out part unread); none changes what refutes a claim.
"""

from __future__ import annotations

import re

from evidence import wordnet
from evidence.numbers import Quantity
from evidence.text import content_terms, normalise

# The contractions whose expansion is unambiguous ('d is "would" or "had", 's "is", "has" or
# a possessive: neither is read). "n't" is left as it is: the negation count reads it.
_CONTRACTIONS = (
    (re.compile(r"(?<=[a-z])['’]ll\b", re.IGNORECASE), " will"),
    (re.compile(r"(?<=[a-z])['’]re\b", re.IGNORECASE), " are"),
    (re.compile(r"(?<=[a-z])['’]ve\b", re.IGNORECASE), " have"),
    (re.compile(r"\bi['’]m\b", re.IGNORECASE), "I am"),
)


def expand_contractions(text: str) -> str:
    """The text with 'll, 're, 've and I'm written out: "I'll go" -> "I will go"."""
    for pattern, full in _CONTRACTIONS:
        text = pattern.sub(full, text)
    return text


def no_said_as_not_any(word: str, span_scope: frozenset[str]) -> bool:
    """Whether the claim's scope word "no" is the span's "not ... any" ("found no evidence" /
    "did not find any evidence"). The negations are counted apart, so a span with a second
    negation still differs in polarity."""
    return word == "no" and {"not", "any"} <= span_scope


# The plural counts evidence.numbers reads as "at least" a value: "hundreds of" (200).
_VAGUE_COUNT = re.compile(r"\b(dozens|hundreds|thousands|millions|billions)\s+of\b", re.IGNORECASE)
_VAGUE_LEAST = {
    "dozens": 24,
    "hundreds": 200,
    "thousands": 2000,
    "millions": 2 * 10**6,
    "billions": 2 * 10**9,
}


def vague_count(quantity: Quantity, span: str) -> bool:
    """Whether a bound the span states is only a vague count ("hundreds of"), which says how
    many there were, not which of them the sentence speaks of."""
    if quantity.bound != "at least":
        return False
    counted = {_VAGUE_LEAST[m.group(1).lower()] for m in _VAGUE_COUNT.finditer(span)}
    return quantity.value in counted


# A closed compound names a kind of its last word: a "schoolgirl" is a girl, a "smartphone" a
# phone. Said of the kind, the claim's general word is true; the other way ("smartphones" for
# the span's "phones") it says more. Short heads ("car" in "scar") are left out.
HEAD_MIN = 4
MODIFIER_MIN = 4
# A word before the head that makes another word, not a kind of it: "understand" is no way of
# standing, "overcome" none of coming. The modifier must be a word of its own (WordNet).
_PARTICLES = frozenset({
    "under", "over", "with", "back", "down", "fore", "after", "inter", "counter", "every",
    "some", "there", "where", "here", "self", "upon", "into", "onto", "through",
})  # fmt: skip


def compound_heads(absent: set[str], statement: str, span: str) -> set[str]:
    """The claim's terms the span says as the head of a closed compound: "girls" for the
    span's "schoolgirls"."""
    span_words = set(re.findall(r"[a-z]+", normalise(span)))
    heads: set[str] = set()
    for word in set(re.findall(r"[a-z]+", normalise(statement))):
        if len(word) < HEAD_MIN or not (terms := set(content_terms(word)) & absent):
            continue
        singular = word[:-1] if word.endswith("s") else word
        for other in span_words:
            stem = other[:-1] if other.endswith("s") else other
            modifier = stem[: -len(singular)]
            if (
                len(modifier) >= MODIFIER_MIN
                and stem.endswith(singular)
                and modifier not in _PARTICLES
                and wordnet.lemmas(modifier)
            ):
                heads |= terms
                break
    return heads
