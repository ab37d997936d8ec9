"""`GET /api/v1/search/`: passages an agent can cite as they come, within the caller's zones
(issue 15 point 1)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from tests.samples import CONTRACT_JA, POLICY_EN

ZONE = "G1.U1.P1.Z1"
SIBLING = "G1.U1.P1.Z2"  # the same planet
OTHER_PLANET = "G1.U1.P2.Z1"
AGENT = "G1.U1.P1.Z1.A1"
QUESTION = "Who approves expenses above 500,000 yen?"

MEMO_EN = """Procurement Memo

1. Approval
Purchases above 500,000 yen require approval by the procurement director.
"""
POLICY_V2 = POLICY_EN.replace("500,000 yen", "800,000 yen")


@pytest.fixture(autouse=True)
def _fresh_counts() -> Iterator[None]:
    """The rate limits count in the cache, which outlives each test's database."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def store(ingest: Callable[..., Any]) -> dict[str, Any]:
    """The travel policy in the agent's zone, a memo on the same subject in its sibling zone
    and in another planet's, a Japanese contract in the sibling: each embedded."""
    travel = ingest(POLICY_EN, zone=ZONE, title="Travel policy", key="travel")
    ingest(MEMO_EN, zone=SIBLING, kind="memo", title="Procurement memo", key="memo")
    ingest(CONTRACT_JA, zone=SIBLING, kind="contract", key="contract")
    ingest(MEMO_EN, zone=OTHER_PLANET, kind="memo", title="Legal memo", key="memo")
    return {"travel": travel}


def search(client: APIClient, **params: Any) -> Any:
    return client.get("/api/v1/search/", {"q": QUESTION, **params})


def zones_of(response: Any) -> set[str]:
    assert response.status_code == 200, response.content
    return {p["zone"] for p in response.json()["passages"]}


def test_a_passage_is_cited_as_it_came_and_resolves_to_its_own_text(
    store: dict[str, Any],
    agent_client: Callable[..., APIClient],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Given the agent's search for the approval rule
    agent = agent_client(AGENT)
    found = search(agent, k=3)
    assert found.status_code == 200, found.content
    body = found.json()
    assert body["k"] == 3
    assert len(body["passages"]) <= 3
    best = body["passages"][0]
    # Then the best passage is the rule, with all a citation and a reader need
    assert "500,000 yen require prior approval" in best["text"]
    assert best["document"] == store["travel"].document.pk
    assert best["version"] == 1
    assert (best["start"], best["end"]) == (0, len(best["text"]))
    assert best["title"] == "Travel policy"
    assert (best["kind"], best["status"], best["superseded"]) == ("policy", "approved", False)
    assert best["effective_date"] is None
    assert 0 < best["score"] <= 1
    # When the agent cites it exactly as it came
    with django_capture_on_commit_callbacks(execute=True):
        made = agent.post(
            "/api/v1/decisions/",
            {
                "question": QUESTION,
                "answer": "Expenses above 500,000 yen require prior approval by the division head.",
                "zone": ZONE,
                "agent": AGENT,
                "claims": [
                    {
                        "text": "Expenses above 500,000 yen require prior approval by the "
                        "division head.",
                        "citations": [best],
                    }
                ],
            },
            format="json",
        )
    assert made.status_code == 201, made.content
    # Then validation resolved it to the very text the search returned, and it holds
    decision = agent.get(f"/api/v1/decisions/{made.json()['id']}/").json()
    (evidence,) = decision["claims"][0]["evidence"]
    assert evidence["fabricated"] is False
    assert evidence["span"] == best["text"]
    assert (evidence["document"], evidence["version"], evidence["paragraph"]) == (
        best["document"],
        best["version"],
        best["paragraph"],
    )
    assert decision["claims"][0]["supported"] is True


def test_an_agent_searches_its_own_zone_only(
    store: dict[str, Any], agent_client: Callable[..., APIClient]
) -> None:
    agent = agent_client(AGENT)
    # Given documents on the same subject in the sibling zone and another planet
    # When the agent searches without a zone, or with a level above its zone
    # Then it finds its own zone's passages only
    assert zones_of(search(agent)) == {ZONE}
    assert zones_of(search(agent, zone="G1.U1")) == {ZONE}
    assert zones_of(search(agent, zone=ZONE)) == {ZONE}
    # And another zone is refused exactly as one that does not exist
    sibling, missing = search(agent, zone=SIBLING), search(agent, zone="G1.U1.P1.Z7")
    assert sibling.status_code == missing.status_code == 404
    assert sibling.json()["error"] == {
        **missing.json()["error"],
        "message": missing.json()["error"]["message"].replace("G1.U1.P1.Z7", SIBLING),
    }
    assert sibling.json()["error"]["field"] == "zone"
    assert "Procurement" not in sibling.content.decode()


def test_a_personal_token_searches_the_zones_of_the_persons_roles(
    store: dict[str, Any], person: Callable[..., Any]
) -> None:
    from coordinates.models import Role
    from coordinates.services import token_issue

    # Given a reviewer of the finance planet, with a personal API token
    rita = person("rita", Role.REVIEWER, "G1.U1.P1")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_issue(user=rita)[1]}")
    # When she searches
    # Then she finds both zones of her planet, never the other planet's
    assert zones_of(search(client)) == {ZONE, SIBLING}
    assert zones_of(search(client, zone=SIBLING)) == {SIBLING}
    assert search(client, zone=OTHER_PLANET).status_code == 404
    # And someone holding no role finds nothing at all
    nobody = APIClient()
    nobody.credentials(HTTP_AUTHORIZATION=f"Bearer {token_issue(user=person('nobody'))[1]}")
    assert zones_of(search(nobody)) == set()


