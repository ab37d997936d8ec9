"""Reviewer-queue figures with channels-redis (not a test): push latency to 100 sockets and the
queue page's render time. Targets: from the commit of an approval_required transition to the
message in 100 connected reviewer sockets, p95 <= 200 ms; `/queue/` with 1,000 waiting
decisions rendered in <= 200 ms of server time.

Builds a throwaway database (maria_bench_web, dropped and recreated each run, migrated by
`manage.py migrate` in a subprocess) and seeds, through the real services: a zone tree under
two galaxies, documents, one agent token per zone, a policy that sends every answer to a
person (tau 0.99), 100 reviewers with database sessions (made as `Client.force_login`
makes them) and 1,000 waiting decisions in the reader's zones (plus 100 outside them; one in
ten claimed by someone else). Four per zone go through submit, validation and routing; the
rest are row copies of those (bulk_create), since the page reads only the decision rows and
their report's policy, and 1,100 service round trips take minutes on this machine.

Render: `/queue/` through Django's test Client in this process (the whole middleware stack,
session and auth included; DEBUG off, as in production), 30 timed requests after 3
warm-ups, wall and CPU time, beside the selector alone and the rows' template alone; a
profile when the target is missed.

Latency: a real ASGI server (uvicorn, one process, on an inherited 127.0.0.1 socket),
channels-redis on a prefix of its own; 100 websocket clients (the `websockets` package) with
session cookies and an allowed Origin, scoped on every level above the zone (25 each on G1,
G1.U1, G1.U1.P1 and the zone). A driver subprocess plays the Celery worker: it submits
answers through `decisions.services` with Celery eager, so validation and routing to
approval_required run inline and the outbox push is sent from that process after commit,
exactly as a worker sends it. t0 is taken when the first after-commit callback (the outbox
dispatch) starts, i.e. as soon as COMMIT returned; t1 when a client's `recv()` returns. Both
are CLOCK_MONOTONIC (time.monotonic_ns), one clock for every process on the machine. The
figure therefore includes the outbox claim and its UPDATEs, the Redis group send, the
consumer's per-event scope check, the websocket frame, and the client's own event loop
(the sockets' periodic role re-check, every 30 s, seldom falls inside the few seconds).

Prints the core count and load; stops the server and drops the database at the end
(BENCH_KEEP=1 keeps it). Without a reachable PostgreSQL or Redis it says so and exits 0.

Run: .venv/bin/python bench/bench_web.py [--transitions 60] [--interval 0.1]
  BENCH_PG=postgres://user@host:port  BENCH_REDIS=redis://host:port/db
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SERVER = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379/1")
DATABASE = "maria_bench_web"
PREFIX = f"maria-bench-web-{os.getpid()}"
SECRET = "bench-web-only-" + "x" * 40  # the sessions made here must verify in the server

LATENCY_TARGET_MS = 200.0
RENDER_TARGET_MS = 200.0
REVIEWERS = 100
WAITING = 1000
OUTSIDE = 100  # waiting decisions outside the reader's scope, filtered out by the query
RENDER_RUNS = 30
WORKER_STEPS = (
    "outbox_push, whole",
    "  claim (UPDATE, SELECT)",
    "  group_send to the zone's 4 prefix groups",
    "  done (UPDATE)",
)

LIVE_ZONE = "G1.U1.P1.Z1"
READER_ZONES = ["G1.U1.P1.Z1", "G1.U1.P1.Z2", "G1.U1.P2.Z1", "G1.U2.P1.Z1"]
OTHER_ZONES = ["G2.U1.P1.Z1"]
SCOPES = ["G1", "G1.U1", "G1.U1.P1", LIVE_ZONE]  # the reviewers' scopes, a quarter each

POLICY = """Travel and Expense Policy

1. Scope
This policy applies to all employees of the finance division.

2. Approval
Expenses above 500,000 yen require prior approval by the division head.
Expenses of 500,000 yen or less are approved by the team manager.

