"""The decision pipeline under load: submit -> gated on PostgreSQL, Redis and a real Celery
worker. Targets, each printed beside what the run measured: issue 27, submit API p95 <= 100 ms
at >= 50 answers/s (the latency phase, BENCH_LATENCY_RATE); issue 28, >= 100 answers/s kept
(the throughput phase, BENCH_RATE) and what issue 28 added to the chain events <= 1 ms CPU
per decision (the profile: the calls that build, link and write a decision's trail events,
timed in place, and of them what issue 28 added on this path: no event, the question, answer
and graph evidence hashes `decision.proposed` seals so that verify_trail can replay the row).

Builds a throwaway database (maria_bench_pipeline, recreated each run) and migrates it; seeds
a zone with a lenient policy, an agent token, a few documents and answers that go the whole
auto path (validated, graded auto, released, completed): each one claim, verified word for
word in the paragraph it cites, sent with a question it answers (the verifier sends an
unverified claim, or an answer to another question, to a person: DESIGN.md section 6);
starts a real web server (gunicorn, 2 workers of 8 threads, as the README's Production
section runs the API; BENCH_WEB=uvicorn for the ASGI server) and a real Celery worker
(prefork, concurrency 2) on 127.0.0.1, on a Redis queue of their own; then sends answers
over HTTP at a paced rate from a bounded number of client threads, each with its own
keep-alive connection, for a bounded time: first at 50/s, then at 100/s. Measures, per
phase, the submit API latency, the rate at which submissions are accepted and at which
decisions reach a graded state (polled in the database), the latency from submission to
gate (the `decision.validated` trail event), and the share of answers each gate graded
(all auto, or the rates measure another path).
Then profiles one submission and one validation in this process: time and queries, and how
long each holds its trail lane's lock (a zone's decisions are spread over ledger.LANES lanes;
the changes of one lane take its lock in turn).

Prints the machine's core count and load; servers are stopped and the database dropped at
the end (BENCH_KEEP=1 keeps it).

Run: .venv/bin/python bench/bench_pipeline.py
  BENCH_PG=postgres://user@host:port  BENCH_REDIS=redis://host:port/db
  BENCH_DB=maria_bench_pipeline (the throwaway database's name; dropped and made again)
  BENCH_LATENCY_RATE=50, then BENCH_RATE=100 (submissions/s offered in each phase; 0 skips
  it)  BENCH_SECONDS=30 (each phase)  BENCH_CLIENTS=16 (in flight)
  BENCH_WORKER_NICE=0 (the Celery worker's nice value)
  BENCH_WEB_WORKERS=2  BENCH_CELERY_CONCURRENCY=2
  BENCH_WEB=gunicorn (WSGI, gthread, as in production) or uvicorn (ASGI, as `make run`)
  BENCH_WEB_THREADS=8 (threads per gunicorn worker)
"""

from __future__ import annotations

import http.client
import inspect
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SERVER = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379/1")
# Its own name, so that several people on one server each bench in a database of their own.
DATABASE = os.environ.get("BENCH_DB", "maria_bench_pipeline")
RATE = float(os.environ.get("BENCH_RATE", "100"))  # the throughput phase (0: none)
LATENCY_RATE = float(os.environ.get("BENCH_LATENCY_RATE", "50"))  # the latency phase (0: none)
SECONDS = float(os.environ.get("BENCH_SECONDS", "30"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "16"))
WEB_WORKERS = int(os.environ.get("BENCH_WEB_WORKERS", "2"))
WEB_SERVER = os.environ.get("BENCH_WEB", "gunicorn")
WEB_THREADS = int(os.environ.get("BENCH_WEB_THREADS", "8"))
CELERY_CONCURRENCY = int(os.environ.get("BENCH_CELERY_CONCURRENCY", "2"))
WORKER_NICE = int(os.environ.get("BENCH_WORKER_NICE", "0"))
TARGET_RATE = 100.0
TARGET_P95_MS = 100.0  # issue 27: at LATENCY_RATE
TARGET_CHAIN_MS = 1.0  # issue 28: the CPU its chain events add to a decision
DRAIN_SECONDS = 90.0
RAMP_SECONDS = 5.0  # left out of the sustained rates: imports, connections, first batches
TOLERANCE = 0.99  # a rate measured over a window of a run offered at exactly the target

