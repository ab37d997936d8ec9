"""Retrieval quality before and after `ask`'s reranker (seed 000 §11.6: hybrid 0.7 / 0.3,
top k = 15 before reranking), and the CPU the reranker costs.

The relevance pairs of bench/relevance_pairs.py (the recipe of ../shared/corpora/README.md,
bench/fit_addressing.py builds them): each held-out JSQuAD question, and as its one relevant
paragraph the paragraph its answer comes from. Every held-out paragraph is indexed (BM25 and
the configured embedder, exact search as on SQLite), each question retrieves its top 15 by the
hybrid fusion, and the 15 are reranked by each candidate reranker. Printed: recall@1, @3, @5,
@15 and MRR@15 of each order, and the reranker's CPU per question (process time, p50 / p95).

Candidates, all already in the project (no cross-encoder: nothing is downloaded at run time):
- `fused`: the hybrid order itself (no reranker);
- `addressing`: `evidence.rerank.rerank` (the calibrated addressing model's relevance r_j of
  each paragraph to the question, the fused order breaking ties): what `ask` uses;
- `sentence-dense`: the best cosine between the question and one sentence of the paragraph,
  by the configured embedder.

Run: .venv/bin/python bench/bench_rerank.py   (BENCH_RERANK_LIMIT caps questions, default
400; 0: all; MARIA_EMBEDDER picks the embedder as in production, default hashing.)
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "maria.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from fit_addressing import JSQUAD, load_pairs  # noqa: E402

from evidence import questions  # noqa: E402
from evidence.embeddings import get_embedder  # noqa: E402
from evidence.rerank import rerank  # noqa: E402
from evidence.retrieval import DEFAULT_K, BM25Index, DenseIndex, hybrid_search  # noqa: E402
from evidence.text import split_sentences  # noqa: E402

LIMIT = int(os.environ.get("BENCH_RERANK_LIMIT", "400"))
CUTS = (1, 3, 5, 15)


def _figures(ranks: Sequence[int | None]) -> str:
    """recall@k for CUTS and MRR@15, `ranks` holding the relevant paragraph's 1-based rank
    (None: not in the top 15)."""
    n = len(ranks)
    recall = [sum(1 for r in ranks if r is not None and r <= cut) / n for cut in CUTS]
    mrr = sum(1 / r for r in ranks if r is not None) / n
    cells = "  ".join(f"R@{cut} {value:.3f}" for cut, value in zip(CUTS, recall, strict=True))
    return f"{cells}  MRR@15 {mrr:.3f}"


def main() -> None:
    pairs = [p for p in load_pairs(JSQUAD, []) if p.held_out and p.matched]
    if not pairs:
        print(f"no pairs: {JSQUAD} missing")
        return
    contexts = sorted({p.context for p in pairs})
    position = {c: i for i, c in enumerate(contexts)}
    seen: set[str] = set()
    asked = []
    for pair in pairs:
        if pair.question not in seen:
            seen.add(pair.question)
            asked.append(pair)
    asked = asked[:LIMIT] if LIMIT else asked
    embedder = get_embedder(settings.MARIA_EMBEDDER)
    ids = list(range(len(contexts)))
    sparse = BM25Index(ids, contexts)
    dense = DenseIndex(ids, embedder.embed(contexts))
    sentence_vectors: dict[int, np.ndarray] = {}
    print(
        f"{len(asked)} questions over {len(contexts)} held-out JSQuAD paragraphs; "
        f"embedder {embedder.name}; top k = {DEFAULT_K}"
    )

    def by_sentences(question: str, hits: list[int]) -> list[int]:
        query = embedder.embed([question])[0]
        best = []
        for pid in hits:
            if pid not in sentence_vectors:
                sentence_vectors[pid] = embedder.embed(split_sentences(contexts[pid]) or [" "])
            best.append(float(np.max(sentence_vectors[pid] @ query)))
        order = sorted(range(len(hits)), key=lambda i: (-best[i], i))
        return [hits[i] for i in order]

    def by_addressing(question: str, hits: list[int]) -> list[int]:
        reranked = rerank(questions.analyse_question(question), [contexts[h] for h in hits])
        return [hits[i] for i in reranked]

    rerankers: dict[str, Callable[[str, list[int]], list[int]]] = {
        "fused": lambda _q, hits: hits,
        "addressing": by_addressing,
        "sentence-dense": by_sentences,
    }
    ranks: dict[str, list[int | None]] = {name: [] for name in rerankers}
    cpu: dict[str, list[float]] = {name: [] for name in rerankers}
    for pair in asked:
        vector = embedder.embed([pair.question])[0]
        hits = [
            cast(int, h.id)
            for h in hybrid_search(
                pair.question, vector, dense_index=dense, sparse_index=sparse, k=DEFAULT_K
            )
        ]
        relevant = position[pair.context]
        for name, reranker in rerankers.items():
            started = time.process_time()
            order = reranker(pair.question, hits)
            cpu[name].append((time.process_time() - started) * 1000)
            ranks[name].append(order.index(relevant) + 1 if relevant in order else None)
    for name in rerankers:
        times = sorted(cpu[name])
        p95 = times[int(0.95 * (len(times) - 1))]
        print(
            f"{name:<15} {_figures(ranks[name])}  "
            f"rerank CPU p50 {statistics.median(times):.2f} ms p95 {p95:.2f} ms"
        )


if __name__ == "__main__":
    main()
