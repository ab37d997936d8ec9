"""Grounding throughput: claim-paragraph pairs per second per core, English and Japanese.

Cold: every pair is new (caches emptied before the run). Strict cold: every cache is emptied
before each pair, so not even a sentence or a word is shared with an earlier pair. Warm: the
same pairs again. Figures are CPU time of this process (`time.process_time`, what the target
is about: the machine is shared) and wall time beside it.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evidence import grounding, numbers, text, verifier
from evidence.grounding import check_claim

TARGET = 2_000  # cold pairs per second per core (CPU time)

EN = [
    "Employees must submit travel expense reports within {n} days of returning from a trip. "
    "Receipts are required for every item over {m:,} yen, and business class flights are not "
    "permitted for trips shorter than 6 hours. The department head approves each report "
    "before the finance team reimburses it, and late reports are not reimbursed unless the "
    "finance director grants an exception in writing.",
    "The Buyer shall pay the Seller the purchase price of {m:,} yen within {n} days of "
    "delivery. Late payments incur interest of 3% per year. The Seller bears the cost of "
    "shipping and insurance until delivery, and ownership passes to the Buyer on full "
    "payment. Either party may terminate this agreement with 90 days written notice.",
]
JA = [
    "出張旅費の精算は、帰着後{n}日以内に行わなければならない。{m:,}円を超える支出については、"
    "部長の事前承認が必要である。領収書のない支出は精算の対象外とし、グリーン車の利用は"
    "認められない。ただし、役員が同行する場合はこの限りではない。",
    "甲は乙に対し、本件業務の対価として金{m:,}円を、納品の翌月末日までに支払う。支払期日を"
    "過ぎた場合、甲は年3%の遅延損害金を支払うものとする。乙は甲の事前の書面による承諾なく、"
    "本件業務を第三者に再委託してはならない。本契約の有効期間は{n}か月とする。",
]
EN_CLAIMS = [
    "Receipts are required for every item over {m:,} yen.",
    "The Seller shall pay the Buyer the purchase price within {n} days of delivery.",
    "Based on the documents, late payments incur interest of 5% per year.",
    "Business class flights are permitted for short trips.",
]
JA_CLAIMS = [
    "{m:,}円を超える支出には部長の事前承認は不要である。",
    "乙は甲に対し、本件業務の対価を支払う。",
    "出張旅費の精算は帰着後{n}日以内に行う。",
    "以下に要約します。",
]


def pairs(count: int, seed: int, *, japanese_share: float = 0.5) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n, m = rng.randint(5, 90), rng.randint(1, 999) * 1000
        english = rng.random() < 1 - japanese_share  # at 0.5, the same pairs as ever
        paragraphs, claims = (EN, EN_CLAIMS) if english else (JA, JA_CLAIMS)
        out.append((rng.choice(claims).format(n=n, m=m), rng.choice(paragraphs).format(n=n, m=m)))
    return out


# The verifier's model is read once per process: its cache stays.
_CACHES: list[Callable[[], None]] = [
    value.cache_clear
    for module in (grounding, numbers, text, verifier)
    for value in vars(module).values()
    if callable(getattr(value, "cache_clear", None)) and value is not verifier.model
]


def clear_caches() -> None:
    """Every memo of the grounding path: lru caches and the English word -> term map."""
    for clear in _CACHES:
        clear()
    text._EN_TERMS.clear()


def rate(work: list[tuple[str, str]], *, clear: str) -> tuple[float, float]:
    """(pairs/s of CPU time, pairs/s of wall time); clear: "none", "once" or "each"."""
    if clear == "once":
        clear_caches()
    cpu, wall = time.process_time(), time.perf_counter()
    for claim, paragraph in work:
        if clear == "each":
            clear_caches()
        check_claim(claim, paragraph)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return len(work) / cpu, len(work) / wall


def row(label: str, cold: tuple[float, float], warm: tuple[float, float] | None) -> None:
    verdict = "OK" if cold[0] >= TARGET else "MISS"
    warm_cells = f"{warm[0]:>10,.0f} {warm[1]:>10,.0f}" if warm else f"{'-':>10} {'-':>10}"
    print(
        f"{label:<38} {cold[0]:>10,.0f} {cold[1]:>10,.0f} {warm_cells}   "
        f"{verdict} ({cold[0] / TARGET:.2f}x)"
    )


def main() -> None:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"cores: {os.cpu_count()} ({usable} usable, load average {load:.2f}); "
        "single-threaded run, so figures are per core"
    )
    print(f"target: cold >= {TARGET:,} pairs/s per core, CPU time (wall time shown beside it)\n")
    print(
        f"{'pairs/s':<38} {'cold CPU':>10} {'cold wall':>10} {'warm CPU':>10} {'warm wall':>10}"
        "   cold vs target"
    )
    check_claim("warm up", "Sudachi dictionary load happens here.")
    for label, work in (
        ("mixed EN/JA, every pair new", pairs(6_000, seed=1)),
        ("English only", pairs(3_000, seed=2, japanese_share=0.0)),
        ("Japanese only", pairs(3_000, seed=3, japanese_share=1.0)),
    ):
        cold = rate(work, clear="once")
        row(label, cold, rate(work, clear="none"))
    row("strict cold: caches emptied per pair", rate(pairs(3_000, seed=4), clear="each"), None)
    # A bundle re-checks several claims against the same few paragraphs.
    work = pairs(6_000, seed=5)
    shared = [(c, p) for c, _ in work for p in (work[0][1], work[1][1])][:6_000]
    cold = rate(shared, clear="once")
    row("bundle-like: 2 paragraphs, claims x2", cold, rate(shared, clear="none"))


if __name__ == "__main__":
    main()
