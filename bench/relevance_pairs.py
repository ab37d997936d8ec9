"""The relevance section of bench/bench_verdicts.py (run alone too): does the engine see an
answer to another question? Matched and mismatched question / answer pairs, each run
through the real grading (`evidence.validation.evaluate_bundle`) as a one-claim answer
stating the sentence and citing its whole paragraph, and the share released without a
person (auto or flagged) printed side by side: today's engine (the claims alone, no
question) and the engine that reads the question and the answer (relevance r_j to the
question, the "addresses the question" check, which weighs the claim against the
paragraph's other sentences).

Pairs by the recipe of ../shared/corpora/README.md (bench/fit_addressing.py builds them):
for two questions on one paragraph, the sentence holding the first one's answer is a
matched answer to it and a mismatched answer to the other. Only the held-out paragraphs are
read (the addressing model was fitted on the rest). Japanese from JSQuAD; English from
SQuAD-format files named in MARIA_ADDRESSING_SQUAD (skipped without one).

Nothing is stored: the cited version and paragraph are built in memory, so no database is
needed. BENCH_RELEVANCE_LIMIT caps the pairs per corpus and kind (default 400; 0: all).
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "maria.settings")

import django  # noqa: E402

django.setup()

from fit_addressing import JSQUAD, Pair, load_pairs, squad_paths  # noqa: E402

from coordinates.models import Zone  # noqa: E402
from coordinates.policy import SYSTEM_DEFAULT  # noqa: E402
from coordinates.selectors import EffectivePolicy  # noqa: E402
from evidence.models import Document, DocumentVersion, EvidenceBundle, Paragraph  # noqa: E402
from evidence.validation import Cited, evaluate_bundle  # noqa: E402

ZONE = "G1.U1.P1.Z1"
LIMIT = int(os.environ.get("BENCH_RELEVANCE_LIMIT", "400"))
RELEASED = ("auto", "flagged")
TARGET_MATCHED, TARGET_MISMATCHED, TARGET_MS = 0.80, 0.10, 3.0
POLICY = EffectivePolicy(
    zone=ZONE, values=SYSTEM_DEFAULT, own={}, own_version=None, sources={}, chain=()
)


def _cited(pair: Pair) -> tuple[EvidenceBundle, Cited]:
    """A one-claim bundle stating the sentence and citing the paragraph it comes from: an
    approved, current policy of the zone whose one paragraph is the corpus paragraph (as an
    agent citing the passage its retriever found)."""
    sentence, text = pair.sentence, pair.context or pair.sentence
    document = Document(pk=1, zone=Zone(coordinate=ZONE, level="zone", depth=4), key="d")
    version = DocumentVersion(
        pk=1,
        document=document,
        version=1,
        title="d",
        kind="policy",
        status="approved",
        effective_date=date(2026, 1, 1),
        text=text,
    )
    paragraph = Paragraph(
        pk=1, version=version, number=1, start=0, end=len(text), text=text, zone=ZONE
    )
    bundle = EvidenceBundle(
        zone=ZONE, claims=[{"text": sentence, "citations": [{"document": 1, "paragraph": 1}]}]
    )
    versions = {(1, 1): version, (1, None): version}
    return bundle, Cited(versions, {(1, 1): paragraph}, {ZONE: None})


def _gates(pair: Pair) -> tuple[str, str, float, float]:
    """Both engines' gates for the pair, and the CPU seconds each took."""
    bundle, cited = _cited(pair)
    started = time.process_time()
    today = evaluate_bundle(bundle, POLICY, cited).gate
    middle = time.process_time()
    now = evaluate_bundle(bundle, POLICY, cited, question=pair.question, answer=pair.sentence)
    return today, now.gate, middle - started, time.process_time() - middle


def _share(gates: Counter[str], total: int) -> str:
    released = _released(gates)
    return f"{released / total:6.1%} ({released}/{total})" if total else "   -"


def _corpus(name: str, pairs: list[Pair]) -> None:
    print(f"\n{name}: share released without a person (auto or flagged)")
    print("  targets: matched >= 80%, mismatched <= 10%, at most +3 ms CPU per answer")
    print(f"  {'pairs':<34}{'today (claims alone)':>24}{'question and answer read':>28}")
    for matched, label in ((True, "matched (the answer to it)"), (False, "mismatched (another's)")):
        chosen = [p for p in pairs if p.matched is matched]
        chosen = chosen[:LIMIT] if LIMIT > 0 else chosen
        today: Counter[str] = Counter()
        now: Counter[str] = Counter()
        grounded: Counter[str] = Counter()  # now's gates of the pairs today's engine releases
        spent = [0.0, 0.0]
        for pair in chosen:
            before, after, cost_before, cost_after = _gates(pair)
            today[before] += 1
            now[after] += 1
            if before in RELEASED:
                grounded[after] += 1
            spent[0] += cost_before
            spent[1] += cost_after
        per = [1000 * s / max(len(chosen), 1) for s in spent]
        cost = per[1] - per[0]
        print(
            f"  {label:<34}{_share(today, len(chosen)):>24}{_share(now, len(chosen)):>28}"
            f"   CPU per answer {per[0]:.2f} -> {per[1]:.2f} ms (+{cost:.2f}"
            f" {_mark(cost <= TARGET_MS)})"
        )
        print(f"  {'':<34}{'gates: ' + _gates_line(today):>24}{_gates_line(now):>28}")
        if matched:
            # The target's pairs: answers whose claim the evidence grounds (today releases).
            share = _released(grounded) / max(grounded.total(), 1)
            met = _mark(share >= TARGET_MATCHED)
            shown = _share(grounded, grounded.total())
            print(f"  {'  of them, claim grounded':<34}{'':>24}{shown:>28}   {met} (>= 80%)")
        else:
            share = _released(now) / max(len(chosen), 1)
            print(f"  {'':<86}   {_mark(share <= TARGET_MISMATCHED)} (<= 10%)")


def _released(gates: Counter[str]) -> int:
    return sum(gates[g] for g in RELEASED)


def _mark(met: bool) -> str:
    return "met" if met else "MISSED"


def _gates_line(gates: Counter[str]) -> str:
    return " ".join(f"{g[0]}{gates[g]}" for g in ("auto", "flagged", "required", "blocked"))


def main() -> None:
    jsquad = Path(os.environ.get("BENCH_ADDRESSING_JSQUAD", JSQUAD))
    pairs = [p for p in load_pairs(jsquad, squad_paths([])) if p.held_out]
    if not jsquad.is_file():
        print(f"Japanese: skipped ({jsquad} not found)")
    by_corpus: dict[str, list[Pair]] = {}
    for pair in pairs:
        by_corpus.setdefault(pair.corpus, []).append(pair)
    for name, found in sorted(by_corpus.items()):
        _corpus(f"{name} (held-out paragraphs)", found)
    if "SQuAD" not in by_corpus:
        print("\nEnglish: skipped (name SQuAD-format files in MARIA_ADDRESSING_SQUAD)")


if __name__ == "__main__":
    main()
