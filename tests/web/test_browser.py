"""Two reviewers, an auditor and a zone admin in headless Chromium against the ASGI app.

The server is uvicorn in a thread of this process, on an ephemeral port, so it uses the test
database and channel layer. Chromium is Debian's /usr/bin/chromium, driven by Playwright with
`executable_path`: nothing is downloaded. Without either, the tests skip.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from coordinates.models import Role
from tests.decisions.conftest import GOOD, cite, policy_doc, set_policy
from tests.trail.test_trail_bypass import committed_trail

__all__ = ["committed_trail", "policy_doc", "set_policy"]

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
README_SHOTS = ROOT / "docs" / "screenshots"
ZONE = "G1.U1.P1.Z1"
TIMEOUT = 10_000  # ms for each wait in the browser

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]


class LiveASGI:
    """uvicorn serving the ASGI application on 127.0.0.1:<free port>, in a thread; `restart`
    drops every connection (sockets included) and serves again on the same port."""

    def __init__(self) -> None:
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server: Any = None
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        import uvicorn

        from maria.asgi import application

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        config = uvicorn.Config(application, lifespan="off", log_level="warning", ws="websockets")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.server.started, "uvicorn did not start"

    def stop(self) -> None:
        if self.server is not None and self.thread is not None:
            self.server.should_exit = True
            self.thread.join(timeout=10)


@pytest.fixture
def live_asgi(transactional_db: None) -> Iterator[LiveASGI]:
    server = LiveASGI()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are
    # plain synchronous code all the same.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with playwright_sync.sync_playwright() as p:
        instance = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            # Playwright gives every launch a fresh, temporary profile (its --user-data-dir).
            args=ARGS,
        )
        try:
            yield instance
        finally:
            instance.close()
            # The test's ORM calls ran while Playwright's event loop was running, so Django
            # kept their connection in a context of its own, which pytest-django never
            # closes: left open, it kept PostgreSQL from dropping the test database.
            connections.close_all()


def log_in(browser: Any, base: str, username: str) -> Any:
    context = browser.new_context(viewport={"width": 1440, "height": 900}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", f"pw-{username}")
    page.click("form.card button[type=submit]")
    page.wait_for_url(f"{base}/")
    return page


def submit_over_http(base: str, key: str, paragraph: Any) -> int:
    body = {
        "question": "Who approves travel expenses above 500,000 yen?",
        "answer": GOOD,
        "zone": ZONE,
        "agent": f"{ZONE}.A1",
        "claims": [{"text": GOOD, "citations": [cite(paragraph)]}],
    }
    request = urllib.request.Request(  # noqa: S310 - the local test server
        f"{base}/api/v1/decisions/",
        data=json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Idempotency-Key": "browser-test-1",
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        assert response.status == 201
        return int(json.loads(response.read())["id"])


def shoot(page: Any, name: str, *, readme: bool = False) -> None:
    """Save a screenshot under test-artifacts/; with MARIA_UPDATE_SCREENSHOTS=1 the README's
    copy in docs/screenshots/ too (a test run must not change committed files by itself)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    if readme and os.environ.get("MARIA_UPDATE_SCREENSHOTS") == "1":
        README_SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, README_SHOTS / f"{name}.png")


