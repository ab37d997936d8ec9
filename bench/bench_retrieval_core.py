"""In-memory retrieval core on 100k synthetic paragraphs: dense, BM25, fusion, embedding speed.

Run: .venv/bin/python bench/bench_retrieval_core.py [--docs 100000] [--queries 200]
Prints figures beside their targets; not a test (figures are noisy on a shared machine).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evidence.embeddings import (
    EmbeddingError,
    HashingEmbedder,
    SentenceTransformerEmbedder,
    l2_normalise,
)
from evidence.retrieval import BM25Index, DenseIndex, fuse, hybrid_search

DIM = 384
K = 15
HYBRID_P95_TARGET_MS = 10.0

JA_SENTENCES = [
    "予算の承認は取締役会が行う",
    "契約の締結には法務部の事前確認が必要である",
    "支払いは請求書の受領後に行う",
    "出張旅費は申請から二週間以内に精算する",
    "稟議書は部長の決裁を経て経営会議に付議する",
    "個人情報の取り扱いは情報セキュリティ規程に従う",
    "委託先の選定には三社以上の見積もりを取得する",
    "議事録は会議の終了後五営業日以内に配布する",
]


def synthetic_words(n_vocab: int, rng: np.random.Generator) -> list[str]:
    """Distinct lower-case pseudo-words (letters only, so any tokenizer keeps them whole)."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    words: set[str] = set()
    while len(words) < n_vocab:
        words.add("".join(rng.choice(syllables, size=rng.integers(2, 5))))
    return sorted(words)


def zipf_probabilities(n_vocab: int, s: float = 1.07) -> np.ndarray:
    """p(rank r) proportional to 1 / r^s."""
    weights = 1.0 / np.arange(1, n_vocab + 1) ** s
    return weights / weights.sum()


def percentiles(samples_ns: list[int]) -> tuple[float, float]:
    ms = np.asarray(samples_ns) / 1e6
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def timed(fn: Callable[[int], object], n: int) -> list[int]:
    out = []
    for i in range(n):
        start = time.perf_counter_ns()
        fn(i)
        out.append(time.perf_counter_ns() - start)
    return out


def row(label: str, p50: float, p95: float, target: str = "") -> None:
    print(f"  {label:<52} p50 {p50:8.3f} ms   p95 {p95:8.3f} ms   {target}")


