"""What the client tests share: the engine served over real HTTP, tokens for an agent, two
reviewers and an auditor, made through the real services, and a webhook receiver that hands
what it gets to a `maria_client.WebhookInbox`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from maria_client import Maria, WebhookInbox, WebhookVerificationError
from tests.decisions.conftest import AGENT, ZONE, policy_doc, set_policy

__all__ = ["AGENT", "ZONE", "policy_doc", "set_policy"]


@dataclass
class Keys:
    """Bearer keys of the people and the agent in a test."""

    agent: str
    reviewer: str
    reviewer2: str
    auditor: str


@pytest.fixture
def keys(org: Any, person: Callable[..., Any]) -> Keys:
    from coordinates.coordinate import parse
    from coordinates.models import Role
    from coordinates.services import token_issue

    def personal(username: str, role: str) -> str:
        return token_issue(user=person(username, role, ZONE))[1]

    return Keys(
        agent=token_issue(agent=parse(AGENT))[1],
        reviewer=personal("reviewer", Role.REVIEWER),
        reviewer2=personal("reviewer2", Role.REVIEWER),
        auditor=personal("auditor", Role.AUDITOR),
    )


@pytest.fixture
def connect(live_server: Any) -> Iterator[Callable[[str], Maria]]:
    """`connect(key)`: a client of the live test server (pytest-django's, real HTTP in a
    thread of this process) as that token; all closed at the end."""
    made: list[Maria] = []

    def make(key: str) -> Maria:
        made.append(Maria(live_server.url, key, timeout=60))
        return made[-1]

    yield make
    for client in made:
        client.close()


@dataclass
class Receiver:
    """An agent's webhook endpoint on 127.0.0.1: each POST goes to `inbox.receive`; a
    verified one is answered 204, a forged one 400 (kept in `refused`)."""

    inbox: WebhookInbox
    url: str = ""
    refused: list[str] = field(default_factory=list)
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)

    @contextmanager
    def running(self) -> Iterator[Receiver]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = dict(self.headers.items())
                receiver.received.append((headers, body))
                try:
                    receiver.inbox.receive(headers, body)
                    status = 204
                except WebhookVerificationError as error:
                    receiver.refused.append(str(error))
                    status = 400
                self.send_response(status)
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
            server.shutdown()
            server.server_close()
            thread.join(5)


def _test_database_url() -> str:
    """The live test database as a DATABASE_URL for another process: PostgreSQL's
    `test_<name>`, or SQLite's temporary file (a file, so two processes share it)."""
    from django.db import connection

    if connection.vendor == "sqlite":
        return f"sqlite:///{connection.settings_dict['NAME']}"
    from tests.decisions.helpers import database_url

    return database_url("maria-test-client-e2e")


@contextmanager
def gunicorn_engine(port: int, log_path: Any) -> Iterator[str]:
    """The engine as the README's Production section serves its API (gunicorn, maria.wsgi,
    threads) in a process of its own, on the test database, tasks inline (eager Celery):
    yields its base URL and stops it at the end."""
    import http.client
    import os
    import subprocess
    import sys

    from tests.decisions.helpers import ROOT, wait_until

    env = dict(os.environ)
    env.update(
        DATABASE_URL=_test_database_url(),
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        CELERY_TASK_ALWAYS_EAGER="1",
        MARIA_PUBLIC_URL=f"http://127.0.0.1:{port}",
    )
    command = [
        sys.executable, "-m", "gunicorn", "maria.wsgi:application", "--bind",
        f"127.0.0.1:{port}", "--workers", "1", "--worker-class", "gthread", "--threads", "4",
        "--timeout", "120",
    ]  # fmt: skip
    with log_path.open("wb") as output:
        server = subprocess.Popen(  # noqa: S603 - our interpreter, fixed arguments
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
        )

    def healthy() -> bool:
        if server.poll() is not None:
            raise AssertionError(f"gunicorn exited {server.returncode}\n{log_path.read_text()}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/healthz")
            return connection.getresponse().status == 200
        except OSError:
            return False

    try:
        wait_until(healthy, timeout=90, what="gunicorn to answer", detail=log_path.read_text)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