def test_two_reviewers_see_a_decision_arrive_get_claimed_and_leave_live(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    from coordinates.coordinate import parse
    from coordinates.services import token_issue

    # given two reviewers of the finance planet, an auditor, a zone admin, and an agent
    set_policy(tau=0.99, refusal_floor=0.05)
    person("ann", Role.REVIEWER, "G1.U1.P1")
    person("ben", Role.REVIEWER, "G1.U1.P1")
    person("olga", Role.AUDITOR, "G1")
    person("zed", Role.ZONE_ADMIN, "G1.U1.P1")
    _, key = token_issue(agent=parse(f"{ZONE}.A1"))
    base = live_asgi.url
    ann, ben = log_in(browser, base, "ann"), log_in(browser, base, "ben")
    for page in (ann, ben):
        page.goto(f"{base}/queue/")
        page.wait_for_selector('#live[data-state="live"]')

    # when the agent submits an answer that needs review
    decision_id = submit_over_http(base, key, policy_doc)
    row = f'#queue-rows tr[data-id="{decision_id}"]'

    # then it appears in both queues without a reload
    ann.wait_for_selector(row)
    ben.wait_for_selector(row)

    # when A claims it, B sees who holds it and cannot act on it
    ann.click(f"{row} a.open")
    ann.wait_for_selector("#claim")
    ann.click("#claim")
    ann.wait_for_selector("#approve")
    ben.wait_for_selector(f"{row}.locked")
    assert "ann" in ben.inner_text(f"{row} .holder")
    shoot(ann, "decision", readme=True)
    shoot(ben, "queue", readme=True)
    ben.goto(f"{base}/queue/decisions/{decision_id}/")
    assert "ann" in ben.inner_text("#banner")
    assert ben.query_selector("#approve") is None
    ben.goto(f"{base}/queue/")
    ben.wait_for_selector(row)
    ben.wait_for_selector('#live[data-state="live"]')

    # when A approves, it leaves B's queue live
    ann.fill('form[data-key="a"] input[name=reason]', "checked against the travel policy")
    ann.click("#approve")
    ann.wait_for_url(f"{base}/queue/")
    ben.wait_for_selector(row, state="detached")

    # then the auditor sees the approval in the trail and the verification is intact
    olga = log_in(browser, base, "olga")
    olga.goto(f"{base}/audit/decisions/{decision_id}/")
    olga.wait_for_selector('li[data-kind="decision.approved"]')
    shoot(olga, "auditor", readme=True)
    olga.click("#verify")
    olga.wait_for_selector('#verdict[data-intact="1"]')

    # and the zone admin's what-if preview renders (screenshot for the README)
    zed = log_in(browser, base, "zed")
    zed.goto(f"{base}/zones/{ZONE}/")
    zed.fill("#id_tau", "0.6")
    zed.click("#preview")
    zed.wait_for_selector("#whatif-table")
    shoot(zed, "zone_admin", readme=True)


def test_a_dropped_socket_reconnects_and_resynchronises(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    from coordinates.coordinate import parse
    from coordinates.services import token_issue

    set_policy(tau=0.99, refusal_floor=0.05)
    person("ann", Role.REVIEWER, "G1.U1.P1")
    _, key = token_issue(agent=parse(f"{ZONE}.A1"))
    base = live_asgi.url
    ann = log_in(browser, base, "ann")
    ann.goto(f"{base}/queue/")
    ann.wait_for_selector('#live[data-state="live"]')
    # when the server drops every socket and a decision arrives while the page is away
    live_asgi.stop()
    ann.wait_for_selector('#live[data-state="reconnecting"]')
    live_asgi.start()
    decision_id = submit_over_http(base, key, policy_doc)
    # then the page reconnects and shows what it missed
    ann.wait_for_selector('#live[data-state="live"]', timeout=20_000)
    ann.wait_for_selector(f'#queue-rows tr[data-id="{decision_id}"]')


def test_a_link_with_a_question_asks_the_graph_explorer_at_once(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    from urllib.parse import urlencode

    from coordinates.coordinate import parse
    from coordinates.services import token_issue

    # given a zone whose graph knows an answered decision and its evidence
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    person("rita", Role.REVIEWER, ZONE)
    _, key = token_issue(agent=parse(f"{ZONE}.A1"))
    base = live_asgi.url
    submit_over_http(base, key, policy_doc)
    page = log_in(browser, base, "rita")

    # when a reader follows a link that carries a zone and a question (as the risk hotspots do)
    question = "Who approves travel expenses above 500,000 yen?"
    page.goto(f"{base}/graph/?{urlencode({'zone': ZONE, 'q': question})}")

    # then the form holds them and the graph's answer is drawn without another click
    page.wait_for_selector("#graph-gate:has-text('gate:')")  # no eval: the page's CSP forbids it
    assert page.input_value("input[name=q]") == question
    assert page.input_value("select[name=zone]") == ZONE
    assert page.locator("#graph-cohesion-text").inner_text().startswith("cohesion ")
    page.wait_for_selector("#graph-canvas canvas")
    shoot(page, "graph", readme=True)
