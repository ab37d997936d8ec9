"""Claim verdicts measured on labelled corpora nobody here wrote, beside two baselines.

Reads SummEdits (JSON, one file per domain), JNLI (JSON Lines) and the project's own grounding
corpus through small adapters, runs every verifier on the same examples and prints, per corpus
and per group (domain, edit type or label): balanced accuracy, the share passed, the share of
bad among the passed, precision and recall of rejection, and checks per second.

An example passes when every one of its claims passes: a summary is split into sentences and
each is checked against the whole document; a JNLI hypothesis is checked against its
premise (entailment = supported; contradiction and neutral = not).

Verifiers:
- overlap: the method the papers started from: every number of the claim verbatim in the
  evidence, and at least 60% of its content words there too.
- rules: the rule checks of `evidence.grounding` (the verdict the engine gives today).
- model: the learned verifier (`evidence.verifier`): its calibrated probability at its
  language's pass mark; with a reliability table and a risk-coverage table per corpus.

Of SummEdits and JNLI only the held-out part is read (SummEdits' evaluation split, JNLI's
odd pairs): the shipped model was fitted on the rest (`manage.py fit_verifier`).

The corpora live outside the repository (`../shared/corpora/`, or BENCH_VERDICTS_CORPORA);
their text is never copied here. BENCH_VERDICTS_LIMIT caps the examples read per file (0: all).
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evidence import corpora, verifier  # noqa: E402
from evidence.corpora import Example  # noqa: E402
from evidence.grounding import check_claim, rule_verdict  # noqa: E402
from evidence.text import content_terms  # noqa: E402

CORPORA = Path(os.environ.get("BENCH_VERDICTS_CORPORA", ROOT.parent / "shared" / "corpora"))
LIMIT = int(os.environ.get("BENCH_VERDICTS_LIMIT", "0"))
OWN = ROOT / "tests" / "evidence" / "corpus" / "grounding_corpus.json"
THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)

Verifier = Callable[[str, str], bool]


def load() -> list[tuple[str, list[Example]]]:
    """Every corpus found, by name: of SummEdits and JNLI the held-out part only (the shipped
    model was fitted on the rest), all of our own corpus (never fitted on)."""
    loaded: list[tuple[str, list[Example]]] = []
    summ = CORPORA / "summedits-dev"
    if summ.is_dir():
        loaded.append(("SummEdits (evaluation split)", _limited(corpora.read(summ))))
    else:
        print(f"  (no SummEdits under {CORPORA}: skipped)")
    if (CORPORA / "jnli-valid.jsonl").exists():
        loaded.append(
            ("JNLI valid (odd pairs)", _limited(corpora.read(CORPORA / "jnli-valid.jsonl")))
        )
    loaded.append(("own corpus", corpora.grounding_corpus(OWN)))
    return loaded


def _limited(rows: list[Example]) -> list[Example]:
    held_out = [e for e in rows if e.held_out]
    return held_out[:LIMIT] if LIMIT > 0 else held_out


# --- verifiers ------------------------------------------------------------------------------

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def overlap_check(claim: str, evidence: str) -> bool:
    """Numbers verbatim and >= 60% of the claim's content words in the evidence."""
    numbers = {n.replace(",", "") for n in _NUMBER.findall(claim)}
    found = {n.replace(",", "") for n in _NUMBER.findall(evidence)}
    if not numbers <= found:
        return False
    words = set(content_terms(claim))
    if not words:
        return True
    return len(words & set(content_terms(evidence))) / len(words) >= 0.6


def rules_check(claim: str, evidence: str) -> bool:
    return rule_verdict(claim, evidence).supported


def model_check(claim: str, evidence: str) -> bool:
    """The learned verifier: its calibrated probability reaches its language's pass mark, and
    no number of the claim is missing from the evidence (a certain veto)."""
    verdict = check_claim(claim, evidence)
    if verdict.probability is None:
        return verdict.supported  # not a factual claim: the rules' word
    mark = verifier.model().for_claim(claim).threshold
    return verdict.numbers_ok and verdict.probability >= mark


VERIFIERS: dict[str, Verifier] = {
    "overlap": overlap_check,
    "rules": rules_check,
    "model": model_check,
}


# --- measuring ------------------------------------------------------------------------------


@dataclass
class Tally:
    """Counts of one group: passed or rejected, against what the label says."""

    kept_good: int = 0  # supported and passed
    lost_good: int = 0  # supported, rejected
    passed_bad: int = 0  # unsupported, passed
    caught_bad: int = 0  # unsupported, rejected

    def add(self, supported: bool, passed: bool) -> None:
        if supported and passed:
            self.kept_good += 1
        elif supported:
            self.lost_good += 1
        elif passed:
            self.passed_bad += 1
        else:
            self.caught_bad += 1

    @property
    def n(self) -> int:
        return self.kept_good + self.lost_good + self.passed_bad + self.caught_bad

    def balanced_accuracy(self) -> float | None:
        """(TPR + TNR) / 2 over supported / unsupported; None when one class is absent."""
        good, bad = self.kept_good + self.lost_good, self.passed_bad + self.caught_bad
        if not good or not bad:
            return None
        return (self.kept_good / good + self.caught_bad / bad) / 2

    def passed(self) -> float:
        return (self.kept_good + self.passed_bad) / self.n if self.n else 0.0

    def bad_among_passed(self) -> float | None:
        passed = self.kept_good + self.passed_bad
        return self.passed_bad / passed if passed else None

    def rejection_precision(self) -> float | None:
        rejected = self.lost_good + self.caught_bad
        return self.caught_bad / rejected if rejected else None

    def rejection_recall(self) -> float | None:
        bad = self.passed_bad + self.caught_bad
        return self.caught_bad / bad if bad else None


