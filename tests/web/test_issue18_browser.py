"""Issue 18's bugs that live in the browser, in headless Chromium against the ASGI app (the
server, browser and log-in of tests/web/test_browser.py): two required approvals, the `a`
key, saved filters, the graph explorer, and no console message (no CSP violation) on any page.
"""

from __future__ import annotations

import itertools
import json
import re
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode

import pytest

from coordinates.models import Role
from decisions.models import Decision, State
from tests.decisions.conftest import GOOD, cite
from tests.web.test_browser import (
    CHROMIUM,
    TIMEOUT,
    ZONE,
    LiveASGI,
    browser,
    committed_trail,
    live_asgi,
    log_in,
    policy_doc,
    set_policy,
)
from trail.models import TrailEvent

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "set_policy"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]

_keys = itertools.count(1)
APPROVE_REASON = 'form[data-key="a"] input[name=reason]'


def submit(base: str, key: str, paragraph: Any, *, question: str = "") -> int:
    """POST an answer as the agent (each with its own Idempotency-Key)."""
    body = {
        "question": question or "Who approves travel expenses above 500,000 yen?",
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
            "Idempotency-Key": f"issue18-{next(_keys)}",
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        assert response.status == 201
        return int(json.loads(response.read())["id"])


def agent_key() -> str:
    from coordinates.coordinate import parse
    from coordinates.services import token_issue

    _, key = token_issue(agent=parse(f"{ZONE}.A1"))
    return key


def listen(page: Any) -> list[str]:
    """Every console message of `page`: its scripts' console calls and uncaught errors, and
    what the browser itself logs there (Content-Security-Policy violations, failed loads),
    which Playwright's console event does not carry: read over the DevTools protocol."""
    heard: list[str] = []
    page.on("console", lambda m: heard.append(f"console.{m.type}: {m.text} @ {page.url}"))
    page.on("pageerror", lambda e: heard.append(f"pageerror: {e} @ {page.url}"))
    session = page.context.new_cdp_session(page)
    session.on(
        "Log.entryAdded",
        lambda e: heard.append(
            f"log.{e['entry']['level']} ({e['entry']['source']}): {e['entry']['text']} @ {page.url}"
        ),
    )
    session.send("Log.enable")
    return heard


def test_the_first_of_two_approvals_is_acknowledged_and_the_page_offers_no_second(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given a zone that needs two approvals and a decision waiting there
    set_policy(tau=0.99, refusal_floor=0.05, approvals_required=2)
    person("ann", Role.REVIEWER, "G1.U1.P1")
    person("ben", Role.REVIEWER, "G1.U1.P1")
    base = live_asgi.url
    decision_id = submit(base, agent_key(), policy_doc)
    page_url = f"{base}/queue/decisions/{decision_id}/"
    ann = log_in(browser, base, "ann")
    ann.goto(page_url)
    ann.wait_for_selector('#live[data-state="live"]')
    # when the first reviewer claims and approves with a reason
    ann.click("#claim")
    ann.wait_for_selector("#approve")
    ann.wait_for_selector('#live[data-state="live"]')
    ann.fill(APPROVE_REASON, "section 2 says so")
    ann.click("#approve")
    # then she is told her approval is recorded and another reviewer must approve
    ann.wait_for_url(f"{base}/queue/")
    said = ann.inner_text("ul.messages")
    assert "is recorded (1 of 2)" in said, said
    assert "another reviewer must approve it too" in said
    # and the decision page offers her neither Claim nor Approve, but says it waits
    ann.goto(page_url)
    ann.wait_for_selector("#approved-by-me")
    assert ann.query_selector("#claim") is None
    assert ann.query_selector("#approve") is None
    # and the second reviewer completes it
    ben = log_in(browser, base, "ben")
    ben.goto(page_url)
    ben.click("#claim")
    ben.wait_for_selector("#approve")
    ben.fill(APPROVE_REASON, "agreed")
    ben.click("#approve")
    ben.wait_for_url(f"{base}/queue/")
    assert f"Decision {decision_id} approved." in ben.inner_text("ul.messages")
    assert Decision.objects.get(pk=decision_id).state != State.APPROVAL_REQUIRED
    recorded = TrailEvent.objects.get(decision_id=decision_id, kind="decision.approval_recorded")
    assert (recorded.actor, recorded.reason) == ("ann", "section 2 says so")


def test_the_a_key_asks_for_a_reason_before_it_approves(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    set_policy(tau=0.99, refusal_floor=0.05)
    person("ann", Role.REVIEWER, "G1.U1.P1")
    base = live_asgi.url
    decision_id = submit(base, agent_key(), policy_doc)
    ann = log_in(browser, base, "ann")
    ann.goto(f"{base}/queue/decisions/{decision_id}/")
    ann.click("#claim")
    ann.wait_for_selector("#approve")
    ann.wait_for_selector('#live[data-state="live"]')
    # when the reviewer presses a
    ann.locator("body").press("a")
    # then nothing is approved yet: the reason field asks, focused
    ann.wait_for_selector(f"{APPROVE_REASON}:focus")
    assert Decision.objects.get(pk=decision_id).state == State.APPROVAL_REQUIRED
    assert ann.url == f"{base}/queue/decisions/{decision_id}/"
    # and Enter in it approves, with the reason typed
    ann.keyboard.type("matches section 2")
    ann.keyboard.press("Enter")
    ann.wait_for_url(f"{base}/queue/")
    approved = TrailEvent.objects.get(decision_id=decision_id, kind="decision.approved")
    assert (approved.actor, approved.reason) == ("ann", "matches section 2")
    # and the help sheet says so
    ann.goto(f"{base}/queue/")
    assert "asks for a reason" in ann.inner_text("#shortcuts", timeout=TIMEOUT)


def test_saving_filters_saves_the_filters_on_screen(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    org: Any,
) -> None:
    from gates.models import SavedFilter

    fin = person("fin", Role.REVIEWER, "G1.U1.P1")
    base = live_asgi.url
    page = log_in(browser, base, "fin")
    page.goto(f"{base}/queue/")
    # when the reviewer narrows the queue (the rows reload, and the address follows the
    # screen, so that a view can be shared as a link: issue 29)
    page.select_option("#queue-filters select[name=state]", "mine")
    page.select_option("#queue-filters select[name=zone]", ZONE)
    page.fill("#f-q", "travel")
    page.wait_for_function("() => location.search.includes('q=travel')")
    # and saves them under a name
    page.fill("#save-filter input[name=name]", "my travel")
    page.click("#save-filter button[type=submit]")
    page.wait_for_url(re.compile(r".*/queue/\?.*"))
    # then the saved filter holds what was on screen, and its chip opens it
    saved = SavedFilter.objects.get(user=fin, name="my travel")
    assert parse_qs(saved.query) == {"zone": [ZONE], "state": ["mine"], "q": ["travel"]}
    href = page.get_attribute(".saved .chip a", "href") or ""
    assert parse_qs(href.split("?", 1)[1]) == parse_qs(saved.query)


def test_the_graph_explorer_says_when_nothing_bears_on_a_question(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    person("rita", Role.REVIEWER, ZONE)
    base = live_asgi.url
    submit(base, agent_key(), policy_doc)
    page = log_in(browser, base, "rita")
    query = urlencode({"zone": ZONE, "q": "how much does the weather on Mars cost?"})
    page.goto(f"{base}/graph/?{query}")
    page.wait_for_selector("#graph-gate:has-text('no relevant evidence')")
    assert "gate:" not in page.inner_text("#graph-gate")
    assert "no evidence" in page.inner_text("#graph-answer")


def test_no_page_logs_a_console_message(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given a reviewer, a zone admin and an auditor, an answered decision in the graph and a
    # decision waiting for review
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    person("rita", Role.REVIEWER, "G1.U1.P1")
    person("zed", Role.ZONE_ADMIN, "G1.U1.P1")
    person("olga", Role.AUDITOR, "G1")
    base = live_asgi.url
    key = agent_key()
    answered = submit(
        base, key, policy_doc, question="Who approves travel expenses above 500,000 yen?"
    )
    set_policy(tau=0.99, refusal_floor=0.05)
    waiting = submit(base, key, policy_doc, question="And this one?")
    ask = urlencode({"zone": ZONE, "q": "Who approves travel expenses above 500,000 yen?"})
    pages: dict[str, list[tuple[str, str]]] = {
        "rita": [
            ("/", "main"),
            ("/queue/", '#live[data-state="live"]'),
            (f"/queue/decisions/{waiting}/", ".graph-responsibility canvas"),
            (f"/graph/?{ask}", "#graph-canvas canvas"),
        ],
        "zed": [
            ("/zones/", "main"),
            (f"/zones/{ZONE}/", "#id_tau"),
            (f"/queue/decisions/{answered}/", ".graph-responsibility canvas"),
        ],
        "olga": [
            ("/audit/", "main"),
            (f"/audit/decisions/{answered}/", 'li[data-kind="decision.completed"]'),
            (f"/audit/verify/?{urlencode({'zone': ZONE})}", "#verdict"),
        ],
    }
    heard: list[list[str]] = []
    for username, visits in pages.items():
        page = log_in(browser, base, username)
        heard.append(listen(page))
        for path, ready in visits:
            page.goto(f"{base}{path}")
            page.wait_for_selector(ready)
            page.wait_for_load_state("networkidle")
        if username == "zed":
            page.goto(f"{base}/zones/{ZONE}/")
            page.fill("#id_tau", "0.6")
            page.click("#preview")
            page.wait_for_selector("#whatif-table")
        page.context.close()
    # then no page said anything in the console: no CSP violation, no error, no warning
    assert [message for messages in heard for message in messages] == []
