"""Seed 002 §6.2 (PPR's rho a zone's policy), §6.3 and §8.5 (h-hop or PPR by query type, the
type read from the cohesion of the h-hop evidence), as the asker sees them in the answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.graph.conftest import ZONE
from tests.graph.test_query import CHAIN, TWO_ISLANDS, ask

pytestmark = pytest.mark.django_db


def _scores(body: dict[str, Any]) -> dict[str, float]:
    return {n["key"]: n["score"] for n in body["subgraph"]["nodes"]}


def test_ppr_restarts_with_the_zones_rho(
    import_lines: Callable[..., Any], reviewer_api: Any, set_policy: Callable[..., None]
) -> None:
    import_lines(CHAIN)
    default = ask(reviewer_api, method="ppr", k=4)
    assert default["rho"] == 0.85  # §11.4
    set_policy(ppr_rho=0.5)
    shorter = ask(reviewer_api, method="ppr", k=4)
    assert shorter["rho"] == 0.5
    # a walk that restarts more often leaves more of the relevance at the seeds
    assert _scores(shorter) != _scores(default)


def _history(values: list[float], zone: str = ZONE) -> None:
    """Past graph answers of the zone with these h-hop cohesion scores."""
    from coordinates.coordinate import parse
    from evidence.models import ValidationReport
    from evidence.services import bundle_create

    for i, value in enumerate(values):
        ValidationReport(
            bundle=bundle_create(zone=parse(zone), claims=[{"text": f"past answer {i}"}]),
            policy_label="test",
            policy={},
            sufficiency=0.0,
            completeness=0.0,
            cohesion=value,
            mode="graph-hop",
            gate="auto",
            body={"hop_cohesion": value},
            content_hash=f"{i:064d}",
        ).save()


# Two groups, as §8.5 finds them, at this product's scale: loose evidence (2 to 10 links per
# 64 ordered pairs) and linked evidence (a chain or star of up to 8 nodes and more).
TWO_GROUPS = [*np.linspace(0.02, 0.10, 15), *np.linspace(0.17, 0.30, 15)]


def test_without_two_groups_of_past_answers_auto_keeps_hops_and_says_why(
    import_lines: Callable[..., Any], reviewer_api: Any
) -> None:
    import_lines(TWO_ISLANDS)
    body = ask(reviewer_api, q="printer", method="auto", k=4)
    choice = body["method_choice"]
    assert body["method"] == "hop"
    assert (choice["asked"], choice["used"], choice["query_type"]) == ("auto", "hop", None)
    assert choice["split"] is None
    assert choice["history"] == 0
    assert "do not fall into two groups" in choice["reason"]


def test_a_causal_chain_is_traced_by_hops_and_says_why(
    import_lines: Callable[..., Any], reviewer_api: Any
) -> None:
    """§4.1's chain: its h-hop evidence has cohesion 3/16, in the zone's linked group."""
    import_lines(CHAIN)
    _history(TWO_GROUPS)
    body = ask(reviewer_api, method="auto", k=4)
    choice = body["method_choice"]
    assert body["method"] == "hop"
    assert body["hops"] is not None
    assert (choice["used"], choice["query_type"]) == ("hop", "causal")
    assert choice["hop_cohesion"] == pytest.approx(3 / 16)
    assert 0.10 < choice["split"] < 0.17
    assert choice["history"] == 30
    assert "causal chain" in choice["reason"]
    assert body["report"]["method_choice"] == choice  # stored with the answer


def test_loose_evidence_is_read_as_a_comparative_question_and_answered_by_ppr(
    import_lines: Callable[..., Any], reviewer_api: Any
) -> None:
    """Two unrelated approvals: the h-hop evidence is 2 links among 4 nodes (0.125), in the
    zone's loose group."""
    import_lines(TWO_ISLANDS)
    _history(TWO_GROUPS)
    body = ask(reviewer_api, q="printer", method="auto", k=4)
    choice = body["method_choice"]
    assert body["method"] == "ppr"
    assert body["rho"] == 0.85
    assert (choice["used"], choice["query_type"]) == ("ppr", "comparative")
    assert choice["hop_cohesion"] == pytest.approx(2 / 16)
    assert "PageRank" in choice["reason"]
    # and the answer itself joins the zone's history, by its h-hop cohesion
    again = ask(reviewer_api, q="printer", method="auto", k=4)
    assert again["method_choice"]["history"] == 31


def test_a_method_asked_for_is_used_and_said_to_be_asked(
    import_lines: Callable[..., Any], reviewer_api: Any
) -> None:
    import_lines(TWO_ISLANDS)
    body = ask(reviewer_api, q="printer", method="hop", k=4)
    assert body["method"] == "hop"
    assert body["method_choice"]["asked"] == "hop"
    assert body["method_choice"]["query_type"] is None


def test_the_split_follows_the_zones_own_groups() -> None:
    """§8.5: the same cohesion is causal in one zone and comparative in another, as each
    zone's past scores fall."""
    from graph.queries import _by_query_type

    rng = np.random.default_rng(3)
    higher = [*rng.uniform(0.30, 0.40, 15), *rng.uniform(0.20, 0.26, 15)]
    assert _by_query_type(0.25, higher)["used"] == "ppr"
    assert _by_query_type(0.25, TWO_GROUPS)["used"] == "hop"


def test_an_unknown_method_is_a_400_naming_it(reviewer_api: Any) -> None:
    response = reviewer_api.get(
        "/api/v1/graph/query/", {"q": "printer", "zone": ZONE, "method": "deep"}
    )
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "method"