def bench_query_mix(
    mix: str,
    queries: list[str],
    query_vectors: np.ndarray,
    bm25: BM25Index,
    dense: DenseIndex,
    zone_mask: np.ndarray,
) -> None:
    """BM25 (bm25s retrieve vs ours) and hybrid latencies for one mix of queries."""
    n_queries = len(queries)
    tokens = [q.split() for q in queries]
    matched = np.mean([np.count_nonzero(bm25.scores(q)) for q in queries[:50]])
    print(f"  -- {mix} queries (on average {matched:,.0f} paragraphs share a term)")
    naive = percentiles(
        timed(
            lambda i: bm25.bm25.retrieve(
                [tokens[i]], k=K, show_progress=False, backend_selection="numpy"
            ),
            n_queries,
        )
    )
    ours = percentiles(timed(lambda i: bm25.search(queries[i], K), n_queries))
    scores_only = percentiles(timed(lambda i: bm25.scores(queries[i]), n_queries))
    row("BM25 top-15, bm25s retrieve (argpartition all)", *naive)
    row(
        "BM25 top-15, ours (select among matches)",
        *ours,
        f"bm25s/ours p50 x{naive[0] / ours[0]:.1f}, p95 x{naive[1] / ours[1]:.1f}",
    )
    row("  of which bm25s get_scores (score vector)", *scores_only)
    row(
        "BM25 top-15, ours, 30% zone mask",
        *percentiles(timed(lambda i: bm25.search(queries[i], K, mask=zone_mask), n_queries)),
    )

    # Same result as bm25s up to the order of exactly tied scores.
    same = 0
    for i in range(min(n_queries, 50)):
        _, their_scores = bm25.bm25.retrieve([tokens[i]], k=K, show_progress=False)
        mine = bm25.search(queries[i], K)
        theirs = np.sort(their_scores[0][their_scores[0] > 0])[::-1]
        same += bool(np.allclose(np.sort(mine.scores)[::-1], theirs[: len(mine)]))
    print(f"  (top-15 scores equal to bm25s retrieve on {same}/{min(n_queries, 50)} queries)")

    for label, mask in (("", None), (", 30% zone mask", zone_mask)):

        def one_hybrid(i: int, mask: np.ndarray | None = mask) -> object:
            return hybrid_search(
                queries[i], query_vectors[i], dense_index=dense, sparse_index=bm25, k=K, mask=mask
            )

        hybrid = percentiles(timed(one_hybrid, n_queries))
        verdict = "met" if hybrid[1] <= HYBRID_P95_TARGET_MS else "MISSED"
        row(
            f"hybrid top-15 (both legs + fusion){label}",
            *hybrid,
            f"target p95 <= {HYBRID_P95_TARGET_MS:.0f} ms: {verdict}",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--vocab", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    n, n_queries = args.docs, args.queries

    print(
        f"bench_retrieval_core: {n:,} paragraphs, dim {DIM}, top-{K}, {n_queries} queries; "
        f"{os.cpu_count()} cores, numpy {np.__version__}, Python {platform.python_version()}; "
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )

    # --- corpus ---------------------------------------------------------------------
    t0 = time.perf_counter()
    vocab = np.asarray(synthetic_words(args.vocab, rng))
    probabilities = zipf_probabilities(args.vocab)
    lengths = rng.integers(30, 90, size=n)
    flat = rng.choice(args.vocab, size=int(lengths.sum()), p=probabilities)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    texts = [" ".join(vocab[flat[bounds[i] : bounds[i + 1]]]) for i in range(n)]
    ids = list(range(n))

    centroids = l2_normalise(rng.normal(size=(256, DIM)))
    cluster = rng.integers(0, 256, size=n)
    vectors = l2_normalise(centroids[cluster] + 0.6 * rng.normal(size=(n, DIM)) / np.sqrt(DIM))
    print(f"  corpus generated in {time.perf_counter() - t0:.1f} s")

    t0 = time.perf_counter()
    # The synthetic words need no linguistics: str.split keeps the index build short.
    # The real tokenizer's cost is in the embedding throughput figure below.
    bm25 = BM25Index(ids, texts, tokenizer=str.split)
    t_bm25 = time.perf_counter() - t0
    t0 = time.perf_counter()
    dense = DenseIndex(ids, vectors)
    print(
        f"  BM25 index built in {t_bm25:.1f} s; dense index in {time.perf_counter() - t0:.1f} s"
        f" ({vectors.nbytes / 2**20:.0f} MiB float32)"
    )

    # Two query mixes of 2-4 words: "zipf" draws with the corpus's own law, so most queries
    # hold a word that nearly every paragraph has; "content" draws from frequency ranks
    # 200-20,000, like the key terms of a real question.
    zipf_queries = [
        " ".join(vocab[rng.choice(args.vocab, size=rng.integers(2, 5), p=probabilities)])
        for _ in range(n_queries)
    ]
    content_queries = [
        " ".join(vocab[rng.integers(200, min(20_000, args.vocab), size=rng.integers(2, 5))])
        for _ in range(n_queries)
    ]
    query_vectors = l2_normalise(
        centroids[rng.integers(0, 256, size=n_queries)]
        + 0.6 * rng.normal(size=(n_queries, DIM)) / np.sqrt(DIM)
    )
    zone_mask = rng.random(n) < 0.3  # a zone scope that admits 30% of the paragraphs

    # Warm-up (page in the matrix, numpy dispatch).
    for i in range(5):
        dense.search(query_vectors[i], K)
        bm25.search(content_queries[i], K)

    print("\nlatency, one query at a time (BLAS may use both cores)")
    row(
        "dense exact top-15 (numpy matvec + argpartition)",
        *percentiles(timed(lambda i: dense.search(query_vectors[i], K), n_queries)),
    )
    row(
        "dense exact top-15, 30% zone mask",
        *percentiles(timed(lambda i: dense.search(query_vectors[i], K, mask=zone_mask), n_queries)),
    )

    for mix, queries in (("content", content_queries), ("zipf", zipf_queries)):
        bench_query_mix(mix, queries, query_vectors, bm25, dense, zone_mask)

    # An index that grew since its build (evidence.search adds new paragraphs this way and
    # rebuilds in the background once the tail passes 2,000 paragraphs or 2%).
    tail = 2_000
    base = BM25Index(ids[:-tail], texts[:-tail], tokenizer=str.split)
    t0 = time.perf_counter()
    grown = base.added(ids[-tail:], texts[-tail:])
    t_add = time.perf_counter() - t0
    print(f"\nBM25 grown by a tail of {tail:,} paragraphs (added in {t_add * 1e3:.0f} ms)")
    row(
        "BM25 top-15, content queries, base + tail",
        *percentiles(timed(lambda i: grown.search(content_queries[i], K), n_queries)),
    )
    t0 = time.perf_counter()
    grown.rebuilt()
    print(
        f"  rebuilding it from its stored terms (no tokenising): {time.perf_counter() - t0:.1f} s"
    )

    dense_legs = [dense.search(query_vectors[i], 2 * K) for i in range(20)]
    sparse_legs = [bm25.search(content_queries[i], 2 * K) for i in range(20)]
    fusion_only = percentiles(
        timed(lambda i: fuse(dense_legs[i % 20], sparse_legs[i % 20], k=K), n_queries)
    )
    row("fusion alone (min-max + weighted sum of 2x30)", *fusion_only)
    matvec = percentiles(timed(lambda i: dense.vectors @ query_vectors[i], n_queries))
    row(f"  the bare {n:,} x {DIM} float32 matvec (memory-bound)", *matvec)

    # --- embedding throughput -----------------------------------------------------------
    print("\nHashingEmbedder throughput (real evidence.text.tokenize; cold term cache)")
    sample = texts[:3000]
    embedder = HashingEmbedder(DIM)
    t0 = time.perf_counter()
    embedder.embed(sample)
    elapsed = time.perf_counter() - t0
    print(f"  English-like paragraphs (~60 words): {len(sample) / elapsed:9,.0f} paragraphs/s")
    t0 = time.perf_counter()
    embedder.embed(texts[3000:6000])
    elapsed = time.perf_counter() - t0
    print(f"  same, warm term cache:               {3000 / elapsed:9,.0f} paragraphs/s")

    ja_texts = [
        "。".join(
            f"第{rng.integers(1, 10_000)}条 {JA_SENTENCES[j]}"
            for j in rng.integers(0, len(JA_SENTENCES), size=4)
        )
        for _ in range(1000)
    ]
    t0 = time.perf_counter()
    embedder.embed(ja_texts)
    elapsed = time.perf_counter() - t0
    print(f"  Japanese paragraphs (4 sentences):   {len(ja_texts) / elapsed:9,.0f} paragraphs/s")

    try:
        t0 = time.perf_counter()
        minilm = SentenceTransformerEmbedder()
        loaded = time.perf_counter() - t0
        t0 = time.perf_counter()
        minilm.embed(texts[:256])
        elapsed = time.perf_counter() - t0
        print(
            f"  for comparison, all-MiniLM-L6-v2 on CPU: {256 / elapsed:9,.0f} paragraphs/s"
            f" (model load {loaded:.1f} s)"
        )
    except EmbeddingError as exc:  # the optional extra is not installed
        print(f"  (sentence-transformers comparison skipped: {exc})")

    single = percentiles(
        timed(lambda i: embedder.embed([f"query {content_queries[i]}"]), n_queries)
    )
    row("query embedding (HashingEmbedder, 1 text)", *single)


if __name__ == "__main__":
    main()
