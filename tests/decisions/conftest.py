from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.samples import POLICY_EN

ZONE = "G1.U1.P1.Z1"
AGENT = "G1.U1.P1.Z1.A1"
GOOD = "Expenses above 500,000 yen require prior approval by the division head."
# The approval paragraph says 500,000 yen in the same clause: refuted, so the answer is blocked.
WRONG_NUMBER = "Expenses above 300,000 yen require prior approval by the division head."
# Nothing in the approval paragraph says this, nor the opposite: unverified, a person decides.
UNVERIFIABLE = "Business class flights are always allowed for the division head."


@pytest.fixture
def policy_doc(ingest: Callable[..., Any]) -> Any:
    """The travel policy in the compliance zone; returns the approval paragraph."""
    from evidence.models import Paragraph

    ingest(POLICY_EN, title="Travel policy", key="travel")
    return Paragraph.objects.get(text__contains="500,000 yen require", current=True)


@pytest.fixture
def set_policy(org: Any) -> Callable[..., Any]:
    from coordinates.coordinate import parse
    from coordinates.selectors import zone_get
    from coordinates.services import policy_update

    def run(zone: str = ZONE, **overrides: Any) -> None:
        policy_update(zone=zone_get(parse(zone)), overrides=overrides, reason="test", actor=None)

    return run


class Submission:
    """The POST's status and headers; its body read again after the after-commit work ran
    (in a test the whole test is one transaction, so validation runs after the response)."""

    def __init__(self, response: Any, client: APIClient) -> None:
        self.response = response
        self.status_code = response.status_code
        self._client = client

    def __getitem__(self, header: str) -> str:
        return str(self.response[header])

    def json(self) -> Any:
        body = self.response.json()
        if self.status_code in (200, 201):
            return self._client.get(f"/api/v1/decisions/{body['id']}/").json()
        return body


@pytest.fixture
def submit(
    agent_client: Callable[[str], APIClient], django_capture_on_commit_callbacks: Any
) -> Callable[..., Any]:
    """POST an answer as the agent, running after-commit work (validation) inline."""
    clients: dict[str, APIClient] = {}

    def run(
        claims: list[dict[str, Any]],
        *,
        key: str | None = None,
        agent: str = AGENT,
        zone: str = ZONE,
        token_of: str = AGENT,
        **extra: Any,
    ) -> Any:
        client = clients.setdefault(token_of, agent_client(token_of))
        body = answer_body(claims, zone=zone, agent=agent) | extra
        headers: dict[str, Any] = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post("/api/v1/decisions/", body, format="json", **headers)
        return Submission(response, client)

    return run


def answer_body(
    claims: list[dict[str, Any]], *, zone: str = ZONE, agent: str = AGENT
) -> dict[str, Any]:
    """A submission's JSON body: the claims joined are the answer."""
    return {
        "question": "Who approves travel expenses above 500,000 yen?",
        "answer": " ".join(c["text"] for c in claims) or "An answer.",
        "zone": zone,
        "agent": agent,
        "claims": claims,
    }


def cite(paragraph: Any, **extra: Any) -> dict[str, Any]:
    return {"document": paragraph.version.document_id, "paragraph": paragraph.number, **extra}
