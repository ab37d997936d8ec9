"""Knowledge-base conflicts as work (issue 18.2): found on ingest and nightly, listed for the
zone's admins with both sides and the decisions citing them, resolved on the trail."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from evidence.models import KnowledgeConflict, Paragraph
from tests.trail_support import triggers_bypassed
from trail.models import TrailEvent

ZONE = "G1.U1.P1.Z1"
POLICY = "# Remote work\n\nEmployees may request to work remotely up to 3 days per week."
MEMO = "# Remote memo\n\nRemote work: employees may work remotely up to 2 days per week."
PAYER = "# Hotels\n\nAny excess hotel cost is paid by the employee."
PAYER_SWAPPED = "# Hotel memo\n\nThe company pays any excess hotel cost."


def _conflicts() -> list[KnowledgeConflict]:
    return list(KnowledgeConflict.objects.select_related("first", "second").order_by("pk"))


@pytest.fixture
def remote_conflict(ingest: Callable[..., Any]) -> KnowledgeConflict:
    ingest(POLICY, title="Remote work policy", key="remote")
    ingest(MEMO, title="Remote memo", key="memo", kind="memo")
    (conflict,) = _conflicts()
    return conflict


def test_a_document_that_disagrees_with_the_zone_becomes_a_hard_conflict_on_ingest(
    remote_conflict: KnowledgeConflict,
) -> None:
    c = remote_conflict
    assert (c.zone, c.kind, c.found_by, c.resolved_at) == (ZONE, "hard", "ingest", None)
    assert "3 days" in c.reason
    assert "2 day" in c.reason
    assert {c.first.text, c.second.text} == {POLICY.split("\n\n")[1], MEMO.split("\n\n")[1]}
    assert c.words == ["3 days", "2 days"]


def test_the_other_party_in_another_document_is_a_hard_conflict_too(
    ingest: Callable[..., Any],
) -> None:
    ingest(PAYER, title="Hotels", key="hotels")
    ingest(PAYER_SWAPPED, title="Hotel memo", key="hotel-memo", kind="memo")
    (conflict,) = _conflicts()
    assert conflict.kind == "hard"
    assert conflict.reason.startswith("they say the opposite")


def test_documents_of_another_zone_are_not_compared(ingest: Callable[..., Any]) -> None:
    ingest(POLICY, title="Remote work policy", key="remote")
    ingest(MEMO, title="Remote memo", key="memo", zone="G1.U1.P1.Z2")
    assert _conflicts() == []


def test_agreeing_documents_and_a_document_alone_give_no_conflict(
    ingest: Callable[..., Any],
) -> None:
    ingest(POLICY, title="Remote work policy", key="remote")
    ingest(POLICY.replace("# Remote work", "# Remote FAQ"), title="FAQ", key="faq", kind="memo")
    assert _conflicts() == []


def _cite(document_id: int, version: int, paragraph: int) -> None:
    from coordinates.coordinate import parse
    from evidence.services import bundle_create

    bundle_create(
        zone=parse(ZONE),
        claims=[
            {
                "text": "Employees may work remotely up to 3 days per week.",
                "citations": [
                    {"document": document_id, "version": version, "paragraph": paragraph}
                ],
            }
        ],
    )


def test_a_new_version_that_changes_a_cited_value_is_a_temporal_conflict(
    ingest: Callable[..., Any],
) -> None:
    first = ingest(POLICY, title="Remote work policy", key="remote")
    old = Paragraph.objects.get(version=first.version, text__contains="3 days")
    _cite(first.document.pk, 1, old.number)
    ingest(POLICY.replace("3 days", "2 days"), title="Remote work policy", key="remote")
    (conflict,) = _conflicts()
    assert conflict.kind == "temporal"
    assert conflict.first_id == old.pk  # the older text first
    assert conflict.reason.startswith("version 2 changes what version 1 said")


def test_a_new_version_nobody_cited_is_just_the_document_moving_on(
    ingest: Callable[..., Any],
) -> None:
    ingest(POLICY, title="Remote work policy", key="remote")
    ingest(POLICY.replace("3 days", "2 days"), title="Remote work policy", key="remote")
    assert _conflicts() == []


def test_the_nightly_scan_finds_what_ingest_missed_and_one_bad_zone_stops_no_other(
    remote_conflict: KnowledgeConflict,
    ingest: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evidence import knowledge, tasks
    from trail.models import Quarantine

    ingest(PAYER, title="Hotels", key="hotels", zone="G1.U1.P1.Z2")
    ingest(PAYER_SWAPPED, title="Hotel memo", key="hotel-memo", zone="G1.U1.P1.Z2")
    with triggers_bypassed():  # conflicts are never deleted: as if ingest had missed them
        KnowledgeConflict.objects.all().delete()
    real = knowledge.conflicts_scan_zone

    def scan(*, zone: str) -> int:
        if zone == "G1.U1.P1.Z2":
            raise RuntimeError("this zone's scan breaks")
        return real(zone=zone)

    monkeypatch.setattr(knowledge, "conflicts_scan_zone", scan)
    # (what celery beat runs every night)
    from django.conf import settings

    nightly = settings.CELERY_BEAT_SCHEDULE["scan-knowledge-conflicts"]
    assert nightly["task"] == tasks.scan_conflicts_nightly.name
    assert tasks.scan_conflicts_nightly.delay().get() == 2  # a task for each zone
    (found,) = _conflicts()
    assert (found.zone, found.found_by) == (ZONE, "nightly")
    assert Quarantine.objects.filter(subject="zone:G1.U1.P1.Z2").exists()
    monkeypatch.setattr(knowledge, "conflicts_scan_zone", real)
    # Set aside, the broken zone is skipped until an operator releases it; the good one has
    # nothing new.
    assert tasks.scan_zone_conflicts.delay("G1.U1.P1.Z2").get() == 0
    assert tasks.scan_zone_conflicts.delay(ZONE).get() == 0


def test_a_zone_admin_resolves_it_on_the_trail_and_nobody_else_may(
    remote_conflict: KnowledgeConflict,
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    admin = person("ada", Role.ZONE_ADMIN, ZONE)
    reviewer = person("rui", Role.REVIEWER, ZONE)
    other_admin = person("oz", Role.ZONE_ADMIN, "G1.U1.P1.Z2")
    url = f"/api/v1/conflicts/{remote_conflict.pk}/resolve/"
    body = {"resolution": "first", "reason": "the policy governs; the memo is withdrawn"}

    assert client_for(reviewer).post(url, body, format="json").status_code == 403
    # another zone's admin is told what a missing conflict would tell them
    assert client_for(other_admin).post(url, body, format="json").status_code == 404
    bad = client_for(admin).post(url, {**body, "resolution": "whichever"}, format="json")
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "resolution"
    blank = client_for(admin).post(url, {**body, "reason": "  "}, format="json")
    assert blank.status_code == 400
    assert blank.json()["error"]["field"] == "reason"

    done = client_for(admin).post(url, body, format="json")
    assert done.status_code == 200, done.content
    again = client_for(admin).post(url, body, format="json")
    assert again.status_code == 409

    remote_conflict.refresh_from_db()
    assert (remote_conflict.resolution, remote_conflict.resolved_by) == ("first", admin)
    event = TrailEvent.objects.get(kind="evidence.conflict_resolved")
    assert event.actor == "ada"
    assert event.reason == body["reason"]
    assert event.body["payload"]["resolution"] == "first"
    assert event.chain == ZONE


def test_the_api_lists_both_sides_scoped_to_the_zones_admins(
    remote_conflict: KnowledgeConflict,
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    admin = person("ada", Role.ZONE_ADMIN, "G1.U1.P1")
    outsider = person("oz", Role.ZONE_ADMIN, "G1.U1.P1.Z2")
    listed = client_for(admin).get(f"/api/v1/zones/{ZONE}/conflicts/")
    assert listed.status_code == 200
    (row,) = listed.json()["conflicts"]
    assert row["kind"] == "hard"
    assert {row["first"]["title"], row["second"]["title"]} == {"Remote work policy", "Remote memo"}
    assert row["cited_by"] == []
    assert client_for(outsider).get(f"/api/v1/zones/{ZONE}/conflicts/").status_code == 404
    wrong = client_for(admin).get(f"/api/v1/zones/{ZONE}/conflicts/?state=maybe")
    assert wrong.status_code == 400
    assert wrong.json()["error"]["field"] == "state"
    assert (
        client_for(admin).get(f"/api/v1/zones/{ZONE}/conflicts/?state=resolved").json()["conflicts"]
        == []
    )


def test_the_page_shows_both_sides_with_the_words_marked_and_resolves(
    remote_conflict: KnowledgeConflict,
    person: Callable[..., Any],
    client: Any,
) -> None:
    admin = person("ada", Role.ZONE_ADMIN, ZONE)
    client.force_login(admin)
    page = client.get(f"/zones/{ZONE}/conflicts/")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'id="conflict-{remote_conflict.pk}"' in html
    assert '<mark class="failed">3 days</mark>' in html
    assert "Remote memo" in html
    assert "Remote work policy" in html
    done = client.post(
        f"/zones/{ZONE}/conflicts/{remote_conflict.pk}/resolve/",
        {"resolution": "second", "reason": "the memo is newer and approved"},
        follow=True,
    )
    assert "Conflict resolved." in done.content.decode()
    assert "No open conflicts." in done.content.decode()
    remote_conflict.refresh_from_db()
    assert remote_conflict.resolution == "second"


def test_a_zones_own_document_overriding_a_galaxy_one_of_its_title_is_no_conflict(
    ingest: Callable[..., Any],
) -> None:
    from evidence.knowledge import conflicts_scan_zone

    # a galaxy's remote-work policy, and the zone's own of the same title that says otherwise
    ingest(POLICY, zone="G1", title="Remote work policy", key="remote")
    ingest(POLICY.replace("3 days", "2 days"), title="Remote work policy", key="remote-z1")
    assert _conflicts() == []
    assert conflicts_scan_zone(zone=ZONE) == 0
    # the same text under another title is a disagreement the zone's admins must settle
    ingest(MEMO, title="Remote memo", key="memo", kind="memo")
    assert len(_conflicts()) == 1
