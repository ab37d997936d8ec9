"""Issue 29, what a reviewer misses, in headless Chromium: a half-approved answer says "1 of 2"
with the first approver's reason; the queue's filters follow into its address and the live
rows keep to them; bulk approval says, per decision, done or recorded; a citation opens the
paragraph it names; the header counts the reviewer's day, in Japanese too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from decisions import services
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
from tests.web.test_issue18_browser import agent_key, listen, submit

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "set_policy"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]


def test_a_reviewer_sees_1_of_2_shares_a_filtered_view_bulk_approves_and_opens_a_citation(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given a zone that needs two approvals, and an answer bo has approved once
    set_policy(tau=0.99, refusal_floor=0.0, approvals_required=2)
    person("ann", Role.REVIEWER, "G1.U1.P1")
    bo = person("bo", Role.REVIEWER, "G1.U1.P1")
    base = live_asgi.url
    key = agent_key()
    first = submit(base, key, policy_doc)
    services.decision_approve(decision_id=first, user=bo, reason="the figure is right")
    ann = log_in(browser, base, "ann")
    heard = listen(ann)
    # when ann opens the queue
    ann.goto(f"{base}/queue/")
    row = ann.locator(f'tr[data-id="{first}"]')
    row.wait_for()
    ann.wait_for_selector("#live[data-state=live]")
    # then the row says 1 of 2, by bo and why; the header counts the day
    half = row.locator(".half-approved").inner_text()
    assert "1 of 2 approvals" in half
    assert "first by bo" in half
    assert "the figure is right" in half
    assert ann.locator("#day-progress").inner_text() == "Today in your zones: 0 of 1 decided"
    # when she orders the newest first and narrows to a word
    ann.select_option("select[name=sort]", "newest")
    ann.locator("#f-q").press_sequentially("zebra")
    ann.wait_for_function("() => location.search.includes('q=zebra')")
    # then the address carries the view, to share as a link
    assert "sort=newest" in ann.url
    ann.wait_for_selector(f'tr[data-id="{first}"]', state="detached")
    # and an answer arriving live shows only if it matches the filters
    other = submit(base, key, policy_doc)
    zebra = submit(base, key, policy_doc, question="Who approves a zebra above 500,000 yen?")
    ann.locator(f'tr[data-id="{zebra}"]').wait_for()
    assert ann.locator(f'tr[data-id="{other}"]').count() == 0
    # a colleague opening the link sees the same view
    shared = ann.url
    colleague = log_in(browser, base, "bo")
    colleague.goto(shared)
    colleague.locator(f'tr[data-id="{zebra}"]').wait_for()
    assert colleague.locator(f'tr[data-id="{other}"]').count() == 0
    assert colleague.locator("select[name=sort]").input_value() == "newest"
    # when ann clears the text, ticks both waiting answers and approves them in bulk
    ann.fill("#f-q", "")
    ann.press("#f-q", "Enter")
    ann.wait_for_function("() => !location.search.includes('q=')")
    ann.locator(f'tr[data-id="{first}"]').wait_for()
    ann.check(f'tr[data-id="{first}"] input[name=decisions]')
    ann.check(f'tr[data-id="{zebra}"] input[name=decisions]')
    ann.select_option("#bulk-action", "approve")
    ann.fill("#bulk-reason", "checked in bulk")
    ann.click("#bulk-apply")
    ann.wait_for_selector("ul.messages")
    # then each says what came of it: bo's is complete, the new one waits for a second person
    told = ann.locator("ul.messages").inner_text()
    assert f"1 decision: done. #{first}" in told
    assert f"#{zebra}: your approval is recorded" in told
    assert Decision.objects.get(pk=first).state == State.COMPLETED
    assert Decision.objects.get(pk=zebra).state == State.APPROVAL_REQUIRED
    # the queue comes back in the order she had chosen, the header counts her day
    assert "sort=newest" in ann.url
    assert ann.locator("#day-mine").inner_text() == "you: 2 today, 2 this week"
    assert ann.locator("#day-progress").inner_text() == "Today in your zones: 1 of 3 decided"
    # when she opens a decision's citation
    ann.goto(f"{base}/queue/decisions/{other}/")
    cite = ann.locator("a.cite").first
    assert cite.inner_text() == f"Travel policy v1 ¶{policy_doc.number}"
    cite.click()
    # then the document's page opens on that paragraph
    ann.wait_for_url(f"**/documents/{policy_doc.version.document_id}/?version=1#p*")
    target = ann.locator(f"#p{policy_doc.number}")
    assert "500,000 yen require" in target.inner_text()
    assert target.evaluate("el => el.matches(':target')")
    # and in Japanese, the queue's new words are Japanese
    ann.context.add_cookies([{"name": "django_language", "value": "ja", "url": base}])
    ann.goto(f"{base}/queue/")
    ann.locator(f'tr[data-id="{zebra}"]').wait_for()
    assert "1 of 2" not in ann.locator(f'tr[data-id="{zebra}"]').inner_text()
    assert "Today in your zones" not in ann.locator("#reviewer-day").inner_text()
    assert heard == [], heard


def test_a_tick_for_the_bulk_form_outlives_the_live_refresh_of_the_rows(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given ann's queue with one waiting answer, which she ticks for the bulk form
    set_policy(tau=0.99, refusal_floor=0.0)
    person("ann", Role.REVIEWER, "G1.U1.P1")
    base = live_asgi.url
    key = agent_key()
    first = submit(base, key, policy_doc)
    ann = log_in(browser, base, "ann")
    ann.goto(f"{base}/queue/")
    ann.locator(f'tr[data-id="{first}"]').wait_for()
    ann.wait_for_selector("#live[data-state=live]")
    ann.check(f'tr[data-id="{first}"] input[name=decisions]')
    # when another answer arrives and the rows are redrawn from the server
    arrived = submit(base, key, policy_doc)
    ann.locator(f'tr[data-id="{arrived}"]').wait_for()
    # then her tick is still there, and the new row is not ticked for her
    assert ann.locator(f'tr[data-id="{first}"] input[name=decisions]').is_checked()
    assert not ann.locator(f'tr[data-id="{arrived}"] input[name=decisions]').is_checked()
