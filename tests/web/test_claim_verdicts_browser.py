"""A reviewer's verdict per claim on the decision page, in headless Chromium against the ASGI
app (the server, browser and log-in of tests/web/test_browser.py): the toggles come set to
the engine's verdict only where it verified or refuted the claim, a decision with a claim left
open or a rejection without an unsupported claim is stopped in the page, and one with it is
recorded and shown on the trail (issue 16 point 1, issue 27 point 1)."""

from __future__ import annotations

import itertools
import json
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from decisions.models import ClaimVerdict, Decision, State
from tests.decisions.conftest import GOOD, UNVERIFIABLE, cite
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
from tests.web.test_issue18_browser import agent_key, listen
from trail.models import TrailEvent

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "set_policy"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]

_keys = itertools.count(1)
NOTE = "the policy says 500,000 yen"


def submit_two_claims(base: str, key: str, paragraph: Any) -> int:
    """POST an answer of two claims as the agent: the first the engine verifies, the second it
    cannot (the paragraph says nothing of flights)."""
    body = {
        "question": "Who approves travel expenses above 500,000 yen?",
        "answer": f"{GOOD} {UNVERIFIABLE}",
        "zone": ZONE,
        "agent": f"{ZONE}.A1",
        "claims": [
            {"text": GOOD, "citations": [cite(paragraph)]},
            {"text": UNVERIFIABLE, "citations": [cite(paragraph)]},
        ],
    }
    request = urllib.request.Request(  # noqa: S310 - the local test server
        f"{base}/api/v1/decisions/",
        data=json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Idempotency-Key": f"verdicts-{next(_keys)}",
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        assert response.status == 201
        return int(json.loads(response.read())["id"])


def test_a_reviewer_judges_each_claim_and_a_rejection_names_the_wrong_one(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given a decision of two claims waiting for review: the engine holds the first
    set_policy(tau=0.99, refusal_floor=0.0)
    person("rita", Role.REVIEWER, ZONE)
    person("olga", Role.AUDITOR, "G1")
    base = live_asgi.url
    decision_id = submit_two_claims(base, agent_key(), policy_doc)
    assert Decision.objects.get(pk=decision_id).state == State.APPROVAL_REQUIRED
    page_url = f"{base}/queue/decisions/{decision_id}/"
    rita = log_in(browser, base, "rita")
    heard = listen(rita)
    rita.goto(page_url)
    rita.wait_for_selector('#live[data-state="live"]')
    rita.click("#claim")
    rita.wait_for_selector("#reject")

    # then each claim has a choice, set where the engine verified it, open where it could not
    assert rita.is_checked("#claim-0-supported")
    assert not rita.is_checked("#claim-1-supported")
    assert not rita.is_checked("#claim-1-unsupported")

    # when she rejects without saying anything of the second claim
    rita.fill("#reject-reason", "wrong amount")
    rita.click("#reject")
    # then the page stops it and asks for her choice
    rita.wait_for_selector("#verdict-problem:not([hidden])")
    assert "could not verify" in rita.inner_text("#verdict-problem")
    assert Decision.objects.get(pk=decision_id).state == State.APPROVAL_REQUIRED

    # when she marks every claim supported and rejects
    rita.check("#claim-1-supported")
    rita.click("#reject")
    # then the page stops it, says why, and nothing is rejected
    rita.wait_for_selector("#verdict-problem:not([hidden])")
    assert "at least one claim as not supported" in rita.inner_text("#verdict-problem")
    rita.locator("#claim-1").scroll_into_view_if_needed()
    shoot(rita, "claim-verdicts-reject-stopped")
    assert rita.url == page_url
    assert Decision.objects.get(pk=decision_id).state == State.APPROVAL_REQUIRED
    assert not ClaimVerdict.objects.exists()

    # when she marks the second claim unsupported, with a note, and presses r on the toggle
    rita.fill("#claim-1-note", NOTE)
    rita.check("#claim-1-unsupported")
    rita.focus("#claim-1-unsupported")
    rita.keyboard.press("r")
    # then it is rejected and she is back at the queue, the next item in front of her
    rita.wait_for_url(f"{base}/queue/")
    assert f"Decision {decision_id} rejected." in rita.inner_text("ul.messages")
    rows = ClaimVerdict.objects.filter(decision_id=decision_id).order_by("claim")
    assert [(r.claim, r.supported, r.note, r.engine_supported) for r in rows] == [
        (0, True, "", True),
        (1, False, NOTE, False),
    ]
    failed = TrailEvent.objects.get(decision_id=decision_id, kind="decision.failed")
    assert failed.payload["claims"] == [
        {"index": 0, "supported": True, "note": ""},
        {"index": 1, "supported": False, "note": NOTE},
    ]

    # and the trail shows the verdicts, on her page and on the auditor's
    rita.goto(page_url)
    verdict = rita.locator('li[data-kind="decision.failed"] li[data-index="1"]')
    assert "unsupported" in verdict.inner_text()
    assert NOTE in verdict.inner_text()
    olga = log_in(browser, base, "olga")
    olga.goto(f"{base}/audit/decisions/{decision_id}/")
    olga.locator('li[data-kind="decision.failed"]').scroll_into_view_if_needed()
    shoot(olga, "claim-verdicts-audit-trail")
    trail = olga.locator('li[data-kind="decision.failed"] li[data-index="1"]').inner_text()
    assert "claim 2" in trail
    assert NOTE in trail
    review = olga.locator('li[data-reviewer="rita"][data-supported="false"]').inner_text()
    assert NOTE in review
    # and no page broke the Content-Security-Policy or raised an error
    assert [h for h in heard if "error" in h.lower() or "violat" in h.lower()] == []
