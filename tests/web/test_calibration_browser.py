"""The zone's calibration page in headless Chromium against the ASGI app (the server,
browser and log-in of tests/web/test_browser.py): a zone admin reads a proposed version's
reliability, previews it, adopts it with a reason, and the console stays silent (no CSP
violation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role, Zone
from decisions import calibration as service
from evidence.models import ZoneCalibration
from tests.decisions.conftest import submit
from tests.decisions.test_zone_calibration import verdicts
from tests.web.test_browser import (
    CHROMIUM,
    ZONE,
    LiveASGI,
    browser,
    committed_trail,
    live_asgi,
    log_in,
    policy_doc,
    shoot,
)

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "submit", "verdicts"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]


def test_a_zone_admin_previews_and_adopts_a_calibration_on_its_page(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    verdicts: Any,
) -> None:
    # given a proposed calibration from 200 reviewer verdicts
    verdicts(200)
    zone = Zone.objects.get(coordinate=ZONE)
    proposed = service.calibration_propose(zone=zone, fitted_by="manage.py calibrate").calibration
    assert proposed is not None
    admin = person("ada", Role.ZONE_ADMIN, ZONE)
    # when the zone admin opens the page
    base = live_asgi.url
    page = log_in(browser, base, "ada")
    heard: list[str] = []
    page.on("console", lambda m: heard.append(f"console.{m.type}: {m.text}"))
    page.on("pageerror", lambda e: heard.append(f"pageerror: {e}"))
    page.goto(f"{base}/zones/{ZONE}/calibration/")
    # then the version is there with its reliability before and after, as stored
    row = page.locator("#version-1")
    assert row.get_attribute("data-status") == "proposed"
    brier = row.locator('[data-figure="brier"] td.num')
    assert brier.nth(0).text_content() == f"{proposed.reliability_before['brier']:.4f}"
    assert brier.nth(1).text_content() == f"{proposed.reliability_after['brier']:.4f}"
    assert "none" in (page.text_content("#in-force") or "")
    # when they preview it, the what-if table appears and nothing changes
    page.click('[data-preview="1"]')
    page.wait_for_selector("#preview-table")
    preview = service.calibration_preview(zone=zone, version=1, user=admin)
    summary = page.locator("#preview-summary")
    assert summary.get_attribute("data-changed") == str(preview.changed)
    assert ZoneCalibration.objects.get(pk=proposed.pk).status == "proposed"
    # when they adopt it with a reason, it is adopted and in force
    page.fill("#reason-1", "the reviewers' verdicts disagree with the global model")
    page.click('[data-adopt="1"]')
    page.wait_for_selector('#version-1[data-status="adopted"]')
    assert "version 1" in (page.text_content("#in-force") or "")
    assert ZoneCalibration.objects.get(pk=proposed.pk).adopted_by == admin
    shoot(page, "calibration")
    assert heard == []
