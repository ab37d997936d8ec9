"""Whether WordNet's antonyms (evidence.wordnet) find SummEdits' antonym edits without false
alarms on its consistent summaries.

Each summary sentence is aligned to its best document sentence (`evidence.claims.align`). A
sentence fires when one of its words (or word pairs: "at least") is an opposite of a word
of that span while the claim word itself is not in the span. A summary fires when one of
its sentences does. Printed per variant (the WordNet relations used, parts of speech, and
the rules on top):

- hits: the share of inconsistent summaries with an antonym edit that fire;
- other: the share of the other inconsistent summaries that fire (right, not attributable);
- false alarms: the share of consistent summaries that fire;
- and the word pairs that fire most on consistent summaries.

Also the first load's cost and a lookup's. The corpus lives outside the repository
(`../shared/corpora/summedits-dev`, or BENCH_ANTONYMS_CORPUS); its text is never copied here.
BENCH_ANTONYMS_LIMIT caps the summaries read (0: all); the run stops reading after
BENCH_ANTONYMS_SECONDS (default 240).
"""

from __future__ import annotations

import itertools
import os
import re
import resource
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evidence import corpora, wordnet  # noqa: E402
from evidence.claims import align  # noqa: E402
from evidence.wordnet import Kind  # noqa: E402

CORPUS = Path(
    os.environ.get("BENCH_ANTONYMS_CORPUS", ROOT.parent / "shared" / "corpora" / "summedits-dev")
)
LIMIT = int(os.environ.get("BENCH_ANTONYMS_LIMIT", "0"))
SECONDS = float(os.environ.get("BENCH_ANTONYMS_SECONDS", "240"))
_WORD = re.compile(r"[a-z][a-z'-]*")
# Words too common to be an edit on their own.
_FUNCTION = frozenset(
    _WORD.findall(
        "a an the of to in on at by for with from and or but is are was were be been being "
        "it its this that these those he she they we you i his her their our your as"
    )
)


@dataclass(frozen=True)
class Variant:
    name: str
    kinds: frozenset[Kind]
    parts: str = wordnet.ALL_PARTS
    swap: bool = False  # the span word must be absent from the claim too
    min_score: float = 0.0


@dataclass
class Tally:
    hits: int = 0
    antonym_edits: int = 0
    other: int = 0
    other_edits: int = 0
    alarms: int = 0
    consistent: int = 0
    alarm_pairs: Counter[tuple[str, str]] = field(default_factory=Counter)
    hit_pairs: Counter[tuple[str, str]] = field(default_factory=Counter)


def _words(text: str) -> set[str]:
    tokens = _WORD.findall(text.lower())
    return set(tokens) | {f"{a} {b}" for a, b in itertools.pairwise(tokens)}


def _forms(words: set[str]) -> set[str]:
    forms = set(words)
    for word in words:
        forms |= wordnet.lemmas(word)
    return forms


def _pairs(claim: str, span: str, variant: Variant) -> list[tuple[str, str]]:
    claim_words, span_words = _words(claim), _words(span)
    span_forms, claim_forms = _forms(span_words), _forms(claim_words)
    found = []
    for word in claim_words - _FUNCTION:
        if word in span_forms or wordnet.lemmas(word) & span_forms:
            continue
        opposites = wordnet.antonyms(word, variant.kinds, variant.parts)
        if not opposites:
            continue
        for other in span_words - _FUNCTION:
            if not ({other} | wordnet.lemmas(other)) & opposites:
                continue
            if variant.swap and (other in claim_forms or wordnet.lemmas(other) & claim_forms):
                continue
            found.append((word, other))
    return found


def _best_span(claim: str, paragraphs: list[str]) -> tuple[str, float]:
    best = align(claim, paragraphs)
    return (best[0].text, best[0].score) if best else ("", 0.0)


def main() -> None:
    started = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wordnet.antonyms("increase")
    load = time.perf_counter() - started
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024
    print(f"WordNet 3.0 from {wordnet.database_dir()}")
    print(f"first lookup (loads the database): {load:.2f} s, peak memory +{grown:.0f} MB")
    words = ["exceeding", "approved", "permitted", "over", "partial", "unknownword"]
    for word in words:
        wordnet.reverses(word, "under")
    rounds = 20000
    t = time.perf_counter()
    for k in range(rounds):
        wordnet.reverses(words[k % len(words)], "under")
    print(f"cached reverses(): {(time.perf_counter() - t) / rounds * 1e6:.2f} µs a call")

    examples = corpora.read(CORPUS)
    if LIMIT:
        examples = examples[:LIMIT]
    read_until = time.perf_counter() + SECONDS
    # the aligned span of every sentence, once
    aligned: list[tuple[corpora.Example, list[tuple[str, str, float]]]] = []
    for example in examples:
        if time.perf_counter() > read_until:
            break
        paragraphs = [p for p in example.evidence.split("\n") if p.strip()]
        spans = [(c, *_best_span(c, paragraphs)) for c in example.claims]
        aligned.append((example, spans))
    print(f"{len(aligned)} of {len(examples)} summaries read ({CORPUS.name})\n")

    table = frozenset({Kind.TABLE})
    direct = frozenset({Kind.DIRECT})
    default = wordnet.DEFAULT_KINDS
    synset = direct | {Kind.SYNSET} | table
    similar = synset | {Kind.SIMILAR}
    variants = [
        Variant("table only", table),
        Variant("WordNet direct only", direct),
        Variant("direct + table (default)", default),
        Variant("direct+synset + table", synset),
        Variant("direct+synset+similar + table", similar),
        Variant("all kinds (+derived)", frozenset(Kind)),
        Variant("default, adjectives/verbs only", default, parts="av"),
        Variant("default, word swapped (span word not in claim)", default, swap=True),
        Variant("default, swapped, span aligns >= 0.5", default, swap=True, min_score=0.5),
        Variant("default, swapped, span aligns >= 0.7", default, swap=True, min_score=0.7),
        Variant("synset, swapped, span aligns >= 0.5", synset, swap=True, min_score=0.5),
        Variant("default, adj/verbs, swapped, aligns >= 0.5", default, "av", True, 0.5),
    ]
    print(f"{'variant':50} {'hits':>14} {'other':>14} {'false alarms':>14}")
    for variant in variants:
        tally = Tally()
        for example, spans in aligned:
            pairs = [
                p
                for claim, span, score in spans
                if span and score >= variant.min_score
                for p in _pairs(claim, span, variant)
            ]
            if example.supported:
                tally.consistent += 1
                tally.alarms += bool(pairs)
                tally.alarm_pairs.update(set(pairs))
            elif "antonym_swap" in example.tags:
                tally.antonym_edits += 1
                tally.hits += bool(pairs)
                tally.hit_pairs.update(set(pairs))
            else:
                tally.other_edits += 1
                tally.other += bool(pairs)
        print(
            f"{variant.name:50} {_share(tally.hits, tally.antonym_edits):>14} "
            f"{_share(tally.other, tally.other_edits):>14} "
            f"{_share(tally.alarms, tally.consistent):>14}"
        )
        print(f"{'':6}alarms: {_top(tally.alarm_pairs)}")
        print(f"{'':6}hits:   {_top(tally.hit_pairs)}")
    print(f"\n{time.perf_counter() - started:.0f} s in all")


def _share(count: int, total: int) -> str:
    return f"{count}/{total} {100 * count / total:.1f}%" if total else "-"


def _top(pairs: Counter[tuple[str, str]]) -> str:
    return ", ".join(f"{a}/{b} {n}" for (a, b), n in pairs.most_common(8))


if __name__ == "__main__":
    main()
