"""Grounding throughput: claim-paragraph pairs per second per core, English and Japanese."""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evidence.grounding import _paragraph, check_claim
from evidence.numbers import _extract
from evidence.text import _terms, japanese_morphemes

TARGET = 2_000  # pairs per second per core

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


def pairs(count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n, m = rng.randint(5, 90), rng.randint(1, 999) * 1000
        paragraphs, claims = (EN, EN_CLAIMS) if rng.random() < 0.5 else (JA, JA_CLAIMS)
        out.append((rng.choice(claims).format(n=n, m=m), rng.choice(paragraphs).format(n=n, m=m)))
    return out


def clear_caches() -> None:
    for cached in (_paragraph, _extract, _terms, japanese_morphemes):
        cached.cache_clear()


def run(label: str, work: list[tuple[str, str]], *, cold: bool) -> None:
    if cold:
        clear_caches()
    start = time.perf_counter()
    for claim, paragraph in work:
        check_claim(claim, paragraph)
    rate = len(work) / (time.perf_counter() - start)
    verdict = "OK" if rate >= TARGET else "MISS"
    print(
        f"{label:<44} {rate:>9,.0f} pairs/s (target >= {TARGET:,}): {verdict} "
        f"(ratio {rate / TARGET:.2f})"
    )


def main() -> None:
    print(f"cores: {os.cpu_count()} (single-threaded run: figures are per core)")
    check_claim("warm up", "Sudachi dictionary load happens here.")
    work = pairs(6_000, seed=1)
    run("cold: every pair new (no cache hits)", work, cold=True)
    run("warm: same pairs again (caches hit)", work, cold=False)
    # A bundle re-checks several claims against the same few paragraphs.
    shared = [(c, p) for c, _ in work for p in (work[0][1], work[1][1])][:6_000]
    run("bundle-like: 2 paragraphs, each claim twice", shared, cold=True)


if __name__ == "__main__":
    main()
