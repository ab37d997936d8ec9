"""The OpenAPI document refuses what the server refuses, so that clients and fuzzers built
from it do not send it: a NUL character in any string a client sends, a blank graph import,
a re-review closed as wrong without a note. (The trail's `?zone=` and a document without
title or heading went the other way: the server takes them, tests/trail/test_trail_export.py
and tests/evidence/test_document_titles.py.)"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from rest_framework.test import APIClient

Schema = dict[str, Any]


@pytest.fixture(scope="module")
def openapi(django_db_blocker: Any) -> Schema:
    with django_db_blocker.unblock():
        response = APIClient().get(
            "/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json"
        )
    assert response.status_code == 200
    return dict(json.loads(response.content))


def inline(spec: Schema, node: Any) -> Any:
    """`node` with every $ref replaced by the component it names."""
    if isinstance(node, list):
        return [inline(spec, item) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return inline(spec, spec["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]])
    return {key: inline(spec, value) for key, value in node.items()}


def valid(schema: Schema, value: Any) -> bool:
    return jsonschema.Draft4Validator(schema).is_valid(value)


def sent_strings(spec: Schema) -> Iterator[tuple[str, Schema]]:
    """Every free string schema a client sends: request bodies and parameters."""

    def walk(where: str, node: Any) -> Iterator[tuple[str, Schema]]:
        if isinstance(node, list):
            for item in node:
                yield from walk(where, item)
        elif isinstance(node, dict):
            if node.get("type") == "string" and "enum" not in node and "format" not in node:
                yield where, node
            for key in ("items", "oneOf", "anyOf", "allOf", "additionalProperties"):
                yield from walk(where, node.get(key))
            for name, value in (node.get("properties") or {}).items():
                yield from walk(f"{where}.{name}", value)

    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            for parameter in operation.get("parameters", []):
                yield from walk(f"{where} ?{parameter['name']}", inline(spec, parameter["schema"]))
            for media in (operation.get("requestBody") or {}).get("content", {}).values():
                yield from walk(where, inline(spec, media["schema"]))


def test_no_string_a_client_sends_may_hold_a_nul_character(openapi: Schema) -> None:
    # The server refuses NUL in every JSON string (maria.parsers) and query parameter.
    strings = list(sent_strings(openapi))
    assert len(strings) > 50
    letting_nul_through = sorted(
        where
        for where, schema in strings
        if "pattern" not in schema or re.search(schema["pattern"], "key\x00")
    )
    assert not letting_nul_through
    paths = openapi["paths"]
    q = next(p for p in paths["/api/v1/search/"]["get"]["parameters"] if p["name"] == "q")
    assert valid(q["schema"], "travel expenses")
    assert not valid(q["schema"], "travel\x00expenses")
    assert not valid(q["schema"], "   ")


def test_a_graph_import_is_a_required_body_that_is_not_blank(openapi: Schema) -> None:
    body = openapi["paths"]["/api/v1/graph/import/"]["post"]["requestBody"]
    assert body["required"] is True
    for media in ("application/x-ndjson", "text/csv"):
        schema = body["content"][media]["schema"]
        assert not valid(schema, "")
        assert not valid(schema, "\n \n")
        assert valid(schema, "source,target,type\n")


def test_a_re_review_closed_as_wrong_needs_a_note_in_the_schema(openapi: Schema) -> None:
    operation = openapi["paths"]["/api/v1/rereviews/{id}/close/"]["post"]
    schema = inline(openapi, operation["requestBody"]["content"]["application/json"]["schema"])
    assert valid(schema, {"verdict": "still_correct"})
    assert valid(schema, {"verdict": "still_correct", "note": ""})
    assert valid(schema, {"verdict": "wrong", "note": "the limit is 300,000 yen now"})
    assert not valid(schema, {"verdict": "wrong"})
    assert not valid(schema, {"verdict": "wrong", "note": " \n "})
    assert not valid(schema, {"verdict": "maybe", "note": "x"})


def test_an_operation_that_refuses_a_nul_in_its_query_documents_the_400(openapi: Schema) -> None:
    # schemathesis sent `?reason=` with a NUL to the graph's deletes: a 400 they did not name.
    for path in ("/api/v1/graph/nodes/{id}/", "/api/v1/graph/edges/{id}/"):
        assert "400" in openapi["paths"][path]["delete"]["responses"]
