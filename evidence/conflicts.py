"""Where the knowledge base disagrees with itself: pairs of paragraphs on the same subject
that cannot both be true.

Pure: no Django. Each sentence of one paragraph is read as a claim against the other
paragraph by the same rules that judge an answer's claims (`evidence.grounding.rule_verdict`),
in both directions, and only where the two speak of the same thing (most of the sentence's
key terms appear in the other paragraph). Three kinds:

- hard: the values disagree: another number for the same quantity, the other party acting,
  a statement negated or reversed ("may" against "may not");
- soft: the same statement with another force or scope ("must" against "may", "all" against
  "some"): a person should say which one governs, but neither is simply wrong;
- temporal: a later version of the same document says otherwise than the version before it:
  answers that cited the old text may now be wrong.

Two versions of one document that merely reword each other are no conflict: that is what a
new version is for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from evidence import reasons as why
from evidence.grounding import rule_verdict
from evidence.numbers import extract_numbers
from evidence.text import content_terms, split_sentences

# Two sentences speak of the same thing when they share at least two key terms, half of the
# shorter one's and a third of the longer one's.
SAME_SUBJECT, SAME_SUBJECT_OF_LONGER = 0.5, 1 / 3
NEARLY, NEARLY_SHARED_TERMS = 0.75, 3  # for a negation or antonym: nearly the same sentence
MIN_SHARED_TERMS = 2  # fewer shared terms than this is a coincidence, not a subject
COMMON_SHARE, COMMON_FLOOR = 0.05, 50  # a term in more passages than this names no subject

# The force of a statement: obligation, permission, prohibition; and its scope.
_FORCE_EN = {
    "must": "obligation",
    "shall": "obligation",
    "required": "obligation",
    "should": "recommendation",
    "may": "permission",
    "can": "permission",
    "all": "every",
    "every": "every",
    "each": "every",
    "some": "some",
    "only": "only",
}
_FORCE_JA = (
    ("しなければならない", "obligation"),
    ("なければならない", "obligation"),
    ("必ず", "obligation"),
    ("すべき", "recommendation"),
    ("望ましい", "recommendation"),
    ("できる", "permission"),
    ("してもよい", "permission"),
    ("すべての", "every"),
    ("全て", "every"),
    ("一部", "some"),
    ("のみ", "only"),
)
_WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True, slots=True)
class Passage:
    """One paragraph as the detector sees it; `key` is the caller's id for it."""

    key: int
    document: int
    version: int
    text: str


@dataclass(frozen=True, slots=True)
class Disagreement:
    """Two passages that disagree. `first` is the older side where versions differ."""

    first: int
    second: int
    kind: str  # "hard", "soft" or "temporal"
    reason: str
    words: tuple[str, ...]  # the words that disagree, for the page to mark


_SCOPES = frozenset({"every", "some", "only"})


def _forces(sentence: str) -> frozenset[str]:
    found = {_FORCE_EN[w.lower()] for w in _WORD.findall(sentence) if w.lower() in _FORCE_EN}
    found |= {force for marker, force in _FORCE_JA if marker in sentence}
    return frozenset(found)


def _differing_force(mine: frozenset[str], theirs: frozenset[str]) -> str | None:
    """'must' against 'may', or 'all' against 'some': the force and the scope are compared
    apart, and only where both sentences state one."""
    for group in (_SCOPES, None):
        one = {f for f in mine if (f in _SCOPES) == (group is not None)}
        two = {f for f in theirs if (f in _SCOPES) == (group is not None)}
        if one and two and not one & two:
            return f"{', '.join(sorted(one))} against {', '.join(sorted(two))}"
    return None


def _terms(text: str) -> frozenset[str]:
    return frozenset(content_terms(text))


def _same_subject(terms: frozenset[str], other: frozenset[str]) -> bool:
    shared = len(terms & other)
    return (
        shared >= MIN_SHARED_TERMS
        and shared >= SAME_SUBJECT * min(len(terms), len(other))
        and shared >= SAME_SUBJECT_OF_LONGER * max(len(terms), len(other))
    )


def _nearly_the_same(terms: frozenset[str], other: frozenset[str]) -> bool:
    shared = len(terms & other)
    return shared >= NEARLY_SHARED_TERMS and shared >= NEARLY * min(len(terms), len(other))


