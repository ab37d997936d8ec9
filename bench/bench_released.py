"""What the engine releases, measured through the API on labelled answers nobody here wrote.

Each labelled (document, answer) pair goes through the product as an agent sends it: the
document is uploaded as an approved policy of a zone of its own (`POST /api/v1/documents/`),
the answer is submitted as a plain answer citing every paragraph of it, under a neutral
question and the default zone policy (`POST /api/v1/decisions/`), and the decision is read
back (`GET /api/v1/decisions/{id}/`). The gate counted is the one the API returns, whatever
rule grades it. Printed per corpus and per label: the share auto, flagged, required and
blocked; inconsistent among released (auto + flagged) and consistent among blocked; how often
the check that an answer addresses its question held it back; CPU per answer; and a
risk-coverage table over the engine's probability (an answer is as supported as its least
supported claim). Then the issue's targets, met or MISSED.

Why: bench_verdicts measures the claim check alone; a user meets the gate, after alignment,
the answer and question checks, scoring and routing. Released answers must be right, and what
is refused must really be wrong.

Corpora: SummEdits' evaluation split (one zone per document; label 1 consistent), JNLI's odd
pairs (premise the document, hypothesis the answer; entailment consistent, contradiction
inconsistent, neutral reported apart) and our own grounding corpus (faithful, opinion and meta
consistent). Of SummEdits and JNLI only the held-out part: the verifier was fitted on the rest.
They live outside the repository (`../shared/corpora/`, or BENCH_RELEASED_CORPORA) and their
text is never copied here. BENCH_RELEASED_LIMIT caps the answers of each label, in each
SummEdits domain and in JNLI (a fixed-seed sample; 0: all; default 60, about a minute); our own
corpus is always read whole (BENCH_RELEASED_LIMIT=0 reads everything in about 3.5 minutes).
BENCH_RELEASED_ONLY=jnli (or summedits, own, comma-separated) runs only those corpora.

A throwaway SQLite database migrated here (BENCH_KEEP=1 keeps it); Celery eager, so an
answer's validation runs inside its submit request and its CPU (time.process_time) is counted
there. Run: .venv/bin/python bench/bench_released.py
"""

from __future__ import annotations

import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evidence import corpora  # noqa: E402
from evidence.corpora import Example  # noqa: E402
from evidence.text import has_japanese  # noqa: E402

CORPORA = Path(os.environ.get("BENCH_RELEASED_CORPORA", ROOT.parent / "shared" / "corpora"))
LIMIT = int(os.environ.get("BENCH_RELEASED_LIMIT", "60"))
# Which corpora to run, comma-separated among summedits, jnli, own (default: all of them): the
# machine is shared, and a change to one language's rules needs only its corpus measured.
ONLY = frozenset(
    c
    for c in os.environ.get("BENCH_RELEASED_ONLY", "summedits,jnli,own").replace(" ", "").split(",")
    if c
)
OWN = ROOT / "tests" / "evidence" / "corpus" / "grounding_corpus.json"
QUESTION_EN = "What does the document say?"
QUESTION_JA = "文書には何と書かれていますか。"
GATES = ("auto", "flagged", "required", "blocked")
RELEASED = frozenset({"auto", "flagged"})
COVERAGES = (0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0)
MAX_SOURCES = 50  # the API's limit on a plain answer's sources (decisions.api_decisions)
# With a plug-in judge (MARIA_NLI_MODEL or MARIA_JUDGE_URL in the environment), what each
# zone lets it do: BENCH_RELEASED_JUDGE_MOVES=verify,refute (empty: the default, nothing).
JUDGE_MOVES = tuple(
    m for m in os.environ.get("BENCH_RELEASED_JUDGE_MOVES", "").replace(" ", "").split(",") if m
)
ERRORS_SHOWN = 3


# --- the pairs ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pair:
    """One labelled answer: `kind` is the corpus's own label (a SummEdits label, a JNLI label,
    our corpus's label); `consistent` is None where the label says neither (JNLI neutral)."""

    corpus: str
    kind: str
    document: str
    answer: str
    consistent: bool | None


