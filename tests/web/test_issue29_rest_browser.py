"""Issue 29 (9, 11) in headless Chromium: back after approving shows the decision as it is
now, not the buttons of the page before; the thresholds form's error is in view and in
focus; the auditor goes from Verify to the checkpoints, in Japanese."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connections
from django.test import override_settings

from coordinates.models import Role
from decisions.models import Decision, State
from tests.web.test_browser import (
    ARGS,
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
from trail import checkpoints, signing

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "set_policy"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]


@pytest.fixture
def browser_with_bfcache(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Chromium as a person runs it: with the back-forward cache, which Playwright turns off
    by default (the stale page came back from it)."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with playwright_sync.sync_playwright() as p:
        instance = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=ARGS,
            ignore_default_args=["--disable-back-forward-cache"],
        )
        try:
            yield instance
        finally:
            instance.close()
            connections.close_all()


def test_back_after_approving_shows_the_decision_approved_not_live_buttons(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser_with_bfcache: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given an answer waiting for one reviewer
    set_policy(tau=0.05, delta=0.02, refusal_floor=0.0, release_kinds=["contract"])
    person("ann", Role.REVIEWER, "G1.U1.P1")
    base = live_asgi.url
    decision_id = submit(base, agent_key(), policy_doc)
    ann = log_in(browser_with_bfcache, base, "ann")
    # when she claims it, approves it, and goes back
    ann.goto(f"{base}/queue/decisions/{decision_id}/")
    ann.click("#claim")
    ann.wait_for_selector("#approve")
    ann.click("#approve")
    ann.wait_for_selector("ul.messages")
    assert Decision.objects.get(pk=decision_id).state == State.COMPLETED
    # (a page the back-forward cache restores fires no load event: wait for the commit)
    ann.go_back(wait_until="commit")
    # then the page she is back on is the decision as it is now: approved, nothing to press
    ann.wait_for_function(
        "() => (document.querySelector('#why') || {innerText: ''}).innerText"
        ".startsWith('Approved by ann on ')"
    )
    assert ann.locator("#approve:not([disabled])").count() == 0


def test_the_thresholds_error_is_in_view_and_in_focus(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    org: Any,
) -> None:
    # given a zone admin on a short screen, saving a value the zone does not allow
    person("zed", Role.ZONE_ADMIN, "G1.U1.P1")
    base = live_asgi.url
    zed = log_in(browser, base, "zed")
    zed.set_viewport_size({"width": 1280, "height": 640})
    zed.goto(f"{base}/zones/G1.U1.P1.Z1/")
    zed.fill("#id_approvals_required", "9")
    zed.fill("#id_reason", "two more")
    zed.click("#save")
    zed.wait_for_selector("#policy-errors")
    # then what is wrong is on screen and has the focus, naming the field
    assert zed.evaluate("document.activeElement.id") == "policy-errors"
    top, bottom = zed.locator("#policy-errors").evaluate(
        "e => [e.getBoundingClientRect().top, e.getBoundingClientRect().bottom]"
    )
    assert top >= 0, top
    assert bottom <= 640, bottom
    assert "approvals_required must be 1 to 5, got 9" in zed.inner_text("#policy-errors")
    # and its link takes her to the field
    zed.click("#policy-errors a[href='#id_approvals_required']")
    assert zed.evaluate("location.hash") == "#id_approvals_required"


def test_the_auditor_goes_from_verify_to_the_signed_checkpoints_in_japanese(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
) -> None:
    # given a signed checkpoint over an answer's trail
    seed = signing.new_seed()
    signing._configured.cache_clear()
    person("olga", Role.AUDITOR, "G1")
    base = live_asgi.url
    try:
        with override_settings(MARIA_TRAIL_SIGNING_KEY=seed, MARIA_TRAIL_WITNESS=""):
            submit(base, agent_key(), policy_doc)
            checkpoints.checkpoint_create()
            key = signing.public_key()
            assert key is not None
            olga = log_in(browser, base, "olga")
            olga.context.add_cookies([{"name": "django_language", "value": "ja", "url": base}])
            # when the auditor opens Verify and follows the checkpoints link
            olga.goto(f"{base}/audit/verify/")
            olga.click("#checkpoints-link")
            olga.wait_for_selector("#checkpoints")
            row = olga.locator('#checkpoints tr[data-seq="1"]').inner_text()
    finally:
        signing._configured.cache_clear()
    # then it lists the checkpoint with the key that signed it, verified, and no witness
    assert key.key_id in row
    assert "署名を検証済み" in row
    assert "ウィットネスが設定されていない" in olga.inner_text("#witness-state")
