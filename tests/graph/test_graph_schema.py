"""The OpenAPI document lists the answers the graph's writes really give: no 409 where keys
are unique per zone and edges are upserted, the 409 of a risk flag reviewed first kept."""

from __future__ import annotations

import json
from typing import Any

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


def answers(spec: Schema, path: str, method: str) -> set[str]:
    return set(spec["paths"][path][method]["responses"])


@pytest.mark.parametrize(
    ("path", "created"),
    [
        ("/api/v1/graph/nodes/", "201"),
        ("/api/v1/graph/edges/", "201"),
        ("/api/v1/graph/import/", "201"),
    ],
)
def test_graph_writes_list_no_conflict_they_cannot_answer(
    openapi: Schema, path: str, created: str
) -> None:
    listed = answers(openapi, path, "post")
    assert "409" not in listed
    assert {created, "400", "401", "403", "404", "429"} <= listed


def test_a_risk_flag_reviewed_first_still_lists_its_conflict(openapi: Schema) -> None:
    assert "409" in answers(openapi, "/api/v1/graph/risk/flags/{id}/resolve/", "post")