def _summedits(example: Example) -> Pair:
    kind = "consistent" if example.supported else "inconsistent"
    # The summary's sentences joined are the summary (split_sentences only trims them).
    answer = " ".join(example.claims)
    return Pair(f"SummEdits {example.group}", kind, example.evidence, answer, example.supported)


def _jnli(example: Example) -> Pair:
    consistent = {"entailment": True, "contradiction": False}.get(example.group)
    return Pair("JNLI valid", example.group, example.evidence, example.claims[0], consistent)


def _own(example: Example) -> Pair:
    return Pair("own corpus", example.group, example.evidence, example.claims[0], example.supported)


def _capped(pairs: list[Pair], group: Callable[[Pair], str]) -> list[Pair]:
    """At most LIMIT pairs of each group, a sample fixed by the group's name, in file order."""
    if LIMIT <= 0:
        return pairs
    groups: dict[str, list[int]] = defaultdict(list)
    for index, pair in enumerate(pairs):
        groups[group(pair)].append(index)
    kept: set[int] = set()
    for name, indices in groups.items():
        kept.update(random.Random(name).sample(indices, min(LIMIT, len(indices))))
    return [pair for index, pair in enumerate(pairs) if index in kept]


def load() -> list[tuple[str, list[Pair]]]:
    """Every corpus found, by name: of SummEdits and JNLI the held-out part only."""
    loaded: list[tuple[str, list[Pair]]] = []
    summ = CORPORA / "summedits-dev"
    if "summedits" not in ONLY:
        pass
    elif summ.is_dir():
        pairs = [_summedits(e) for e in corpora.read(summ) if e.held_out]
        for domain in sorted({p.corpus for p in pairs}):
            loaded.append((domain, _capped([p for p in pairs if p.corpus == domain], _kind)))
    else:
        print(f"  (no SummEdits under {CORPORA}: skipped)")
    jnli = CORPORA / "jnli-valid.jsonl"
    if "jnli" not in ONLY:
        pass
    elif jnli.exists():
        pairs = [_jnli(e) for e in corpora.read(jnli) if e.held_out]
        loaded.append(("JNLI valid", _capped(pairs, _kind)))
    else:
        print(f"  (no JNLI under {CORPORA}: skipped)")
    if "own" in ONLY:
        loaded.append(("own corpus", [_own(e) for e in corpora.grounding_corpus(OWN)]))
    return loaded


def _kind(pair: Pair) -> str:
    return pair.kind


# --- through the API ------------------------------------------------------------------------


