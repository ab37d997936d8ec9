"""The reviewer queue's "Risk hotspots awaiting review": the parent level's authority sees
its zones' open risk flags and acknowledges or dismisses them there, with a note."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role
from graph.models import GraphRiskFlag
from tests.graph.conftest import ZONE, admin_api, edge, import_lines
from trail import verify
from trail.models import TrailEvent

__all__ = ["admin_api", "import_lines"]  # fixtures of the graph tests, used here too

pytestmark = pytest.mark.django_db

PLANET = "G1.U1.P1"
HEADING = "Risk hotspots awaiting review"


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def scan() -> None:
    from graph.tasks import scan_graph_risk

    scan_graph_risk.delay()


@pytest.fixture
def hotspot(
    import_lines: Callable[..., Any], set_policy: Callable[..., Any]
) -> Callable[..., GraphRiskFlag]:
    """A person who approved three of the zone's four decisions, above a 0.6 threshold."""

    def make(label: str = "Busy approver") -> GraphRiskFlag:
        rows = [
            edge(f"decision:{n}", "person:busy", "approved_by", target_label=label)
            for n in (1, 2, 3)
        ]
        response = import_lines([*rows, edge("decision:4", "person:idle", "approved_by")])
        assert response.status_code == 201, response.json()
        set_policy(risk_threshold=0.6)
        scan()
        return GraphRiskFlag.objects.get(key="person:busy", ended_at__isnull=True)

    return make


def section(page: str) -> str:
    found = re.search(r'<section id="risk-hotspots".*?</section>', page, re.S)
    return found.group(0) if found else ""


def test_the_planet_reviewer_sees_the_zones_hotspot_and_a_zone_reviewer_does_not(
    hotspot: Callable[..., GraphRiskFlag], person: Callable[..., Any]
) -> None:
    # given busy flagged in G1.U1.P1.Z1, a reviewer of its planet, one of the zone alone and
    # one of another planet
    flag = hotspot()
    planet = login(person("pia", Role.REVIEWER, PLANET))
    zone_only = login(person("rita", Role.REVIEWER, ZONE))
    legal = login(person("lex", Role.REVIEWER, "G1.U1.P2"))
    # when each opens the queue
    mine = section(planet.get("/queue/").content.decode())
    # then the planet's reviewer sees the hotspot: node, zone, share against the threshold,
    # a way into the explorer, and the review form
    assert HEADING in mine
    assert f'data-flag="{flag.pk}"' in mine
    assert "Busy approver" in mine
    assert ZONE in mine
    assert "0.75 / 0.60" in mine
    assert f"/graph/?zone={ZONE}&amp;q=Busy+approver" in mine
    assert f'action="/queue/risk-flags/{flag.pk}/resolve/"' in mine
    assert 'name="csrfmiddlewaretoken"' in mine
    assert re.search(r'<input type="text" name="note"[^>]* required', mine)
    # and the others do not
    for other in (zone_only, legal):
        page = other.get("/queue/").content.decode()
        assert HEADING not in page
        assert "Busy approver" not in page


def test_dismissing_from_the_queue_needs_a_note_then_takes_the_hotspot_off(
    hotspot: Callable[..., GraphRiskFlag], person: Callable[..., Any]
) -> None:
    flag = hotspot()
    planet = login(person("pia", Role.REVIEWER, PLANET))
    url = f"/queue/risk-flags/{flag.pk}/resolve/"
    # without a note: refused with a message, the hotspot still waits
    refused = planet.post(url, {"action": "dismiss", "note": ""}, follow=True).content.decode()
    assert "a note is required" in refused
    assert f'data-flag="{flag.pk}"' in section(refused)
    # with one: dismissed, on the trail with the note, and gone from the queue
    note = "Quarter-end peak; the deputy approves from April."
    done = planet.post(url, {"action": "dismiss", "note": note}, follow=True).content.decode()
    assert f"Risk flag {flag.pk} dismissed." in done
    assert HEADING not in done
    flag.refresh_from_db()
    assert (flag.status, flag.note) == ("dismissed", note)
    event = TrailEvent.objects.get(kind="graph.risk_resolved")
    assert (event.actor, event.reason, event.payload["status"]) == ("pia", note, "dismissed")
    # and a second attempt (another tab) says it was already done, writing nothing
    again = planet.post(url, {"action": "acknowledge", "note": "ok"}, follow=True)
    assert "already dismissed by pia" in again.content.decode()
    assert TrailEvent.objects.filter(kind="graph.risk_resolved").count() == 1
    assert verify.verify_database().intact


def test_only_the_authority_above_may_resolve_through_the_page(
    hotspot: Callable[..., GraphRiskFlag], person: Callable[..., Any]
) -> None:
    flag = hotspot()
    url = f"/queue/risk-flags/{flag.pk}/resolve/"
    zone_only = login(person("rita", Role.REVIEWER, ZONE))
    legal = login(person("lex", Role.REVIEWER, "G1.U1.P2"))
    assert zone_only.post(url, {"action": "acknowledge", "note": "mine"}).status_code == 403
    assert legal.post(url, {"action": "acknowledge", "note": "mine"}).status_code == 404
    flag.refresh_from_db()
    assert flag.status == "open"


def test_the_review_form_needs_the_csrf_token(
    hotspot: Callable[..., GraphRiskFlag], person: Callable[..., Any]
) -> None:
    flag = hotspot()
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(person("pia", Role.REVIEWER, PLANET))
    answer = strict.post(
        f"/queue/risk-flags/{flag.pk}/resolve/", {"action": "dismiss", "note": "forged"}
    )
    assert answer.status_code == 403
    flag.refresh_from_db()
    assert flag.status == "open"


def test_a_hostile_node_label_is_shown_as_text(
    hotspot: Callable[..., GraphRiskFlag], person: Callable[..., Any]
) -> None:
    hotspot(label='<img src=x onerror="alert(1)">Mallory')
    page = section(login(person("pia", Role.REVIEWER, PLANET)).get("/queue/").content.decode())
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;Mallory" in page
    assert "<img" not in page
    assert "<script" not in page


def test_a_hotspot_that_rose_again_waits_again(
    hotspot: Callable[..., GraphRiskFlag], person: Callable[..., Any], set_policy: Any
) -> None:
    # given the first crossing acknowledged, then busy below the threshold and above again
    first = hotspot()
    planet = login(person("pia", Role.REVIEWER, PLANET))
    planet.post(f"/queue/risk-flags/{first.pk}/resolve/", {"action": "acknowledge", "note": "ok"})
    set_policy(risk_threshold=0.9)
    scan()
    assert HEADING not in planet.get("/queue/").content.decode()
    set_policy(risk_threshold=0.6)
    scan()
    # then the new crossing waits for review on the queue
    second = GraphRiskFlag.objects.get(key="person:busy", ended_at__isnull=True)
    assert second.pk != first.pk
    assert f'data-flag="{second.pk}"' in section(planet.get("/queue/").content.decode())


def test_the_section_speaks_japanese(
    hotspot: Callable[..., GraphRiskFlag], person: Callable[..., Any]
) -> None:
    hotspot()
    client = login(person("pia", Role.REVIEWER, PLANET))
    client.post("/i18n/setlang/", {"language": "ja", "next": "/queue/"})
    page = section(client.get("/queue/").content.decode())
    assert "レビュー待ちのリスク集中点" in page
    assert "了承" in page
    assert "却下" in page
    assert "メモ（必須）" in page
