"""Does the answer address the question: the shipped model (evidence/addressing_model.json) on
the held-out question/sentence pairs of each language, and the CPU it costs.

Prints, per language, the share of matched and of mismatched pairs judged addressing (p at
the pass mark; targets: matched >= 80%, mismatched <= 10%), each claim read beside its
paragraph's other sentences as an agent citing the paragraph gives it, and for comparison
read alone; then CPU ms per question analysis (target <= 3 ms) and per `addresses()` call,
on cold caches.

The pairs are built as `bench/fit_addressing.py` builds them (the recipe of
../shared/corpora/README.md) and only the held-out paragraphs are read. Japanese: JSQuAD from
../shared/corpora (or BENCH_ADDRESSING_JSQUAD); English: SQuAD-format files named in
MARIA_ADDRESSING_SQUAD (paths joined by the path separator); a language without its corpus
is skipped with a note. The corpora's text is never copied here.

Run: .venv/bin/python bench/bench_addressing.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_addressing import JSQUAD, Pair, load_pairs, squad_paths  # noqa: E402

from evidence import numbers, questions, text  # noqa: E402

TARGET_MATCHED = 0.80
TARGET_MISMATCHED = 0.10
TARGET_ANALYSIS_MS = 3.0
NAMES = {"en": "English (SQuAD)", "ja": "Japanese (JSQuAD)"}


def _clear_caches() -> None:
    for cached in (
        questions.analyse_question,
        questions.supplied,
        questions._morphemes,
        questions._grams,
        questions._asked_grams,
        questions._question_terms,
        questions._ordered_terms,
        questions._names,
        # The project's text caches too: a question is analysed once, when it arrives.
        text.japanese_morphemes,
        text._japanese_terms,
        text._terms,
        numbers._extract,
    ):
        cached.cache_clear()


def _cpu_ms(pairs: list[Pair]) -> tuple[float, float]:
    """CPU ms per question analysis and per addresses() call, each on cold caches (every
    question and sentence read for the first time; the tokenizer itself already loaded)."""
    _clear_caches()
    start = time.process_time()
    for pair in pairs:
        questions.analyse_question(pair.question)
    analysis = (time.process_time() - start) * 1000 / len(pairs)
    _clear_caches()
    start = time.process_time()
    for pair in pairs:
        questions.addresses(pair.question, [pair.sentence], elsewhere=pair.elsewhere)
    call = (time.process_time() - start) * 1000 / len(pairs)
    return analysis, call


def _mark(met: bool) -> str:
    return "met" if met else "MISSED"


def main() -> None:
    jsquad = Path(os.environ.get("BENCH_ADDRESSING_JSQUAD", JSQUAD))
    squad = squad_paths([])
    pairs = [p for p in load_pairs(jsquad, squad) if p.held_out]
    model = questions.model()
    print(f"model {model.version} ({questions.DEFAULT_MODEL.name}), held-out pairs only")
    if not squad:
        print("English: skipped (no SQuAD file named in MARIA_ADDRESSING_SQUAD)")
    if not jsquad.is_file():
        print(f"Japanese: skipped ({jsquad} not found)")
    for language in ("ja", "en"):
        chosen = [p for p in pairs if p.language == language]
        if not chosen:
            continue
        matched = np.array([p.matched for p in chosen])
        for in_context, how in ((True, "beside its paragraph"), (False, "the claim alone")):
            probability = np.array(
                [questions.addresses(p.question, [p.sentence],
                                     elsewhere=p.elsewhere if in_context else ()).probability
                 for p in chosen]
            )  # fmt: skip
            judged = probability >= questions.pass_mark(language, in_context=in_context)
            share_matched = float(judged[matched].mean())
            share_mismatched = float(judged[~matched].mean())
            if in_context:
                met = f" (target >= {TARGET_MATCHED:.0%}: "
                met += f"{_mark(share_matched >= TARGET_MATCHED)})"
                held = f" (target <= {TARGET_MISMATCHED:.0%}: "
                held += f"{_mark(share_mismatched <= TARGET_MISMATCHED)})"
            else:
                # No target: the targets are an answer citing its paragraph (the bench's
                # recipe); this says what a one-sentence paragraph leaves the check to go on.
                met, held = " (for comparison)", ""
            print(
                f"{NAMES[language]}, {how}: matched {matched.sum()} judged addressing "
                f"{share_matched:.1%}{met}; mismatched {(~matched).sum()} judged addressing "
                f"{share_mismatched:.1%}{held}"
            )
        analysis, call = _cpu_ms(chosen)
        print(
            f"  CPU ms per question analysis {analysis:.3f} (target <= {TARGET_ANALYSIS_MS}: "
            f"{_mark(analysis <= TARGET_ANALYSIS_MS)}), per addresses() call {call:.3f}"
        )
    if not pairs:
        print("no corpus found: nothing measured")


if __name__ == "__main__":
    main()