3. Reimbursement
Approved expenses are reimbursed within 30 days of submission.
"""
# Cites a paragraph that says more than the claim: sufficiency short of tau, so "required".
CLAIM = ("Expenses above 500,000 yen require prior approval by the division head.", "500,000 yen")
SERVICE_MADE = 4  # waiting decisions per zone made through the services; the rest are copies


def verdict(ok: bool) -> str:
    return "OK" if ok else "MISS"


def p50_p95(ms: Sequence[float]) -> tuple[float, float]:
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def line(label: str, ms: Sequence[float]) -> tuple[float, float]:
    p50, p95 = p50_p95(ms)
    print(f"  {label:<50} p50 {p50:8.1f} ms  p95 {p95:8.1f} ms")
    return p50, p95


# --- processes and environments ----------------------------------------------------------------


def _django_env(*, redis: bool) -> dict[str, str]:
    """Production mode; Celery eager (no broker), so validation runs where it is sent."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DATABASE_", "REDIS_", "CELERY_", "DJANGO_", "CHANNELS_"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="maria.settings",
        DATABASE_URL=f"{SERVER}/{DATABASE}",
        CELERY_BROKER_URL="memory://",
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=SECRET,
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost,testserver",
        DJANGO_SECURE_SSL_REDIRECT="0",
        LOG_LEVEL="WARNING",
        MARIA_EMBEDDER="hashing",
    )
    if redis:
        env.update(REDIS_URL=REDIS, CHANNELS_PREFIX=PREFIX)
    return env


def _recreate_database() -> str | None:
    """Drop and create the bench database; what is missing when Redis or PostgreSQL is."""
    import psycopg
    import redis

    try:
        redis.Redis.from_url(REDIS, socket_connect_timeout=3).ping()
    except redis.RedisError as error:
        return f"Redis not reachable at {REDIS}: {error}"
    try:
        with psycopg.connect(f"{SERVER}/postgres", autocommit=True, connect_timeout=3) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {DATABASE}")
    except psycopg.OperationalError as error:
        return f"PostgreSQL not reachable at {SERVER}: {error}".strip()
    return None


def _drop_database() -> None:
    import psycopg
    from django.conf import settings

    if settings.configured:
        from django.db import connections

        connections.close_all()
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def _migrate() -> float:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env=_django_env(redis=False),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"migrate failed:\n{result.stderr[-3000:]}")
    return time.perf_counter() - started


class Server:
    """uvicorn on a socket this process bound (an ephemeral port, no race for it)."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(512)
        self.port = int(self.sock.getsockname()[1])
        fd = self.sock.fileno()
        with log.open("wb") as out:
            self.process = subprocess.Popen(  # noqa: S603 - our interpreter, fixed arguments
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "maria.asgi:application",
                    "--fd",
                    str(fd),
                    "--lifespan",
                    "off",
                    "--log-level",
                    "warning",
                    "--no-access-log",
                ],
                cwd=ROOT,
                env=_django_env(redis=True),
                stdout=out,
                stderr=subprocess.STDOUT,
                pass_fds=(fd,),
                start_new_session=True,  # its own process group, stopped as one below
            )

    def wait_ready(self, timeout: float = 30) -> None:
        import http.client

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit("the server exited at start (see its log)")
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                connection.request("GET", "/healthz")
                if connection.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit("the server did not become healthy in time")

    def stop(self) -> None:
        """Stop the server's process group; keep its log only when it said something."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # the group this script started
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)
        self.sock.close()
        if self.log.stat().st_size:
            print(f"server log: {self.log}")
        else:
            self.log.unlink()


# --- seeding (in this process, through the services) -------------------------------------------


def _setup_django() -> None:
    os.environ.update(_django_env(redis=False))  # pushes made here go to an in-memory layer
    for name in ("REDIS_URL", "CHANNELS_PREFIX"):
        os.environ.pop(name, None)
    import django

    django.setup()
    logging.getLogger("kombu").setLevel(logging.ERROR)  # "no hostname" of the memory broker


def _question(zone: str, n: int) -> str:
    return f"Question {n}: what does the travel policy of {zone} say about this case?"


def _payload(zone: str, n: int, claim: dict[str, Any]) -> dict[str, Any]:
    return {
        "question": _question(zone, n),
        "answer": claim["text"],
        "zone": zone,
        "agent": f"{zone}.A1",
        "claims": [claim],
    }


