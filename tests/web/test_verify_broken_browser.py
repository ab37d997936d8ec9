"""An auditor verifies a trail someone broke, in headless Chromium, in English and in Japanese
(issue 29: "the whole Verify report" was Japanese only while the trail was intact; a broken
trail's problems were English).

Someone with database rights edits a judged answer's report and a cited paragraph, the
protective triggers bypassed (tests.trail_support), and the auditor presses "Verify this
zone's trail" on the decision's page: the report names both rows in the page's language,
with none of the other language on screen (the walk's oracle,
tests/web/test_languages_browser.py) and no console message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from coordinates.models import Role
from decisions.models import Decision
from evidence.models import Paragraph
from tests.decisions.conftest import GOOD, cite, submit
from tests.trail_support import triggers_bypassed
from tests.web.test_browser import (
    CHROMIUM,
    LiveASGI,
    browser,
    committed_trail,
    live_asgi,
    policy_doc,
    set_policy,
)
from tests.web.test_languages_browser import Walk

__all__ = ["browser", "committed_trail", "live_asgi", "policy_doc", "set_policy", "submit"]

playwright_sync = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)"),
]

QUESTION = "Who approves travel expenses above 500,000 yen?"
# What each language's report says of the two edited rows (the English as verify_trail
# prints it; the Japanese from the catalogue).
SAID = {
    "en": (
        "the 'gate' column says 'blocked', the trail says '{gate}'",
        "its text does not hash to its text_hash",
    ),
    "ja": (
        "'gate' 列は 'blocked' ですが、証跡では '{gate}' です",
        "本文のハッシュが text_hash と一致しません",
    ),
}


@pytest.mark.parametrize("language", ["en", "ja"])
def test_an_auditor_reads_a_broken_trails_problems_in_the_pages_language(
    language: str,
    committed_trail: None,
    live_asgi: LiveASGI,
    browser: Any,
    person: Callable[..., Any],
    policy_doc: Paragraph,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    # given a judged answer and an auditor of its galaxy
    person("olga", Role.AUDITOR, "G1")
    set_policy(tau=0.99, refusal_floor=0.05)
    decision_id = submit([{"text": GOOD, "citations": [cite(policy_doc)]}], question=QUESTION)
    decision = Decision.objects.select_related("report").get(pk=decision_id.json()["id"])
    assert decision.report is not None
    gate = decision.report.gate
    assert gate != "blocked"

    # when someone with database rights edits its report's gate and the cited paragraph
    with triggers_bypassed(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE evidence_validationreport SET gate = %s WHERE id = %s",
            ["blocked", decision.report.pk],
        )
        cursor.execute(
            "UPDATE evidence_paragraph SET text = %s WHERE id = %s",
            [policy_doc.text.replace("division head", "team lead"), policy_doc.pk],
        )

    # and the auditor verifies the zone's trail from the decision's page
    seeded = (QUESTION, GOOD, *Paragraph.objects.values_list("text", flat=True))
    walk = Walk(live_asgi.url, language, seeded=seeded)
    olga = walk.page(browser, "olga")
    # (the decision page itself is the two-language walk's, test_languages_browser.py)
    olga.goto(f"{live_asgi.url}/audit/decisions/{decision.pk}/")
    olga.click("#verify")
    olga.wait_for_selector('#verdict[data-intact="0"]')
    walk.read(olga, "verify, broken")

    # then the report names both rows in the page's language, and nothing else leaked
    report = olga.inner_text("pre.report")
    column, paragraph = SAID[language]
    assert column.format(gate=gate) in report
    assert f"evidence_paragraph {'ID' if language == 'ja' else 'id'} {policy_doc.pk}" in report
    assert paragraph in report
    assert walk.leaked == {}
    assert walk.console == []
