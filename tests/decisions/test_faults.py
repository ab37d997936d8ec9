"""Faults under load: answers arrive at RATE a second for SECONDS on PostgreSQL with a real
Celery worker, and in the middle Redis (broker, cache and channel layer) is restarted, or the
worker is killed with SIGKILL and a new one started. Every answer must end graded exactly
once, every webhook outbox row delivered, nothing twice on the trail, and the trail intact.

Each test starts its own redis-server on a free port (no persistence, so a restart loses
every queued task, as a crashed Redis without AOF does) and its own worker (tests/decisions/
helpers.py `Worker`) on the live test database; the web side is this process, through the
Django test client. Most answers go to one busy zone: half from an agent with a webhook (a
local receiver), a fifth citing the wrong number (blocked). A quiet zone's agent stops asking
a second into the fault, so no later task of its zone validates its answers in passing
(`MARIA_VALIDATION_BATCH`): what the fault lost there stays lost unless the system finds it.
After the load the periodic sweeps run, as beat would run them, with their age thresholds on
the test's time scale. Every wait is bounded; nothing is timed, the figures are printed.

The last test kills a worker at one exact point, between the receiver taking a webhook and
the decision's completion, where a random kill under load lands only now and then.

Run: DATABASE_URL=postgres://... REDIS_URL=redis://... pytest -m faults -s
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from django.db import connection
from django.test import override_settings
from rest_framework.test import APIClient

from coordinates.coordinate import parse
from coordinates.services import token_issue
from decisions.models import Decision, Outbox, State
from decisions.outbox import outbox_sweep
from decisions.tasks import validations_resend
from evidence.models import Paragraph
from tests.decisions.conftest import GOOD, WRONG_NUMBER, answer_body, cite
from tests.decisions.helpers import (
    WebhookReceiver,
    Worker,
    kinds,
    second_session,
    sessions,
    tasks_to_broker,
    wait_until,
)
from tests.samples import POLICY_EN
from trail import verify
from trail.models import TrailEvent

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.faults,
    pytest.mark.django_db(transaction=True),
]

RATE = 30.0  # answers offered a second
SECONDS = 45.0  # how long they are offered
FAULT_AT = 15.0  # seconds into the load when the fault strikes
REDIS_DOWN_SECONDS = 3.0  # how long Redis stays away
QUIET_UNTIL = FAULT_AT + 1.0  # the quiet zone's agent stops asking then, amid the fault
CLIENTS = 4  # submissions in flight at most (threads of this process)
DRAIN_SECONDS = 75.0  # bound on the wait for everything to settle after the load
SWEEP_EVERY = 5.0  # how often the drain runs the sweeps (beat: every 30 and 60 s)
SWEEP_AGE = timedelta(seconds=20)  # the sweeps' age thresholds (production: 30 and 120 s)
# The workers' settings that bring the recovery times to the test's scale: a task a dead
# worker held is delivered again after VISIBILITY seconds (kombu's default: an hour), and an
# outbox row it had claimed may be claimed again after LEASE_SECONDS (above the webhook
# timeout, 10 s; production: 60 s).
VISIBILITY = 20
LEASE_SECONDS = 15
REDIS_SERVER = "/usr/bin/redis-server"

BUSY_ZONE = "G1.U1.P1.Z1"
QUIET_ZONE = "G1.U1.P1.Z2"
WEBHOOK_AGENT = "G1.U1.P1.Z1.A2"
POLLING_AGENT = "G1.U1.P1.Z1.A1"
QUIET_AGENT = "G1.U1.P1.Z2.A1"
COMPLETED = [
    "decision.proposed",
    "decision.validated",
    "decision.approved",
    "decision.executed",
    "decision.completed",
]
BLOCKED = ["decision.proposed", "decision.validated", "decision.failed"]


# --- a Redis of the test's own ---------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class RedisServer:
    """redis-server on 127.0.0.1:`port`, in memory only; killed and started on the same port."""

    port: int
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        command = [
            REDIS_SERVER,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.log_path.parent),
        ]  # fmt: skip
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(  # noqa: S603 - a fixed binary, fixed arguments
                command, stdout=log, stderr=subprocess.STDOUT
            )
        wait_until(self._answers, timeout=10, what=f"redis-server on {self.port}", detail=self.log)
        return self

    def _answers(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port, socket_connect_timeout=0.2).ping())
        except redis.RedisError:
            return False

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-2000:]


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if not Path(REDIS_SERVER).exists():
        pytest.skip(f"needs {REDIS_SERVER}")
    server = RedisServer(port=_free_port(), log_path=tmp_path / "redis.log").start()
    yield server
    server.kill()


def _reset_broker_pools() -> None:
    """Forget this process's broker connections, so the next send connects to the URL now
    configured (Celery keeps them per app, as after a fork)."""
    from maria.celery import app

    app._pool = None  # kombu keeps each URL's pool; the next send takes the configured one's
    amqp = app.__dict__.get("amqp")  # made on first use
    if amqp is not None:
        amqp._producer_pool = None


@pytest.fixture
def on_redis(policy_doc: Paragraph, redis_server: RedisServer) -> Iterator[str]:
    """This process sends its tasks to the test's Redis, and its cache and channel layer
    live there too, as the settings make them with REDIS_URL. Yields the queue's name."""
    queue = f"maria-faults-{uuid.uuid4().hex[:8]}"
    url = redis_server.url
    redis_settings = override_settings(
        REDIS_URL=url,
        CACHES={
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": url,
                "KEY_PREFIX": "maria",
            }
        },
        CHANNEL_LAYERS={
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": [url], "prefix": "maria"},
            }
        },
    )
    with tasks_to_broker(broker_url=url, task_default_queue=queue), redis_settings:
        _reset_broker_pools()
        try:
            yield queue
        finally:
            _reset_broker_pools()


