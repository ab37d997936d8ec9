"""A graph escalation arrives (issue 18 point 4): an answer whose evidence hangs together too
little becomes an item in the queue of the authority one level up, marked "graph: ...",
which that authority approves or sends back like any escalated answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from coordinates.models import Role
from decisions.models import Decision, Outbox
from tests.graph.conftest import ZONE, edge
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

TWO_ISLANDS = [
    edge("decision:p1", "person:a", "approved_by", source_label="printer lease",
         target_label="printer officer"),
    edge("decision:p2", "person:b", "approved_by", source_label="printer toner",
         target_label="printer clerk"),
]  # fmt: skip


def ask(client: Any, q: str = "printer") -> dict[str, Any]:
    response = client.get("/api/v1/graph/query/", {"q": q, "zone": ZONE, "k": 4})
    assert response.status_code == 200, response.json()
    body: dict[str, Any] = response.json()
    return body


def test_an_escalated_graph_answer_is_an_item_for_the_planet_marked_graph(
    import_lines: Callable[..., Any],
    reviewer_api: Any,
    set_policy: Callable[..., None],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    # given incoherent evidence in the zone
    import_lines(TWO_ISLANDS)
    set_policy(cohesion_tau=0.9)
    # when the zone's reviewer asks the graph
    body = ask(reviewer_api)
    # then the answer is escalated and an item waits for the planet, addressed to it
    assert body["gate"] == "escalate"
    decision = Decision.objects.get(pk=body["decision"])
    assert decision.state == "approval_required"
    assert decision.escalated_to == "G1.U1.P1"
    assert decision.report_id == body["report_id"]
    assert decision.proposed_by.username == "rita"
    escalated = TrailEvent.objects.get(decision_id=decision.pk, kind="decision.escalated")
    assert escalated.payload["why"] == "graph"
    push = Outbox.objects.filter(decision=decision, kind="push").get()
    assert push.payload["type"] == "decision.escalated"
    # and the planet's reviewer sees it marked in their queue and on its page
    planet = person("pia", Role.REVIEWER, "G1.U1.P1")
    web = Client()
    web.force_login(planet)
    queue = web.get(f"{reverse('queue')}?state=to_me").content.decode()
    assert f'<tr data-id="{decision.pk}"' in queue
    assert f"escalated from {ZONE}: graph: cohesion" in queue
    page = web.get(reverse("decision-page", args=[decision.pk])).content.decode()
    assert "graph: cohesion" in page
    # and the person who asked may not approve it; the planet's reviewer may
    assert reviewer_api.post(
        f"/api/v1/decisions/{decision.pk}/approve/", {}, format="json"
    ).status_code in (403, 404)
    approved = client_for(planet).post(
        f"/api/v1/decisions/{decision.pk}/approve/", {"reason": "fine"}, format="json"
    )
    assert approved.status_code == 200
    assert Decision.objects.get(pk=decision.pk).state == "completed"


def test_a_coherent_graph_answer_makes_no_item(
    import_lines: Callable[..., Any], reviewer_api: Any, set_policy: Callable[..., None]
) -> None:
    import_lines(TWO_ISLANDS)
    set_policy(cohesion_tau=0.2)
    body = ask(reviewer_api)
    assert body["gate"] != "escalate"
    assert "decision" not in body
    assert not Decision.objects.exists()


def test_asking_a_wider_level_from_a_zone_files_no_item_in_that_levels_queue(
    import_lines: Callable[..., Any], reviewer_api: Any, set_policy: Callable[..., None]
) -> None:
    # given incoherent evidence, read by the zone's reviewer at the universe's level
    import_lines(TWO_ISLANDS)
    universe = ".".join(ZONE.split(".")[:2])
    set_policy(universe, cohesion_tau=0.9)
    response = reviewer_api.get("/api/v1/graph/query/", {"q": "printer", "zone": universe})
    assert response.status_code == 200, response.json()
    body = response.json()
    # then the answer is escalated, but a reviewer of a zone puts no work in a queue of the
    # universe (or its galaxy), where they do not act
    assert body["gate"] == "escalate"
    assert "decision" not in body
    assert not Decision.objects.exists()
    assert not Outbox.objects.exists()
