"""What a long source costs the claim check (issue 27 point 5): a plain answer of 5 claims
citing every paragraph of a 1,000-word source, checked as the validation checks it (each claim
against each cited paragraph: `check_claim`, then `align` for the span a reviewer sees), caches
emptied before each answer so nothing is shared with the one before.

Sources: SummEdits news and podcast documents (outside text; ../shared/corpora or
BENCH_LONG_SOURCE_CORPORA), each cut to its first 1,000 words at a paragraph's end (the next
documents follow a shorter one), its summaries' sentences as the claims. Then the same at
2,000 and 4,000 words, so the cost per 1,000 words is seen to grow linearly. "new": nothing of
the source was read before; "seen": another answer cited it before (its paragraphs parsed),
as a worker meets a zone's documents again and again. Figures are
CPU time of this process (time.process_time), each claim checked in full only against the
paragraphs holding its closest spans (evidence.claims.closest), beside the cost of checking it
against every paragraph. Target: 25 ms for a 5-claim answer against a 1,000-word source, on
the default install (no torch).

Run: .venv/bin/python bench/bench_long_source.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_grounding import clear_caches as clear_grounding  # noqa: E402

from evidence import claims as claims_module  # noqa: E402
from evidence import corpora, wordnet  # noqa: E402
from evidence.claims import align, closest  # noqa: E402
from evidence.grounding import check_claim  # noqa: E402

CORPORA = Path(os.environ.get("BENCH_LONG_SOURCE_CORPORA", ROOT.parent / "shared" / "corpora"))
TARGET_MS = 25.0  # a 5-claim answer against a 1,000-word source
CLAIMS = 5
SIZES = (1_000, 2_000, 4_000)
ANSWERS = 40  # per size, at most


def paragraphs_of(document: str) -> list[str]:
    return [p.strip() for p in document.split("\n") if p.strip()]


def answers(words: int) -> list[tuple[list[str], list[str]]]:
    """(paragraphs, 5 claims) per document: its summaries' sentences as the claims, its
    paragraphs, then the next documents' where it is shorter than `words` (a long source
    whose claims are about its start), cut at the paragraph that reaches `words`."""
    documents: dict[str, list[str]] = {}
    for domain in ("news", "podcast"):
        path = CORPORA / "summedits-dev" / f"{domain}.json"
        if not path.is_file():
            continue
        for example in corpora.summedits(path):
            claims = documents.setdefault(example.evidence, [])
            claims.extend(c for c in example.claims if c not in claims)
    texts = [d for d, c in documents.items() if len(c) >= CLAIMS]
    out = []
    for at, document in enumerate(texts[:ANSWERS]):
        kept: list[str] = []
        count = 0
        for text in texts[at:] + texts[:at]:
            for paragraph in paragraphs_of(text):
                kept.append(paragraph)
                count += len(paragraph.split())
                if count >= words:
                    break
            if count >= words:
                break
        out.append((kept, documents[document][:CLAIMS]))
    return out


def clear_caches() -> None:
    """The grounding path's memos and the alignment's (evidence.claims)."""
    clear_grounding()
    for value in vars(claims_module).values():
        if callable(getattr(value, "cache_clear", None)):
            value.cache_clear()


def cost(paragraphs: list[str], claims: list[str], *, seen: bool, every: bool) -> float:
    """CPU ms to check the claims as the validation does (`every`: against every paragraph,
    as it did before evidence.claims.closest), every cache emptied first; with `seen`, the
    source was read before (another answer cited it: its paragraphs are parsed)."""
    clear_caches()
    if seen:
        for paragraph in paragraphs:
            check_claim("An earlier answer about this source.", paragraph)
    start = time.process_time()
    for claim in claims:
        near = range(len(paragraphs)) if every else sorted(closest(claim, paragraphs))
        for n in near:
            check_claim(claim, paragraphs[n])
            align(claim, [paragraphs[n]])
    return (time.process_time() - start) * 1000


def main() -> None:
    if not (CORPORA / "summedits-dev").is_dir():
        print(f"no corpora at {CORPORA}: nothing measured (set BENCH_LONG_SOURCE_CORPORA)")
        return
    # The dictionaries and WordNet load once per process (a worker's first answer pays it).
    check_claim("Prices rose.", "Prices rose, once per process.")
    wordnet.antonyms("increase")
    print(
        f"{CLAIMS}-claim plain answers citing every paragraph of a SummEdits news/podcast "
        "document cut to N words; caches emptied before each answer; CPU time, one core"
    )
    print(f"{'source':<6} {'words':>6} {'answers':>8} {'paragraphs':>11} {'closest ms':>11}"
          f" {'p90 ms':>8} {'per 1,000 w':>12} {'every ¶ ms':>11} {'ratio':>6}")  # fmt: skip
    first: dict[bool, float] = {}
    for words in SIZES:
        work = answers(words)
        for seen in (False, True):
            times = sorted(cost(p, c, seen=seen, every=False) for p, c in work)
            every = statistics.median(cost(p, c, seen=seen, every=True) for p, c in work)
            median = statistics.median(times)
            p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
            paragraphs = statistics.median(len(p) for p, _ in work)
            print(
                f"{'seen' if seen else 'new':<6} {words:>6} {len(work):>8} {paragraphs:>11.0f}"
                f" {median:>11.1f} {p90:>8.1f} {median * 1000 / words:>12.1f} {every:>11.1f}"
                f" {every / median:>5.1f}x"
            )
            if words == SIZES[0]:
                first[seen] = median
    for seen, median in first.items():
        met = "met" if median <= TARGET_MS else "MISSED"
        print(
            f"target: a {CLAIMS}-claim answer against a 1,000-word source "
            f"{'read before' if seen else 'never read before'} <= {TARGET_MS:.0f} ms CPU: "
            f"{median:.1f} ms, {met} ({median / TARGET_MS:.2f}x the target)"
        )


if __name__ == "__main__":
    main()