ZONE = "G1.U1.P1.Z1"
AGENT = "G1.U1.P1.Z1.A1"
QUEUE = f"maria-bench-{os.getpid()}"

SEED = """
import json
import django
django.setup()
from coordinates.coordinate import parse
from coordinates.selectors import zone_get
from coordinates.services import policy_update, token_issue, zone_add
from evidence.models import Paragraph
from evidence.services import document_ingest

zone = zone_add(coordinate=parse("G1.U1.P1.Z1"))
policy_update(zone=zone, overrides={"tau": 0.3, "refusal_floor": 0.2, "floor": 0.05},
              reason="bench: answers go the whole auto path", actor=None)
_, key = token_issue(agent=parse("G1.U1.P1.Z1.A1"))
texts = {
    "travel": '''Travel and Expense Policy

1. Scope
This policy applies to all employees of the finance division.

2. Approval
Expenses above 500,000 yen require prior approval by the division head.
Expenses of 500,000 yen or less are approved by the team manager.

3. Reimbursement
Approved expenses are reimbursed within 30 days of submission.
''',
    "security": '''Information Security Policy

1. Passwords
Passwords must be at least 12 characters long and are changed every 90 days.

2. Incidents
Security incidents are reported to the security team within 24 hours.
''',
    "procurement": '''Procurement Rules

1. Quotes
Purchases above 1,000,000 yen need three written quotes.

2. Payment
Suppliers are paid within 60 days of the invoice date.
''',
}
for name, text in texts.items():
    document_ingest(zone=zone_get(parse("G1.U1.P1.Z1")), raw=text, kind="policy",
                    status="approved", title=name, key=name)
# Each answer with the question it answers: a verified claim that does not address its
# question, or whose cited paragraph is far from it, goes to a person (DESIGN.md section 6).
claims = [
    ("Who must approve expenses above 500,000 yen in advance?",
     "Expenses above 500,000 yen require prior approval by the division head.",
     "500,000 yen require"),
    ("Within how many days are approved expenses reimbursed?",
     "Approved expenses are reimbursed within 30 days of submission.", "within 30 days"),
    ("How many characters long must passwords be at least?",
     "Passwords must be at least 12 characters long.", "12 characters"),
    ("Within how many hours are security incidents reported to the security team?",
     "Security incidents are reported to the security team within 24 hours.", "24 hours"),
    ("How many written quotes do purchases above 1,000,000 yen need?",
     "Purchases above 1,000,000 yen need three written quotes.", "three written quotes"),
    ("Within how many days of the invoice date are suppliers paid?",
     "Suppliers are paid within 60 days of the invoice date.", "60 days of the invoice"),
]
answers = []
for question, text, anchor in claims:
    paragraph = Paragraph.objects.get(text__contains=anchor, current=True)
    answers.append({"question": question, "text": text, "citations": [
        {"document": paragraph.version.document_id, "paragraph": paragraph.number}]})
print(json.dumps({"token": key, "claims": answers}))
"""


# --- setup -----------------------------------------------------------------------------------


def _recreate_database() -> None:
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DATABASE}")


def _drop_database() -> None:
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def _base_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DATABASE_", "REDIS_", "CELERY_", "DJANGO_"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="maria.settings",
        DATABASE_URL=f"{SERVER}/{DATABASE}",
        LOG_LEVEL="WARNING",
    )
    return env


def _service_env() -> dict[str, str]:
    """What the server and the worker run with: production mode, a queue of their own."""
    env = _base_env()
    env.update(
        REDIS_URL=REDIS,
        CELERY_BROKER_URL=REDIS,
        CELERY_TASK_ALWAYS_EAGER="0",
        CELERY_TASK_DEFAULT_QUEUE=QUEUE,
        CHANNELS_PREFIX=QUEUE,
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY="bench-only-" + "x" * 40,
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
        DJANGO_SECURE_SSL_REDIRECT="0",
    )
    return env


def _drop_queue() -> None:
    """Whatever this run left on the broker: only keys that carry its own queue name."""
    import redis

    client = redis.Redis.from_url(REDIS)
    for key in list(client.scan_iter(match=f"*{QUEUE}*")):
        client.delete(key)
    client.close()


