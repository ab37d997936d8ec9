"""The trail partial (templates/decision/_trail.html) names a re-review's verdict by its
label in the reader's language, never by the value the trail stores (issue 29)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.template.loader import render_to_string
from django.utils import translation

from decisions.models import ReReview

pytestmark = pytest.mark.django_db


def _closed(verdict: str) -> dict[str, object]:
    return {
        "kind": "rereview.closed",
        "actor": "rui",
        "reason": "",
        "created_at": datetime(2026, 12, 5, 3, 0, tzinfo=UTC),
        "payload": {
            "document": 1,
            "cited": {"version": 1, "paragraph": 2},
            "now": {"version": 2, "paragraph": 2},
            "verdict": verdict,
        },
    }


def _shown(language: str, verdict: str) -> str:
    with translation.override(language):
        html = render_to_string("decision/_trail.html", {"events": [_closed(verdict)]})
    found = re.search(r'<span class="rereview-verdict"[^>]*>([^<]*)</span>', html)
    assert found, html
    return found.group(1)


@pytest.mark.parametrize(
    ("verdict", "english", "japanese"),
    [
        (ReReview.Verdict.STILL_CORRECT, "Still correct", "まだ正しい"),
        (ReReview.Verdict.WRONG, "Wrong now", "現在は誤り"),
    ],
)
def test_a_closed_rereview_shows_its_verdict_by_its_label(
    verdict: str, english: str, japanese: str
) -> None:
    assert _shown("en", verdict) == english
    assert _shown("ja", verdict) == japanese