@dataclass
class Run:
    verifier: str
    total: Tally = field(default_factory=Tally)
    groups: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    tags: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    checks: int = 0
    seconds: float = 0.0


def measure(name: str, verify: Verifier, examples: Sequence[Example]) -> Run:
    run = Run(name)
    started = time.process_time()
    for example in examples:
        passed = True
        for claim in example.claims:
            run.checks += 1
            if not verify(claim, example.evidence):
                passed = False
                break  # one failed sentence rejects the summary
        run.total.add(example.supported, passed)
        run.groups[example.group].add(example.supported, passed)
        for tag in example.tags:
            run.tags[tag].add(example.supported, passed)
    run.seconds = time.process_time() - started
    return run


def _f(value: float | None) -> str:
    return "  -  " if value is None else f"{value:5.3f}"


def _row(label: str, runs: Iterable[tuple[str, Tally]]) -> str:
    cells = []
    for _, tally in runs:
        cells.append(
            f"{_f(tally.balanced_accuracy())} {_f(tally.passed())} {_f(tally.bad_among_passed())}"
            f" {_f(tally.rejection_precision())} {_f(tally.rejection_recall())}"
        )
    return f"  {label:<34}" + " | ".join(cells)


def report(corpus: str, runs: Sequence[Run]) -> None:
    print(f"\n== {corpus}: {runs[0].total.n} examples")
    head = " | ".join(f"{r.verifier:<29}" for r in runs)
    print(f"  {'':<34}{head}")
    print(f"  {'':<34}" + " | ".join("BA    pass  bad|p rejP  rejR " for _ in runs))
    print(_row("all", [(r.verifier, r.total) for r in runs]))
    for group in sorted(runs[0].groups):
        n = runs[0].groups[group].n
        print(_row(f"{group} ({n})", [(r.verifier, r.groups[group]) for r in runs]))
    if len(runs[0].tags) > len(runs[0].groups):
        print("  by edit type (share passed; for an edit, the share that slipped through):")
        for tag in sorted(runs[0].tags):
            n = runs[0].tags[tag].n
            shares = "   ".join(f"{r.verifier} {r.tags[tag].passed():.3f}" for r in runs)
            print(f"    {tag + f' ({n})':<44}{shares}")
    speeds = ", ".join(
        f"{r.verifier} {r.checks / r.seconds:,.0f}/s" if r.seconds else f"{r.verifier} -"
        for r in runs
    )
    print(f"  checks per second (CPU, one core): {speeds}")


def lowest_probability(example: Example) -> float:
    """The example's weakest claim: a summary is as supported as its least supported sentence."""
    values = [check_claim(c, example.evidence).probability for c in example.claims]
    known = [v for v in values if v is not None]
    return min(known) if known else 1.0


def calibration(corpus: str, examples: Sequence[Example]) -> None:
    """Reliability (predicted against observed) and risk-coverage for the learned verifier."""
    pairs = [(lowest_probability(e), e.supported) for e in examples]
    print(f"  reliability of the model's probability ({corpus}):")
    print("    predicted      n   mean p   supported")
    for low in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        chosen = [(p, s) for p, s in pairs if low <= p < low + 0.1 or (low == 0.9 and p == 1.0)]
        if chosen:
            mean = sum(p for p, _ in chosen) / len(chosen)
            observed = sum(s for _, s in chosen) / len(chosen)
            print(f"    {low:.1f}-{low + 0.1:.1f}  {len(chosen):6d}   {mean:.3f}    {observed:.3f}")
    print("  risk-coverage (pass when p >= t): t, share passed, bad among passed")
    cells = []
    for t in THRESHOLDS:
        passed = [s for p, s in pairs if p >= t]
        bad = (len(passed) - sum(passed)) / len(passed) if passed else None
        cells.append(f"{t:.1f}: {len(passed) / len(pairs):.2f} {_f(bad)}")
    print("    " + " | ".join(cells))


def main() -> None:
    print("Claim verdicts on labelled corpora (BA balanced accuracy, pass share passed,")
    print("bad|p unsupported among passed, rejP / rejR precision / recall of rejection)")
    for corpus, examples in load():
        runs = [measure(name, verify, examples) for name, verify in VERIFIERS.items()]
        report(corpus, runs)
        calibration(corpus, examples)
    print(f"\nmodel: {verifier.DEFAULT_MODEL.name} version {verifier.model().version}")
    # Relevance: answers to the question asked, and to another (bench/relevance_pairs.py).
    sys.path.insert(0, str(ROOT / "bench"))
    import relevance_pairs

    relevance_pairs.main()


if __name__ == "__main__":
    main()
