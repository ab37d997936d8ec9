"""The threshold advice on the zone page in headless Chromium against the ASGI app (the server,
browser and log-in of tests/web/test_browser.py): a zone admin sees the plot with the current
and the advised tau, enters a target and costs, and reads the figures the API gives; nothing
in the console (no CSP violation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from coordinates.coordinate import parse
from gates import advice_data
from tests.decisions.conftest import submit
from tests.gates.test_advice_api import CURRENT_TAU, build_world
from tests.web.test_browser import (
    CHROMIUM,
    ZONE,
    LiveASGI,
    browser,
    committed_trail,
    live_asgi,
    log_in,
    policy_doc,
    set_policy,
    shoot,
)

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "set_policy", "submit"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]


def test_a_zone_admin_reads_the_advice_and_prices_it(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    ingest: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given a zone with 34 reviewed decisions (enough to trust the curve)
    build_world(
        policy_doc=policy_doc,
        set_policy=set_policy,
        submit=submit,
        person=person,
        on_commit=django_capture_on_commit_callbacks,
        ingest=ingest,
        copies=2,
    )
    found, _ = advice_data.zone_advice(parse(ZONE))
    assert found.enough_reviews
    assert found.advised is not None
    # when the zone admin opens the zone page
    base = live_asgi.url
    page = log_in(browser, base, "zed")
    heard: list[str] = []
    page.on("console", lambda m: heard.append(f"console.{m.type}: {m.text}"))
    page.on("pageerror", lambda e: heard.append(f"pageerror: {e}"))
    session = page.context.new_cdp_session(page)
    session.on("Log.entryAdded", lambda e: heard.append(f"log: {e['entry']['text']}"))
    session.send("Log.enable")
    page.goto(f"{base}/zones/{ZONE}/")
    # then the plot is there with the current and the advised tau marked
    page.wait_for_selector("#advice-plot polyline.human")
    assert page.locator('#advice-plot line[data-mark="current"]').get_attribute("data-tau") == (
        f"{CURRENT_TAU:g}"
    )
    advised = page.text_content("[data-advised-tau]")
    assert advised is not None
    assert advised.strip() == f"{found.advised.tau}"
    assert page.locator('#advice-plot line[data-mark="advised"]').count() == 1
    assert page.locator("#advice-warning").count() == 0  # 34 reviewed: no warning
    # when they ask for at most 15% wrong and enter the paper's costs
    page.fill("#advice-target", "0.15")
    page.fill("#advice-ch", "2400")
    page.fill("#advice-cr", "0.5")
    page.fill("#advice-ca", "5")
    page.click("#advice-submit")
    page.wait_for_selector('[data-figure="respond_cost"]')
    # then the advised tau and its figures are the ones the advice computes
    priced, p_requery = advice_data.zone_advice(parse(ZONE), target=0.15, costs=(2400.0, 0.5, 5.0))
    assert priced.advised is not None
    assert priced.advised.economics is not None
    assert page.text_content("[data-advised-tau]") == f"{priced.advised.tau}"
    row = page.locator(f'#advice-points tr[data-tau="{priced.advised.tau}"]')
    assert (
        row.locator('[data-figure="reviewed_wrong"]')
        .inner_text()
        .startswith(f"{priced.advised.reviewed_wrong} ")
    )
    assert row.locator('[data-figure="respond_cost"]').inner_text() == (
        f"{priced.advised.economics.respond_cost:.2f}"
    )
    assert p_requery == 0.0  # the one refusal was not asked again
    assert page.text_content('[data-figure="break_even"]') is not None
    page.locator("#advice").scroll_into_view_if_needed()
    shoot(page, "advice", readme=True)
    assert heard == []