def _one_way(one: str, other: str) -> tuple[str, str, tuple[str, ...]] | None:
    """The first way a sentence of `one` disagrees with the sentence of `other` on the same
    subject, or None. Sentence against sentence: a long paragraph holds many terms, and a
    sentence matched against all of them would find a subject everywhere."""
    theirs = [(s, _terms(s)) for s in split_sentences(other)]
    soft: tuple[str, str, tuple[str, ...]] | None = None
    for sentence in split_sentences(one):
        terms = _terms(sentence)
        matches = [(s, t) for s, t in theirs if _same_subject(terms, t)]
        if not matches:
            continue
        best, _ = max(matches, key=lambda m: len(terms & m[1]))
        verdict = rule_verdict(sentence, best)
        if verdict.kind != "factual":
            continue
        # Another value for the same kind of quantity (3 days against 2 days); a number the
        # other sentence simply lacks is no disagreement.
        stated = extract_numbers(best)
        differing = [
            (q, [o for o in stated if (o.kind, o.unit) == (q.kind, q.unit) and o.value != q.value])
            for q in verdict.missing_numbers
        ]
        differing = [(q, others) for q, others in differing if others]
        if differing:
            quantity, others = differing[0]
            words = tuple(q.surface.strip() for q, _ in differing if q.surface.strip())
            words += tuple(o.surface.strip() for o in others if o.surface.strip())
            said = ", ".join(o.surface.strip() or str(o) for o in others)
            return (
                "hard",
                why.say(why.VALUES_DISAGREE, one=quantity.surface.strip() or quantity, other=said),
                words,
            )
        # A negation or an antonym is cheap in talk ("I'm not sure"): it counts only between
        # sentences that say nearly the same thing. Another party acting counts on the
        # ordinary subject test: who pays is the whole point of the sentence.
        by_actor = any(r.startswith(("another actor", "roles swapped")) for r in verdict.reasons)
        # A swapped modal or quantifier ("must" for "may", "all" for "some") is another force
        # or scope of the same statement: soft, below.
        force_only = all(
            a.lower() in _FORCE_EN and b.lower() in _FORCE_EN for a, b in verdict.reversal_words
        )
        if (
            verdict.reversal
            and not force_only
            and (by_actor or _nearly_the_same(terms, _terms(best)))
        ):
            pairs = verdict.reversal_words
            said = "; ".join(
                why.say(why.ONE_SAYS, one=repr(a), other=repr(b)) for a, b in pairs[:2]
            )
            words = tuple(w for pair in pairs[:2] for w in pair)
            return "hard", why.say(why.OPPOSITE, reason=said), words
        if soft is None:
            forces = frozenset().union(*(_forces(s) for s, _ in matches))
            differs = _differing_force(_forces(sentence), forces)
            if differs:
                soft = ("soft", why.say(why.FORCE_OR_SCOPE, differs=differs), ())
    return soft


def compare(older: Passage, newer: Passage) -> Disagreement | None:
    """How two passages disagree, if they do. `older` first when they are versions."""
    if older.document == newer.document and older.version == newer.version:
        return None
    found = _one_way(older.text, newer.text) or _one_way(newer.text, older.text)
    if found is None:
        return None
    kind, reason, words = found
    if older.document == newer.document:
        if kind == "soft":
            return None  # a new version that rewords the old one is what versions are for
        kind = "temporal"
        reason = why.say(
            why.VERSION_CHANGES, newer=newer.version, older=older.version, reason=reason
        )
    return Disagreement(older.key, newer.key, kind, reason, words)


def disagreements(new: Sequence[Passage], existing: Sequence[Passage]) -> list[Disagreement]:
    """Every disagreement between a new passage and an existing one, and among the new
    ones. Candidates are pairs that share key terms; the rules decide the rest."""
    index: dict[str, set[int]] = {}
    pool = list(existing) + list(new)
    for position, passage in enumerate(pool):
        for term in _terms(passage.text):
            index.setdefault(term, set()).add(position)
    # A term most passages share ("employee", "must") names no subject; leaving it out of the
    # candidate count keeps a large zone's scan from comparing nearly every pair.
    common = max(COMMON_FLOOR, int(COMMON_SHARE * len(pool)))
    index = {term: where for term, where in index.items() if len(where) <= common}
    first_new = len(existing)
    found: list[Disagreement] = []
    seen: set[tuple[int, int]] = set()
    for position in range(first_new, len(pool)):
        passage = pool[position]
        shared: dict[int, int] = {}
        for term in _terms(passage.text):
            for other in index.get(term, ()):
                if other != position and (other < first_new or other < position):
                    shared[other] = shared.get(other, 0) + 1
        for other, count in sorted(shared.items()):
            if count < MIN_SHARED_TERMS:
                continue
            a, b = pool[other], passage
            if (a.document, a.version) > (b.document, b.version) and a.document == b.document:
                a, b = b, a
            pair = (min(a.key, b.key), max(a.key, b.key))
            if pair in seen:
                continue
            seen.add(pair)
            result = compare(a, b)
            if result is not None:
                found.append(result)
    return found


def all_disagreements(passages: Sequence[Passage]) -> list[Disagreement]:
    """Every disagreement among one set of passages (the nightly scan of a zone)."""
    return disagreements(passages, ())
