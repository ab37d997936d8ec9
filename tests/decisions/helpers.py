"""What the race, worker, webhook and operations tests share: threads that start together,
a local webhook receiver, a real Celery worker on the test database, bounded waits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import psycopg
from django.contrib.auth.models import User
from django.db import connection

from decisions.models import Outbox
from trail.models import TrailEvent

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


# --- reading the outcome -------------------------------------------------------------------


def kinds(decision_id: int) -> list[str]:
    """The decision's trail events, oldest first."""
    return list(
        TrailEvent.objects.filter(decision_id=decision_id)
        .order_by("pk")
        .values_list("kind", flat=True)
    )


def pushes(decision_id: int, kind: str | None = None) -> list[Outbox]:
    rows = Outbox.objects.filter(decision_id=decision_id, kind=Outbox.Kind.PUSH).order_by("pk")
    return [row for row in rows if kind is None or row.payload["type"] == kind]


def wait_until(
    check: Callable[[], bool],
    *,
    timeout: float,
    what: str,
    detail: Callable[[], str] = str,
) -> None:
    """Poll until `check()` holds; fail (never hang) after `timeout` seconds, with `detail()`
    (a worker's log, say) in the message."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:.0f} s waiting for {what}\n{detail()}")
        time.sleep(0.05)


# --- people ----------------------------------------------------------------------------------


def reviewer(username: str, scope: str) -> User:
    """A reviewer on `scope`, made through the services (no password: nothing to hash)."""
    from coordinates.coordinate import parse
    from coordinates.models import Role
    from coordinates.services import role_grant, user_ensure

    user = user_ensure(username=username)
    role_grant(user=user, role=Role.REVIEWER, scope=parse(scope))
    return user


# --- threads that start together -------------------------------------------------------------


def at_once(count: int, work: Callable[[int], T], *, timeout: float = 120) -> list[T]:
    """Run `work(0) .. work(count - 1)` in threads released together by a barrier.

    Each thread has its own database connection (Django's are per thread) and closes it at
    the end, so the test database can be flushed and dropped afterwards.
    """
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait(timeout)
            results[index] = work(index)
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = sum(thread.is_alive() for thread in threads)
    assert stuck == 0, f"{stuck} of {count} threads still running after {timeout} s"
    if errors:
        raise errors[0]
    return results


# --- a webhook receiver on 127.0.0.1 ---------------------------------------------------------


@dataclass(frozen=True)
class Hook:
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class WebhookReceiver:
    """An agent's endpoint: records each POST and answers with the next status in `statuses`
    (the last one repeats)."""

    statuses: Sequence[int] = (200,)
    hooks: list[Hook] = field(default_factory=list)
    url: str = ""

    @contextmanager
    def running(self) -> Iterator[WebhookReceiver]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                receiver.hooks.append(Hook(dict(self.headers.items()), self.rfile.read(length)))
                index = min(len(receiver.hooks), len(receiver.statuses)) - 1
                self.send_response(receiver.statuses[index])
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the test reads `hooks`

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/maria"
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)


# --- a real Celery worker on the test database ----------------------------------------------


def database_url(application_name: str) -> str:
    """The live test database (pytest-django's `test_<name>`), as a DATABASE_URL, tagged with
    an application name so the test can find the worker's session in pg_stat_activity."""
    db = connection.settings_dict
    password = f":{quote(str(db['PASSWORD']), safe='')}" if db.get("PASSWORD") else ""
    return (
        f"postgres://{quote(str(db['USER']), safe='')}{password}@{db['HOST'] or '127.0.0.1'}:"
        f"{db['PORT'] or 5432}/{db['NAME']}?application_name={application_name}"
    )


def second_session(application_name: str = "maria-test-session") -> psycopg.Connection[Any]:
    """A connection of its own to the live test database, beside Django's: another
    transaction that can hold locks while the code under test runs."""
    return psycopg.connect(database_url(application_name))


def sessions(application_name: str, *, waiting: bool = False) -> list[str]:
    """The queries of the database sessions with that application name (only those waiting
    for a lock, if asked)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(query, ''), wait_event_type FROM pg_stat_activity "
            "WHERE application_name = %s",
            [application_name],
        )
        return [query for query, wait in cursor.fetchall() if wait == "Lock" or not waiting]


@dataclass
class Worker:
    """`celery -A maria worker --pool solo` (or `pool`, one process) in a child process of
    its own, consuming `queue` on the broker at `redis_url`, writing to the test database."""

    name: str
    queue: str
    redis_url: str
    log_path: Path
    transport_options: dict[str, Any] = field(default_factory=dict)
    pool: str = "solo"
    # Both queues by default, as a single worker in production would; a test that needs one
    # worker per queue names it ("queue" or "queue-answers", see answer_queue).
    queues: str | None = None
    process: subprocess.Popen[bytes] | None = None

    @property
    def application_name(self) -> str:
        return f"{self.queue}-{self.name}"

    def start(self) -> Worker:
        env = dict(os.environ)
        env.update(
            DJANGO_SETTINGS_MODULE="maria.settings",
            DATABASE_URL=database_url(self.application_name),
            REDIS_URL=self.redis_url,
            CELERY_BROKER_URL=self.redis_url,
            CELERY_TASK_ALWAYS_EAGER="0",
            CELERY_TASK_DEFAULT_QUEUE=self.queue,
            CELERY_BROKER_TRANSPORT_OPTIONS=json.dumps(self.transport_options),
            LOG_FORMAT="plain",
        )
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "maria",
            "worker",
            "--pool",
            self.pool,
            "--concurrency",
            "1",
            "--queues",
            self.queues or f"{self.queue},{answer_queue(self.queue)}",
            "--hostname",
            f"{self.application_name}@%h",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            "INFO",
        ]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(  # noqa: S603 - our interpreter, fixed arguments
                command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        return self

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, no acknowledgement, no rollback sent to the database."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]


def answer_queue(queue: str) -> str:
    """The answers' queue beside a default queue, as maria/settings.py names it."""
    return f"{queue}-answers"


@contextmanager
def tasks_to_broker(**conf: Any) -> Iterator[None]:
    """Tasks this process sends go to the broker, not inline: `task_always_eager` off and the
    other Celery settings given (`broker_url`, `task_default_queue`), put back after.

    The app reads Django's CELERY_* settings under its namespace, and which of the two an
    `app.conf` key set at run time loses to depends on the Celery release (5.6 keeps the
    Django one, 5.7 the key), so both are set; and the switch is checked, so that a test
    that needs a worker never passes by running its tasks inline."""
    from django.conf import settings
    from django.test import override_settings

    from maria.celery import app

    conf = {"task_always_eager": False, **conf}
    if "task_default_queue" in conf and "task_routes" not in conf:
        # The answers' tasks go to the answers' queue of this test's own default queue.
        routed = {"queue": answer_queue(conf["task_default_queue"])}
        conf["task_routes"] = dict.fromkeys(settings.CELERY_TASK_ROUTES, routed)
    saved = {key: app.conf[key] for key in conf}
    with override_settings(**{f"CELERY_{key.upper()}": value for key, value in conf.items()}):
        app.conf.update(conf)
        _routes_again(app)
        try:
            taken = {key: app.conf[key] for key in conf}
            assert taken == conf, f"the Celery settings did not take: {taken} != {conf}"
            routed = app.amqp.router.route({}, "decisions.tasks.validate_decision")
            wanted = conf.get("task_routes", {}).get("decisions.tasks.validate_decision", {})
            assert routed["queue"].name == wanted.get("queue", routed["queue"].name)
            yield
        finally:
            app.conf.update(saved)
            _routes_again(app)


def _routes_again(app: Any) -> None:
    """Celery builds its router once, from the routes it had then: read them again."""
    app.amqp.flush_routes()
    app.amqp.__dict__.pop("router", None)


def retry_inline(monkeypatch: Any) -> list[int]:
    """Eager tasks retry inline, as a worker would, whatever CELERY_TASK_EAGER_PROPAGATES
    says (with it on, the first `self.retry()` escapes as an exception), and with no wait.
    Returns the retry numbers the tasks asked a backoff for, in order."""
    from decisions import tasks
    from maria.celery import app

    asked: list[int] = []

    def no_wait(retries: int) -> float:
        asked.append(retries)
        return 0.0

    monkeypatch.setitem(app.conf, "task_eager_propagates", False)
    monkeypatch.setattr(tasks, "backoff", no_wait)
    return asked