def _run(command: list[str], env: dict[str, str]) -> str:
    result = subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} failed:\n{result.stderr[-3000:]}")
    return result.stdout


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Services:
    port: int
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, log_dir: Path) -> None:
        env = _service_env()
        if WEB_SERVER == "uvicorn":
            web = [
                sys.executable, "-m", "uvicorn", "maria.asgi:application",
                "--host", "127.0.0.1", "--port", str(self.port), "--workers", str(WEB_WORKERS),
                "--lifespan", "off", "--log-level", "warning", "--no-access-log",
            ]  # fmt: skip
        else:  # as the README's Production section serves the API
            web = [
                sys.executable, "-m", "gunicorn", "maria.wsgi:application",
                "--bind", f"127.0.0.1:{self.port}", "--workers", str(WEB_WORKERS),
                "--worker-class", "gthread", "--threads", str(WEB_THREADS),
                "--log-level", "warning",
            ]  # fmt: skip
        worker = [
            sys.executable, "-m", "celery", "-A", "maria", "worker",
            "--pool", "prefork", "--concurrency", str(CELERY_CONCURRENCY),
            "--queues", f"{QUEUE},{QUEUE}-answers",
            "--hostname", f"{QUEUE}@%h", "--without-heartbeat", "--without-gossip",
            "--without-mingle", "--loglevel", "WARNING",
        ]  # fmt: skip
        if WORKER_NICE:
            worker = ["nice", "-n", str(WORKER_NICE), *worker]
        # Both run with the project's default connection pool (maria/settings.py).
        for name, command, environment in (("web", web, env), ("worker", worker, env)):
            with (log_dir / f"{name}.log").open("wb") as log:
                self.processes.append(
                    subprocess.Popen(  # noqa: S603 - our interpreter, fixed arguments
                        command,
                        cwd=ROOT,
                        env=environment,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,  # its own process group: stopped as one below
                    )
                )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                connection.request("GET", "/healthz")
                if connection.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.3)
        raise SystemExit("the server did not become healthy in time")

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)  # the group this script started
        for process in self.processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)


# --- load ------------------------------------------------------------------------------------


@dataclass
class Sent:
    scheduled: float
    started: float
    seconds: float
    status: int
    decision_id: int | None


def _body(claims: list[dict[str, Any]], n: int) -> bytes:
    answer = claims[n % len(claims)]
    return json.dumps(
        {
            "question": f"Question {n}: {answer['question']}",
            "answer": answer["text"],
            "zone": ZONE,
            "agent": AGENT,
            "claims": [{"text": answer["text"], "citations": answer["citations"]}],
        }
    ).encode()


