"""Escalations that arrive (issue 18 point 4): an overdue review becomes an item addressed to
the authority one level up, first in its queue, marked with why, pushed to its socket; that
authority approves, rejects or sends it back for more evidence; at the top of the tree the
item stays with the galaxy's authority and the trail says so once."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from coordinates.coordinate import parse
from coordinates.models import Role
from coordinates.services import token_issue
from decisions import services
from decisions.models import Decision, Outbox
from tests.decisions.conftest import GOOD, ZONE, answer_body, cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

PLANET = "G1.U1.P1"
STRICT = {"tau": 0.99, "refusal_floor": 0.05}  # a supported answer waits for a reviewer


@pytest.fixture
def waiting(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> Callable[[], int]:
    """Submit answers that wait in the zone's queue."""
    set_policy(**STRICT)

    def run() -> int:
        body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
        assert body["state"] == "approval_required"
        return int(body["id"])

    return run


def overdue(decision_id: int) -> None:
    """Its review SLA ran out a minute ago (the clock moved on)."""
    Decision.objects.filter(pk=decision_id).update(due_at=timezone.now() - timedelta(minutes=1))


def page(user: Any, path: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def queue_ids(user: Any, query: str = "") -> list[int]:
    html = page(user, f"{reverse('queue-rows')}?{query}")
    return [int(i) for i in re.findall(r'<tr data-id="(\d+)"', html)]


def act(client: APIClient, decision_id: int, action: str, body: Any) -> Any:
    return client.post(f"/api/v1/decisions/{decision_id}/{action}/", body, format="json")


def test_an_overdue_review_is_addressed_to_the_planets_authority_first_and_says_why(
    waiting: Callable[[], int], person: Callable[..., Any]
) -> None:
    # given two waiting answers, the second due sooner, and reviewers of the planet and zone
    late, other = waiting(), waiting()
    planet = person("pia", Role.REVIEWER, PLANET)
    zone = person("zack", Role.REVIEWER, ZONE)
    overdue(late)
    was_due = Decision.objects.get(pk=late).due_at
    # when the escalation job runs
    assert services.decisions_escalate_overdue() == 1
    Decision.objects.filter(pk=other).update(due_at=timezone.now() + timedelta(hours=1))
    # then the planet's reviewer finds it first, marked, and alone under "escalated to me"
    assert queue_ids(planet) == [late, other]
    assert queue_ids(planet, "state=to_me") == [late]
    html = page(planet, reverse("queue"))
    since = timezone.localtime(was_due).strftime("%Y-%m-%d %H:%M")
    assert f"escalated from {ZONE}: overdue since {since}" in html
    assert "escalated to you" in html
    assert "escalated-to-me" in html
    # and the zone's reviewer still sees it, soonest due first, but it is not addressed to them
    assert queue_ids(zone) == [other, late]
    assert queue_ids(zone, "state=to_me") == []
    # and the decision page says it was escalated, and why, and offers the authority its send-back
    detail = page(planet, reverse("decision-page", args=[late]))
    assert f"Escalated to the authority of {PLANET}" in detail
    assert "overdue since" in detail
    assert 'id="send-back"' in detail
    assert 'id="send-back"' not in page(zone, reverse("decision-page", args=[late]))


def test_the_escalation_is_pushed_to_the_queue_group_of_the_level_above(
    waiting: Callable[[], int],
) -> None:
    from gates.groups import groups_for_zone

    decision_id = waiting()
    overdue(decision_id)
    services.decisions_escalate_overdue()
    push = Outbox.objects.filter(decision_id=decision_id, kind="push").order_by("pk").last()
    assert push is not None
    assert push.payload["type"] == "decision.escalated"
    assert push.payload["decision"]["escalated_to"] == PLANET
    # The zone's pushes go to every prefix's group: the planet's reviewers listen on queue.P.
    assert f"queue.{PLANET}" in groups_for_zone(parse(push.payload["zone"]))


def test_at_the_top_of_the_tree_it_stays_with_the_galaxy_and_the_trail_says_so_once(
    waiting: Callable[[], int], person: Callable[..., Any]
) -> None:
    decision_id = waiting()
    # given it went up a level each time its SLA ran out: planet, universe, galaxy
    for level in ("G1.U1.P1", "G1.U1", "G1"):
        overdue(decision_id)
        assert services.decisions_escalate_overdue() == 1
        assert Decision.objects.get(pk=decision_id).escalated_to == level
    # when it is overdue at the galaxy and the job runs again and again
    overdue(decision_id)
    assert services.decisions_escalate_overdue() == 0
    assert services.decisions_escalate_overdue() == 0
    # then it stays with the galaxy's authority, recorded once
    decision = Decision.objects.get(pk=decision_id)
    assert decision.escalated_to == "G1"
    assert decision.state == "approval_required"
    topped = TrailEvent.objects.filter(decision_id=decision_id, kind="decision.escalation_topped")
    assert topped.count() == 1
    assert topped.get().payload["at"] == "G1"
    # and the page says so to the galaxy's reviewer
    galaxy = person("gus", Role.REVIEWER, "G1")
    text = "at the top of the tree: it stays with G1&#x27;s authority"
    assert text in page(galaxy, reverse("decision-page", args=[decision_id]))
    assert text in page(galaxy, reverse("queue"))


def test_the_authority_above_sends_it_back_asking_for_more_evidence(
    waiting: Callable[[], int],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    # given the agent has a webhook, and an escalated decision
    token_issue(agent=parse("G1.U1.P1.Z1.A1"), webhook_url="http://127.0.0.1:9/hook")
    decision_id = waiting()
    fresh = waiting()
    overdue(decision_id)
    services.decisions_escalate_overdue()
    planet = client_for(person("pia", Role.REVIEWER, PLANET))
    zone = client_for(person("zack", Role.REVIEWER, ZONE))
    # a reason is required, the zone's own reviewer is not the authority, and an answer that
    # was not escalated is rejected, not sent back
    missing = act(planet, decision_id, "send-back", {"reason": "  "})
    assert missing.status_code == 400
    assert missing.json()["error"]["field"] == "reason"
    assert act(zone, decision_id, "send-back", {"reason": "cite more"}).status_code == 403
    assert act(planet, fresh, "send-back", {"reason": "cite more"}).status_code == 409
    assert Decision.objects.get(pk=decision_id).state == "approval_required"
    # when the planet's reviewer sends it back with what to bring
    why = "cite the signed approval memo for trips above 500,000 yen"
    response = act(planet, decision_id, "send-back", {"reason": why})
    # then it fails as "more evidence needed", on the trail as the planet's verdict
    assert response.status_code == 200
    assert response.json()["state"] == "failed"
    decision = Decision.objects.get(pk=decision_id)
    assert decision.outcome_reason == f"more evidence needed: {why}"
    failed = TrailEvent.objects.get(decision_id=decision_id, kind="decision.failed")
    assert failed.actor == "pia"
    assert failed.reason == why
    assert failed.payload["outcome"] == "more_evidence_needed"
    assert failed.payload["level"] == PLANET
    # and the agent is told, with the request it can act on
    hook = Outbox.objects.filter(decision_id=decision_id, kind="webhook").order_by("pk").last()
    assert hook is not None
    message = hook.payload["message"]
    assert message["type"] == "decision.rejected"
    assert message["data"]["outcome"] == "more_evidence_needed"
    assert message["data"]["request"] == why
    assert message["data"]["reviewer"] == "pia"
    # and it is closed: nobody can send it back again
    assert act(planet, decision_id, "send-back", {"reason": why}).status_code == 409


def test_the_authority_above_approves_it_and_the_answer_is_released(
    waiting: Callable[[], int],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    decision_id = waiting()
    overdue(decision_id)
    services.decisions_escalate_overdue()
    planet = client_for(person("pia", Role.REVIEWER, PLANET))
    response = act(planet, decision_id, "approve", {"reason": "the policy says so"})
    assert response.status_code == 200
    assert Decision.objects.get(pk=decision_id).state == "completed"
    approved = TrailEvent.objects.get(decision_id=decision_id, kind="decision.approved")
    assert approved.actor == "pia"


def test_a_send_back_from_the_page_returns_to_the_queue_with_a_message(
    waiting: Callable[[], int], person: Callable[..., Any], django_capture_on_commit_callbacks: Any
) -> None:
    decision_id = waiting()
    overdue(decision_id)
    with django_capture_on_commit_callbacks(execute=True):  # the push and log after commit
        services.decisions_escalate_overdue()
    client = Client()
    client.force_login(person("pia", Role.REVIEWER, PLANET))
    url = reverse("decision-action", args=[decision_id, "send-back"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"reason": "bring the memo"}, follow=True)
    assert response.status_code == 200
    assert f"Decision {decision_id} sent back to its agent for more evidence." in (
        response.content.decode()
    )
    assert Decision.objects.get(pk=decision_id).state == "failed"


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_planets_reviewer_gets_the_escalation_live_on_the_socket(
    person: Callable[..., Any], org: Any, ingest: Callable[..., Any]
) -> None:
    from tests.gates.test_consumers import connect, session_cookie

    def queued() -> int:
        from coordinates.selectors import zone_get
        from coordinates.services import policy_update
        from evidence.models import Paragraph
        from tests.samples import POLICY_EN

        ingest(POLICY_EN, title="Travel policy", key="travel")
        policy_update(zone=zone_get(parse(ZONE)), overrides=STRICT, reason="test", actor=None)
        paragraph = Paragraph.objects.get(text__contains="500,000 yen require", current=True)
        token, _ = token_issue(agent=parse("G1.U1.P1.Z1.A1"))
        body = answer_body([{"text": GOOD, "citations": [cite(paragraph)]}])
        submitted = services.decision_submit(token=token, payload=body)
        decision_id = submitted.decision.pk
        assert Decision.objects.get(pk=decision_id).state == "approval_required"
        overdue(decision_id)
        return decision_id

    decision_id = await sync_to_async(queued)()
    planet = await sync_to_async(person)("pia", Role.REVIEWER, PLANET)
    other = await sync_to_async(person)("lex", Role.REVIEWER, "G1.U1.P2")
    socket, connected, _ = await connect(await sync_to_async(session_cookie)(planet))
    far, far_connected, _ = await connect(await sync_to_async(session_cookie)(other))
    assert connected
    assert far_connected
    assert (await socket.receive_json_from())["scopes"] == [PLANET]
    await far.receive_json_from()
    # when the escalation job moves it up (its push is sent after commit)
    assert await sync_to_async(services.decisions_escalate_overdue)() == 1
    # then the planet's reviewer hears of it, addressed to the planet; another planet never
    event = await socket.receive_json_from(timeout=5)
    assert event["type"] == "decision.escalated"
    assert event["decision"]["id"] == decision_id
    assert event["decision"]["escalated_to"] == PLANET
    assert await far.receive_nothing(timeout=0.2)
    await socket.disconnect()
    await far.disconnect()
