"""Trail verification speed: verify_chain over 1,000,000 stored events (target >= 500,000/s).

Run: .venv/bin/python bench/bench_chain.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from trail.chain import (
    canonical_json,
    checkpoint_digest,
    link_events,
    verify_against_checkpoint,
    verify_chain,
)

N_EVENTS = 1_000_000
RUNS = 3
TARGET_PER_S = 500_000


def _bodies(n: int) -> list[bytes]:
    """Nine transition events (~200 B) to one bundle-sized event (~1.5 KB), each unique."""
    transition = canonical_json(
        {
            "type": "decision.transition",
            "decision": "SEQ",
            "from": "validated",
            "to": "approval_required",
            "at": "2025-06-01T09:30:00+00:00",
            "actor": "system",
            "gate": "required",
            "policy_version": 7,
        }
    ).replace(b'"SEQ"', b"%d")
    bundle = canonical_json(
        {
            "type": "evidence.bundle",
            "decision": "SEQ",
            "claims": [
                {
                    "text": "The retention period for customer records is seven years.",
                    "citations": [
                        {"document": f"doc-{k}", "version": 3, "paragraph": 12, "confidence": 0.81}
                        for k in range(4)
                    ],
                }
                for _ in range(4)
            ],
        }
    ).replace(b'"SEQ"', b"%d")
    return [(bundle if i % 10 == 0 else transition) % i for i in range(n)]


def _time(fn: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    cores = os.cpu_count() or 1
    print(f"cores: {cores}; events: {N_EVENTS:,}; runs: {RUNS} (median reported)")
    t0 = time.perf_counter()
    bodies = _bodies(N_EVENTS)
    links = link_events(bodies)
    mean_size = sum(map(len, bodies)) / N_EVENTS
    print(f"built the trail in {time.perf_counter() - t0:.1f} s; mean body {mean_size:.0f} B")
    checkpoint_seq = N_EVENTS // 2
    digest = checkpoint_digest(link.hash for link in links[:checkpoint_seq])

    def chain() -> None:
        assert verify_chain(links).intact

    def against_checkpoint() -> None:
        assert verify_against_checkpoint(links, checkpoint_seq, digest).intact

    for label, fn in (
        ("verify_chain", chain),
        ("verify_against_checkpoint", against_checkpoint),
    ):
        seconds = statistics.median(_time(fn) for _ in range(RUNS))
        rate = N_EVENTS / seconds
        verdict = "OK" if rate >= TARGET_PER_S else "BELOW TARGET"
        print(
            f"{label:<30} {rate / 1e6:5.2f} M events/s ({seconds:.2f} s)"
            f"  target >= {TARGET_PER_S / 1e6:.2f} M/s, ratio {rate / TARGET_PER_S:.2f}x: {verdict}"
        )


if __name__ == "__main__":
    main()
