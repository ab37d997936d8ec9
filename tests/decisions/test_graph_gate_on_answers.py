"""The graph gate on agents' answers (issue 30 point 4, seed 002 §9.1–9.3, §14.5): an answer
that names nodes of its zone's graph is gated also on their cohesion, against the zone's
tau_c by risk level; never more loosely than the answer gate; an escalated one goes to the
level above and says why, listing the pairs of its nodes with no relation."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from decisions.models import Decision
from tests.decisions.conftest import GOOD, ZONE, cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

# Seed 002 §4.1's procurement chain: proposal -> evaluation, approval -> proposal,
# payment -> approval; Cohesion = 3/16 = 0.1875 (§8.1).
CHAIN_KEYS = ["decision:proposal", "document:evaluation", "decision:approval", "decision:payment"]
CHAIN = [
    ("decision:proposal", "decision", "document:evaluation", "document", "references"),
    ("decision:approval", "decision", "decision:proposal", "decision", "depends_on"),
    ("decision:payment", "decision", "decision:approval", "decision", "depends_on"),
]


@pytest.fixture
def graph_of(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], Any]
) -> Callable[..., None]:
    """Import edges into a zone's graph as its admin."""

    def run(edges: list[tuple[str, str, str, str, str]], zone: str = ZONE) -> None:
        admin = client_for(person(f"admin-{zone}", Role.ZONE_ADMIN, zone))
        rows = [
            {"source": s, "source_type": st, "source_label": f"vendor {s}", "target": t,
             "target_type": tt, "target_label": f"vendor {t}", "type": kind}
            for s, st, t, tt, kind in edges
        ]  # fmt: skip
        response = admin.post(
            f"/api/v1/graph/import/?zone={zone}",
            data="\n".join(json.dumps(r) for r in rows),
            content_type="application/x-ndjson",
        )
        assert response.status_code in (200, 201), response.content

    return run


@pytest.fixture
def lenient(set_policy: Callable[..., Any]) -> Callable[..., None]:
    """A zone where the cited answer passes the answer gate on its own (auto)."""

    def run(**graph: Any) -> None:
        set_policy(tau=0.3, refusal_floor=0.2, floor=0.05, **graph)

    return run


def test_the_papers_chain_passes_at_medium_risk(
    policy_doc: Any, graph_of: Any, lenient: Any, submit: Callable[..., Any]
) -> None:
    graph_of(CHAIN)
    lenient()  # medium by default: tau_c 0.15 <= 0.1875
    body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}], graph_evidence=CHAIN_KEYS)
    body = body.json()
    assert body["gate"] == "auto"
    assert body["state"] == "completed"
    assert body["escalation"] is None


def test_at_high_risk_the_chain_is_at_least_flagged(
    policy_doc: Any, graph_of: Any, lenient: Any, submit: Callable[..., Any]
) -> None:
    graph_of(CHAIN)
    lenient(graph_risk="high")  # 0.1875 in [0.15, 0.30): qualified
    body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}], graph_evidence=CHAIN_KEYS)
    assert body.json()["gate"] == "flagged"
    report = Decision.objects.get(pk=body.json()["id"]).report
    assert report.body["graph_gate"]["gate"] == "qualified"
    assert report.body["graph_gate"]["cohesion"] == pytest.approx(0.1875)


def test_at_critical_risk_the_answer_goes_to_the_planet_and_says_why(
    policy_doc: Any,
    graph_of: Any,
    lenient: Any,
    submit: Callable[..., Any],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    # given the chain in a critical zone: 0.1875 < tau_c/2 = 0.25
    graph_of(CHAIN)
    lenient(graph_risk="critical")
    # when the agent submits an answer the answer gate alone would release
    submitted = submit([{"text": GOOD, "citations": [cite(policy_doc)]}], graph_evidence=CHAIN_KEYS)
    body = submitted.json()
    # then a person at the planet decides, and the agent reads why and what is missing
    assert body["gate"] == "required"
    assert body["state"] == "approval_required"
    assert body["escalated_to"] == "G1.U1.P1"
    assert "0.1875" in body["escalation"]["why"]
    assert "critical" in body["escalation"]["why"]
    pairs = {frozenset(e["key"] for e in g["between"]) for g in body["escalation"]["gaps"]}
    assert pairs == {
        frozenset({"document:evaluation", "decision:approval"}),
        frozenset({"document:evaluation", "decision:payment"}),
        frozenset({"decision:proposal", "decision:payment"}),
    }
    event = TrailEvent.objects.get(decision_id=body["id"], kind="decision.escalated")
    assert event.payload["why"] == "graph"
    planet = client_for(person("pia", Role.REVIEWER, "G1.U1.P1"))
    approved = planet.post(
        f"/api/v1/decisions/{body['id']}/approve/", {"reason": "ok"}, format="json"
    )
    assert approved.status_code == 200, approved.json()


def test_the_graph_gate_never_loosens_a_blocked_answer(
    policy_doc: Any, graph_of: Any, set_policy: Any, submit: Callable[..., Any]
) -> None:
    from tests.decisions.conftest import WRONG_NUMBER

    graph_of(CHAIN)
    set_policy(graph_risk="low")
    body = submit(
        [{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}], graph_evidence=CHAIN_KEYS
    ).json()
    assert body["gate"] == "blocked"


def test_an_agent_cannot_name_another_zones_node(
    policy_doc: Any, graph_of: Any, lenient: Any, submit: Callable[..., Any]
) -> None:
    # given a node only in the neighbouring zone's graph
    graph_of(CHAIN)
    graph_of([("decision:secret", "decision", "person:x", "person", "approved_by")], "G1.U1.P1.Z2")
    lenient()
    # when the agent names it
    response = submit(
        [{"text": GOOD, "citations": [cite(policy_doc)]}],
        graph_evidence=["decision:proposal", "decision:secret"],
    )
    # then it is not found, as a node that does not exist, naming the field; nothing is stored
    assert response.status_code == 404, response.json()
    assert response.json()["error"]["field"] == "graph_evidence.1"
    assert not Decision.objects.exists()