@pytest.fixture
def workers(
    on_redis: str, redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str], Worker]]:
    """Start workers on the test database and the test's Redis; all are gone, with their
    database sessions, before the database is flushed."""
    monkeypatch.setenv("MARIA_OUTBOX_LEASE_SECONDS", str(LEASE_SECONDS))
    started: list[Worker] = []
    options = {
        "visibility_timeout": VISIBILITY,
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    }

    def start(name: str) -> Worker:
        worker = Worker(
            name=name,
            queue=on_redis,
            redis_url=redis_server.url,
            log_path=tmp_path / f"{name}.log",
            transport_options=options,
        )
        started.append(worker.start())
        return worker

    yield start
    for worker in started:
        worker.stop()
    wait_until(
        lambda: not any(sessions(worker.application_name) for worker in started),
        timeout=20,
        what="the workers' database sessions to end",
    )


# --- the scene and the load ------------------------------------------------------------------


class Scene(NamedTuple):
    busy: Paragraph  # the approval paragraph of the busy zone's travel policy
    quiet: Paragraph  # the same in the quiet zone
    tokens: dict[str, str]  # agent -> bearer key
    receiver: WebhookReceiver


@pytest.fixture
def scene(
    policy_doc: Paragraph,
    ingest: Callable[..., Any],
    set_policy: Callable[..., Any],
    caplog: pytest.LogCaptureFixture,
) -> Iterator[Scene]:
    """Two lenient zones (supported answers go the whole auto path) with the travel policy;
    in the busy one an agent that polls and one whose token names the receiver as its
    webhook, in the quiet one an agent that polls. Built through the services, before the
    tasks leave this process."""
    caplog.set_level(logging.WARNING)  # not a line per answer; the failures are shown
    ingest(POLICY_EN, zone=QUIET_ZONE, title="Travel policy", key="travel")
    quiet = Paragraph.objects.get(text__contains="500,000 yen require", zone=QUIET_ZONE)
    for zone in (BUSY_ZONE, QUIET_ZONE):
        set_policy(zone=zone, tau=0.3, refusal_floor=0.2, floor=0.05)
    with WebhookReceiver().running() as receiver:
        tokens = {
            agent: token_issue(agent=parse(agent))[1] for agent in (POLLING_AGENT, QUIET_AGENT)
        }
        tokens[WEBHOOK_AGENT] = token_issue(agent=parse(WEBHOOK_AGENT), webhook_url=receiver.url)[1]
        yield Scene(policy_doc, quiet, tokens, receiver)


class Answer(NamedTuple):
    key: str  # its Idempotency-Key
    zone: str
    agent: str
    text: str

    @property
    def path(self) -> list[str]:
        return BLOCKED if self.text == WRONG_NUMBER else COMPLETED

    @property
    def webhook(self) -> bool:
        """Its agent is told its outcome: released (completed) or blocked (failed)."""
        return self.agent == WEBHOOK_AGENT


