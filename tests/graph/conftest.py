"""Graph fixtures: a zone admin and a reviewer, and helpers that build the graph through the
real services and endpoints."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

ZONE = "G1.U1.P1.Z1"
AGENT = "G1.U1.P1.Z1.A1"
GOOD = "Expenses above 500,000 yen require prior approval by the division head."


@pytest.fixture
def admin_api(org: Any, person: Callable[..., Any], client_for: Callable[[Any], Any]) -> Any:
    from coordinates.models import Role

    return client_for(person("ada", Role.ZONE_ADMIN, ZONE))


@pytest.fixture
def reviewer_api(org: Any, person: Callable[..., Any], client_for: Callable[[Any], Any]) -> Any:
    from coordinates.models import Role

    return client_for(person("rita", Role.REVIEWER, ZONE))


@pytest.fixture
def set_policy(org: Any) -> Callable[..., None]:
    from coordinates.coordinate import parse
    from coordinates.selectors import zone_get
    from coordinates.services import policy_update

    def run(zone: str = ZONE, **overrides: Any) -> None:
        policy_update(zone=zone_get(parse(zone)), overrides=overrides, reason="test", actor=None)

    return run


@pytest.fixture
def import_lines(admin_api: Any) -> Callable[..., Any]:
    """POST JSON Lines to the import endpoint as the zone admin."""
    import json

    def run(rows: list[dict[str, Any]], zone: str = ZONE) -> Any:
        body = "\n".join(json.dumps(r) for r in rows)
        return admin_api.post(
            f"/api/v1/graph/import/?zone={zone}",
            data=body,
            content_type="application/x-ndjson",
        )

    return run


def edge(
    source: str, target: str, kind: str, *, st: str = "decision", tt: str = "person", **extra: Any
) -> dict[str, Any]:
    return {
        "source": source,
        "source_type": st,
        "source_label": extra.pop("source_label", source),
        "target": target,
        "target_type": tt,
        "target_label": extra.pop("target_label", target),
        "type": kind,
        **extra,
    }


@pytest.fixture
def decided(
    ingest: Callable[..., Any],
    agent_client: Callable[[str], Any],
    set_policy: Callable[..., None],
    django_capture_on_commit_callbacks: Any,
) -> Callable[..., dict[str, Any]]:
    """Submit an answer citing the travel policy and let the pipeline carry it."""
    from evidence.models import Paragraph
    from tests.samples import POLICY_EN

    ingest(POLICY_EN, title="Travel policy", key="travel")
    paragraph = Paragraph.objects.get(text__contains="500,000 yen require", current=True)
    client = agent_client(AGENT)

    def run(**policy: Any) -> dict[str, Any]:
        if policy:
            set_policy(**policy)
        body = {
            "question": "Who approves travel expenses above 500,000 yen?",
            "answer": GOOD,
            "zone": ZONE,
            "agent": AGENT,
            "claims": [
                {
                    "text": GOOD,
                    "citations": [
                        {"document": paragraph.version.document_id, "paragraph": paragraph.number}
                    ],
                }
            ],
        }
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post("/api/v1/decisions/", body, format="json")
        assert response.status_code == 201, response.json()
        return {"id": response.json()["id"], "document": paragraph.version.document_id}

    return run
