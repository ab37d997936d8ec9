"""Validation math speed: score_bundle + grade for a 5-claim, 15-item bundle (target <= 1 ms).

Run: .venv/bin/python bench/bench_scoring.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evidence.scoring import BundlePolicy, ClaimSignals, score_bundle
from gates.grading import grade

N_CLAIMS = 5
ITEMS_PER_CLAIM = 3
ROUNDS = 5_000
TARGET_MS = 1.0


def _inputs(rng: np.random.Generator) -> tuple[list[ClaimSignals], np.ndarray]:
    claims = [
        ClaimSignals(
            similarity=rng.uniform(0.5, 1.0, ITEMS_PER_CLAIM),
            coverage=rng.uniform(0.4, 1.0, ITEMS_PER_CLAIM),
            recency=rng.uniform(0.2, 1.0, ITEMS_PER_CLAIM),
            authority=rng.uniform(0.3, 1.0, ITEMS_PER_CLAIM),
            relevance=rng.uniform(0.6, 1.0, ITEMS_PER_CLAIM),
        )
        for _ in range(N_CLAIMS)
    ]
    n = N_CLAIMS * ITEMS_PER_CLAIM
    relations = np.where(rng.random((n, n)) < 0.3, rng.uniform(0.2, 1.0, (n, n)), 0.0)
    relations = np.maximum(relations, relations.T)
    relations[2, 7] = relations[7, 2] = -1.0  # one contradiction to find
    return claims, relations


def main() -> None:
    claims, relations = _inputs(np.random.default_rng(7))
    policy = BundlePolicy()

    def validate() -> str:
        score = score_bundle(claims, relations, policy, reinforcement=0.1)
        return grade(
            score.gated_sufficiency,
            score.kept_confidence,
            policy.tau,
            policy.floor,
            policy.refusal_floor,
        )

    for _ in range(200):  # warm caches and numpy's dispatch
        validate()
    samples = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        validate()
        samples.append((time.perf_counter() - start) * 1e3)
    samples.sort()
    median = statistics.median(samples)
    p95 = samples[int(0.95 * len(samples)) - 1]
    print(
        f"cores: {os.cpu_count()}; bundle: {N_CLAIMS} claims x {ITEMS_PER_CLAIM} items; "
        f"{ROUNDS} rounds; gate: {validate()}"
    )
    verdict = "OK" if median <= TARGET_MS else "ABOVE TARGET"
    print(
        f"score_bundle + grade: median {median:.3f} ms, p95 {p95:.3f} ms "
        f"(target <= {TARGET_MS:g} ms, ratio {median / TARGET_MS:.2f}): {verdict}"
    )


if __name__ == "__main__":
    main()