def seed() -> dict[str, Any]:
    """Zones, documents, tokens, policy, 100 reviewers with sessions, the reader, and 1,100
    waiting decisions (every tenth claimed by someone else): SERVICE_MADE per zone through
    the services (submit, validation, routing, trail), the rest copies of those rows
    (bulk_create; the queue page reads only the decision rows and their report's policy)."""
    from datetime import timedelta
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    from coordinates.coordinate import parse
    from coordinates.models import Role
    from coordinates.services import policy_update, role_grant, token_issue, user_ensure, zone_add
    from decisions.models import Decision, State
    from decisions.services import decision_submit
    from evidence.models import Paragraph
    from evidence.services import document_ingest

    zones = {z: zone_add(coordinate=parse(z)) for z in READER_ZONES + OTHER_ZONES}
    for galaxy in ("G1", "G2"):
        policy_update(
            zone=zone_add(coordinate=parse(galaxy)),
            overrides={"tau": 0.99, "refusal_floor": 0.05},
            reason="bench: every answer needs a person",
            actor=None,
        )
    claims: dict[str, dict[str, Any]] = {}
    tokens = {}
    for coordinate, zone in zones.items():
        document_ingest(zone=zone, raw=POLICY, kind="policy", status="approved", title="Travel")
        text, anchor = CLAIM
        paragraph = Paragraph.objects.get(zone=coordinate, text__contains=anchor, current=True)
        citation = {"document": paragraph.version.document_id, "paragraph": paragraph.number}
        claims[coordinate] = {"text": text, "citations": [citation]}
        tokens[coordinate], _ = token_issue(agent=parse(f"{coordinate}.A1"))

    store_class = import_module(settings.SESSION_ENGINE).SessionStore
    backend = settings.AUTHENTICATION_BACKENDS[0]
    sessions = []
    for i in range(REVIEWERS):
        user = user_ensure(username=f"reviewer{i:03d}")  # no password: no hashing cost
        role_grant(user=user, role=Role.REVIEWER, scope=parse(SCOPES[i % len(SCOPES)]))
        store = store_class()  # what Client.force_login / auth.login store
        store[SESSION_KEY] = user._meta.pk.value_to_string(user)
        store[BACKEND_SESSION_KEY] = backend
        store[HASH_SESSION_KEY] = user.get_session_auth_hash()
        store.save()
        sessions.append(store.session_key)
    reader = user_ensure(username="reader")
    role_grant(user=reader, role=Role.REVIEWER, scope=parse("G1"))
    claimer = user_ensure(username="claimer")
    for scope in ("G1", "G2"):
        role_grant(user=claimer, role=Role.REVIEWER, scope=parse(scope))

    made: dict[str, list[Decision]] = {}
    for where in zones:
        made[where] = []
        for n in range(SERVICE_MADE):
            payload = _payload(where, n, claims[where])
            submitted = decision_submit(token=tokens[where], payload=payload)
            made[where].append(Decision.objects.get(pk=submitted.decision.pk))
            assert made[where][-1].state == State.APPROVAL_REQUIRED, made[where][-1].state
    per_zone = {z: WAITING // len(READER_ZONES) for z in READER_ZONES}
    per_zone |= {z: OUTSIDE // len(OTHER_ZONES) for z in OTHER_ZONES}
    copied = [f for f in Decision._meta.concrete_fields if f.name not in ("id", "state")]
    copies = []
    for where, total in per_zone.items():
        for k in range(SERVICE_MADE, total):
            model = made[where][k % SERVICE_MADE]
            values = {f.attname: getattr(model, f.attname) for f in copied}
            values.update(question=_question(where, k), idempotency_key="")
            if model.due_at is not None:
                values["due_at"] = model.due_at + timedelta(seconds=k)
            if k % 10 == 0:
                values.update(claimed_by_id=claimer.pk, claimed_until=values["due_at"])
            copies.append(Decision(state=State.APPROVAL_REQUIRED, **values))
    Decision.objects.bulk_create(copies, batch_size=500)
    return {
        "reader": reader,
        "sessions": sessions,
        "token": tokens[LIVE_ZONE].pk,
        "claim": claims[LIVE_ZONE],
    }


# --- render ------------------------------------------------------------------------------------


def _timed(fn: Callable[[], object], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (this process) milliseconds of each run."""
    wall, cpu = [], []
    for _ in range(runs):
        started, cpu_started = time.perf_counter_ns(), time.process_time_ns()
        fn()
        wall.append((time.perf_counter_ns() - started) / 1e6)
        cpu.append((time.process_time_ns() - cpu_started) / 1e6)
    return wall, cpu


def _wall_cpu(label: str, fn: Callable[[], object], runs: int) -> tuple[float, float]:
    wall, cpu = _timed(fn, runs)
    p50, p95 = p50_p95(wall)
    print(
        f"  {label:<50} p50 {p50:8.1f} ms  p95 {p95:8.1f} ms  (CPU p50 "
        f"{float(np.percentile(cpu, 50)):.1f} ms)"
    )
    return p50, p95


def bench_render(reader: Any) -> bool:
    from django.template.loader import render_to_string
    from django.test import Client
    from django.urls import reverse
    from django.utils import timezone

    from decisions.models import Decision, State
    from gates import presenters, selectors

    waiting = Decision.objects.filter(state=State.APPROVAL_REQUIRED).count()
    client = Client()
    client.force_login(reader)
    first = client.get("/queue/")
    assert first.status_code == 200, first.status_code
    shown = first.content.count(b"<tr data-id=")
    print(
        f"\nqueue page: {waiting} waiting, {shown} in the reader's zones, "
        f"{len(first.content) / 1024:.0f} KiB of HTML; {RENDER_RUNS} runs after 3 warm-ups"
    )
    for _ in range(2):
        client.get("/queue/")
    _, page_p95 = _wall_cpu(
        "GET /queue/ (test Client: middleware, view, page)",
        lambda: client.get("/queue/"),
        RENDER_RUNS,
    )
    filters = selectors.QueueFilters()
    rows = presenters.queue_rows(selectors.queue_values(reader, filters), viewer_id=reader.pk)
    context = {"rows": rows, "now": timezone.now()}
    _wall_cpu(
        "  queue_values and queue_rows alone (the query, the rows)",
        lambda: presenters.queue_rows(selectors.queue_values(reader, filters), viewer_id=reader.pk),
        RENDER_RUNS,
    )
    _wall_cpu(
        "  queue/_rows.html alone (the rows' template)",
        lambda: render_to_string("queue/_rows.html", context),
        RENDER_RUNS,
    )
    _wall_cpu(
        f"    of which {2 * len(rows)} {{% url %}} reverses",
        lambda: [reverse("decision-page", args=[row.id]) for row in rows for _ in range(2)],
        RENDER_RUNS,
    )
    ok = page_p95 <= RENDER_TARGET_MS
    print(f"  target p95 <= {RENDER_TARGET_MS:.0f} ms server time: {verdict(ok)}")
    if not ok:
        _profile(lambda: client.get("/queue/"))
    return ok


def _profile(fn: Callable[[], object]) -> None:
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(5):
        fn()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(12)
    print("  profile of 5 requests (by own time):")
    for text in out.getvalue().splitlines():
        if text.strip() and ("(" in text or "ncalls" in text):
            print("   ", text[:150])


# --- latency -----------------------------------------------------------------------------------


def drive() -> None:
    """The driver subprocess: the worker's side. Submits answers one after another, each
    validated inline (Celery eager) and routed to approval_required; stamps the commit."""
    import django

    django.setup()
    from coordinates.models import ApiToken
    from decisions import outbox
    from decisions.models import Outbox
    from decisions.services import decision_submit
    from gates import push

    spec = json.loads(os.environ["BENCH_WEB_DRIVE"])
    committed: dict[int, int] = {}
    steps: dict[str, list[float]] = defaultdict(list)  # ms of each step of outbox_push
    dispatch = outbox.outbox_dispatch

    def stamped_dispatch(row_id: int, *written: Any) -> None:
        # the first after-commit callback of decision_validate: COMMIT has just returned
        committed[row_id] = time.monotonic_ns()
        dispatch(row_id, *written)

    def timed_step(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            started = time.perf_counter_ns()
            try:
                return fn(*args)
            finally:
                steps[name].append((time.perf_counter_ns() - started) / 1e6)

        return run

    # outbox_dispatch, outbox_push and the push receiver look these up in their module at
    # call time
    whole, claim, publish, done = WORKER_STEPS
    outbox.outbox_dispatch = stamped_dispatch  # type: ignore[assignment]
    outbox.outbox_push = timed_step(whole, outbox.outbox_push)  # type: ignore[assignment]
    outbox.outbox_claim = timed_step(claim, outbox.outbox_claim)  # type: ignore[assignment]
    push.queue_publish = timed_step(publish, push.queue_publish)  # type: ignore[assignment]
    outbox.outbox_done = timed_step(done, outbox.outbox_done)  # type: ignore[assignment]
    token = ApiToken.objects.get(pk=spec["token"])
    for n in range(spec["transitions"]):
        started = time.monotonic()
        decision_submit(token=token, payload=_payload(LIVE_ZONE, 10_000 + n, spec["claim"]))
        time.sleep(max(0.0, spec["interval"] - (time.monotonic() - started)))
    decision_of = dict(
        Outbox.objects.filter(pk__in=list(committed)).values_list("pk", "decision_id")
    )
    commits = {str(decision_of[row]): at for row, at in committed.items() if row in decision_of}
    print(json.dumps({"commits": commits, "steps": steps}))


async def _listen(ws: Any, index: int, seen: list[tuple[int, int, int]]) -> None:
    async for raw in ws:
        received = time.monotonic_ns()
        message = json.loads(raw)
        if message.get("type") == "decision.added":
            seen.append((int(message["decision"]["id"]), index, received))


async def _latency(port: int, sessions: list[str], spec: dict[str, Any]) -> bool:
    from websockets.asyncio.client import connect
    from websockets.typing import Origin

    url = f"ws://127.0.0.1:{port}/ws/queue/"
    origin = Origin(f"http://127.0.0.1:{port}")

    async def open_one(key: str) -> Any:
        ws = await connect(
            url, origin=origin, additional_headers={"Cookie": f"sessionid={key}"}, max_size=2**20
        )
        ready = json.loads(await ws.recv())
        assert ready["type"] == "queue.ready", ready
        return ws

    started = time.perf_counter()
    sockets = await asyncio.gather(*(open_one(key) for key in sessions))
    print(
        f"\npush latency: {len(sockets)} reviewer sockets connected and subscribed in "
        f"{time.perf_counter() - started:.1f} s"
    )
    seen: list[tuple[int, int, int]] = []
    listeners = [asyncio.ensure_future(_listen(ws, i, seen)) for i, ws in enumerate(sockets)]
    env = _django_env(redis=True) | {"BENCH_WEB_DRIVE": json.dumps(spec)}
    driver = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--drive",
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(driver.communicate(), timeout=120)
    if driver.returncode != 0:
        raise SystemExit(f"the driver failed:\n{err.decode()[-3000:]}")
    report = json.loads(out.decode().strip().splitlines()[-1])
    stamps = {int(k): v for k, v in report["commits"].items()}
    expected = len(stamps) * len(sockets)
    deadline = time.monotonic() + 5
    while len(seen) < expected and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    for task in listeners:
        task.cancel()
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)

    per_event: dict[int, list[float]] = defaultdict(list)
    for decision_id, _, received in seen:
        if decision_id in stamps:
            per_event[decision_id].append((received - stamps[decision_id]) / 1e6)
    deliveries = [ms for values in per_event.values() for ms in values]
    print(
        f"  {len(stamps)} approval_required transitions, one every {spec['interval'] * 1000:.0f}"
        f" ms; {len(deliveries)} of {expected} deliveries arrived"
    )
    if not deliveries:
        print("  no delivery arrived: MISS")
        return False
    print("  t0: the worker's first after-commit callback starts; t1: a client's recv() returns")
    for name in WORKER_STEPS:
        line(f"worker: {name}", report["steps"][name])
    line("commit -> first of the sockets", [min(v) for v in per_event.values()])
    line("commit -> last of the sockets", [max(v) for v in per_event.values()])
    _, p95 = line("commit -> message in a socket (every delivery)", deliveries)
    ok = p95 <= LATENCY_TARGET_MS and len(deliveries) == expected
    print(f"  target p95 <= {LATENCY_TARGET_MS:.0f} ms, all delivered: {verdict(ok)}")
    return ok


# --- main --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transitions", type=int, default=60)
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between them")
    parser.add_argument("--drive", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        drive()
        return

    cores = os.cpu_count() or 1
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"cores: {cores} ({usable} usable), load average {load} (shared machine: noisy)")
    problem = _recreate_database()
    if problem is not None:
        print(f"skipped: {problem}")
        return
    began = time.perf_counter()
    server: Server | None = None
    try:
        print(f"migrate: {_migrate():.1f} s")
        _setup_django()
        started = time.perf_counter()
        seeded = seed()
        made = SERVICE_MADE * (len(READER_ZONES) + len(OTHER_ZONES))
        print(
            f"seed: {REVIEWERS} reviewer sessions, {WAITING + OUTSIDE} waiting decisions "
            f"({made} through the services, the rest copies of them) in "
            f"{time.perf_counter() - started:.1f} s"
        )
        render_ok = bench_render(seeded["reader"])

        from django.db import connections

        connections.close_all()
        log = Path(tempfile.gettempdir()) / f"bench_web_server_{os.getpid()}.log"
        server = Server(log)
        server.wait_ready()
        spec = {
            "token": seeded["token"],
            "claim": seeded["claim"],
            "transitions": args.transitions,
            "interval": args.interval,
        }
        latency_ok = asyncio.run(_latency(server.port, seeded["sessions"], spec))
        print(
            f"\nsummary: push p95 {verdict(latency_ok)}, render p95 {verdict(render_ok)}; "
            f"whole run {time.perf_counter() - began:.0f} s"
        )
    finally:
        if server is not None:
            server.stop()
        if not os.environ.get("BENCH_KEEP"):
            _drop_database()


if __name__ == "__main__":
    main()
