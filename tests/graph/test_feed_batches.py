"""The graph follows the trail's decision events: in bulk, once per run, from a cursor per
chain, replayable, and caught up incrementally by every process's cached index."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import cache

from graph import feed as graph_feed
from graph import store as graph_store
from graph.models import GraphChange, GraphEdge, GraphNode, GraphState
from tests.decisions.helpers import tasks_to_broker
from tests.graph.conftest import ZONE
from trail.models import TrailHead

pytestmark = pytest.mark.django_db


def graph_rows() -> tuple[set[tuple[str, str, str]], dict[str, dict[str, Any]]]:
    edges = {
        (e.source.key, e.edge_type, e.target.key)
        for e in GraphEdge.objects.select_related("source", "target")
    }
    nodes = {n.key: dict(n.attributes) for n in GraphNode.objects.all()}
    return edges, nodes


def test_the_graph_follows_the_trail_up_to_its_head_and_no_further(
    decided: Callable[..., dict[str, Any]],
) -> None:
    made = decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    # every cursor stands at its chain's head (the decision's lane among them): every
    # decision event was applied
    heads = dict(TrailHead.objects.values_list("chain", "seq"))
    assert GraphState.objects.get(pk=1).fed == heads
    assert any(chain.startswith(f"{ZONE}/") for chain in heads)
    node = GraphNode.objects.get(key=f"decision:{made['id']}")
    assert node.attributes["state"] == "completed"
    # and a run with nothing new applies nothing and logs no change
    generation = GraphState.objects.get(pk=1).generation
    assert graph_feed.trail_follow() == 0
    assert GraphState.objects.get(pk=1).generation == generation


def test_a_run_that_died_before_its_cursor_moved_is_replayed_to_the_same_graph(
    decided: Callable[..., dict[str, Any]],
) -> None:
    decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    edges, nodes = graph_rows()
    GraphState.objects.filter(pk=1).update(fed={})
    assert graph_feed.trail_follow() > 0
    assert graph_rows() == (edges, nodes)


def test_a_run_applies_at_most_its_limit_and_the_next_takes_the_rest(
    decided: Callable[..., dict[str, Any]],
) -> None:
    decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    edges, _nodes = graph_rows()
    GraphEdge.objects.filter(origin="pipeline").delete()  # the pipeline's part of the graph
    GraphState.objects.filter(pk=1).update(fed={})
    assert graph_feed.trail_follow(limit=2) == 2
    assert graph_feed.trail_follow() > 0
    assert graph_rows()[0] == edges


def test_every_change_of_a_run_is_logged_at_its_own_generation(
    decided: Callable[..., dict[str, Any]],
) -> None:
    # given a process whose index is up to date
    decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    before = graph_store.loaded_graph()
    start, replayed = before.generation, before.replayed
    # when the graph follows a second decision's events
    made = decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    state = GraphState.objects.get(pk=1)
    # then the log holds one change per generation, without gaps, up to the state's
    generations = list(
        GraphChange.objects.filter(generation__gt=start)
        .order_by("generation")
        .values_list("generation", flat=True)
    )
    assert generations == list(range(start + 1, state.generation + 1))
    # and the cached index catches up by replaying them, not by a full reload
    after = graph_store.loaded_graph()
    assert after is before
    assert after.replayed > replayed
    assert f"decision:{made['id']}" in after.keys


def test_requests_to_follow_within_a_second_share_one_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graph import tasks

    runs: list[dict[str, Any]] = []
    monkeypatch.setattr(
        tasks.follow_trail, "apply_async", lambda args, **kw: runs.append({"args": args, **kw})
    )
    cache.delete("maria:graph-follow-due")
    with tasks_to_broker():  # not inline: the stand-in for apply_async counts the runs
        for _ in range(5):  # five decision changes commit in a burst
            tasks.trail_follow_soon()
        assert len(runs) == 1
        # the run starts after the mark is gone (the cache keeps whole seconds)
        assert runs[0]["countdown"] >= max(graph_feed.FOLLOW_AFTER, 1)
        cache.delete("maria:graph-follow-due")  # the mark expired: the next change asks again
        tasks.trail_follow_soon()
        assert len(runs) == 2
