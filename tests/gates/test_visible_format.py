"""Invisible format characters (a zero-width space, a bidi override) in an answer or question
show on the reviewer and auditor pages as markers naming them, never raw; the text around
them stays escaped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role
from evidence.text import format_characters
from gates.templatetags.maria_tags import visible_format

ZWSP, RLO = "\u200b", "\u202e"
ZWSP_MARKER = '<span class="format-char" title="U+200B ZERO WIDTH SPACE">\u27e8U+200B\u27e9</span>'
RLO_MARKER = (
    '<span class="format-char" title="U+202E RIGHT-TO-LEFT OVERRIDE">\u27e8U+202E\u27e9</span>'
)


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_filter_marks_each_format_character_and_escapes_the_rest() -> None:
    shown = visible_format(f'<script>alert("x")</script> n{ZWSP}ot {RLO}evil & co')
    assert shown == (
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; n"
        + ZWSP_MARKER
        + "ot "
        + RLO_MARKER
        + "evil &amp; co"
    )
    assert visible_format("plain <b>") == "plain &lt;b&gt;"
    assert visible_format(None) == ""


def test_text_marked_safe_elsewhere_is_escaped_all_the_same() -> None:
    from django.utils.safestring import mark_safe

    marked = mark_safe(f"<i>{ZWSP}</i>")  # noqa: S308 - what the filter must not trust
    assert visible_format(marked) == f"&lt;i&gt;{ZWSP_MARKER}&lt;/i&gt;"


@pytest.mark.django_db
def test_the_pages_show_hidden_characters_as_markers_and_never_raw(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    # given an answer with a zero-width space and a bidi override, and a question with one
    answer = (
        f"Expenses above 500,000 yen require prior approval by the divi{ZWSP}sion head. "
        f"{RLO}Nobody else approves."
    )
    question = f"Who approves travel expenses above 500,000 yen?{RLO}"
    decision_id = queue_one(answer=answer, question=question)
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    auditor = login(person("olga", Role.AUDITOR, "G1"))
    # when a reviewer and an auditor open the pages that show them
    pages = {
        "queue": ann.get("/queue/").content.decode(),
        "decision": ann.get(f"/queue/decisions/{decision_id}/").content.decode(),
        "audit decision": auditor.get(f"/audit/decisions/{decision_id}/").content.decode(),
        "audit search": auditor.get("/audit/").content.decode(),
    }
    # then no page holds a raw format character, and each shows the markers
    for name, page in pages.items():
        assert format_characters(page) == [], name
        assert RLO_MARKER in page, name
    for name in ("decision", "audit decision"):
        assert ZWSP_MARKER in pages[name]
        assert f"divi{ZWSP_MARKER}sion head" in pages[name]
