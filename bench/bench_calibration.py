"""Per-zone calibration speed: fit 10,000 reviewer verdicts, then measure reliability
before and after, as `calibration_propose` does (target <= 5 s of CPU for the fit).

Run: .venv/bin/python bench/bench_calibration.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evidence import calibration

N_VERDICTS = 10_000
ROUNDS = 20
TARGET_CPU_SECONDS = 5.0


def main() -> None:
    rng = np.random.default_rng(7)
    p = rng.uniform(0.01, 0.99, N_VERDICTS)
    # Reviewers who find fewer claims supported than the engine says: a known distortion.
    truth = calibration.apply_all(calibration.Calibration({"a": 0.6, "b": -0.8}, 0), p)
    labels = rng.uniform(size=N_VERDICTS) < truth
    split = calibration.split_at(N_VERDICTS)
    cpu: list[float] = []
    fitted = calibration.IDENTITY
    for _ in range(ROUNDS):
        start = time.process_time()
        fitted = calibration.fit(p[:split], labels[:split])
        before = calibration.reliability(p[split:], labels[split:])
        after = calibration.reliability(calibration.apply_all(fitted, p[split:]), labels[split:])
        cpu.append(time.process_time() - start)
    worst = max(cpu)
    whole: list[float] = []
    for _ in range(ROUNDS):
        start = time.process_time()
        calibration.fit(p, labels)
        whole.append(time.process_time() - start)
    print(
        f"fit of all {N_VERDICTS:,}, CPU seconds: median {np.median(whole):.4f}, "
        f"worst {max(whole):.4f}"
    )
    worst = max(worst, *whole)
    print(f"verdicts: {N_VERDICTS:,} (fit on {split:,}, {N_VERDICTS - split:,} held back)")
    print(f"fit + reliability, CPU seconds: median {np.median(cpu):.4f}, worst {worst:.4f}")
    print(f"fitted: a={fitted.a:.3f} b={fitted.b:.3f} (true 0.600, -0.800)")
    print(
        f"held-back Brier {before.brier:.4f} -> {after.brier:.4f}, ECE {before.ece:.4f} -> "
        f"{after.ece:.4f}"
    )
    print(f"target <= {TARGET_CPU_SECONDS} s: {'met' if worst <= TARGET_CPU_SECONDS else 'MISSED'}")


if __name__ == "__main__":
    main()
