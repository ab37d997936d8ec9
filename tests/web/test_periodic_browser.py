"""Periodic review in headless Chromium against the ASGI app (the server, browser and log-in
of tests/web/test_browser.py): two reviewers work through the flagged answers of their
zone: one claims an item, the other sees it held; a verdict of "wrong" needs a note; each
close leads to the next open item; closed items are found by their verdict."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from decisions.models import PeriodicReview
from tests.web.test_browser import (
    CHROMIUM,
    LiveASGI,
    browser,
    committed_trail,
    live_asgi,
    log_in,
    policy_doc,
    set_policy,
    shoot,
)
from tests.web.test_issue18_browser import agent_key, submit

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "set_policy"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]


def sampled(decision_id: int) -> PeriodicReview:
    """The decision's periodic review, once the server's validation has written it."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        review = PeriodicReview.objects.filter(decision_id=decision_id).first()
        if review is not None:
            return review
        time.sleep(0.05)
    raise AssertionError(f"decision {decision_id} was not sampled for periodic review")


def test_two_reviewers_claim_close_with_a_verdict_and_move_to_the_next_item(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given a zone whose answers the gate flags, two of them sampled, and two reviewers
    set_policy(tau=0.2, refusal_floor=0.1, floor=0.33)
    person("ann", Role.REVIEWER, "G1.U1.P1")
    person("ben", Role.REVIEWER, "G1.U1.P1")
    person("olga", Role.AUDITOR, "G1")
    base = live_asgi.url
    key = agent_key()
    first = sampled(
        submit(base, key, policy_doc, question="Who approves expenses above 500,000 yen?")
    )
    second = sampled(
        submit(
            base,
            key,
            policy_doc,
            question="Who must approve expenses above 500,000 yen in advance?",
        )
    )
    ann, ben = log_in(browser, base, "ann"), log_in(browser, base, "ben")

    # when ann opens the list from the header and starts with the next item
    ann.click("header nav >> text=Periodic review")
    ann.wait_for_url(f"{base}/reviews/periodic/")
    assert ann.query_selector(f'#periodic-rows tr[data-id="{first.pk}"]') is not None
    assert ann.query_selector(f'#periodic-rows tr[data-id="{second.pk}"]') is not None
    ann.click("#next")
    ann.wait_for_url(f"{base}/reviews/periodic/{first.pk}/")
    assert "Who approves expenses above 500,000 yen?" in ann.inner_text("#question")
    assert "weak" in ann.inner_text("#why")
    ann.click("#claim")
    ann.wait_for_selector("#release")
    assert f"You hold periodic review {first.pk}." in ann.inner_text("ul.messages")

    # then ben sees it held by ann, in the list and on its page, and can act on it not at all
    ben.goto(f"{base}/reviews/periodic/")
    row = f'#periodic-rows tr[data-id="{first.pk}"]'
    assert "locked" in (ben.get_attribute(row, "class") or "")
    assert "ann" in ben.inner_text(f"{row} .holder")
    assert ben.get_attribute("#next", "href") == f"/reviews/periodic/{second.pk}/"
    ben.goto(f"{base}/reviews/periodic/{first.pk}/")
    assert "Claimed by ann" in ben.inner_text("#held")
    shoot(ann, "periodic-review-item")
    shoot(ben, "periodic-review-held")
    assert ben.query_selector("#claim") is None
    assert ben.query_selector("#close-form") is None

    # when ann says the answer was wrong but gives no note, she is told a note is needed
    ann.check("#verdict-wrong")
    ann.click("#close")
    ann.wait_for_selector("#close-error")
    said = ann.inner_text("#close-error")
    assert said == "Note: a note is required when the verdict is wrong", said
    # and her choice is kept, the note field marked and in focus (issue 29 item 11)
    assert ann.is_checked("#verdict-wrong")
    assert ann.evaluate("document.activeElement.id") == "note"
    assert ann.get_attribute("#note", "aria-invalid") == "true"
    # and with a note the item closes and the next open item opens
    ann.fill("#note", "the limit is 300,000 yen since April")
    ann.click("#close")
    ann.wait_for_url(f"{base}/reviews/periodic/{second.pk}/")
    assert f"Periodic review {first.pk} closed: wrong." in ann.inner_text("ul.messages")
    # and after the last one she is back on the list, told nothing is left
    ann.check("#verdict-ok")
    ann.click("#close")
    ann.wait_for_url(f"{base}/reviews/periodic/")
    said = ann.inner_text("ul.messages")
    assert f"Periodic review {second.pk} closed: ok." in said
    assert "No open periodic review is left for you." in said

    # then the closed items are found by their verdict, with the reviewer and the note
    ben.goto(f"{base}/reviews/periodic/?state=closed&verdict=wrong")
    rows = ben.query_selector_all("#periodic-rows tr[data-id]")
    assert [r.get_attribute("data-id") for r in rows] == [str(first.pk)]
    assert "the limit is 300,000 yen since April" in ben.inner_text("#periodic-rows")
    assert "ann" in ben.inner_text("#periodic-rows")
    ben.goto(f"{base}/reviews/periodic/{first.pk}/")
    assert "Closed as wrong by ann." in ben.inner_text("#closed")
    assert PeriodicReview.objects.filter(
        pk=first.pk, verdict="wrong", reviewed_by__username="ann"
    ).exists()

    # and an auditor, who reviews nothing, has no link to it and may not open it
    olga = log_in(browser, base, "olga")
    assert olga.query_selector("header nav >> text=Periodic review") is None
    assert olga.goto(f"{base}/reviews/periodic/").status == 403
