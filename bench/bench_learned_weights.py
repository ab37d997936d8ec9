"""Learned confidence weights (seed 000 §4.5) and the requery model (§8.1) on synthetic
trails drawn from known values: recovered vs true, held-back figures of the fit vs the
untrained choice (the default weights; the constant requery rate), and the CPU of a fit.

Run: .venv/bin/python bench/bench_learned_weights.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evidence import weights_fit

DEFAULT = (0.40, 0.30, 0.15, 0.15)  # the policy's default weights
TRUE_WEIGHTS = [
    (0.10, 0.70, 0.05, 0.15),  # reviewers judge by support
    (0.40, 0.30, 0.15, 0.15),  # the defaults are right
    (0.25, 0.25, 0.25, 0.25),
    (0.05, 0.20, 0.60, 0.15),  # recency matters most
]
TRUE_REQUERY = [(8.0, 0.5), (4.0, 0.3), (12.0, 0.7)]


def _weights(true: tuple[float, ...], n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, size=(n, 4))
    y = rng.uniform(size=n) < x @ np.asarray(true)
    start = time.process_time()
    fit = weights_fit.weights_with_figures(x, y, DEFAULT)
    cpu = time.process_time() - start
    err = max(abs(a - b) for a, b in zip(fit.weights, true, strict=True))
    print(
        f"  n={n:>6}  true {true}  fitted {fit.weights}  max|err| {err:.3f}  "
        f"held-back Brier default {fit.before.brier:.4f} -> fitted {fit.after.brier:.4f}  "
        f"accuracy {fit.before.accuracy:.3f} -> {fit.after.accuracy:.3f}  cpu {cpu * 1000:.0f} ms"
    )


def _requery(k: float, s: float, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    sufficiency = rng.uniform(0.0, 1.0, n)
    came_back = rng.uniform(size=n) < weights_fit.requery_curve(sufficiency, k, s)
    fit = weights_fit.requery_with_figures(sufficiency, came_back)
    mid = "none" if fit.midpoint is None else f"{fit.midpoint:.3f}"
    print(
        f"  n={n:>6}  true k={k:.1f} s={s:.2f}  fitted k={fit.steepness:.2f} s={mid}  "
        f"held-back log loss constant {fit.constant.log_loss:.4f} -> model "
        f"{fit.model.log_loss:.4f}"
    )


def main() -> None:
    print("confidence weights w1..w4 (starting from the defaults 0.40 0.30 0.15 0.15)")
    for n in (200, 2000, 20000):
        for i, true in enumerate(TRUE_WEIGHTS):
            _weights(true, n, seed=11 + i)
    print("requery model P = 1/(1+exp(-k((1-S)-s)))")
    for n in (100, 1000, 10000):
        for i, (k, s) in enumerate(TRUE_REQUERY):
            _requery(k, s, n, seed=21 + i)


if __name__ == "__main__":
    main()
