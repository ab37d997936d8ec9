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
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from time import monotonic

from evidence import reasons as why
from evidence.grounding import rule_verdict
from evidence.numbers import extract_numbers
from evidence.text import content_terms, split_sentences

# Two sentences speak of the same thing when they share at least two key terms, half of the
# shorter one's and a third of the longer one's.
SAME_SUBJECT, SAME_SUBJECT_OF_LONGER = 0.5, 1 / 3
NEARLY, NEARLY_SHARED_TERMS = 0.75, 3  # for a negation or antonym: nearly the same sentence
MIN_SHARED_TERMS = 2  # fewer shared terms than this is a coincidence, not a subject
# The bounds of one scan: the other passages judged against each new one (those sharing most
# key terms), and the pairs judged in all. A pair costs the rules 0.06-0.5 ms (measured on
# the 43,687-paragraph memo of issue 28), so a full budget is about a minute of one core.
CANDIDATES = 8
KEY_TERMS = 8  # a passage's rarest key terms that make its subjects (28 pairs)
WALK = 64  # the passages of one subject looked at: the latest of the versions met before
COMPARISONS = 200_000

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


@dataclass(slots=True)
class Budget:
    """How much one scan may do: `comparisons` pairs judged by the rules at most, and none
    after `deadline` (a `time.monotonic()` reading); `cut` says the scan stopped at either."""

    comparisons: int = COMPARISONS
    deadline: float | None = None
    cut: bool = False

    def spend(self) -> bool:
        """One comparison more, if the budget allows it."""
        if self.comparisons <= 0 or (self.deadline is not None and monotonic() > self.deadline):
            self.cut = True
            return False
        self.comparisons -= 1
        return True


def _subject_keys(terms: frozenset[str], frequency: Counter[str]) -> list[tuple[str, str]]:
    """The subjects a passage may share with another: pairs of its KEY_TERMS rarest key terms
    (two shared terms make a subject, MIN_SHARED_TERMS), rarest first."""
    rarest = sorted(terms, key=lambda term: (frequency[term], term))[:KEY_TERMS]
    return list(combinations(sorted(rarest), 2))


def each_disagreement(
    new: Sequence[Passage], existing: Sequence[Passage], budget: Budget | None = None
) -> Iterator[Disagreement]:
    """Every disagreement between a new passage and an existing one, and among the new ones
    of different versions, as found: the caller stores them as they come.

    Bounded whatever the zone holds: candidates come from an index of subjects (pairs of
    a passage's rarest key terms) over the versions met before, walked for the last WALK
    passages of each subject; only the CANDIDATES sharing most subjects with a passage are
    judged, and the rules judge no more pairs than `budget` allows. Sentences of one
    version are its author's to square (a long memo repeats its subjects on every page):
    only what a version says against the others is the scan's work."""
    budget = budget if budget is not None else Budget()
    pool = [*existing, *new]
    terms = [_terms(passage.text) for passage in pool]
    frequency: Counter[str] = Counter(term for found in terms for term in found)
    index: dict[tuple[str, str], list[int]] = {}

    def indexed(positions: range) -> None:
        for position in positions:
            for key in _subject_keys(terms[position], frequency):
                index.setdefault(key, []).append(position)

    indexed(range(len(existing)))
    start = len(existing)
    while start < len(pool):
        version = (pool[start].document, pool[start].version)
        end = start
        while end < len(pool) and (pool[end].document, pool[end].version) == version:
            end += 1
        for position in range(start, end):
            shared: Counter[int] = Counter()
            for key in _subject_keys(terms[position], frequency):
                shared.update(index.get(key, [])[-WALK:])
            for other, _ in shared.most_common(CANDIDATES):
                if not budget.spend():
                    return
                a, b = pool[other], pool[position]
                if a.document == b.document and a.version > b.version:
                    a, b = b, a
                result = compare(a, b)
                if result is not None:
                    yield result
        indexed(range(start, end))
        start = end


def disagreements(
    new: Sequence[Passage], existing: Sequence[Passage], budget: Budget | None = None
) -> list[Disagreement]:
    """`each_disagreement`, as a list."""
    return list(each_disagreement(new, existing, budget))


def all_disagreements(
    passages: Sequence[Passage], budget: Budget | None = None
) -> list[Disagreement]:
    """Every disagreement among one set of passages (the nightly scan of a zone)."""
    return disagreements(passages, (), budget)
