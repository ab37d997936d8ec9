"""The reviewer's day on the pages (issue 18.5): the decision page says in one sentence why
the answer is here; after a verdict the next waiting decision opens; reviewers comment (on
the trail), assign a decision to each other, and release or assign several from the queue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role
from decisions.models import Decision
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_page_opens_with_why_the_answer_is_here_and_the_gate_alone(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    page = login(person("ann", Role.REVIEWER, "G1.U1.P1")).get(f"/queue/decisions/{decision_id}/")
    html = page.content.decode()
    assert '<p id="why" class="why gate-required">A person must decide: ' in html
    assert "against τ 0.99." in html
    assert "answered as" not in html  # no answer mode beside a gate that sends it to a person


def test_after_a_verdict_the_next_waiting_decision_opens_then_the_queue(
    queue_one: Callable[..., int],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    first, second = queue_one(), queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    with django_capture_on_commit_callbacks(execute=True):
        done = ann.post(f"/queue/decisions/{first}/approve/", {"reason": "checked"})
    assert done["Location"] == f"/queue/decisions/{second}/"
    with django_capture_on_commit_callbacks(execute=True):
        last = ann.post(f"/queue/decisions/{second}/approve/", {"reason": "checked"}, follow=True)
    assert last.redirect_chain[-1][0] == "/queue/"
    assert "Nothing else is waiting for you." in last.content.decode()


def test_comments_are_shown_to_the_zone_and_put_on_the_trail(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    ben = login(person("ben", Role.ZONE_ADMIN, "G1.U1.P1.Z1"))
    said = ann.post(
        f"/queue/decisions/{decision_id}/comment/",
        {"text": "is the division head still the approver?"},
        follow=True,
    )
    assert "Your comment is on the trail." in said.content.decode()
    page = ben.get(f"/queue/decisions/{decision_id}/").content.decode()
    assert "is the division head still the approver?" in page
    event = TrailEvent.objects.get(decision_id=decision_id, kind="decision.commented")
    assert (event.actor, event.reason) == ("ann", "is the division head still the approver?")
    empty = ann.post(f"/queue/decisions/{decision_id}/comment/", {"text": " "}, follow=True)
    assert "a comment needs some text" in empty.content.decode()


def test_an_assignment_shows_in_the_queue_and_under_assigned_to_me(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    admin = login(person("ada", Role.ZONE_ADMIN, "G1.U1.P1.Z1"))
    ben_user = person("ben", Role.REVIEWER, "G1.U1.P1")
    page = admin.get(f"/queue/decisions/{decision_id}/").content.decode()
    assert '<option value="ben">ben</option>' in page
    admin.post(f"/queue/decisions/{decision_id}/assign/", {"assignee": "ben"})
    assert Decision.objects.get(pk=decision_id).assigned_to == ben_user
    ben = login(ben_user)
    mine = ben.get("/queue/?state=assigned").content.decode()
    assert f'data-id="{decision_id}"' in mine
    assert "→ ben" in mine
    assert f'data-id="{decision_id}"' not in admin.get("/queue/?state=assigned").content.decode()


def test_the_queue_assigns_several_at_once_and_says_what_it_could_not_do(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    first, second = queue_one(), queue_one()
    person("ben", Role.REVIEWER, "G1.U1.P1")
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    done = ann.post(
        "/queue/bulk/",
        {"action": "assign", "assignee": "ben", "decisions": [first, second, 987654]},
        follow=True,
    ).content.decode()
    assert "2 decisions: done." in done
    assert "#987654: no decision 987654" in done
    assert set(
        Decision.objects.filter(pk__in=[first, second]).values_list(
            "assigned_to__username", flat=True
        )
    ) == {"ben"}
