"""Releasing a blocked answer takes two different people with `override_blocked` (issue 18
point 4): the first asks, with a reason, and the answer stays blocked; a second completes
it; the same person twice is a 409; the API and the page show where the
override stands, and the dashboard counts one override."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from coordinates.models import Role
from decisions.models import Approval, Decision
from tests.decisions.conftest import WRONG_NUMBER, ZONE, cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def blocked(policy_doc: Any, submit: Callable[..., Any]) -> int:
    body = submit([{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}]).json()
    assert body["gate"] == "blocked"
    assert body["state"] == "failed"
    return int(body["id"])


@pytest.fixture
def admin(person: Callable[..., Any]) -> Callable[[str], User]:
    """A zone admin of the zone holding override_blocked."""

    def make(name: str) -> User:
        user = person(name, Role.ZONE_ADMIN, ZONE)
        user.user_permissions.add(Permission.objects.get(codename="override_blocked"))
        return User.objects.get(pk=user.pk)  # the permission cache read afresh

    return make


def override(client: APIClient, decision_id: int, reason: str) -> Any:
    return client.post(
        f"/api/v1/decisions/{decision_id}/override/", {"reason": reason}, format="json"
    )


def test_the_first_person_asks_and_the_answer_stays_blocked_until_a_second_completes_it(
    blocked: int, admin: Callable[[str], User], client_for: Callable[[Any], APIClient]
) -> None:
    zed, zoe = client_for(admin("zed")), client_for(admin("zoe"))
    # when the first admin overrides
    first = override(zed, blocked, "the division head confirmed by phone")
    # then it is a request: still blocked, and the API says where it stands
    assert first.status_code == 200
    assert first.json()["state"] == "failed"
    assert first.json()["override"]["text"] == (
        "1 of 2 override approvals, by zed: the division head confirmed by phone"
    )
    detail = zed.get(f"/api/v1/decisions/{blocked}/").json()
    assert detail["override"]["given"] == 1
    assert detail["override"]["needed"] == 2
    assert detail["override"]["approvals"][0]["reviewer"] == "zed"
    requested = TrailEvent.objects.get(decision_id=blocked, kind="decision.override_requested")
    assert requested.actor == "zed"
    assert requested.reason == "the division head confirmed by phone"
    assert not TrailEvent.objects.filter(decision_id=blocked, kind="decision.overridden").exists()
    # when the same person tries again: a clear 409, nothing changes
    again = override(zed, blocked, "really")
    assert again.status_code == 409
    assert "a second person" in again.json()["error"]["message"]
    assert Approval.objects.filter(decision_id=blocked).count() == 1
    # when a second, different person completes it, with their reason
    second = override(zoe, blocked, "the head's email of today confirms it")
    # then the answer is released, both names on the trail
    assert second.status_code == 200
    assert Decision.objects.get(pk=blocked).state == "completed"
    assert second.json()["override"]["given"] == 2
    done = TrailEvent.objects.get(decision_id=blocked, kind="decision.overridden")
    assert done.actor == "zoe"
    assert done.reason == "the head's email of today confirms it"
    assert done.payload["requested_by"] == "zed"
    assert done.payload["request"] == "the division head confirmed by phone"
    # and a third attempt finds nothing blocked any more
    assert override(client_for(admin("zia")), blocked, "late").status_code == 409


def test_each_step_needs_the_permission_a_reason_and_the_zone(
    blocked: int,
    admin: Callable[[str], User],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    plain = client_for(person("pat", Role.ZONE_ADMIN, ZONE))  # no permission
    assert override(plain, blocked, "business need").status_code == 403
    zed = client_for(admin("zed"))
    empty = override(zed, blocked, " ")
    assert empty.status_code == 400
    assert empty.json()["error"]["field"] == "reason"
    assert Approval.objects.filter(decision_id=blocked).count() == 0
    assert override(zed, blocked, "confirmed").status_code == 200
    assert Decision.objects.get(pk=blocked).state == "failed"
    # a zone admin of another zone holding the permission is told nothing of it
    outsider = person("oli", Role.ZONE_ADMIN, "G1.U1.P1.Z2")
    outsider.user_permissions.add(Permission.objects.get(codename="override_blocked"))
    assert override(client_for(User.objects.get(pk=outsider.pk)), blocked, "x").status_code == 404
    assert Decision.objects.get(pk=blocked).state == "failed"


def test_the_page_shows_the_request_and_lets_a_second_admin_complete_it(
    blocked: int, admin: Callable[[str], User], django_capture_on_commit_callbacks: Any
) -> None:
    zed, zoe = Client(), Client()
    zed.force_login(admin("zed"))
    zoe.force_login(admin("zoe"))
    url = reverse("decision-page", args=[blocked])
    assert "Request an override" in zed.get(url).content.decode()
    action = reverse("decision-action", args=[blocked, "override"])
    with django_capture_on_commit_callbacks(execute=True):  # its log, after commit
        asked = zed.post(action, {"reason": "confirmed by phone"}, follow=True).content.decode()
    assert "Your override request for decision" in asked
    assert "1 of 2 override approvals" in asked
    assert "zed: confirmed by phone" in asked
    assert 'id="override-form"' not in asked  # the same person is not offered it again
    page = zoe.get(url).content.decode()
    assert "Complete the override" in page
    with django_capture_on_commit_callbacks(execute=True):  # the release and delivery
        done = zoe.post(action, {"reason": "email confirms"}, follow=True).content.decode()
    assert f"Decision {blocked} released over its block by two people." in done
    assert Decision.objects.get(pk=blocked).state == "completed"


def test_the_dashboard_counts_one_override_and_no_review(
    blocked: int, admin: Callable[[str], User], client_for: Callable[[Any], APIClient]
) -> None:
    zed, zoe = client_for(admin("zed")), client_for(admin("zoe"))
    assert override(zed, blocked, "asked").status_code == 200
    asked = zed.get(f"/api/v1/zones/{ZONE}/kpis/").json()
    assert asked["overrides"] == 0  # a request releases nothing
    assert override(zoe, blocked, "agreed").status_code == 200
    body = zed.get(f"/api/v1/zones/{ZONE}/kpis/").json()
    assert body["overrides"] == 1
    # the two override approvals are no reviewer's approval of a queued answer
    assert body["first_pass_approval_rate"] is None
    assert body["mean_review_seconds"] is None
