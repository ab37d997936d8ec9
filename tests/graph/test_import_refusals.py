"""A bulk import that cannot be read is refused with a 400 naming the line or row, never a
500: JSON Lines are read as strictly as a JSON body, CSV fields past the reader's limit and
keys longer than a node's are refused, and messages carry no Python reprs."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.utils import translation

from graph.models import GraphEdge, GraphNode
from tests.graph.conftest import ZONE, edge
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

DEEP = "[" * 5000 + "]" * 5000
EDGE = json.dumps(edge("decision:a", "person:p", "approved_by"))


def post_lines(admin_api: Any, body: str) -> Any:
    return admin_api.post(
        f"/api/v1/graph/import/?zone={ZONE}", data=body, content_type="application/x-ndjson"
    )


def post_csv(admin_api: Any, body: str) -> Any:
    return admin_api.post(f"/api/v1/graph/import/?zone={ZONE}", data=body, content_type="text/csv")


def assert_refused(response: Any, field: str, *words: str) -> None:
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["field"] == field
    for word in words:
        assert word in error["message"]
    assert "ErrorDetail" not in error["message"]
    assert not GraphNode.objects.exists()
    assert not TrailEvent.objects.filter(kind="graph.imported").exists()


@pytest.mark.parametrize(
    "line",
    [
        DEEP,
        EDGE[:-1] + f', "note": {DEEP}}}',
        '{"source": ' + DEEP + ', "target": "person:p", "type": "approved_by"}',
    ],
    ids=["a bare array", "inside a row", "as the source"],
)
def test_a_json_line_nested_5000_deep_is_a_400_naming_the_line(admin_api: Any, line: str) -> None:
    assert_refused(post_lines(admin_api, f"{EDGE}\n{line}\n"), "body", "line 2", "32 levels")


def test_a_json_line_is_read_as_strictly_as_a_json_body(admin_api: Any) -> None:
    nul = json.dumps(edge("decision:a\x00", "person:p", "approved_by"))
    assert_refused(post_lines(admin_api, nul), "body", "line 1", "NUL character in source")
    surrogate = EDGE.replace("decision:a", "decision:\\ud800")
    assert_refused(post_lines(admin_api, surrogate), "body", "line 1", "lone surrogate")
    duplicate = '{"source": "decision:a", "source": "decision:b", "target": "p", "type": "x"}'
    assert_refused(post_lines(admin_api, duplicate), "body", "line 1", "duplicate key")


@pytest.fixture
def language_restored() -> Iterator[None]:
    """LocaleMiddleware leaves the request's language active in the test's thread."""
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.mark.usefixtures("language_restored")
def test_a_line_that_is_not_json_is_named_so_in_either_language(admin_api: Any) -> None:
    # The parser's "JSON parse error - " prefix is translated, so the import can no longer
    # cut it off the message: it takes the reason the parser keeps apart.
    duplicate = '{"source": "decision:a", "source": "decision:b", "target": "p", "type": "x"}'
    english = post_lines(admin_api, f"{EDGE}\n{duplicate}\n")
    japanese = admin_api.post(
        f"/api/v1/graph/import/?zone={ZONE}",
        data=f"{EDGE}\n{duplicate}\n",
        content_type="application/x-ndjson",
        HTTP_ACCEPT_LANGUAGE="ja",
    )
    assert_refused(english, "body")
    assert_refused(japanese, "body")
    assert english.json()["error"]["message"] == "line 2 is not JSON: duplicate key 'source'"
    assert japanese.json()["error"]["message"] == (
        "2 行目が JSON ではありません: キー 'source' が重複しています"
    )


def test_a_csv_field_over_the_readers_limit_is_a_400_naming_the_line(admin_api: Any) -> None:
    body = "source,source_type,target,target_type,type\n" + "a" * 200_000 + ",decision,p,person,x\n"
    assert_refused(post_csv(admin_api, body), "body", "line 2", "field limit")


def test_a_nul_character_in_a_csv_field_is_refused(admin_api: Any) -> None:
    # SQLite stored it; PostgreSQL refuses NUL in text, which was a 500 there.
    body = (
        "source,source_type,target,target_type,type\ndecision:a\x00,decision,p,person,approved_by\n"
    )
    assert_refused(post_csv(admin_api, body), "rows.1", "row 1", "NUL character in source")


def test_a_key_longer_than_a_node_key_is_refused(admin_api: Any) -> None:
    # It was cut to 200 characters when stored and then not found: a KeyError, a 500.
    line = json.dumps(edge("decision:" + "a" * 300, "person:p", "approved_by"))
    assert_refused(post_lines(admin_api, line), "rows.1", "row 1", "longer than 200")


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"occurred_at": "99999-01-01"}, "Datetime has wrong format"),
        ({"occurred_at": [1]}, "occurred_at must be a string"),
        ({"weight": [1]}, "weight must be a number"),
        ({"type": ["approved_by"]}, "type must be a string"),
    ],
)
def test_a_bad_field_says_why_without_python_reprs(
    admin_api: Any, extra: dict[str, Any], words: str
) -> None:
    line = json.dumps({**edge("decision:a", "person:p", "approved_by"), **extra})
    response = post_lines(admin_api, line)
    assert_refused(response, "rows.1")
    assert response.json()["error"]["message"].startswith(f"row 1: {words}")


def test_a_confidence_of_zero_is_stored_as_zero(import_lines: Callable[..., Any]) -> None:
    # `float(value or 1.0)` once read 0 as 1.0: full confidence for an edge said to have none.
    response = import_lines([edge("decision:a", "person:p", "approved_by", confidence=0)])
    assert response.status_code == 201, response.json()
    assert GraphEdge.objects.get().confidence == 0.0
