"""The governance dashboard in headless Chromium against the ASGI app (the server, browser
and log-in of tests/web/test_browser.py): two weeks of a zone's decisions drawn as SVG, the
numbers of the API on the page, and nothing in the console (no CSP violation)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone

from coordinates.coordinate import parse
from coordinates.models import Role
from decisions import services
from gates import dashboard, kpis
from tests.decisions.conftest import GOOD, WRONG_NUMBER, cite, submit
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


def test_the_dashboard_draws_every_figure_without_a_console_message(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    # given two weeks of answers: released, reviewed (some rejected, some late), blocked
    reviewer = person("rita", Role.REVIEWER, ZONE)
    person("zed", Role.ZONE_ADMIN, ZONE)
    start = timezone.now().replace(hour=8, minute=0, second=0, microsecond=0)
    start -= timedelta(days=13)
    clock = {"now": start}
    with mock.patch("django.utils.timezone.now", side_effect=lambda: clock["now"]):
        for day in range(14):
            at = start + timedelta(days=day)
            clock["now"] = at
            set_policy(tau=0.2, delta=0.05, refusal_floor=0.01, floor=0.01)
            for _ in range(2 + day % 3):
                submit([{"text": GOOD, "citations": [cite(policy_doc)]}])
            set_policy(tau=0.99, refusal_floor=0.05, review_sla_hours=1.0)
            queued = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()["id"]
            clock["now"] = at + timedelta(minutes=20 + 9 * day)
            if day % 4 == 3:
                services.decision_reject(
                    decision_id=queued,
                    user=reviewer,
                    reason="not so",
                    claims=[{"index": 0, "supported": False}],
                )
            else:
                services.decision_approve(decision_id=queued, user=reviewer, reason="ok")
            if day % 2:
                clock["now"] = at + timedelta(hours=2)
                submit([{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}])
    figures = kpis.zone_kpis(parse(ZONE), kpis.window_from({}))
    assert figures["decisions"]["total"] > 0
    # when the zone admin opens the dashboard from the zone page
    base = live_asgi.url
    page = log_in(browser, base, "zed")
    heard: list[str] = []
    page.on("console", lambda m: heard.append(f"console.{m.type}: {m.text}"))
    page.on("pageerror", lambda e: heard.append(f"pageerror: {e}"))
    session = page.context.new_cdp_session(page)
    session.on("Log.entryAdded", lambda e: heard.append(f"log: {e['entry']['text']}"))
    session.send("Log.enable")
    page.goto(f"{base}/zones/{ZONE}/")
    page.click("#dashboard-link")
    page.wait_for_selector("#kpi-trust svg polyline")
    # then every figure is there with its chart, as the API says, and the console is silent
    for row in dashboard.dashboard_rows(figures):
        shown = page.text_content(f'[data-kpi="{row["name"]}"]')
        assert shown is not None
        assert shown.strip() == row["shown"], row["name"]
    assert page.locator(".kpi svg").count() == len(dashboard.FIGURE_ROWS) + 1
    shoot(page, "dashboard", readme=True)
    assert heard == []
