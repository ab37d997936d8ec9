"""Where the span says a claim's word: beside the words the claim puts it beside, or in
another part of the sentence.

A long sentence holds many words, and a word of the claim found in it may belong to another
statement of it: "arrested on deception charges" against "arrested on fraud charges ...,
amid revelations of deceptive practices" finds "deception" (stemmed alike) ten words on, in
another clause. Where the claim's words on both sides of a word sit together in the span, in
the claim's order, and the span has the word nowhere near them, the word is displaced: the
claim is not verified by construction (a person decides). A word whose neighbours the span
says apart, or in the other order, is a reworded phrase and is left alone; so is one said
before them, which a pronoun or another noun may refer back to between them ("schoolgirls
fell sick ..., some suspecting they were poisoned"; "at the board meeting ..., the directors
approved"). Only a word found after them, in a later clause, is displaced.
"""

from __future__ import annotations

from evidence.text import content_terms

# How far apart the two neighbours may sit in the span (terms) for "together", and how far
# outside them the word may stand and still be theirs ("fraud charges filed Thursday").
TOGETHER = 6
NEAR = 3


def displaced_terms(statement: str, span: str, key_terms: set[str]) -> list[str]:
    """The claim's key terms the span says only away from the claim's neighbours of them, in
    the claim's order."""
    said = content_terms(statement)
    heard = content_terms(span)
    where: dict[str, list[int]] = {}
    for position, term in enumerate(heard):
        where.setdefault(term, []).append(position)
    displaced = []
    for i in range(1, len(said) - 1):
        term, before, after = said[i], said[i - 1], said[i + 1]
        if term not in key_terms or term not in where or len({term, before, after}) < 3:
            continue
        pairs = [
            (a, b)
            for a in where.get(before, ())
            for b in where.get(after, ())
            if 0 < b - a <= TOGETHER
        ]
        if not pairs:
            continue
        if any(a - NEAR <= p <= b + NEAR for a, b in pairs for p in where[term]):
            continue
        if any(p < a for a, _ in pairs for p in where[term]):
            continue  # "schoolgirls fell sick ..., some suspecting they were poisoned"
        displaced.append(term)
    return displaced
