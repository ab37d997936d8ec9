"""The OpenAPI document's shared pieces say what the server does: blank text, JSON types,
the error shape, and the bodies the review actions answer with."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rest_framework import serializers

from maria.openapi import NOT_BLANK
from maria.strict import type_problem


def test_not_blank_names_exactly_the_characters_str_strip_removes() -> None:
    stripped = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    outside = re.compile(NOT_BLANK)
    assert {c for c in map(chr, range(sys.maxunicode + 1)) if not outside.fullmatch(c)} == stripped


@given(st.text(max_size=20))
def test_a_text_matches_not_blank_exactly_when_stripping_leaves_something(text: str) -> None:
    assert bool(re.search(NOT_BLANK, text)) == bool(text.strip())


@pytest.mark.parametrize(
    ("field", "value", "refused"),
    [
        (serializers.CharField(), 0, True),
        (serializers.CharField(), "0", False),
        (serializers.IntegerField(), "5", True),
        (serializers.IntegerField(), True, True),
        (serializers.IntegerField(), 5, False),
        (serializers.IntegerField(), 5.0, False),
        (serializers.IntegerField(), 5.5, True),
        (serializers.FloatField(), False, True),
        (serializers.FloatField(), "0.5", True),
        (serializers.FloatField(), 1, False),
        (serializers.DateTimeField(), 1700000000, True),
        (serializers.CharField(allow_null=True), None, False),
        # DRF answered an object with its repr: "{'key': 'x'}" is not a valid choice.
        (serializers.ChoiceField(choices=["a", "b"]), {"key": "x"}, True),
        (serializers.ChoiceField(choices=["a", "b"]), ["a"], True),
        (serializers.ChoiceField(choices=["a", "b"]), "c", False),  # DRF says it is no choice
    ],
)
def test_json_types_are_taken_as_documented(
    field: serializers.Field, value: Any, refused: bool
) -> None:
    assert (type_problem(field, value) is not None) == refused


@pytest.mark.django_db
def test_a_number_where_text_is_documented_is_a_400_naming_the_field(
    agent_client: Callable[[str], Any],
) -> None:
    body = {
        "question": 0,
        "answer": "An answer.",
        "zone": "G1.U1.P1.Z1",
        "agent": "G1.U1.P1.Z1.A1",
        "claims": [{"text": "A claim.", "citations": [{"document": "1", "paragraph": 1}]}],
    }
    response = agent_client("G1.U1.P1.Z1.A1").post("/api/v1/decisions/", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "question"
    body["question"] = "Who approves?"
    response = agent_client("G1.U1.P1.Z1.A1").post("/api/v1/decisions/", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "claims.0.citations.0.document"


@pytest.mark.django_db
def test_the_review_actions_are_documented_with_the_row_they_answer_with(org: Any) -> None:
    from rest_framework.test import APIClient

    schema = APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    paths = schema.json()["paths"]
    for action in ("claim", "release", "approve", "reject", "override", "send-back"):
        operation = paths[f"/api/v1/decisions/{{id}}/{action}/"]["post"]
        ok = operation["responses"]["200"]["content"]["application/json"]["schema"]
        # An override answers with where the two-person override stands, beside the row.
        row = "DecisionOverrideRow" if action == "override" else "DecisionRow"
        assert ok == {"$ref": f"#/components/schemas/{row}"}, action
        refused = operation["responses"]["409"]["content"]["application/json"]["schema"]
        assert refused == {"$ref": "#/components/schemas/ApiError"}, action
    reject = paths["/api/v1/decisions/{id}/reject/"]["post"]["requestBody"]
    assert reject["required"] is True


@pytest.mark.django_db
def test_a_decision_is_documented_as_needing_a_body_in_either_shape() -> None:
    """The intake takes claims or a plain answer (a oneOf): a missing body is refused, so the
    schema must say the body is required, or generated clients send none."""
    from rest_framework.test import APIClient

    schema = APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    body = schema.json()["paths"]["/api/v1/decisions/"]["post"]["requestBody"]
    assert body["required"] is True
    assert "oneOf" in schema.json()["components"]["schemas"]["DecisionSubmissionRequest"]
