"""A reviewer's day in headless Chromium, in Japanese (issue 18.5 and 18.8): the decision page
says why the answer waits; a reviewer comments and assigns it to a colleague, who finds it
under "assigned to me", approves it and lands on the next waiting answer; an auditor reads the
comment on the trail. No page logs a console message. Screenshots of the queue and the
decision page in Japanese (docs/screenshots/*_ja.png with MARIA_UPDATE_SCREENSHOTS=1)."""

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
    shoot,
)
from tests.web.test_issue18_browser import agent_key, listen, submit
from trail.models import TrailEvent

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "set_policy"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]


def in_japanese(page: Any, base: str) -> Any:
    page.context.add_cookies([{"name": "django_language", "value": "ja", "url": base}])
    return page


def test_two_reviewers_and_an_auditor_work_an_answer_through_in_japanese(
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given two answers waiting for a person, two reviewers, a zone admin and an auditor
    set_policy(tau=0.99, refusal_floor=0.05)
    person("ann", Role.REVIEWER, "G1.U1.P1")
    person("ben", Role.REVIEWER, "G1.U1.P1")
    person("otto", Role.AUDITOR, "G1")
    base = live_asgi.url
    key = agent_key()
    first = submit(base, key, policy_doc, question="出張費の承認者は誰ですか？")
    second = submit(base, key, policy_doc, question="Who approves large expenses?")
    heard: list[str] = []

    # when ann opens the first, in Japanese
    ann = in_japanese(log_in(browser, base, "ann"), base)
    heard += listen(ann)
    ann.goto(f"{base}/queue/decisions/{first}/")
    # then the page says first, in one sentence, why the answer waits for a person
    why = ann.locator("#why").inner_text()
    assert why.startswith("人の判断が必要: ")
    assert "τ は 0.99" in why
    assert why.endswith("。")
    # and she leaves a comment for the others and assigns it to ben
    ann.fill("#comment-text", "部長の承認で正しいか確認してください")
    ann.click("#comment")
    ann.wait_for_selector("text=コメントを証跡に記録しました。")
    ann.select_option("#assignee", "ben")
    ann.click("#assign")
    ann.wait_for_selector("text=割り当てを保存しました。")
    assert ann.locator(".comment").inner_text().endswith("部長の承認で正しいか確認してください")
    shoot(ann, "decision_ja", readme=True)

    # when ben opens his queue, in Japanese, under "assigned to me"
    ben = in_japanese(log_in(browser, base, "ben"), base)
    heard += listen(ben)
    ben.goto(f"{base}/queue/?state=assigned")
    rows = ben.locator("#queue-rows tr[data-id]")
    assert [rows.nth(i).get_attribute("data-id") for i in range(rows.count())] == [str(first)]
    assert "→ ben" in rows.first.inner_text()
    ben.goto(f"{base}/queue/")
    ben.wait_for_selector(f'#queue-rows tr[data-id="{second}"]')
    shoot(ben, "queue_ja", readme=True)
    # and approves the first: the next waiting answer opens
    ben.goto(f"{base}/queue/decisions/{first}/")
    ben.fill("#approve-reason", "確認済み")
    # its sufficiency is below tau - 2*delta (a refusal): the page asks for the answer to
    # deliver, and the browser will not send the approval without it
    assert ben.locator("#replacement").get_attribute("required") is not None
    ben.click("#approve")
    assert ben.url == f"{base}/queue/decisions/{first}/"
    ben.fill("#replacement", "50万円を超える出張費は部長が事前に承認します。")
    ben.click("#approve")
    ben.wait_for_url(f"{base}/queue/decisions/{second}/")
    assert Decision.objects.get(pk=first).state == State.COMPLETED

    # then the auditor reads the comment on the first decision's trail
    otto = in_japanese(log_in(browser, base, "otto"), base)
    heard += listen(otto)
    otto.goto(f"{base}/audit/decisions/{first}/")
    assert "部長の承認で正しいか確認してください" in otto.content()
    kinds = set(TrailEvent.objects.filter(decision_id=first).values_list("kind", flat=True))
    assert {"decision.commented", "decision.assigned", "decision.approved"} <= kinds
    # and no page said anything in the console (no CSP violation, no script error)
    assert heard == []
