"""Escalations that arrive and two-person overrides, in headless Chromium against the ASGI
app (issue 18 point 4; the server, browser and log-in of tests/web/test_browser.py): the
planet's reviewer finds an overdue review addressed to her and sends it back with a reason;
two zone admins release a blocked answer, one after the other."""

from __future__ import annotations

import itertools
import json
import urllib.request
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from coordinates.models import Role
from decisions import services
from decisions.models import Decision, State
from tests.decisions.conftest import GOOD, WRONG_NUMBER, cite
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
from trail.models import TrailEvent

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "set_policy"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]

_keys = itertools.count(1)


def submit(base: str, paragraph: Any, text: str) -> int:
    """POST an answer as the zone's agent over HTTP, as an agent would."""
    from coordinates.coordinate import parse
    from coordinates.services import token_issue

    _, key = token_issue(agent=parse(f"{ZONE}.A1"))
    body = {
        "question": "Who approves travel expenses above 500,000 yen?",
        "answer": text,
        "zone": ZONE,
        "agent": f"{ZONE}.A1",
        "claims": [{"text": text, "citations": [cite(paragraph)]}],
    }
    request = urllib.request.Request(  # noqa: S310 - the local test server
        f"{base}/api/v1/decisions/",
        data=json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Idempotency-Key": f"h6-{next(_keys)}",
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        assert response.status == 201
        return int(json.loads(response.read())["id"])


def test_the_planets_reviewer_finds_the_escalated_review_and_sends_it_back(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given an answer waiting in the zone whose review SLA ran out, moved up by the job
    set_policy(tau=0.99, refusal_floor=0.05)
    person("pia", Role.REVIEWER, "G1.U1.P1")
    base = live_asgi.url
    decision_id = submit(base, policy_doc, GOOD)
    Decision.objects.filter(pk=decision_id).update(due_at=timezone.now() - timedelta(minutes=5))
    assert services.decisions_escalate_overdue() == 1
    # when the planet's reviewer opens her queue, filtered to what was escalated to her
    pia = log_in(browser, base, "pia")
    pia.goto(f"{base}/queue/")
    row = f'#queue-rows tr[data-id="{decision_id}"]'
    pia.wait_for_selector(f"{row}.escalated-to-me")
    said = pia.inner_text(f"{row} .escalation")
    assert "escalated to you" in said
    assert f"escalated from {ZONE}: overdue since" in said
    pia.select_option("select[name=state]", "to_me")
    pia.wait_for_selector(row)
    # and opens it: the page says it was escalated to the planet, and why
    pia.click(f"{row} a.open")
    pia.wait_for_selector("#escalation")
    assert "Escalated to the authority of G1.U1.P1" in pia.inner_text("#escalation")
    # when she sends it back asking for the evidence it lacks
    pia.fill("#send-back-reason", "cite the signed approval memo")
    pia.click("#send-back")
    # then she is back in her queue, told so, and the answer failed for more evidence
    pia.wait_for_url(f"{base}/queue/")
    assert f"Decision {decision_id} sent back to its agent for more evidence." in pia.inner_text(
        "ul.messages"
    )
    decision = Decision.objects.get(pk=decision_id)
    assert decision.state == State.FAILED
    assert decision.outcome_reason == "more evidence needed: cite the signed approval memo"
    assert pia.query_selector(row) is None


def test_two_zone_admins_release_a_blocked_answer_one_after_the_other(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
) -> None:
    # given a blocked answer and two zone admins holding the override permission
    override = Permission.objects.get(codename="override_blocked")
    for name in ("zed", "zoe"):
        person(name, Role.ZONE_ADMIN, ZONE).user_permissions.add(override)
    base = live_asgi.url
    decision_id = submit(base, policy_doc, WRONG_NUMBER)
    assert Decision.objects.get(pk=decision_id).gate == "blocked"
    url = f"{base}/queue/decisions/{decision_id}/"
    # when the first asks for the override with a reason
    zed = log_in(browser, base, "zed")
    zed.goto(url)
    assert "Request an override" in zed.inner_text("#override-button")
    zed.fill("#override-reason", "the division head confirmed by phone")
    zed.click("#override-button")
    # then it is recorded, the answer stays blocked, and he is not offered it again
    zed.wait_for_selector("#override-progress")
    assert "is recorded (1 of 2)" in zed.inner_text("ul.messages")
    progress = zed.inner_text("#override-progress")
    assert "1 of 2 override approvals" in progress
    assert "zed: the division head confirmed by phone" in progress
    assert zed.query_selector("#override-form") is None
    assert Decision.objects.get(pk=decision_id).state == State.FAILED
    # when the second admin completes it with her own reason
    zoe = log_in(browser, base, "zoe")
    zoe.goto(url)
    assert "1 of 2 override approvals" in zoe.inner_text("#override-progress")
    assert "Complete the override" in zoe.inner_text("#override-button")
    zoe.fill("#override-reason", "the head's email of today confirms it")
    zoe.click("#override-button")
    # then the answer is released, with both on the trail
    zoe.wait_for_selector("ul.messages")
    assert f"Decision {decision_id} released over its block by two people." in zoe.inner_text(
        "ul.messages"
    )
    assert Decision.objects.get(pk=decision_id).state == State.COMPLETED
    done = TrailEvent.objects.get(decision_id=decision_id, kind="decision.overridden")
    assert (done.actor, done.payload["requested_by"]) == ("zoe", "zed")
