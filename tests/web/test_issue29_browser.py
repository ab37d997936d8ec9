"""Issue 29 (3, 5, 11) in headless Chromium: the queue row gives the real reason an answer
waits and keeps a very long question inside its row; a decided answer's page says who
approved it, in Japanese, and counts no time down."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from decisions.models import Decision, State
from tests.web.test_browser import (
    CHROMIUM,
    LiveASGI,
    browser,
    committed_trail,
    live_asgi,
    log_in,
    policy_doc,
    set_policy,
)
from tests.web.test_issue18_browser import agent_key, submit

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "set_policy"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]

# 2,434 characters with no place to break a line (a pasted identifier, a URL): the queue row
# must wrap it, not widen the table past the page.
LONG_QUESTION = "Whoapprovestravelexpensesabove500000yen" * 62 + "x" * 16


def test_the_queue_row_says_why_and_holds_a_long_question_and_a_decided_page_says_who(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given answers above τ resting only on a policy, which the zone releases with a person
    assert len(LONG_QUESTION) == 2434
    set_policy(tau=0.05, delta=0.02, refusal_floor=0.0, release_kinds=["contract"])
    person("ann", Role.REVIEWER, "G1.U1.P1")
    base = live_asgi.url
    key = agent_key()
    long_one = submit(base, key, policy_doc, question=LONG_QUESTION)
    other = submit(base, key, policy_doc)
    ann = log_in(browser, base, "ann")
    # when the reviewer opens the queue
    ann.goto(f"{base}/queue/")
    row = ann.locator(f'tr[data-id="{long_one}"]')
    row.wait_for()
    # then the row says the source the zone does not release alone, not a contradiction
    said = row.inner_text()
    assert "Travel policy is an approved policy" in said
    assert "contradicts itself" not in said
    # and the long question wraps inside its cell instead of running over the gate reason
    inside, cell = row.locator("td.q").evaluate("td => [td.scrollWidth, td.clientWidth]")
    assert inside <= cell, (inside, cell)
    # when she approves the other answer and opens it again, in Japanese
    page_url = f"{base}/queue/decisions/{other}/"
    ann.goto(page_url)
    ann.click("#claim")
    ann.wait_for_selector("#approve")
    ann.click("#approve")
    ann.wait_for_selector("ul.messages")
    assert Decision.objects.get(pk=other).state == State.COMPLETED
    ann.context.add_cookies([{"name": "django_language", "value": "ja", "url": base}])
    ann.goto(page_url)
    # then it leads with who approved it, and nothing counts down to a due time
    why = ann.locator("#why").inner_text()
    assert why.startswith("ann が "), why
    assert "に承認" in why
    assert "人の判断が必要" not in why
    assert ann.locator("p.meta [data-due]").count() == 0