def _drive(
    port: int, token: str, claims: list[dict[str, Any]], total: int, rate: float, prefix: str
) -> tuple[list[Sent], float]:
    """Send `total` submissions paced at `rate`/s from CLIENTS threads (request i is due at
    t0 + i/rate; a thread that falls behind sends at once, so in-flight stays bounded, and
    nothing is sent later than 5 s after the last one was due)."""
    results: list[Sent] = []
    lock = threading.Lock()
    t0 = time.perf_counter() + 0.5
    stop_at = t0 + total / rate + 5.0

    def client(k: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for i in range(k, total, CLIENTS):
            due = t0 + i / rate
            now = time.perf_counter()
            if now > stop_at:
                break  # the server fell behind: what is left is not sent
            if due > now:
                time.sleep(due - now)
            headers = {
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Idempotency-Key": f"{prefix}-{i}",
            }
            started = time.perf_counter()
            payload, status = b"", 599  # 599: no answer (connection refused, reset, timeout)
            for _ in range(2):  # a keep-alive connection the server closed: once more, anew
                try:
                    connection.request("POST", "/api/v1/decisions/", _body(claims, i), headers)
                    response = connection.getresponse()
                    payload, status = response.read(), response.status
                    break
                except (OSError, http.client.HTTPException):
                    connection.close()
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            seconds = time.perf_counter() - started
            decision_id = json.loads(payload)["id"] if status in (200, 201) else None
            with lock:
                results.append(Sent(due, started, seconds, status, decision_id))
        connection.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, t0


def _graded_count(db: psycopg.Connection[Any], ids: list[int]) -> int:
    row = db.execute(
        "SELECT count(*) FROM decisions_decision WHERE id = ANY(%s) AND gate <> ''", [ids]
    ).fetchone()
    return int(row[0]) if row else 0


def _paths(db: psycopg.Connection[Any], ids: list[int]) -> tuple[Counter[str], Counter[str]]:
    """How many of these decisions each gate graded, and in which state each now is: the
    rates measure the auto path only while (nearly) every answer takes it."""
    gates: Counter[str] = Counter()
    states: Counter[str] = Counter()
    rows = db.execute(
        "SELECT gate, state, count(*) FROM decisions_decision WHERE id = ANY(%s) "
        "GROUP BY gate, state",
        [ids],
    ).fetchall()
    for gate, state, count in rows:
        gates[gate or "not graded"] += count
        states[state] += count
    return gates, states


def _shares(counts: Counter[str], order: tuple[str, ...] = ()) -> str:
    whole = sum(counts.values()) or 1
    names = [*[n for n in order if n in counts], *sorted(set(counts) - set(order))]
    return ", ".join(f"{name} {counts[name] * 100 / whole:.1f}% ({counts[name]})" for name in names)


def _gated_latencies(db: psycopg.Connection[Any], ids: list[int]) -> tuple[list[float], float]:
    """Per decision, seconds from its creation to its `decision.validated` event; and the
    span from the first creation to the last validation."""
    rows = db.execute(
        """
        SELECT d.created_at, e.created_at
        FROM decisions_decision d
        JOIN decisions_decisionevent e ON e.decision_id = d.id AND e.kind = 'decision.validated'
        WHERE d.id = ANY(%s)
        """,
        [ids],
    ).fetchall()
    if not rows:
        return [], 0.0
    latencies = [(validated - created).total_seconds() for created, validated in rows]
    span = (max(v for _, v in rows) - min(c for c, _ in rows)).total_seconds()
    return latencies, span


def _steady_rate(counts: list[tuple[float, int]], window: tuple[float, float]) -> float:
    """Per second over `window`, from a running count sampled at times: the count reached
    at the window's end less the count reached at its start, linearly interpolated."""
    start, end = window

    def at(moment: float) -> float:
        before = [(t, n) for t, n in counts if t <= moment]
        after = [(t, n) for t, n in counts if t > moment]
        if not before:
            return 0.0
        t1, n1 = before[-1]
        if not after:
            return float(n1)
        t2, n2 = after[0]
        return n1 + (n2 - n1) * (moment - t1) / (t2 - t1)

    return (at(end) - at(start)) / (end - start) if end > start else 0.0


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --- profile (in this process, against the same database) ------------------------------------


def _profile(token: str, claims: list[dict[str, Any]]) -> tuple[float, float]:
    """Submissions and validations one at a time: wall time, queries, how long each holds the
    trail lane's lock, and where that time goes; then what the chain events cost a decision
    (issue 28), measured on the calls that make them: returned, in ms of CPU."""
    os.environ.update(_base_env())
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    os.environ["DJANGO_DEBUG"] = "0"
    os.environ["DJANGO_SECRET_KEY"] = "bench-only-" + "x" * 40
    os.environ["DJANGO_ALLOWED_HOSTS"] = "127.0.0.1,testserver"
    os.environ["DJANGO_SECURE_SSL_REDIRECT"] = "0"
    import django

    django.setup()
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    from decisions import events as decision_events
    from decisions import services
    from decisions.models import Decision
    from graph import feed as graph_feed
    from graph import tasks as graph_tasks
    from trail import ledger

    spent: defaultdict[str, float] = defaultdict(float)

    def add(label: str, seconds: float) -> None:
        spent[label] += seconds

    def timed(module: Any, name: str, label: str) -> None:
        """Add the time spent in `module.name` to `spent[label]`."""
        original = getattr(module, name, None)
        if original is None:  # not in this version of the code
            return

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                add(label, time.perf_counter() - start)

        setattr(module, name, wrapper)

    # The chain events' own cost: CPU (this thread's) and wall time inside the calls that
    # build and append them (decisions.events, ledger.append) and that link and write them
    # at the end of a change (ledger._write_held: seal, lock, insert and head update). Nested
    # calls count once. Wall adds PostgreSQL's side of those statements; CPU is this
    # process's alone.
    depth = [0]

    def chain_timed(module: Any, name: str, label: str) -> None:
        original = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            depth[0] += 1
            cpu, wall = time.thread_time(), time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    add(f"{label} cpu", time.thread_time() - cpu)
                    add(f"{label} wall", time.perf_counter() - wall)

        setattr(module, name, wrapper)

    for name in dir(decision_events):
        function = getattr(decision_events, name)
        if (
            not name.startswith("_")
            and inspect.isfunction(function)
            and function.__module__ == decision_events.__name__
            and name not in ("text_hash", "keys_hash")
        ):
            chain_timed(decision_events, name, "chain")

    # Issue 28's part of them: the hashes `decision.proposed` seals (question, answer and,
    # where the code has it, graph evidence).
    def timed_seal(module: Any, name: str) -> None:
        sealed = getattr(module, name, None)
        if sealed is None:  # not in this version of the code
            return

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            cpu = time.thread_time()
            try:
                return sealed(*args, **kwargs)
            finally:
                add("sealed cpu", time.thread_time() - cpu)

        setattr(module, name, wrapper)

    timed_seal(decision_events, "text_hash")
    timed_seal(decision_events, "keys_hash")
    seal = ledger._seal

    def counted_seal(*args: Any, **kwargs: Any) -> str:
        add("events", 1.0)
        return seal(*args, **kwargs)

    ledger._seal = counted_seal  # type: ignore[assignment]

    scheduled: list[tuple[int, str]] = []
    services._schedule_validation = lambda d, b: scheduled.append((d, b))  # type: ignore[assignment]
    lock = ledger.lock

    def timed_lock(chain: str) -> Any:
        # From asking for the lane's trail lock (the last step of every change) to the
        # end of the transaction that holds it: registered first, this runs first on commit.
        start = time.perf_counter()
        transaction.on_commit(lambda: add("lock", time.perf_counter() - start))
        return lock(chain)

    ledger.lock = timed_lock  # type: ignore[assignment]
    timed(ledger, "append", "trail")
    chain_timed(ledger, "append", "chain")
    chain_timed(ledger, "_write_held", "chain")
    # The graph follows the trail in its own run (timed apart below), not in the change.
    graph_tasks.trail_follow_soon = lambda: None  # type: ignore[assignment]
    timed(services, "evaluate_bundle", "evaluate")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    rows: dict[str, list[dict[str, float]]] = {"submit": [], "validate": []}
    profiled: Counter[str] = Counter()
    for n in range(30):
        for phase in ("submit", "validate"):
            spent.clear()
            with CaptureQueriesContext(connection) as queries:
                start, cpu = time.perf_counter(), time.thread_time()
                if phase == "submit":
                    response = client.post(
                        "/api/v1/decisions/", _body(claims, n), content_type="application/json"
                    )
                    assert response.status_code == 201, response.content
                else:
                    decision_id, bundle_hash = scheduled.pop()
                    services.decision_validate(decision_id=decision_id, bundle_hash=bundle_hash)
                    gate = Decision.objects.get(pk=decision_id).gate
                    assert gate
                    profiled[gate] += 1
                spent["wall"] = time.perf_counter() - start
                spent["cpu"] = time.thread_time() - cpu
            spent["queries"] = len(queries)
            start = time.perf_counter()
            graph_feed.trail_follow()  # this phase's events alone: at load, runs take many
            spent["graph"] = time.perf_counter() - start
            rows[phase].append(dict(spent))
    connection.close()

    def median(phase: str, key: str) -> float:
        return statistics.median(row.get(key, 0.0) for row in rows[phase])

    print(
        "profile (this process, one at a time, median of 30; ms; gates: "
        f"{_shares(profiled, ('auto', 'flagged', 'required', 'blocked'))}):"
    )
    print("  phase      wall  queries  lock held  of which: trail appends  graph  evaluate")
    for phase in ("submit", "validate"):
        print(
            f"  {phase:<9}{median(phase, 'wall') * 1000:6.1f}  {median(phase, 'queries'):7.0f}"
            f"  {median(phase, 'lock') * 1000:9.1f}  {median(phase, 'trail') * 1000:23.1f}"
            f"  {median(phase, 'graph') * 1000:5.1f}  {median(phase, 'evaluate') * 1000:8.1f}"
        )
    per_decision = median("submit", "lock") + median("validate", "lock")
    print(
        f"  -> one lane's changes take its lock one at a time: at most ~{1 / per_decision:.0f}"
        f" decisions/s per lane, ~{ledger.LANES / per_decision:.0f}/s per zone"
        f" ({ledger.LANES} lanes)"
    )
    print(
        "  (evaluate runs before the lock; the graph follows the trail afterwards, in a run"
        " that takes every event committed since the last: under load one run covers many)"
    )

    def decision_ms(key: str) -> float:
        """Ms per decision: its submission's median and its validation's (the first ones
        import and connect, so not the mean)."""
        return (median("submit", key) + median("validate", key)) * 1000

    chain_cpu = decision_ms("chain cpu")
    print(
        f"chain events per decision (medians of 30; {decision_ms('events') / 1000:.0f} events):"
        f" {chain_cpu:.2f} ms CPU in this process, {decision_ms('chain wall'):.2f} ms wall"
        f" with PostgreSQL's side of their statements, of {decision_ms('cpu'):.1f} ms CPU and"
        f" {decision_ms('wall'):.1f} ms wall for the whole submit and validate; of which the"
        f" question, answer and graph evidence hashes decision.proposed seals (issue 28):"
        f" {decision_ms('sealed cpu'):.3f} ms"
    )
    return chain_cpu, decision_ms("sealed cpu")


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    cores = os.cpu_count() or 1
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"cores: {cores}; load average (1, 5, 15 min): {load}")
    print(
        f"phases: {LATENCY_RATE:.0f}/s (issue 27: p95), then {RATE:.0f}/s (issue 28: rate), "
        f"{SECONDS:.0f} s each, at most {CLIENTS} in flight; {WEB_SERVER} x{WEB_WORKERS}, "
        f"celery prefork x{CELERY_CONCURRENCY}"
    )
    _recreate_database()
    log_dir = ROOT / "var" / "bench_pipeline"
    log_dir.mkdir(parents=True, exist_ok=True)
    services = Services(port=_free_port())
    latency = throughput = None
    try:
        _run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], _base_env())
        seeded = json.loads(_run([sys.executable, "-c", SEED], _base_env()).splitlines()[-1])
        token, claims = seeded["token"], seeded["claims"]
        services.start(log_dir)
        services.wait_ready()
        with psycopg.connect(f"{SERVER}/{DATABASE}", autocommit=True) as db:
            last = _warm_up(services, token, claims, db)
            if LATENCY_RATE:
                print(f"-- latency phase (issue 27: p95 <= {TARGET_P95_MS:.0f} ms)")
                latency, last = _load(services, token, claims, db, LATENCY_RATE, last)
            if RATE:
                print(f"-- throughput phase (issue 28: >= {TARGET_RATE:.0f}/s kept)")
                throughput, last = _load(services, token, claims, db, RATE, last)
        services.stop()
        trail_ms = _profile(token, claims)
        _verify_cost()
    finally:
        services.stop()
        _drop_queue()
        if not os.environ.get("BENCH_KEEP"):
            _drop_database()
    _targets(latency, throughput, trail_ms)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load average at the end: {load}; server and worker logs: {log_dir}")


