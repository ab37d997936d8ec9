"""A zone's graph risk level sets the graph gate's tau_c (seed 002 §9.2), and an escalated
graph answer lists its gaps and says why it went up, in the asker's language (§9.3, §14.5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from coordinates import policy
from coordinates.models import Role
from decisions.models import Decision
from graph.core.gate import COHESION_TAU_BY_RISK
from tests.graph.conftest import ZONE
from tests.graph.test_query import CHAIN, ask

# Seed 002 §9.2, "Thresholds by risk level": low 0.05, medium 0.15, high 0.30, critical 0.50.
PAPER_TAU_BY_RISK = {"low": 0.05, "medium": 0.15, "high": 0.30, "critical": 0.50}


@pytest.mark.parametrize(("level", "tau_c"), PAPER_TAU_BY_RISK.items())
def test_a_zones_risk_level_sets_the_papers_tau_c(level: str, tau_c: float) -> None:
    assert policy.merge([{"graph_risk": level}]).graph_tau == tau_c
    assert COHESION_TAU_BY_RISK[level] == tau_c  # type: ignore[index]
    assert policy.GRAPH_RISK_TAU[level] == tau_c


def test_the_default_risk_level_is_medium_and_a_zones_own_tau_c_wins_over_it() -> None:
    assert policy.SYSTEM_DEFAULT.graph_risk == "medium"
    assert policy.SYSTEM_DEFAULT.graph_tau == 0.15
    assert policy.SYSTEM_DEFAULT.as_dict()["cohesion_tau"] == 0.15
    # a level below inherits the risk level and changes it; an explicit tau_c stays above both
    assert policy.merge([{"graph_risk": "critical"}, {"graph_risk": "low"}]).graph_tau == 0.05
    assert policy.merge([{"cohesion_tau": 0.4}, {"graph_risk": "low"}]).graph_tau == 0.4


def test_an_unknown_risk_level_is_refused_by_name() -> None:
    problems = policy.check_overrides({"graph_risk": "extreme"})
    assert [p.field for p in problems] == ["graph_risk"]
    assert policy.check_overrides({"graph_risk": "high"}) == []


pytestmark_db = pytest.mark.django_db


@pytestmark_db
def test_the_api_sets_the_risk_level_and_refuses_an_unknown_one(admin_api: Any) -> None:
    url = f"/api/v1/zones/{ZONE}/policy/"
    bad = admin_api.put(url, {"reason": "r", "graph_risk": "extreme"}, format="json")
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "graph_risk"
    ok = admin_api.put(url, {"reason": "riskier", "graph_risk": "high"}, format="json")
    assert ok.status_code == 200, ok.json()
    effective = admin_api.get(url).json()["effective"]
    assert effective["graph_risk"] == "high"
    assert effective["cohesion_tau"] == 0.30


@pytestmark_db
@pytest.mark.parametrize(
    ("level", "gate"), [("low", "direct"), ("medium", "direct"), ("high", "qualified")]
)
def test_the_papers_chain_passes_at_medium_and_is_qualified_at_high(
    import_lines: Callable[..., Any],
    reviewer_api: Any,
    set_policy: Callable[..., None],
    level: str,
    gate: str,
) -> None:
    # given the paper's 4-node chain (cohesion 3/16 = 0.1875) in a zone of that risk level
    import_lines(CHAIN)
    set_policy(graph_risk=level)
    # when the graph is asked
    body = ask(reviewer_api, k=4)
    # then 0.1875 passes medium's 0.15 and falls in high's [0.15, 0.30)
    assert body["cohesion"] == pytest.approx(0.1875)
    assert body["cohesion_tau"] == PAPER_TAU_BY_RISK[level]
    assert body["gate"] == gate


@pytestmark_db
def test_an_escalated_answer_lists_its_gaps_and_says_why_to_the_asker(
    import_lines: Callable[..., Any],
    reviewer_api: Any,
    set_policy: Callable[..., None],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    # given the chain in a critical zone: 0.1875 below critical's tau_c/2 = 0.25
    import_lines(CHAIN)
    set_policy(graph_risk="critical")
    # when the zone's reviewer asks
    body = ask(reviewer_api, k=4)
    # then it escalates, and names the three pairs of the chain with no relation
    assert body["gate"] == "escalate"
    assert body["graph_risk"] == "critical"
    pairs = {frozenset(end["key"] for end in gap["between"]) for gap in body["gaps"]}
    assert pairs == {
        frozenset({"document:evaluation", "decision:approval"}),
        frozenset({"document:evaluation", "decision:payment"}),
        frozenset({"decision:proposal", "decision:payment"}),
    }
    end = body["gaps"][0]["between"][0]
    assert isinstance(end["id"], int)
    assert end["label"].startswith("printer vendor")
    assert "0.1875" in body["why"]
    assert "0.25" in body["why"]
    assert "critical" in body["why"]
    assert "G1.U1.P1" in body["why"]
    # and the decision filed for the planet explains itself in its API and on its page
    decision = Decision.objects.get(pk=body["decision"])
    planet = person("pia", Role.REVIEWER, "G1.U1.P1")
    detail = client_for(planet).get(f"/api/v1/decisions/{decision.pk}/").json()
    assert detail["escalation"]["gaps"] == body["gaps"]
    assert "0.1875" in detail["escalation"]["why"]
    web = Client()
    web.force_login(planet)
    page = web.get(reverse("decision-page", args=[decision.pk])).content.decode()
    assert 'id="graph-escalation-why"' in page
    assert "printer vendor payment" in page


@pytestmark_db
def test_the_reason_is_told_in_japanese_to_a_japanese_asker(
    import_lines: Callable[..., Any], reviewer_api: Any, set_policy: Callable[..., None]
) -> None:
    import_lines(CHAIN)
    set_policy(graph_risk="critical")
    response = reviewer_api.get(
        "/api/v1/graph/query/", {"q": "printer vendor", "zone": ZONE, "k": 4},
        HTTP_ACCEPT_LANGUAGE="ja",
    )  # fmt: skip
    why = response.json()["why"]
    assert "0.1875" in why
    assert "重大" in why
    assert "Escalated" not in why
