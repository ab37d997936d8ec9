"""The strict JSON parser's refusals are said in the reader's language: a request body, a
graph import line and a websocket close reason all reuse them, so a Japanese client reads
them in Japanese, and everyone else reads the English the rest of the suite asserts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.utils import translation
from rest_framework.exceptions import ParseError

from maria.parsers import MAX_DEPTH, strict_loads


@pytest.fixture(autouse=True)
def _language_restored() -> Iterator[None]:
    """LocaleMiddleware leaves the request's language active in the test's thread."""
    before = translation.get_language()
    yield
    translation.activate(before or settings.LANGUAGE_CODE)


def refusal(text: str) -> str:
    with pytest.raises(ParseError) as refused:
        strict_loads(text)
    return str(refused.value.detail)


REFUSED = [
    ('{"a": 1, "a": 2}', "JSON parse error - duplicate key 'a'", "キー 'a' が重複しています"),
    ('{"a": NaN}', "JSON parse error - NaN is not a number JSON allows", "NaN は JSON で使える"),
    ("[1e400]", "JSON parse error - 1e400 is too large for a number", "1e400 は数値として"),
    ('{"claims": ["\\u0000"]}', "NUL character in claims.0", "claims.0 に NUL 文字があります"),
    ('"\\u0000"', "NUL character in a string", "文字列に NUL 文字があります"),
    ('{"q": "\\ud800"}', "lone surrogate in q", "q に対になっていないサロゲート文字"),
    (
        "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2),
        f"JSON nested deeper than {MAX_DEPTH} levels",
        f"JSON の入れ子が {MAX_DEPTH} 段より深く",
    ),
    ("{not json", "JSON parse error - Expecting property name", "JSON の解析エラー - Expecting"),
]


@pytest.mark.parametrize(("text", "english", "japanese"), REFUSED, ids=lambda v: str(v)[:20])
def test_a_refusal_is_english_by_default_and_japanese_under_japanese(
    text: str, english: str, japanese: str
) -> None:
    with translation.override("en"):
        assert refusal(text).startswith(english)
    with translation.override("ja"):
        said = refusal(text)
    assert japanese in said
    assert english not in said


@pytest.mark.django_db
def test_a_japanese_client_reads_a_body_refusal_in_japanese(
    agent_client: Callable[[str], Any],
) -> None:
    client = agent_client("G1.U1.P1.Z1.A1")
    body = '{"question": "q", "question": "r"}'
    english = client.post("/api/v1/decisions/", data=body, content_type="application/json")
    japanese = client.post(
        "/api/v1/decisions/",
        data=body,
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE="ja",
    )
    assert (english.status_code, japanese.status_code) == (400, 400)
    assert "duplicate key 'question'" in english.json()["error"]["message"]
    assert "キー 'question' が重複しています" in japanese.json()["error"]["message"]
