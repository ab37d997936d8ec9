"""Claims verified by their parts: a claim that joins two statements, or one that names its
setting from another sentence of the paragraph (docs/math.md §6, issue 27).

Verification asks that every word of a claim be in one aligned span (evidence.grounding).
Two faithful shapes break that without adding anything: two sentences of the paragraph said
as one ("..., and the department head approves each report"), and a statement that names
what the paragraph's other sentence has already set ("Two of the seven directors were
absent from the board meeting", where the meeting is named two sentences earlier). Each
part must be verified on its own, by the same rules, and neither may take a subject from
one sentence and a predicate from another (a chimera: "Personal USB drives require
approval", stitched from two sentences, stays unverified).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from evidence import wordnet
from evidence.claims import align, sentence_spans
from evidence.text import content_terms, normalise

Verified = Callable[[str], bool]  # whether a part of the claim is verified on its own

# Where a claim joins two statements: "and" or a semicolon. The second must start with a
# subject of its own (`_own_subject`), so neither half borrows the other's subject.
_JOINED = re.compile(r"(?<!\d),?\s+and\s+|;\s+")
_DETERMINERS = frozenset(
    {"the", "a", "an", "this", "these", "those", "each", "every", "all", "its", "their"}
)
# Japanese: a verb's continuative form (精算し、) or て-form then a comma joins two
# statements; the second names its own topic or subject (は / が).
_JOINED_JA = re.compile(r"(?<=[しててで])、")
_TOPIC_JA = re.compile(r"[はが]")
# A comma that separates words, not the thousands of a number: a list's ("a, b, and c").
_LIST_COMMA = re.compile(r"(?<!\d),|,(?!\d)")

# A prepositional phrase that ends the claim: the preposition, then a noun phrase of at most
# four words with no number and no scope word (which the number and scope checks read).
_SETTING_PREPOSITIONS = "of|from|at|in|on|during"
_TRAILING_SETTING = re.compile(
    rf"\s+(?:{_SETTING_PREPOSITIONS})\s+(?:the\s+)?((?:[a-z][a-z-]*\s+){{0,3}}[a-z][a-z-]*)[.!]?$"
)
_SCOPE_LIKE = frozenset({"not", "no", "only", "all", "every", "each", "any", "some", "other"})
# Where a clause of the span ends: nothing more is said of the word before it.
_CLAUSE_END = re.compile(r"\s*(?:[.;:!?]|,\s+and\b|,\s+but\b|$)")


def verified_by_parts(statement: str, paragraph: str, verified: Verified) -> bool:
    """Whether the claim is verified part by part (`each_statement_verified`,
    `setting_named_elsewhere`)."""
    return each_statement_verified(statement, verified) or (
        statement.isascii() and setting_named_elsewhere(statement, paragraph, verified)
    )


def each_statement_verified(statement: str, verified: Verified) -> bool:
    """Whether a claim of two statements is verified statement by statement, each in its own
    aligned span: "Receipts are required for every item over 5,000 yen, and the department
    head approves each report" states two sentences of the paragraph. A list ("receipts,
    invoices, and tickets") is one statement: a part before ", and" holding a comma of its
    own is not split off, and a second part must start with a subject of its own."""
    if statement.isascii():
        parts = [p.strip(" ,;.") for p in _JOINED.split(statement)]
        if any(_LIST_COMMA.search(p) for p in parts[:-1]):
            return False
        if not all(_own_subject(p) for p in parts[1:]):
            return False
    else:
        parts = [p.strip("、。 ") for p in _JOINED_JA.split(statement)]
        if not all(_TOPIC_JA.search(p) for p in parts[1:]):
            return False
    if len(parts) < 2 or any(len(content_terms(p)) < 2 for p in parts):
        return False
    return all(verified(p) for p in parts)


def _own_subject(part: str) -> bool:
    """Whether a statement starts with a subject of its own: a determiner, a name or a number,
    or a word WordNet never reads as a verb ("late payments incur ..."). "approves each
    report and reimburses it" borrows its subject: "reimburses" is a verb."""
    first = part.split()[0] if part.split() else ""
    if first.lower() in _DETERMINERS or first[:1].isupper() or first[:1].isdigit():
        return True
    return bool(first) and not wordnet.can_be_verb(first.lower())


def setting_named_elsewhere(statement: str, paragraph: str, verified: Verified) -> bool:
    """Whether the claim is its aligned span's statement with a setting another sentence of
    the paragraph names: "Two of the seven directors were absent from the board meeting"
    against "Two of the seven directors were absent.", the meeting named in "At the board
    meeting on April 1, 2024, the directors approved ...". All of these must hold:

    - the claim less its final prepositional phrase is verified on its own;
    - the span says nothing after the word the phrase attaches to ("absent.", "on full
      payment."): a span that goes on says something else there (a swapped entity);
    - the phrase's words stand together in another sentence of the paragraph, one that
      shares a word with what the claim and its span say (the directors, the buyer): the
      sentences speak of the same thing;
    - there too the phrase is a setting ("At the board meeting"), or the object of the word
      it attaches to in the claim ("pay ... the purchase price" for "payment of the
      price"): "absent from the Nagoya branch", where the branch is what the board
      proposed to close, is not what the paragraph set.
    """
    folded = normalise(statement).rstrip()
    found = _TRAILING_SETTING.search(folded)
    if found is None:
        return False
    setting = found.group(1)
    setting_terms = content_terms(setting)
    if not setting_terms or _SCOPE_LIKE & set(setting.split()):
        return False
    rest = folded[: found.start()].rstrip(" ,")
    rest_words = rest.split()
    if len(content_terms(rest)) < 2 or not rest_words or not verified(rest):
        return False
    spans = align(rest, [paragraph])
    if not spans:
        return False
    span = spans[0]
    if not _ends_at(normalise(span.text), rest_words[-1]):
        return False
    shared = set(content_terms(rest)) & set(content_terms(span.text))
    head = set(content_terms(rest_words[-1]))
    for start, end in sentence_spans(paragraph):
        if start < span.end and span.start < end:
            continue  # the span's own sentence
        other = normalise(paragraph[start:end])
        if not shared & set(content_terms(other)):
            continue
        for said in re.finditer(rf"\b{re.escape(setting)}\b", other):
            before = other[: said.start()]
            if _SETTING_BEFORE.search(before) or head & set(content_terms(before)):
                return True
    return False


# A setting in the other sentence: a preposition, then at most a determiner and one word
# ("at the annual board meeting"). Not "to", which also starts a verb ("to close the branch").
_SETTING_BEFORE = re.compile(
    r"\b(?:at|in|on|of|from|during|for|by|with)\s+(?:(?:the|a|an|its|their)\s+)?"
    r"(?:[a-z-]+\s+)?$"
)


def _ends_at(span: str, word: str) -> bool:
    """Whether the span says the word (or a word of its stem) last in a clause."""
    stem = content_terms(word)
    for match in re.finditer(r"[a-z][a-z'-]*", span):
        said = content_terms(match.group())
        if said and said == stem and _CLAUSE_END.match(span, match.end()):
            return True
    return False