def test_superseded_versions_are_hidden_until_asked_for_then_marked(
    store: dict[str, Any], ingest: Callable[..., Any], agent_client: Callable[..., APIClient]
) -> None:
    # Given the travel policy replaced by a version with another amount
    ingest(POLICY_V2, zone=ZONE, title="Travel policy", key="travel")
    agent = agent_client(AGENT)
    # When the agent searches for the old amount
    current = search(agent, q="expenses above 500,000 yen approval").json()["passages"]
    # Then only the current version answers
    assert current
    assert {(p["version"], p["superseded"]) for p in current} == {(2, False)}
    assert not any("500,000 yen require" in p["text"] for p in current)
    # And with include_superseded=1 the old one is there too, marked
    both = search(agent, q="expenses above 500,000 yen approval", include_superseded=1)
    old = [p for p in both.json()["passages"] if p["version"] == 1]
    assert old
    assert all(p["superseded"] is True for p in old)
    assert any("500,000 yen require" in p["text"] for p in old)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"q": None}, "q"),
        ({"q": "   "}, "q"),
        ({"q": "x" * 2001}, "q"),
        ({"k": "0"}, "k"),
        ({"k": "51"}, "k"),
        ({"k": "ten"}, "k"),
        ({"k": "1e400"}, "k"),
        ({"include_superseded": "maybe"}, "include_superseded"),
        ({"zone": "Z1"}, "zone"),
        ({"zone": AGENT}, "zone"),
    ],
)
def test_a_bad_parameter_is_a_400_naming_it(
    store: dict[str, Any],
    agent_client: Callable[..., APIClient],
    params: dict[str, Any],
    field: str,
) -> None:
    query = {"q": QUESTION, **params}
    response = agent_client(AGENT).get(
        "/api/v1/search/", {k: v for k, v in query.items() if v is not None}
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"]["field"] == field


def test_k_bounds_the_passages_and_both_ends_are_accepted(
    store: dict[str, Any], agent_client: Callable[..., APIClient], person: Callable[..., Any]
) -> None:
    agent = agent_client(AGENT)
    assert len(search(agent, k=1).json()["passages"]) == 1
    assert search(agent, k=50).status_code == 200
    assert search(agent, k="").json()["k"] == 15


def test_search_is_rate_limited_like_the_other_agent_endpoints(
    store: dict[str, Any], agent_client: Callable[..., APIClient], settings: Any
) -> None:
    # Given a limit of two requests a minute per token
    agent = agent_client(AGENT)
    rest = settings.REST_FRAMEWORK
    settings.REST_FRAMEWORK = {
        **rest,
        "DEFAULT_THROTTLE_RATES": {**rest["DEFAULT_THROTTLE_RATES"], "token": "2/min"},
    }
    # When the agent searches a third time
    assert [search(agent).status_code for _ in range(2)] == [200, 200]
    refused = search(agent)
    # Then it is told to wait, in the error shape
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "throttled"