VERIFY = """
import time, django
django.setup()
from audit import integrity
from trail import verify
t0 = time.perf_counter(); report = verify.verify_database(); trail_s = time.perf_counter() - t0
t0 = time.perf_counter(); problems, rows = integrity.verify_evidence_database()
evidence_s = time.perf_counter() - t0
try:
    from audit.rows import verify_rows_database
except ImportError:  # a checkout from before the rows were replayed
    replayed, rows_s = 0, 0.0
else:
    t0 = time.perf_counter(); more, replayed = verify_rows_database()
    rows_s = time.perf_counter() - t0
    problems += more
print(report.events, trail_s, rows, evidence_s, len(problems), report.intact, replayed, rows_s)
"""


def _verify_cost() -> None:
    """What `verify_trail` costs over what the run left: the chains, then the evidence the
    events name, re-hashed (audit.integrity), then the governance rows replayed from their
    chains (audit.rows)."""
    last = _run([sys.executable, "-c", VERIFY], _base_env()).splitlines()[-1].split()
    events, trail_s, rows, evidence_s = int(last[0]), float(last[1]), int(last[2]), float(last[3])
    print(
        f"verify_trail over this run: {events:,} events in {trail_s:.2f} s; {rows:,} evidence "
        f"rows re-hashed in {evidence_s:.2f} s ({rows / max(evidence_s, 1e-9):,.0f} rows/s); "
        f"problems: {last[4]}, trail intact: {last[5]}"
    )
    replayed, rows_s = int(last[6]), float(last[7])
    print(
        f"  governance rows replayed from their chains: {replayed:,} in {rows_s:.2f} s "
        f"({replayed / max(rows_s, 1e-9):,.0f} rows/s)"
    )


