"""A refusal's message is words a client can show, never a Python repr of what was sent."""

from __future__ import annotations

from typing import Any

import pytest

from tests.graph.conftest import ZONE

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "body",
    [
        {"source": "a", "target": "b", "type": {"key": "x", "type": "decision"}, "zone": ZONE},
        {"source": "a", "target": "b", "type": ["approved_by"], "zone": ZONE},
        {"source": {"key": "x", "type": {"a": 1}}, "target": "b", "type": "approved_by"},
    ],
    ids=["type as an object", "type as an array", "a node's type as an object"],
)
def test_an_object_where_a_choice_is_documented_is_refused_in_words(
    admin_api: Any, body: dict[str, Any]
) -> None:
    response = admin_api.post("/api/v1/graph/edges/", {"zone": ZONE, **body}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"] == "must be a string"
    assert error["field"] in ("type", "source.type")
    assert "{'" not in response.content.decode()
    assert "['" not in response.content.decode()
