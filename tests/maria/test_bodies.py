"""Bodies the API cannot use are refused with a clear error, never a 500: JSON nested past
the limit, and a body over MARIA_MAX_BODY_BYTES on any endpoint, the graph import included."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from maria.parsers import MAX_DEPTH

pytestmark = pytest.mark.django_db
ZONE = "G1.U1.P1.Z1"


@pytest.mark.parametrize("depth", [MAX_DEPTH + 2, 1_000, 100_000])
def test_json_nested_past_the_limit_is_a_400_naming_it(
    agent_client: Callable[[str], Any], depth: int
) -> None:
    body = "[" * depth + "]" * depth
    response = agent_client("G1.U1.P1.Z1.A1").post(
        "/api/v1/decisions/", data=body, content_type="application/json"
    )
    assert response.status_code == 400
    assert f"nested deeper than {MAX_DEPTH}" in response.json()["error"]["message"]


def test_json_nested_within_the_limit_is_parsed(agent_client: Callable[[str], Any]) -> None:
    body = json.dumps({"question": "q", "answer": "a", "zone": ZONE, "agent": "x", "claims": []})
    response = agent_client("G1.U1.P1.Z1.A1").post(
        "/api/v1/decisions/", data=body, content_type="application/json"
    )
    assert response.status_code == 400  # refused for what it says, not how it nests
    assert "nested" not in response.json()["error"]["message"]


def test_a_graph_import_over_the_body_limit_is_a_413(
    settings: Any, person: Callable[..., Any], client_for: Callable[[Any], Any], org: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    admin = client_for(person("ada", Role.ZONE_ADMIN, ZONE))
    row = {"source": "decision:a", "source_type": "decision", "target": "person:p"}
    body = "\n".join(json.dumps({**row, "type": "approved_by", "n": i}) for i in range(500))
    assert len(body) > 10_000
    response = admin.post(
        f"/api/v1/graph/import/?zone={ZONE}", data=body, content_type="application/x-ndjson"
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large"