def _cpu_seconds(groups: dict[str, int]) -> dict[str, float] | None:
    """CPU time (user + system) so far of every process in each named process group, and
    of the PostgreSQL server's processes ("postgres"), read from /proc; None off Linux."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    spent = dict.fromkeys([*groups, "postgres"], 0.0)
    names = {pgid: name for name, pgid in groups.items()}
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                line = stat.read()
        except OSError:
            continue  # gone in the meantime
        command = line[line.index("(") + 1 : line.rindex(")")]
        fields = line[line.rindex(")") + 2 :].split()
        name = "postgres" if command == "postgres" else names.get(int(fields[2]))
        if name is not None:
            spent[name] += (int(fields[11]) + int(fields[12])) / ticks
    return spent


@dataclass
class Phase:
    """One paced load at one rate, as measured: what the targets are checked against."""

    rate: float
    accepted: float  # submissions answered 2xx per second, sustained
    graded: float  # decisions reaching a gate per second, sustained
    p95_ms: float  # submit API latency
    cpu_ms: float | None  # CPU per decision, web + worker + PostgreSQL


def _warm_up(services: Services, token: str, claims: list[dict[str, Any]], db: Any) -> int:
    """Imports, connections, the embedder, in both web and worker processes; the last
    decision id it made."""
    warm, _ = _drive(services.port, token, claims, 40, 20.0, "warm")
    warm_ids = [s.decision_id for s in warm if s.decision_id is not None]
    deadline = time.monotonic() + 60
    while _graded_count(db, warm_ids) < len(warm_ids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return max(warm_ids or [0])


def _load(
    services: Services,
    token: str,
    claims: list[dict[str, Any]],
    db: psycopg.Connection[Any],
    rate: float,
    after_id: int,
) -> tuple[Phase, int]:
    """`rate` submissions/s for SECONDS, then drained: what it measured, and the last
    decision id it made (the next phase counts the decisions after it)."""
    port = services.port
    total = int(rate * SECONDS)
    print(f"offered: {rate:.0f} submissions/s for {SECONDS:.0f} s ({total} requests)")
    polled: list[tuple[float, int]] = []
    ids: list[int] = []
    done = threading.Event()

    def poll() -> None:
        # How many of this phase's decisions are graded, every 0.5 s, by count since t0.
        with psycopg.connect(f"{SERVER}/{DATABASE}", autocommit=True) as conn:
            while not done.is_set():
                row = conn.execute(
                    "SELECT count(*) FROM decisions_decision WHERE gate <> '' AND id > %s",
                    [after_id],
                ).fetchone()
                polled.append((time.perf_counter(), int(row[0]) if row else 0))
                done.wait(0.5)

    poller = threading.Thread(target=poll)
    groups = {"web": services.processes[0].pid, "worker": services.processes[1].pid}
    cpu_before = _cpu_seconds(groups)
    poller.start()
    sent, t0 = _drive(port, token, claims, total, rate, f"load{rate:g}")
    load_end = max(s.started + s.seconds for s in sent)
    ids = [s.decision_id for s in sent if s.decision_id is not None]
    deadline = time.monotonic() + DRAIN_SECONDS
    while _graded_count(db, ids) < len(ids) and time.monotonic() < deadline:
        time.sleep(0.2)
    drained = time.perf_counter()
    cpu_after = _cpu_seconds(groups)
    done.set()
    poller.join()

    statuses = Counter(s.status for s in sent)
    ok = [s for s in sent if s.status in (200, 201)]
    elapsed = load_end - t0
    # Sustained: the rate in the steady part of the run, from RAMP_SECONDS after the first
    # request was due to when the last was due, so the ramp and the final drain do not
    # count; a server that falls behind finishes fewer in that window.
    window = (t0 + RAMP_SECONDS, t0 + total / rate)
    answered = sorted(s.started + s.seconds for s in ok)
    accepted_rate = _steady_rate([(t, n + 1) for n, t in enumerate(answered)], window)
    latency_ms = [s.seconds * 1000 for s in ok]
    lag = [max(0.0, s.started - s.scheduled) for s in sent]
    graded = _graded_count(db, ids)
    at_load_end = max((n for t, n in polled if t <= load_end), default=0)
    latencies, span = _gated_latencies(db, ids)
    overall_rate = len(latencies) / span if span else 0.0
    gated_rate = _steady_rate(polled, window)
    p95 = _pct(latency_ms, 0.95)

    print(f"responses: {dict(sorted(statuses.items()))}; not sent in time: {total - len(sent)}")
    print(
        f"submissions accepted: {accepted_rate:6.1f}/s sustained; {len(ok)} in {elapsed:.1f} s;"
        f" client lag behind schedule p95 {_pct(lag, 0.95) * 1000:.0f} ms"
    )
    print(
        f"submit API latency: p50 {_pct(latency_ms, 0.5):.0f} ms, p95 {p95:.0f} ms, "
        f"p99 {_pct(latency_ms, 0.99):.0f} ms, max {max(latency_ms, default=0):.0f} ms"
    )
    print(
        f"graded: {gated_rate:6.1f}/s sustained; "
        f"{overall_rate:.1f}/s from first submission to last gate; "
        f"{at_load_end} of {len(ids)} graded when the load ended, {graded} after "
        f"{drained - load_end:.1f} s more"
    )
    gates, states = _paths(db, ids)
    print(f"gates: {_shares(gates, ('auto', 'flagged', 'required', 'blocked'))}")
    print(f"  states now: {_shares(states, ('completed', 'executed', 'approved'))}")
    if gates["auto"] < len(ids):
        print(
            "  MISS: not every answer went the auto path (validated, graded auto, released, "
            "completed): the rates above measure another path; read a report's claims' "
            "verdicts, its addressing and its at_least reasons"
        )
    lat_ms = [x * 1000 for x in latencies]
    print(
        f"submit -> gated latency: p50 {_pct(lat_ms, 0.5):.0f} ms, "
        f"p95 {_pct(lat_ms, 0.95):.0f} ms, max {max(lat_ms, default=0):.0f} ms"
    )
    whole = None
    if cpu_before is not None and cpu_after is not None and graded:
        # What one decision costs each part, from submit to gate: the ceiling this machine's
        # cores put on the rate, however the work is spread over processes. PostgreSQL's is
        # every backend's on the server, other people's included.
        per = {k: (cpu_after[k] - cpu_before[k]) * 1000 / graded for k in cpu_after}
        whole = sum(per.values())
        cores = os.cpu_count() or 1
        print(
            f"CPU per decision: web {per['web']:.1f} ms, worker {per['worker']:.1f} ms, "
            f"PostgreSQL {per['postgres']:.1f} ms; {whole:.1f} ms in all, so {cores} cores "
            f"carry at most ~{cores * 1000 / whole:.0f} decisions/s (client and Redis aside)"
        )
    phase = Phase(rate, accepted_rate, gated_rate, p95, whole)
    return phase, max(ids or [after_id])


def _verdict(ok: bool) -> str:
    return "OK" if ok else "MISS"


def _targets(
    latency: Phase | None, throughput: Phase | None, trail_ms: tuple[float, float] | None
) -> None:
    """The issues' targets, each beside what this run measured."""
    print("targets (this run):")
    if latency is not None:
        rate_ok = min(latency.accepted, latency.graded) >= latency.rate * TOLERANCE
        print(
            f"  issue 27, at {latency.rate:.0f}/s: submit p95 {latency.p95_ms:.0f} ms "
            f"(<= {TARGET_P95_MS:.0f} ms: {_verdict(latency.p95_ms <= TARGET_P95_MS)}); "
            f"accepted {latency.accepted:.1f}/s, graded {latency.graded:.1f}/s "
            f"(>= {latency.rate:.0f}/s: {_verdict(rate_ok)})"
        )
    if throughput is not None:
        print(
            f"  issue 28, at {throughput.rate:.0f}/s: accepted {throughput.accepted:.1f}/s, "
            f"graded {throughput.graded:.1f}/s (>= {TARGET_RATE:.0f}/s: "
            f"{_verdict(min(throughput.accepted, throughput.graded) >= TARGET_RATE * TOLERANCE)})"
            f"; submit p95 there {throughput.p95_ms:.0f} ms (no target at this rate)"
        )
    if trail_ms is not None:
        chain, added = trail_ms
        print(
            f"  issue 28, chain events: {added:.3f} ms CPU per decision added by it (the sealed"
            f" question, answer and graph evidence hashes; <= {TARGET_CHAIN_MS:.0f} ms:"
            f" {_verdict(added <= TARGET_CHAIN_MS)}), of {chain:.2f} ms for all of a"
            " decision's chain events"
        )


if __name__ == "__main__":
    main()
