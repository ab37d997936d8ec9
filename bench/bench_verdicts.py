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
- rules: `evidence.grounding.check_claim` as the engine runs it.

The corpora live outside the repository (`../shared/corpora/`, or BENCH_VERDICTS_CORPORA);
their text is never copied here. BENCH_VERDICTS_LIMIT caps the examples read per file (0: all).
"""

from __future__ import annotations

import ast
import json
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

from evidence.grounding import check_claim  # noqa: E402
from evidence.text import content_terms, split_sentences  # noqa: E402

CORPORA = Path(os.environ.get("BENCH_VERDICTS_CORPORA", ROOT.parent / "shared" / "corpora"))
LIMIT = int(os.environ.get("BENCH_VERDICTS_LIMIT", "0"))
OWN = ROOT / "tests" / "evidence" / "corpus" / "grounding_corpus.json"

Verifier = Callable[[str, str], bool]


@dataclass(frozen=True, slots=True)
class Example:
    """One labelled (evidence, claims) pair: supported means every claim should pass."""

    corpus: str
    group: str
    tags: tuple[str, ...]
    evidence: str
    claims: tuple[str, ...]
    supported: bool


# --- adapters -------------------------------------------------------------------------------


def _limited(rows: list[Example]) -> list[Example]:
    return rows[:LIMIT] if LIMIT > 0 else rows


def summedits(path: Path) -> list[Example]:
    """SummEdits: label "1" consistent, "0" inconsistent; `edit_types` names the edits."""
    domain = path.stem
    rows = []
    for record in json.loads(path.read_text(encoding="utf-8")):
        edits = record.get("edit_types") or "[]"
        names = ast.literal_eval(edits) if isinstance(edits, str) else list(edits)
        supported = int(record["label"]) == 1
        claims = tuple(split_sentences(record["summary"])) or (record["summary"],)
        rows.append(
            Example(
                corpus="summedits",
                group=domain,
                tags=tuple(sorted(names)) or (("consistent",) if supported else ("unlabelled",)),
                evidence=record["doc"],
                claims=claims,
                supported=supported,
            )
        )
    return _limited(rows)


def jnli(path: Path) -> list[Example]:
    """JNLI: sentence1 the premise, sentence2 the hypothesis; entailment = supported."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        label = record["label"]
        rows.append(
            Example(
                corpus="jnli",
                group=label,
                tags=(label,),
                evidence=record["sentence1"],
                claims=(record["sentence2"],),
                supported=label == "entailment",
            )
        )
    return _limited(rows)


# The project's own corpus: faithful, opinion and meta claims must be kept; the rest rejected.
KEPT_LABELS = {"faithful", "opinion", "meta"}


def own(path: Path) -> list[Example]:
    data = json.loads(path.read_text(encoding="utf-8"))
    paragraphs = data["paragraphs"]
    return [
        Example(
            corpus="own",
            group=claim["label"],
            tags=(claim["label"],),
            evidence=paragraphs[claim["p"]],
            claims=(claim["claim"],),
            supported=claim["label"] in KEPT_LABELS,
        )
        for claim in data["claims"]
    ]


def load() -> list[tuple[str, list[Example]]]:
    """Every corpus found, by name; a missing folder is reported and skipped."""
    loaded: list[tuple[str, list[Example]]] = []
    summ = sorted((CORPORA / "summedits-dev").glob("*.json"))
    if summ:
        loaded.append(("SummEdits", [e for p in summ for e in summedits(p)]))
    if (CORPORA / "jnli-valid.jsonl").exists():
        loaded.append(("JNLI valid", jnli(CORPORA / "jnli-valid.jsonl")))
    loaded.append(("own corpus", own(OWN)))
    if not summ:
        print(f"  (no SummEdits under {CORPORA}: skipped)")
    return loaded


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
    return check_claim(claim, evidence).supported


VERIFIERS: dict[str, Verifier] = {"overlap": overlap_check, "rules": rules_check}


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


def main() -> None:
    print("Claim verdicts on labelled corpora (BA balanced accuracy, pass share passed,")
    print("bad|p unsupported among passed, rejP / rejR precision / recall of rejection)")
    for corpus, examples in load():
        runs = [measure(name, verify, examples) for name, verify in VERIFIERS.items()]
        report(corpus, runs)


if __name__ == "__main__":
    main()
