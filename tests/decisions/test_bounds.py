"""Input the database cannot hold is refused at the edge, naming the field; agents hold no
roles."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from coordinates.coordinate import parse
from coordinates.models import Role
from coordinates.services import agent_user, role_grant
from decisions.models import Decision
from maria.errors import ApplicationError
from tests.decisions.conftest import AGENT, GOOD, cite

pytestmark = pytest.mark.django_db
TOO_BIG = 2**63


def test_a_citation_id_past_what_the_database_holds_is_a_400_naming_it(
    policy_doc: Any, submit: Callable[..., Any]
) -> None:
    citation = cite(policy_doc) | {"document": TOO_BIG}
    response = submit([{"text": GOOD, "citations": [citation]}])
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "claims.0.citations.0.document"
    assert not Decision.objects.exists()


def test_an_offset_past_what_the_database_holds_is_a_400_naming_it(
    agent_client: Callable[[str], Any],
) -> None:
    response = agent_client(AGENT).get("/api/v1/decisions/", {"offset": str(10**23)})
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "offset"


def test_an_agents_account_cannot_be_granted_a_role(org: Any) -> None:
    account = agent_user(parse(AGENT))
    with pytest.raises(ApplicationError, match="agents hold no roles") as refused:
        role_grant(user=account, role=Role.ZONE_ADMIN, scope=parse("G1.U1.P2"))
    assert refused.value.field == "user"
