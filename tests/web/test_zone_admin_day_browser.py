"""The zone admin's and auditor's pages of issue 29 in headless Chromium against the ASGI app
(the server, browser and log-in of tests/web/test_browser.py): help under every threshold,
the version history as the fields each version changed, calibration proposed from the web
with its preview before adopting and a rollback, the advice plot's axis around the zone's
tau, and the reviewed decisions downloaded; nothing in the console (no CSP violation)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coordinates import policy as zone_policy
from coordinates.coordinate import parse
from coordinates.models import Role, Zone
from coordinates.services import policy_update, zone_add
from decisions import calibration as service
from decisions.models import ClaimVerdict
from evidence.models import ZoneCalibration
from gates import advice_data, advice_views, reviews_download
from tests.decisions.conftest import submit
from tests.decisions.test_zone_calibration import verdicts
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
)

__all__ = [
    "browser",
    "committed_trail",
    "live_asgi",
    "policy_doc",
    "set_policy",
    "submit",
    "verdicts",
]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]


def _listen(page: Any) -> list[str]:
    heard: list[str] = []
    page.on("console", lambda m: heard.append(f"console.{m.type}: {m.text}"))
    page.on("pageerror", lambda e: heard.append(f"pageerror: {e}"))
    return heard


def test_every_threshold_says_what_it_does_and_the_history_names_what_changed(
    committed_trail: None, live_asgi: LiveASGI, browser: Any, person: Callable[..., Any]
) -> None:
    # given a zone whose admin set tau, then moved tau and the approvals and dropped nothing
    zone = zone_add(coordinate=parse(ZONE))
    admin = person("ada", Role.ZONE_ADMIN, ZONE)
    policy_update(zone=zone, overrides={"tau": 0.8}, reason="stricter for HR", actor=admin)
    policy_update(
        zone=zone,
        overrides={"tau": 0.75, "approvals_required": 2},
        reason="two eyes on payroll",
        actor=admin,
    )
    # when the admin opens the zone page
    page = log_in(browser, live_asgi.url, "ada")
    heard = _listen(page)
    page.goto(f"{live_asgi.url}/zones/{ZONE}/")
    # then every field of the form has a help text under it, with its range
    for name in zone_policy.FIELD_NAMES:
        help_text = page.locator(f'#policy-form [data-help="{name}"]')
        assert help_text.is_visible(), name
        assert len(help_text.inner_text()) > 20, name
    assert "0 to 1" in page.inner_text('[data-help="tau"]')
    assert "1 to 5" in page.inner_text('[data-help="approvals_required"]')
    assert page.get_attribute("#id_tau", "aria-describedby") == "id_tau_helptext"
    # and the history is a table of what changed, who, when and why: no Python dict
    history = page.locator("#policy-history")
    assert "{" not in history.inner_text()
    v2 = history.locator('tbody[data-version="2"]')
    assert v2.locator("tr[data-field]").evaluate_all("rows => rows.map(r => r.dataset.field)") == [
        "tau",
        "approvals_required",
    ]
    tau = v2.locator('tr[data-field="tau"]')
    assert tau.locator("[data-before]").inner_text() == "0.8"
    assert tau.locator("[data-after]").inner_text() == "0.75"
    approvals = v2.locator('tr[data-field="approvals_required"]')
    assert approvals.locator("[data-before]").inner_text() == "inherited"
    assert approvals.locator("[data-after]").inner_text() == "2"
    assert "two eyes on payroll" in v2.inner_text()
    assert "ada" in v2.inner_text()
    v1 = history.locator('tbody[data-version="1"]')
    assert v1.locator("tr[data-field]").count() == 1
    assert heard == []


def test_the_advice_plot_is_centred_on_the_zones_current_tau(
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
    # given a zone at tau 0.9 with its reviewed decisions (the advice's world)
    build_world(
        policy_doc=policy_doc,
        set_policy=set_policy,
        submit=submit,
        person=person,
        on_commit=django_capture_on_commit_callbacks,
        ingest=ingest,
    )
    found, _ = advice_data.zone_advice(parse(ZONE))
    # when its admin opens the zone page
    page = log_in(browser, live_asgi.url, "zed")
    heard = _listen(page)
    page.goto(f"{live_asgi.url}/zones/{ZONE}/")
    page.wait_for_selector("#advice-plot polyline.human")
    # then the current tau's mark stands in the middle of the plot's panels
    frame = page.locator("#advice-plot rect.frame").first
    left = float(frame.get_attribute("x") or "nan")
    middle = left + float(frame.get_attribute("width") or "nan") / 2
    now = page.locator('#advice-plot line[data-mark="current"]')
    assert now.get_attribute("data-tau") == f"{CURRENT_TAU:g}"
    assert abs(float(now.get_attribute("x1") or "nan") - middle) < 0.2
    # and the axis reaches as far below it as above (no tick past tau 1), the advised tau on it
    lo, hi = advice_views.axis(CURRENT_TAU, found.advised.tau if found.advised else None)
    assert round(CURRENT_TAU - lo, 4) == round(hi - CURRENT_TAU, 4)
    ticks = page.locator("#advice-plot text[text-anchor=middle]").all_text_contents()
    labels = [float(t) for t in ticks if t.replace(".", "", 1).isdigit()]
    assert min(labels) == pytest.approx(lo)
    assert max(labels) <= 1.0
    if found.advised is not None:
        advised = page.locator('#advice-plot line[data-mark="advised"]')
        assert float(advised.get_attribute("x1") or "nan") >= left
    assert heard == []


def test_a_zone_admin_proposes_a_calibration_reads_its_preview_adopts_and_rolls_back(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    verdicts: Any,
) -> None:
    # given a zone with 30 reviewer verdicts (too few) and its admin on the calibration page
    verdicts(30)
    admin = person("ada", Role.ZONE_ADMIN, ZONE)
    person("aud", Role.AUDITOR, ZONE)
    page = log_in(browser, live_asgi.url, "ada")
    heard = _listen(page)
    page.goto(f"{live_asgi.url}/zones/{ZONE}/calibration/")
    # when they propose one, the page says why nothing was proposed
    page.click("#propose")
    problem = page.locator('[role=alert][data-field="verdicts"]')
    assert "30" in problem.inner_text()
    assert "50" in problem.inner_text()
    assert not ZoneCalibration.objects.exists()
    # given enough verdicts, when they propose again, version 1 is stored with their name
    verdicts(200, seed=5)
    page.click("#propose")
    page.wait_for_selector("#preview-table")
    proposed = ZoneCalibration.objects.get(zone__coordinate=ZONE, version=1)
    assert proposed.fitted_by == "ada"
    assert proposed.status == "proposed"
    # and its what-if preview is on the page before anything is adopted
    zone = Zone.objects.get(coordinate=ZONE)
    preview = service.calibration_preview(zone=zone, version=1, user=admin)
    assert page.get_attribute("#preview-summary", "data-changed") == str(preview.changed)
    # when they adopt it from under its preview, with a reason, it is in force
    page.fill("#preview-reason", "reviewers reject what the global model accepts")
    page.click('[data-adopt-previewed="1"]')
    page.wait_for_selector('#version-1[data-status="adopted"]')
    # when they propose and adopt a second version, the first retires
    page.click("#propose")
    page.fill("#preview-reason", "more verdicts since")
    page.click('[data-adopt-previewed="2"]')
    page.wait_for_selector('#version-2[data-status="adopted"]')
    assert page.get_attribute("#version-1", "data-status") == "retired"
    # then version 1 offers a rollback, and rolling back puts it in force again
    roll_back = page.locator('[data-adopt="1"]')
    assert roll_back.inner_text() == "Roll back to it"
    page.fill("#reason-1", "version 2 sent too much to people")
    roll_back.click()
    page.wait_for_selector('#version-1[data-status="adopted"]')
    assert "version 1" in page.inner_text("#in-force")
    assert ZoneCalibration.objects.get(zone=zone, version=2).status == "retired"
    assert heard == []
    # and an auditor reads the page without the propose button
    auditor = log_in(browser, live_asgi.url, "aud")
    auditor.goto(f"{live_asgi.url}/zones/{ZONE}/calibration/")
    assert auditor.locator("#versions").is_visible()
    assert auditor.locator("#propose").count() == 0


def test_an_auditor_downloads_the_zones_reviewed_claims_from_its_dashboard(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    verdicts: Any,
) -> None:
    # given 12 reviewer verdicts on the zone's claims, and an auditor of the zone
    verdicts(12)
    person("aud", Role.AUDITOR, ZONE)
    person("other", Role.AUDITOR, "G1.U1.P1.Z2")
    page = log_in(browser, live_asgi.url, "aud")
    heard = _listen(page)
    # when they open the zone's dashboard and download the reviewed data as CSV
    page.goto(f"{live_asgi.url}/zones/{ZONE}/dashboard/")
    with page.expect_download() as csv_download:
        page.click("#download-csv")
    rows = list(csv.DictReader(io.StringIO(Path(csv_download.value.path()).read_text())))
    # then it holds one row per verdict, with the reviewer's and the engine's word on each
    stored = ClaimVerdict.objects.filter(zone=ZONE).order_by("pk")
    assert len(rows) == stored.count() == 12
    first = stored.first()
    assert first is not None
    assert rows[0]["decision"] == str(first.decision_id)
    assert rows[0]["claim_index"] == str(first.claim)
    assert rows[0]["reviewer_supported"] == ("true" if first.supported else "false")
    assert float(rows[0]["engine_probability"]) == pytest.approx(first.engine_probability)
    assert rows[0]["reviewer"] == first.reviewer.get_username()
    assert csv_download.value.suggested_filename.startswith(f"reviews-{ZONE}-")
    # and the JSON Lines download is the reviews export's lines, the same verdicts
    with page.expect_download() as jsonl_download:
        page.click("#download-jsonl")
    lines = Path(jsonl_download.value.path()).read_text().splitlines()
    assert [json.loads(line)["claim_index"] for line in lines] == [v.claim for v in stored]
    # and a since in the future downloads the header alone
    page.fill("#reviews-since", "2999-01-01")
    with page.expect_download() as later:
        page.click("#download-csv")
    assert Path(later.value.path()).read_text().strip().startswith("decision,zone")
    assert len(Path(later.value.path()).read_text().strip().splitlines()) == 1
    # and a since that is no date comes back to the dashboard naming the field
    page.fill("#reviews-since", "last week")
    page.click("#download-csv")
    assert "since" in page.inner_text(".messages")
    assert heard == []
    # and an auditor of another zone cannot download this one's
    other = log_in(browser, live_asgi.url, "other")
    response = other.request.get(f"{live_asgi.url}/zones/{ZONE}/reviews/download/?format=csv")
    assert response.status == 404


def test_a_cell_a_spreadsheet_would_run_as_a_formula_is_quoted() -> None:
    line = json.dumps({"claim": '=HYPERLINK("http://x")', "note": "-1", "span": "ok"})
    header, row = "".join(reviews_download.csv_rows(iter([line]))).splitlines()
    record = dict(zip(header.split(","), next(csv.reader([row])), strict=True))
    assert record["claim"] == '\'=HYPERLINK("http://x")'
    assert record["note"] == "'-1"
    assert record["span"] == "ok"