def _setup_django() -> Path:
    """A throwaway SQLite file, production settings, Celery eager; returns its folder."""
    folder = Path(tempfile.mkdtemp(prefix="maria-bench-released-"))
    for name in list(os.environ):
        if name.startswith(("DATABASE_", "REDIS_", "CELERY_", "DJANGO_", "CHANNELS_")):
            del os.environ[name]  # this bench's own database, no broker: validation inline
    os.environ.update(
        DJANGO_SETTINGS_MODULE="maria.settings",
        DATABASE_URL=f"sqlite:///{folder / 'bench.sqlite3'}",
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY="bench-released-only-" + "x" * 40,
        DJANGO_ALLOWED_HOSTS="testserver",
        DJANGO_SECURE_SSL_REDIRECT="0",
        LOG_LEVEL="WARNING",
        MARIA_EMBEDDER="hashing",
    )
    import logging

    import django

    django.setup()
    logging.getLogger("kombu").setLevel(logging.ERROR)  # "no hostname" of the memory broker
    warnings.filterwarnings("ignore", message="No directory at")  # whitenoise, no collectstatic
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return folder


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the API answered for one pair, read from the decision it made."""

    pair: Pair
    status: int  # of the submission; 0: the request raised
    state: str
    gate: str  # auto, flagged, required, blocked; "none" when ungraded
    probability: float  # the lowest of the claims' probabilities; 1.0 with no factual claim
    addressing: str  # full, partial, off_topic; "" when not checked
    verdicts: tuple[str, ...]  # of the factual claims the answer says
    contradicted: bool
    cpu: float  # seconds of CPU of the submission, validation included
    error: str = ""

    @property
    def released(self) -> bool:
        return self.gate in RELEASED

    @property
    def held_by_addressing_alone(self) -> bool:
        """Sent to a person as off the question, though every claim was verified: nothing but
        the addressing check (the report's `addressing` and `at_least`) held it back."""
        return (
            self.gate == "required"
            and self.addressing == "off_topic"
            and bool(self.verdicts)
            and all(v == "verified" for v in self.verdicts)
            and not self.contradicted
        )


def _claim_probability(claim: dict[str, Any]) -> float | None:
    """A claim's best item: the zone-calibrated probability when the zone has one adopted,
    the verifier's calibrated probability otherwise."""
    values = []
    for item in claim.get("evidence") or []:
        signals = item.get("signals") or {}
        value = signals.get("calibrated_probability")
        value = signals.get("probability") if value is None else value
        if value is not None:
            values.append(float(value))
    return max(values) if values else None


def _factual(decision: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        c
        for c in decision.get("claims") or []
        if c.get("kind", "factual") == "factual" and c.get("in_answer", True)
    ]


def read_outcome(pair: Pair, status: int, decision: dict[str, Any], cpu: float) -> Outcome:
    claims = _factual(decision)
    probabilities = [p for p in map(_claim_probability, claims) if p is not None]
    return Outcome(
        pair=pair,
        status=status,
        state=str(decision.get("state") or ""),
        gate=str(decision.get("gate") or "none"),
        probability=min(probabilities, default=1.0),
        addressing=str((decision.get("addressing") or {}).get("mode") or ""),
        verdicts=tuple(str(c.get("verdict") or "") for c in claims),
        contradicted=any(c.get("contradicted") for c in claims),
        cpu=cpu,
    )


class Agent:
    """A zone of one document, its agent's token and an API client holding it."""

    def __init__(self, zone: str, document: str, title: str) -> None:
        from rest_framework.test import APIClient

        from coordinates.coordinate import parse
        from coordinates.services import token_issue, zone_add

        self.zone, self.agent = zone, f"{zone}.A1"
        zone_add(coordinate=parse(zone))
        if JUDGE_MOVES:
            from coordinates.selectors import zone_get
            from coordinates.services import policy_update

            policy_update(
                zone=zone_get(parse(zone)),
                overrides={"judge_moves": list(JUDGE_MOVES)},
                reason="bench: the judge may move claims",
                actor=None,
            )
        _, key = token_issue(agent=parse(self.agent))
        self.client = APIClient()
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        body = {
            "title": title,
            "kind": "policy",
            "status": "approved",
            "zone": zone,
            "text": document,
            "format": "text",
        }
        response = self.client.post("/api/v1/documents/", body, format="json")
        assert response.status_code in (200, 201), response.content
        uploaded = response.json()
        self.sources = [
            {"document": uploaded["id"], "paragraph": n}
            for n in range(1, min(uploaded["paragraphs"], MAX_SOURCES) + 1)
        ]
        self.cut = max(0, uploaded["paragraphs"] - MAX_SOURCES)  # paragraphs left uncited

    def submit(self, pair: Pair, key: str) -> Outcome:
        question = QUESTION_JA if has_japanese(pair.answer) else QUESTION_EN
        body = {
            "question": question,
            "answer": pair.answer,
            "zone": self.zone,
            "agent": self.agent,
            "sources": self.sources,
        }
        started = time.process_time()
        try:
            response = self.client.post(
                "/api/v1/decisions/", body, format="json", HTTP_IDEMPOTENCY_KEY=key
            )
        except Exception as error:  # a 500 is a finding, not the end of the run
            return _failed(pair, 0, f"{type(error).__name__}: {error}", started)
        cpu = time.process_time() - started
        if response.status_code not in (200, 201):
            return _failed(pair, response.status_code, response.content.decode()[:300], started)
        decision = self.client.get(f"/api/v1/decisions/{response.json()['id']}/").json()
        return read_outcome(pair, response.status_code, decision, cpu)


def _failed(pair: Pair, status: int, error: str, started: float) -> Outcome:
    return Outcome(
        pair, status, "", "none", 1.0, "", (), False, time.process_time() - started, error
    )


@dataclass
class Run:
    """One corpus sent through the API: the outcomes and what uploading its documents cost."""

    name: str
    outcomes: list[Outcome]
    documents: int
    upload_cpu: float
    uncited: int  # paragraphs beyond the API's MAX_SOURCES, left out of the sources


def run_corpus(name: str, pairs: Sequence[Pair], universe: int) -> Run:
    """Upload each distinct document to a zone of its own (G1.U<universe>.P1.Z<n>) and
    submit its answers there."""
    agents: dict[str, Agent] = {}
    upload_cpu = 0.0
    outcomes = []
    for index, pair in enumerate(pairs):
        agent = agents.get(pair.document)
        if agent is None:
            started = time.process_time()
            zone = f"G1.U{universe}.P1.Z{len(agents) + 1}"
            agent = agents[pair.document] = Agent(zone, pair.document, f"{name} {len(agents)}")
            upload_cpu += time.process_time() - started
        outcomes.append(agent.submit(pair, f"bench-released-{universe}-{index}"))
    uncited = sum(a.cut for a in agents.values())
    return Run(name, outcomes, len(agents), upload_cpu, uncited)


# --- figures --------------------------------------------------------------------------------


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _f(value: float | None) -> str:
    return "  -  " if value is None else f"{value:5.3f}"


def inconsistent_among_released(outcomes: Sequence[Outcome]) -> float | None:
    released = [o for o in outcomes if o.released and o.pair.consistent is not None]
    return _share(sum(not o.pair.consistent for o in released), len(released))


def blocked_precision(outcomes: Sequence[Outcome]) -> float | None:
    """Inconsistent among blocked (1 - consistent among blocked)."""
    blocked = [o for o in outcomes if o.gate == "blocked" and o.pair.consistent is not None]
    return _share(sum(not o.pair.consistent for o in blocked), len(blocked))


def released_share(outcomes: Sequence[Outcome]) -> float | None:
    return _share(sum(o.released for o in outcomes), len(outcomes))


def rejection(outcomes: Sequence[Outcome]) -> tuple[float | None, float | None]:
    """Precision and recall of rejection (not released), inconsistent the positive class."""
    labelled = [o for o in outcomes if o.pair.consistent is not None]
    rejected = [o for o in labelled if not o.released]
    caught = sum(not o.pair.consistent for o in rejected)
    inconsistent = sum(not o.pair.consistent for o in labelled)
    return _share(caught, len(rejected)), _share(caught, inconsistent)


HEAD = (
    f"  {'label':<16}{'n':>5}   auto  flagd  requi  block | relsd  off-q  addr! "
    " verif  refut |  CPU ms"
)


def _row(label: str, outcomes: Sequence[Outcome]) -> str:
    n = len(outcomes)
    gates = "  ".join(_f(_share(sum(o.gate == g for o in outcomes), n)) for g in GATES)
    verified = sum(bool(o.verdicts) and all(v == "verified" for v in o.verdicts) for o in outcomes)
    cells = [
        released_share(outcomes),
        _share(sum(o.addressing == "off_topic" for o in outcomes), n),
        _share(sum(o.held_by_addressing_alone for o in outcomes), n),
        _share(verified, n),
        _share(sum("refuted" in o.verdicts for o in outcomes), n),
    ]
    cpu = 1000 * sum(o.cpu for o in outcomes) / n if n else 0.0
    return f"  {label:<16}{n:5d}  {gates} | " + "  ".join(_f(c) for c in cells) + f" | {cpu:7.1f}"


def report(run: Run) -> None:
    outcomes = run.outcomes
    print(
        f"\n== {run.name}: {len(outcomes)} answers on {run.documents} documents "
        f"(upload CPU {1000 * run.upload_cpu / max(run.documents, 1):.0f} ms a document"
        + (
            f"; {run.uncited} paragraphs beyond {MAX_SOURCES} sources uncited"
            if run.uncited
            else ""
        )
        + ")"
    )
    print(HEAD)
    kinds = sorted({o.pair.kind for o in outcomes})
    for kind in kinds:
        print(_row(kind, [o for o in outcomes if o.pair.kind == kind]))
    if set(kinds) - {"consistent", "inconsistent"}:
        for label, value in (("= consistent", True), ("= inconsistent", False)):
            print(_row(label, [o for o in outcomes if o.pair.consistent is value]))
    print(_row("all", outcomes))
    released = sum(o.released and o.pair.consistent is not None for o in outcomes)
    blocked = sum(o.gate == "blocked" and o.pair.consistent is not None for o in outcomes)
    precision = blocked_precision(outcomes)
    print(
        f"  inconsistent among released: {_f(inconsistent_among_released(outcomes))} "
        f"(of {released});  consistent among blocked: "
        f"{_f(None if precision is None else 1 - precision)} (of {blocked})"
    )
    _anomalies(outcomes)
    risk_coverage(outcomes)


def _anomalies(outcomes: Sequence[Outcome]) -> None:
    """Say what should not happen: errors, answers left ungraded or stuck in proposed."""
    failed = [o for o in outcomes if o.error]
    stuck = [o for o in outcomes if not o.error and (o.gate == "none" or o.state == "proposed")]
    if failed:
        print(f"  !! {len(failed)} submissions failed; first: ")
        for o in failed[:ERRORS_SHOWN]:
            print(f"     status {o.status}: {o.error}")
    if stuck:
        states = ", ".join(sorted({o.state for o in stuck}))
        print(f"  !! {len(stuck)} answers left ungraded (states: {states})")


def risk_coverage(outcomes: Sequence[Outcome]) -> None:
    """Answers ordered by the engine's probability, most supported first: at each coverage,
    the share inconsistent among those above the cut, and the probability at the cut."""
    labelled = sorted(
        (o for o in outcomes if o.pair.consistent is not None), key=lambda o: -o.probability
    )
    if not labelled:
        return
    cells = []
    for coverage in COVERAGES:
        top = labelled[: max(1, math.ceil(coverage * len(labelled)))]
        bad = sum(not o.pair.consistent for o in top) / len(top)
        cells.append(f"{coverage:.0%}: {bad:.2f} (p>={top[-1].probability:.2f})")
    print("  risk-coverage by the engine's probability (coverage: inconsistent among kept):")
    print("    " + " | ".join(cells))


# --- targets --------------------------------------------------------------------------------


def _mark(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _at_most(value: float | None, bound: float) -> bool:
    """A share of nothing (nothing released, nothing blocked) breaks no upper bound."""
    return value is None or value <= bound


def _at_least(value: float | None, bound: float) -> bool:
    return value is not None and value >= bound


def targets(runs: Iterable[Run]) -> None:
    print("\n== targets")
    for run in runs:
        outcomes = run.outcomes
        if run.name.startswith("SummEdits"):
            _summedits_targets(run.name, outcomes)
        elif run.name.startswith("JNLI"):
            _jnli_targets(outcomes)
        else:
            _own_targets(outcomes)
    answered = [o for run in runs for o in run.outcomes]
    cpu = sorted(1000 * o.cpu for o in answered)
    if cpu:
        p95 = cpu[min(len(cpu) - 1, round(0.95 * (len(cpu) - 1)))]
        print(
            f"  CPU per answer (submit + validation, one core): median {cpu[len(cpu) // 2]:.1f} "
            f"ms, mean {sum(cpu) / len(cpu):.1f} ms, p95 {p95:.1f} ms, max {cpu[-1]:.1f} ms "
            f"(the first answer loads the models) over {len(cpu)} answers; no bound is set: "
            "for scale, bench_pipeline's 100 decisions/s on 2 cores leaves 20 ms a decision"
        )


def _summedits_targets(name: str, outcomes: Sequence[Outcome]) -> None:
    precision = blocked_precision(outcomes)
    leaked = inconsistent_among_released(outcomes)
    # Nothing blocked refuses nothing wrongly, nothing released lets nothing wrong through.
    both = (precision is None or precision >= 0.90) and _at_most(leaked, 0.10)
    released = released_share(outcomes)
    none_blocked = " (none blocked)" if precision is None else ""
    none_released = " (none released)" if leaked is None else ""
    print(
        f"  {name:<18} blocked precision {_f(precision)}{none_blocked} (>= 0.90) and "
        f"inconsistent among released {_f(leaked)}{none_released} (<= 0.10): {_mark(both)};  "
        f"released {_f(released)} (goal >= 0.20): {_mark(_at_least(released, 0.20))}"
    )


def _jnli_targets(outcomes: Sequence[Outcome]) -> None:
    contradictions = released_share([o for o in outcomes if o.pair.kind == "contradiction"])
    entailments = released_share([o for o in outcomes if o.pair.kind == "entailment"])
    print(
        f"  {'JNLI valid':<18} contradictions released {_f(contradictions)} (<= 0.10): "
        f"{_mark(_at_most(contradictions, 0.10))};  entailments released {_f(entailments)} "
        f"(>= 0.30): {_mark(_at_least(entailments, 0.30))}"
    )


def _own_targets(outcomes: Sequence[Outcome]) -> None:
    precision, recall = rejection(outcomes)
    print(
        f"  {'own corpus':<18} rejection precision {_f(precision)} (>= 0.95): "
        f"{_mark(_at_least(precision, 0.95))};  rejection recall {_f(recall)} (>= 0.95): "
        f"{_mark(_at_least(recall, 0.95))}"
    )


def addressing_summary(runs: Sequence[Run]) -> None:
    """Whether the question check, under a neutral question, decides the outcome."""
    answered = [o for run in runs for o in run.outcomes if not o.error]
    if not answered:
        return
    off = sum(o.addressing == "off_topic" for o in answered)
    alone = sum(o.held_by_addressing_alone for o in answered)
    print(
        f"\n== the question check under a neutral question: {off} of {len(answered)} answers "
        f"({off / len(answered):.0%}) judged not to address it (at least required); it alone "
        f"held back {alone} ({alone / len(answered):.0%}) whose every claim was verified"
    )


# --- main -----------------------------------------------------------------------------------


def _commit() -> str:
    def git(*args: str) -> str:
        result = subprocess.run(  # noqa: S603 - git, fixed arguments
            ["git", *args],  # noqa: S607 - git from PATH, as a developer runs it
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        return result.stdout.strip()

    changed = len(git("status", "--porcelain", "--untracked-files=no").splitlines())
    return (git("rev-parse", "--short", "HEAD") or "unknown") + (
        f" (+ uncommitted changes in {changed} files)" if changed else ""
    )


def main() -> None:
    started = time.perf_counter()
    print(
        "Answers through the API (plain answers citing every paragraph of their document, "
        f'question "{QUESTION_EN}" / 「{QUESTION_JA}」, default zone policy, SQLite, Celery '
        f"eager); engine {_commit()}; limit {LIMIT or 'none'} per label of each "
        "SummEdits domain and of JNLI"
    )
    judge = os.environ.get("MARIA_NLI_MODEL") or os.environ.get("MARIA_JUDGE_URL") or ""
    print(
        f"plug-in judge: {judge or 'none (the default install)'}; it may "
        f"{' and '.join(JUDGE_MOVES) or 'move nothing'} (BENCH_RELEASED_JUDGE_MOVES)"
    )
    averages = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"cores: {os.cpu_count()}; load average (1, 5, 15 min): {averages} (CPU figures follow it)"
    )
    print(
        "columns: share auto / flagged / required / blocked; relsd released (auto + flagged); "
        "off-q the question check said the answer does not address the question; addr! that "
        "alone held it back (every claim verified); verif every claim verified; refut a claim "
        "refuted; CPU per answer"
    )
    loaded = load()
    folder = _setup_django()
    try:
        runs = []
        for universe, (name, pairs) in enumerate(loaded, start=1):
            runs.append(run_corpus(name, pairs, universe))
            report(runs[-1])
        addressing_summary(runs)
        targets(runs)
    finally:
        if not os.environ.get("BENCH_KEEP"):
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\nwall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