def planned(index: int, elapsed: float) -> Answer:
    """The index-th answer of the load, sent `elapsed` seconds in: every fourth one in the
    quiet zone until QUIET_UNTIL, the others in the busy zone, half of them from the webhook
    agent, a fifth blocked."""
    key = f"fault-{index}"
    if index % 4 == 3 and elapsed < QUIET_UNTIL:
        return Answer(key, QUIET_ZONE, QUIET_AGENT, GOOD)
    agent = WEBHOOK_AGENT if index % 2 == 0 else POLLING_AGENT
    return Answer(key, BUSY_ZONE, agent, WRONG_NUMBER if index % 5 == 4 else GOOD)


@dataclass
class Load:
    """What was offered, and how the API answered each first try and each retry."""

    answers: list[Answer] = field(default_factory=list)
    first: Counter[int] = field(default_factory=Counter)
    retried: Counter[int] = field(default_factory=Counter)
    unaccepted: list[str] = field(default_factory=list)


def _client(key: str) -> APIClient:
    client = APIClient()
    client.raise_request_exception = False  # a 500 is an answer the agent sees, and retries
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def offer_load(scene: Scene, fault: Callable[[], None]) -> Load:
    """Submit RATE answers a second for SECONDS from CLIENTS threads, each retried with its
    Idempotency-Key (as an agent does) until accepted; `fault()` runs in a thread of its own
    FAULT_AT seconds in."""
    load = Load()
    lock = threading.Lock()
    indices = iter(range(int(RATE * SECONDS)))
    start = time.monotonic()
    errors: list[BaseException] = []

    def submit(answer: Answer, clients: dict[str, APIClient]) -> None:
        paragraph = scene.quiet if answer.zone == QUIET_ZONE else scene.busy
        claims = [{"text": answer.text, "citations": [cite(paragraph)]}]
        body = answer_body(claims, zone=answer.zone, agent=answer.agent)
        client = clients.setdefault(answer.agent, _client(scene.tokens[answer.agent]))
        for attempt in range(40):
            response = client.post(
                "/api/v1/decisions/", body, format="json", HTTP_IDEMPOTENCY_KEY=answer.key
            )
            with lock:
                (load.first if attempt == 0 else load.retried)[response.status_code] += 1
            if response.status_code in (200, 201):
                return
            time.sleep(0.25)
        with lock:
            load.unaccepted.append(answer.key)

    def run() -> None:
        clients: dict[str, APIClient] = {}
        try:
            while True:
                with lock:
                    index = next(indices, None)
                if index is None:
                    return
                time.sleep(max(0.0, start + index / RATE - time.monotonic()))
                answer = planned(index, time.monotonic() - start)
                with lock:
                    load.answers.append(answer)
                submit(answer, clients)
        except BaseException as error:  # reported in the test's thread
            errors.append(error)
        finally:
            connection.close()

    def strike() -> None:
        time.sleep(FAULT_AT)
        try:
            fault()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=run, daemon=True) for _ in range(CLIENTS)]
    threads.append(threading.Thread(target=strike, daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(1.0, start + SECONDS + 120 - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads), "the load did not finish"
    if errors:
        raise errors[0]
    return load


# --- the outcome -------------------------------------------------------------------------


def _unsettled() -> list[str]:
    """What is still on its way: decisions not at their end, outbox rows not sent."""
    waiting = [
        f"decision {d.pk} {d.zone} {d.state} attempts={d.attempts}"
        for d in Decision.objects.exclude(state__in=[State.COMPLETED, State.FAILED])
    ]
    waiting += [
        f"outbox {row.pk} {row.kind} decision={row.decision_id} attempts={row.attempts} "
        f"claimed_at={row.claimed_at} last_error={row.last_error[:80]!r}"
        for row in Outbox.objects.filter(sent_at__isnull=True)
    ]
    return waiting


def drain(worker: Callable[[], Worker]) -> int:
    """Wait until everything settled, running the sweeps meanwhile as beat would; returns
    how many decisions and rows they sent again. Fails naming what is stuck."""
    began = time.monotonic()
    deadline = began + DRAIN_SECONDS
    resent = 0
    print(f"\n{len(_unsettled())} unsettled when the drain began", end="")
    while stuck := _unsettled():
        if time.monotonic() > deadline:
            shown = "\n  ".join(stuck[:40])
            raise AssertionError(
                f"gave up after {DRAIN_SECONDS:.0f} s: {len(stuck)} unsettled:\n  {shown}"
                f"\n--- worker log ---\n{worker().log()}"
            )
        resent += validations_resend(older_than=SWEEP_AGE) + outbox_sweep(older_than=SWEEP_AGE)
        time.sleep(SWEEP_EVERY)
    print(f", settled {time.monotonic() - began:.0f} s later", end="")
    return resent


def check_outcome(load: Load, receiver: WebhookReceiver, resent: int, label: str) -> None:
    """Every answer taken, graded once and carried its whole way; every webhook row sent and
    received; the trail intact. Prints the counts."""
    keys = [answer.key for answer in load.answers]
    decisions = {d.idempotency_key: d for d in Decision.objects.filter(idempotency_key__in=keys)}
    paths: dict[int, list[str]] = {}
    events = TrailEvent.objects.filter(decision_id__isnull=False).order_by("pk")
    for decision_id, kind in events.values_list("decision_id", "kind"):
        if decision_id is not None:
            paths.setdefault(decision_id, []).append(kind)
    rows = {row.decision_id: row for row in Outbox.objects.filter(kind=Outbox.Kind.WEBHOOK)}
    hooks = Counter(hook.json()["data"]["id"] for hook in receiver.hooks)
    states = Counter(d.state for d in decisions.values())
    print(
        f"\n[{label}] submitted={len(keys)} decisions={len(decisions)} "
        f"quiet_zone={sum(a.zone == QUIET_ZONE for a in load.answers)} "
        f"graded={sum(p.count('decision.validated') for p in paths.values())} "
        f"states={dict(states)} outbox_webhook_rows={len(rows)} "
        f"outbox_sent={sum(r.sent_at is not None for r in rows.values())} "
        f"outbox_unsent_any_kind={Outbox.objects.filter(sent_at__isnull=True).count()} "
        f"hooks_received={sum(hooks.values())} hooks_repeated={sum(hooks.values()) - len(hooks)} "
        f"trail_events={TrailEvent.objects.count()} "
        f"decision_events={sum(map(len, paths.values()))} "
        f"resent_by_sweeps={resent} first_statuses={dict(load.first)} "
        f"retry_statuses={dict(load.retried)}"
    )

    # every answer was taken (retried with its key while the API could not take it) ...
    assert not load.unaccepted, f"never accepted: {load.unaccepted[:20]}"
    assert set(decisions) == set(keys), f"no decision for {sorted(set(keys) - set(decisions))}"
    # ... and went its whole way once: graded once, no event twice, none missing
    astray = [
        (decisions[a.key].pk, paths.get(decisions[a.key].pk))
        for a in load.answers
        if paths.get(decisions[a.key].pk) != a.path
    ]
    assert not astray, f"{len(astray)} decisions off their path: {astray[:20]}"
    assert [d.pk for d in decisions.values() if d.attempts != 1] == []
    # every answer of the webhook agent had its outbox row, sent, and received; a
    # second POST only for a row whose first sender died before marking it sent
    expected = {decisions[a.key].pk for a in load.answers if a.webhook}
    assert set(rows) == expected
    unsent = [row.pk for row in rows.values() if row.sent_at is None or row.last_error]
    assert not unsent, f"outbox rows not delivered: {unsent[:20]}"
    missing = sorted(expected - set(hooks))
    assert not missing, f"webhooks never received for decisions {missing[:20]}"
    repeated = [d for d, n in hooks.items() if n > 1 and rows[d].attempts < 2]
    assert not repeated, f"webhooks sent twice on one claim: {repeated[:20]}"
    # the trail verifies: every chain linked, every column as hashed
    report = verify.verify_database()
    assert report.intact, report.summary()


# --- the tests -----------------------------------------------------------------------------


def test_a_redis_restart_under_load_loses_no_answer_and_duplicates_nothing(
    scene: Scene, redis_server: RedisServer, workers: Callable[[str], Worker]
) -> None:
    # given answers arriving at RATE a second and a worker keeping up with them
    worker = workers("w1")

    # when Redis dies in the middle, taking every queued task with it, and comes back empty
    def restart_redis() -> None:
        redis_server.kill()
        time.sleep(REDIS_DOWN_SECONDS)
        redis_server.start()

    began = time.monotonic()
    load = offer_load(scene, restart_redis)
    resent = drain(lambda: worker)

    # then every answer was graded exactly once and every webhook delivered
    check_outcome(load, scene.receiver, resent, f"redis restart, {time.monotonic() - began:.0f} s")
    # and while Redis was away the API still answered what it took with 201, never 500
    assert set(load.first) == {201}, f"the API answered {dict(load.first)}"


def test_a_worker_killed_under_load_loses_no_answer_and_duplicates_nothing(
    scene: Scene, workers: Callable[[str], Worker]
) -> None:
    # given answers arriving at RATE a second and a worker keeping up with them
    current = [workers("w1")]

    # when the worker is killed in the middle (SIGKILL: no ack, no rollback sent) and a new
    # one started
    def kill_worker() -> None:
        current[0].kill()
        current[0] = workers("w2")

    began = time.monotonic()
    load = offer_load(scene, kill_worker)
    resent = drain(lambda: current[0])

    # then every answer was graded exactly once and every webhook delivered
    label = f"worker SIGKILL, {time.monotonic() - began:.0f} s"
    check_outcome(load, scene.receiver, resent, label)
    assert set(load.first) == {201}, f"the API answered {dict(load.first)}"


# --- a sender killed between the webhook's answer and the decision's completion --------------


@dataclass
class HeldReceiver:
    """A webhook endpoint that records each POST and answers 200 only once `release` is set."""

    release: threading.Event = field(default_factory=threading.Event)
    posts: list[int] = field(default_factory=list)  # the decision id of each POST
    url: str = ""

    @contextmanager
    def running(self) -> Iterator[HeldReceiver]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.posts.append(json.loads(body)["data"]["id"])
                receiver.release.wait(30)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/maria"
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.release.set()
            server.shutdown()
            server.server_close()
            thread.join(5)


def test_a_worker_killed_after_the_webhook_was_taken_leaves_the_row_to_be_sent_again(
    policy_doc: Paragraph,
    set_policy: Callable[..., Any],
    workers: Callable[[str], Worker],
) -> None:
    # given an answer released to an agent's webhook, whose receiver holds its answer
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    with HeldReceiver().running() as receiver:
        _, key = token_issue(agent=parse(WEBHOOK_AGENT), webhook_url=receiver.url)
        first = workers("w1")
        claims = [{"text": GOOD, "citations": [cite(policy_doc)]}]
        response = _client(key).post(
            "/api/v1/decisions/", answer_body(claims, agent=WEBHOOK_AGENT), format="json"
        )
        decision_id = response.json()["id"]
        wait_until(lambda: bool(receiver.posts), timeout=60, what="the webhook", detail=first.log)

        # and a session that holds the decision's row, so the worker, once the receiver took
        # the webhook, blocks completing the decision
        blocker = second_session("maria-test-blocker")
        try:
            blocker.execute(
                "SELECT id FROM decisions_decision WHERE id = %s FOR UPDATE", [decision_id]
            )
            receiver.release.set()
            wait_until(
                lambda: bool(sessions(first.application_name, waiting=True)),
                timeout=20,
                what="the worker to block completing the decision",
                detail=first.log,
            )

            # when the worker is killed there
            first.kill()
        finally:
            blocker.rollback()
            blocker.close()
        wait_until(
            lambda: not sessions(first.application_name),
            timeout=20,
            what="the killed worker's transaction to be rolled back",
        )

        # then the row is not marked sent while its decision is not completed
        row = Outbox.objects.get(decision_id=decision_id, kind=Outbox.Kind.WEBHOOK)
        assert Decision.objects.get(pk=decision_id).state == State.EXECUTED
        assert row.sent_at is None, "the row was marked sent, but its decision never completed"

        # and when a new worker starts, the row is sent again once its lease ran out (by the
        # task delivered again or by the sweep, whichever claims it first) and the decision
        # completed, once
        second = workers("w2")
        drain(lambda: second)
    assert receiver.posts == [decision_id, decision_id]
    assert kinds(decision_id) == COMPLETED
    assert Outbox.objects.get(pk=row.pk).sent_at is not None
    assert verify.verify_database().intact
