"""A document's title: the one sent, else its first heading, else its opening words. The
API documents `title` as optional; a text without a heading was refused with a 400."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from evidence.models import Document
from evidence.parsing import opening_words, parse_document

URL = "/api/v1/documents/"
PROSE = (
    "Every expense above five hundred thousand yen needs the prior approval of the division "
    "head, and the request names the budget line it is charged to."
)


@pytest.mark.django_db
def test_a_document_without_title_or_heading_is_named_by_its_opening_words(
    agent_client: Callable[..., APIClient],
) -> None:
    body: dict[str, Any] = {"kind": "policy", "status": "approved", "zone": "G1.U1.P1.Z1"}
    response = agent_client().post(URL, {**body, "text": PROSE}, format="json")
    assert response.status_code == 201, response.json()
    title = Document.objects.get(pk=response.json()["id"]).title
    assert title == "Every expense above five hundred thousand yen needs the prior approval of the"
    assert len(title) <= 80


@pytest.mark.django_db
def test_a_sent_title_and_a_heading_still_come_first(
    agent_client: Callable[..., APIClient],
) -> None:
    body: dict[str, Any] = {"kind": "policy", "status": "approved", "zone": "G1.U1.P1.Z1"}
    sent = agent_client().post(URL, {**body, "title": "Travel", "text": PROSE}, format="json")
    headed = agent_client().post(URL, {**body, "text": f"# Expenses\n\n{PROSE}"}, format="json")
    assert Document.objects.get(pk=sent.json()["id"]).title == "Travel"
    assert Document.objects.get(pk=headed.json()["id"]).title == "Expenses"


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Short.", "Short."),
        ("a  b\n c", "a b c"),
        ("x" * 100, "x" * 80),
        ("経費" * 60, ("経費" * 60)[:80]),
        (f"{'w' * 79} next", "w" * 79),
        (f"{'w' * 80} next", "w" * 80),
    ],
)
def test_opening_words_are_cut_between_words_within_80_characters(text: str, title: str) -> None:
    assert opening_words(parse_document(text, format="text")) == title
