"""One trail event the graph cannot apply is quarantined and passed: the feed goes on with the
others, and no later run fails on it again."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from coordinates.coordinate import parse
from coordinates.services import token_issue
from decisions.models import Decision
from decisions.services import decision_submit
from evidence.models import Paragraph
from graph import feed as graph_feed
from graph.models import GraphEdge, GraphNode, GraphState
from maria.metrics import QUARANTINED
from tests.graph.conftest import AGENT, GOOD, ZONE
from tests.trail_support import triggers_bypassed
from trail.models import Quarantine, TrailEvent, TrailHead

pytestmark = pytest.mark.django_db

GRAPH_FEED = "graph.feed.trail_follow"


def quarantined_so_far() -> float:
    return QUARANTINED.labels(run=GRAPH_FEED)._value.get()


def submitted(document: int) -> Decision:
    """An answer citing `document`, through the service (the API's bounds are not on this
    path), its validation not run."""
    token, _ = token_issue(agent=parse(AGENT))
    payload = {
        "question": "Who approves travel expenses above 500,000 yen?",
        "answer": GOOD,
        "zone": ZONE,
        "agent": AGENT,
        "claims": [{"text": GOOD, "citations": [{"document": document, "paragraph": 1}]}],
    }
    return decision_submit(token=token, payload=payload).decision


def agent_not_a_coordinate() -> TrailEvent:
    # a decision whose stored agent was edited into something that is not a coordinate
    paragraph = Paragraph.objects.filter(current=True).first()
    assert paragraph is not None
    decision = submitted(paragraph.version.document_id)
    with triggers_bypassed():  # a decision keeps its agent: this one is broken by hand
        Decision.objects.filter(pk=decision.pk).update(agent="no.such agent")
    return TrailEvent.objects.get(decision_id=decision.pk, kind="decision.proposed")


def unreadable_bytes() -> TrailEvent:
    # an event written around the ledger whose hashed bytes are not JSON
    chain = f"{ZONE}/99"
    event = TrailEvent.objects.create(
        chain=chain, seq=1, kind="decision.proposed", decision_id=1, actor="nobody",
        created_at=timezone.now(), prev_hash="0" * 64, hash="f" * 64,
        canonical=b"\xff{not json",
    )  # fmt: skip
    TrailHead.objects.create(chain=chain, seq=1, hash=event.hash)
    return event


@pytest.mark.parametrize(
    ("poison", "error"),
    [(agent_not_a_coordinate, "CoordinateError"), (unreadable_bytes, "UnicodeDecodeError")],
)
def test_an_event_the_graph_cannot_apply_is_quarantined_and_the_others_are_applied(
    poison: Callable[[], TrailEvent],
    error: str,
    decided: Callable[..., dict[str, Any]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # given a first decision in the graph, then a trail event the graph cannot apply
    first = decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    bad = poison()
    counted = quarantined_so_far()

    # when another decision goes through the pipeline (each of its changes asks the graph to
    # follow the trail, and the first of those runs meets the bad event)
    with caplog.at_level(logging.WARNING, logger="trail.quarantine"):
        made = decided()

    # then the new decision is in the graph with its links, and every cursor is at its head
    node = GraphNode.objects.get(key=f"decision:{made['id']}")
    assert node.attributes["state"] == "completed"
    linked = set(GraphEdge.objects.filter(source=node).values_list("target__key", flat=True))
    assert {f"agent:{AGENT}", f"document:{made['document']}"} <= linked
    assert GraphNode.objects.filter(key=f"decision:{first['id']}").exists()
    assert GraphState.objects.get(pk=1).fed == dict(TrailHead.objects.values_list("chain", "seq"))
    # and the bad event was set aside once, saying why, counted and logged
    row = Quarantine.objects.get()
    assert (row.run, row.subject, row.count) == (GRAPH_FEED, f"trail_event:{bad.pk}", 1)
    assert row.reason.startswith(f"{error}: ")
    assert quarantined_so_far() - counted == 1
    logged = [r for r in caplog.records if r.getMessage() == "quarantined"]
    assert [(r.run, r.subject) for r in logged] == [(GRAPH_FEED, f"trail_event:{bad.pk}")]  # type: ignore[attr-defined]

    # when the graph follows again, and when it replays the whole trail
    assert graph_feed.trail_follow() == 0
    GraphState.objects.filter(pk=1).update(fed={})
    replayed = graph_feed.trail_follow()

    # then neither run fails on the bad event: the replay leaves it out unretried
    assert replayed == TrailEvent.objects.filter(decision_id__isnull=False).count()
    assert Quarantine.objects.get().count == 1
    assert quarantined_so_far() - counted == 1


def test_a_citation_no_row_can_hold_is_no_link_and_stops_nothing(
    decided: Callable[..., dict[str, Any]],
) -> None:
    # given an answer that cites document 2**63 (the API refuses it; the service path does
    # not check), waiting in the trail
    bad = submitted(2**63)

    # when another decision goes through the pipeline
    made = decided(tau=0.3, refusal_floor=0.2, floor=0.05)

    # then both are in the graph: the new one with its links, the bad one linked to its
    # agent but to no document, and nothing was quarantined
    assert GraphNode.objects.get(key=f"decision:{made['id']}").attributes["state"] == "completed"
    node = GraphNode.objects.get(key=f"decision:{bad.pk}")
    linked = set(GraphEdge.objects.filter(source=node).values_list("target__key", flat=True))
    assert f"agent:{AGENT}" in linked
    assert not [key for key in linked if key.startswith("document:")]
    assert not Quarantine.objects.exists()
