"""Issue 18 on the knowledge graph: risk hotspots that oscillate around the threshold stay one
review item, and the explorer says when nothing bears on a question, never offers a failed or
blocked decision as evidence, and states each relation once."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role
from decisions.models import Decision, Gate, State
from graph.models import GraphRiskFlag
from tests.graph.conftest import AGENT, ZONE, edge
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

PLANET = "G1.U1.P1"
RELEVANT = "Who approves travel expenses above 500,000 yen?"
UNRELATED = "how much does the weather on Mars cost?"


def scan() -> dict[str, int]:
    from graph.tasks import scan_graph_risk

    return dict(scan_graph_risk.delay().get())


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def busy(import_lines: Callable[..., Any], set_policy: Callable[..., None]) -> None:
    """A person who approved three of four decisions: 0.75 of the paths, above 0.6."""
    rows = [
        edge(f"decision:{n}", "person:busy", "approved_by", target_label="Busy approver")
        for n in (1, 2, 3)
    ]
    assert (
        import_lines([*rows, edge("decision:4", "person:idle", "approved_by")]).status_code == 201
    )
    set_policy(risk_threshold=0.6)
    scan()


def test_a_node_that_crosses_again_before_review_stays_one_review_item(
    busy: None, set_policy: Callable[..., None], person: Callable[..., Any]
) -> None:
    # given busy flagged, nobody has reviewed it yet
    [first] = GraphRiskFlag.objects.filter(key="person:busy")
    # when busy falls below and rises above the threshold again, three times
    for _ in range(3):
        set_policy(risk_threshold=0.9)
        scan()
        set_policy(risk_threshold=0.6)
        scan()
    # then it is still the one open flag, live again, not four copies
    flags = list(GraphRiskFlag.objects.filter(key="person:busy", status="open"))
    assert [f.pk for f in flags] == [first.pk]
    assert flags[0].ended_at is None
    # and each crossing is on the trail
    flagged = list(TrailEvent.objects.filter(kind="graph.risk_flagged"))
    assert [e.payload["node"] for e in flagged].count("person:busy") == 4
    # and the authority above sees one row for it
    page = login(person("pia", Role.REVIEWER, PLANET)).get("/queue/").content.decode()
    assert page.count('data-flag="') == 1


def test_a_flag_whose_node_fell_below_does_not_read_as_above_and_below_at_once(
    busy: None, set_policy: Callable[..., None], person: Callable[..., Any]
) -> None:
    set_policy(risk_threshold=0.9)
    scan()
    page = login(person("pia", Role.REVIEWER, PLANET)).get("/queue/").content.decode()
    row = re.search(r'<tr data-flag="\d+">.*?</tr>', page, re.S)
    assert row is not None
    text = " ".join(re.sub(r"<[^>]+>", " ", row.group(0)).split())
    assert "no longer above the threshold" not in text
    assert "was 0.75 / 0.60 when flagged; since fallen below the threshold" in text


# --- the explorer ----------------------------------------------------------------------------


def ask(client: Any, q: str, **params: Any) -> dict[str, Any]:
    response = client.get("/api/v1/graph/query/", {"q": q, "zone": ZONE, **params})
    assert response.status_code == 200, response.json()
    body: dict[str, Any] = response.json()
    return body


def test_a_question_nothing_bears_on_says_so_with_no_gate(
    decided: Callable[..., dict[str, Any]], reviewer_api: Any
) -> None:
    # given a graph that knows an answered decision about travel expenses
    decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    # when someone asks about the weather on Mars
    body = ask(reviewer_api, UNRELATED)
    # then the graph says it has no evidence, and grades nothing
    assert body["gate"] is None
    assert body["subgraph"] == {"nodes": [], "edges": []}
    assert "no evidence" in body["answer"]
    event = TrailEvent.objects.get(kind="graph.answered")
    assert event.payload["gate"] == "no_evidence"
    # while a question about travel expenses still gets its evidence and a gate
    assert ask(reviewer_api, RELEVANT)["gate"] in ("direct", "qualified", "escalate")


def test_failed_and_blocked_decisions_are_never_evidence(
    decided: Callable[..., dict[str, Any]],
    reviewer_api: Any,
    agent_client: Callable[[str], Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given an answered decision and a blocked one (a number the policy does not say)
    made = decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    wrong = "Expenses above 300,000 yen require prior approval by the division head."
    body = {
        "question": RELEVANT,
        "answer": wrong,
        "zone": ZONE,
        "agent": AGENT,
        "claims": [{"text": wrong, "citations": [{"document": made["document"], "paragraph": 2}]}],
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = agent_client(AGENT).post("/api/v1/decisions/", body, format="json")
    blocked = Decision.objects.get(pk=response.json()["id"])
    assert (blocked.state, blocked.gate) == (State.FAILED, Gate.BLOCKED)
    from graph.models import GraphNode

    assert GraphNode.objects.filter(key=f"decision:{blocked.pk}").exists()
    # when the graph is asked the question both answered, with room for every node
    for method in ("hop", "ppr"):
        answer = ask(reviewer_api, RELEVANT, k=50, method=method)
        keys = {n["key"] for n in answer["subgraph"]["nodes"]}
        # then the answered decision is evidence and the blocked one is not
        assert f"decision:{made['id']}" in keys
        assert f"decision:{blocked.pk}" not in keys
        assert all(f"decision:{blocked.pk}" not in (e["source"], e["target"])
                   for e in answer["subgraph"]["edges"])  # fmt: skip


def test_each_relation_is_stated_once(
    decided: Callable[..., dict[str, Any]], reviewer_api: Any
) -> None:
    # given three answered decisions of the same question, citing the same policy
    for _ in range(3):
        decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    body = ask(reviewer_api, RELEVANT, k=50)
    labels = {n["key"]: f"{n['type']} “{n['label']}”" for n in body["subgraph"]["nodes"]}
    facts = [
        f"{labels[e['source']]} {e['type'].replace('_', ' ')} {labels[e['target']]}."
        for e in body["subgraph"]["edges"]
    ]
    assert len(set(facts)) < len(facts)  # the same words for different decisions' relations
    # then the answer states each of them once
    for fact in set(facts):
        assert body["answer"].count(fact) == 1, fact
    pairs = [(e["source"], e["target"], e["type"]) for e in body["subgraph"]["edges"]]
    assert len(pairs) == len(set(pairs))
