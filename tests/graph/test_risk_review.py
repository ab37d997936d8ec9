"""Risk hotspots become review items for the parent level's authority: raised by scans after
graph updates and periodically, resolved (acknowledged or dismissed) with a note over REST."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.utils import translation

from graph.models import GraphRiskFlag
from tests.graph.conftest import ZONE, edge
from trail import verify
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

PLANET = "G1.U1.P1"


def busy_rows() -> list[dict[str, Any]]:
    """Three decisions approved by one overloaded person, one by another: busy carries 3/4."""
    return [
        edge("decision:1", "person:busy", "approved_by", target_label="Busy approver"),
        edge("decision:2", "person:busy", "approved_by", target_label="Busy approver"),
        edge("decision:3", "person:busy", "approved_by", target_label="Busy approver"),
        edge("decision:4", "person:idle", "approved_by", target_label="Idle approver"),
    ]


def events(kind: str) -> list[TrailEvent]:
    return list(TrailEvent.objects.filter(kind=kind).order_by("chain", "seq"))


def periodic_scan() -> dict[str, int]:
    """What `celery beat` runs (CELERY_BEAT_SCHEDULE "graph-risk-scan"), eagerly."""
    from graph.tasks import scan_graph_risk

    return dict(scan_graph_risk.delay().get())


@pytest.fixture
def planet_api(person: Callable[..., Any], client_for: Callable[[Any], Any], org: Any) -> Any:
    from coordinates.models import Role

    return client_for(person("pia", Role.REVIEWER, PLANET))


@pytest.fixture
def hotspot(import_lines: Callable[..., Any], set_policy: Callable[..., None]) -> GraphRiskFlag:
    """busy above a 0.6 threshold, flagged by the periodic scan."""
    assert import_lines(busy_rows()).status_code == 201
    set_policy(risk_threshold=0.6)
    periodic_scan()
    return GraphRiskFlag.objects.get(key="person:busy")


def test_a_node_crossing_the_threshold_is_one_open_flag_and_one_event_without_any_read(
    import_lines: Callable[..., Any], set_policy: Callable[..., None], reviewer_api: Any
) -> None:
    # given a zone where busy carries 3/4 of the causal paths, above a 0.6 threshold
    import_lines(busy_rows())
    set_policy(risk_threshold=0.6)
    # when the periodic scan runs twice, and a reader then asks for the zone's risk
    first, second = periodic_scan(), periodic_scan()
    body = reviewer_api.get(f"/api/v1/graph/risk/?zone={ZONE}").json()
    # then busy is one open flag for the planet's authority, put on the trail once by the system
    flag = GraphRiskFlag.objects.get()
    assert (flag.key, flag.zone, flag.status) == ("person:busy", ZONE, "open")
    assert flag.review_by == PLANET
    assert flag.share == pytest.approx(0.75)
    assert flag.threshold == 0.6
    [flagged] = events("graph.risk_flagged")
    assert (flagged.chain, flagged.actor) == (ZONE, "system")
    assert flag.event == f"{ZONE}#{flagged.seq}"
    assert first["raised"] == 1
    assert second == {"zones": 0, "raised": 0, "ended": 0}  # nothing changed: not scanned again
    # and the risk endpoint names the flag of its hotspot instead of raising another
    assert body["hotspots"][0]["flag"] == {"id": flag.pk, "status": "open"}


def test_a_decision_that_grows_the_graph_triggers_a_scan_of_its_zone(
    decided: Callable[..., dict[str, Any]], reviewer_api: Any
) -> None:
    # given a zone whose graph is fed only by the pipeline (nobody reads the risk endpoint)
    made = decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    # then the hotspots of the zone's graph are already flagged, by the system
    flagged = set(GraphRiskFlag.objects.filter(zone=ZONE).values_list("key", flat=True))
    assert f"decision:{made['id']}" in flagged  # the zone's only decision: on every path
    assert {e.actor for e in events("graph.risk_flagged")} == {"system"}
    # and a later read finds them all flagged already: no new events
    before = len(events("graph.risk_flagged"))
    body = reviewer_api.get(f"/api/v1/graph/risk/?zone={ZONE}").json()
    assert {h["key"] for h in body["hotspots"]} == flagged
    assert len(events("graph.risk_flagged")) == before


def test_the_flags_list_shows_who_may_review(
    hotspot: GraphRiskFlag, reviewer_api: Any, planet_api: Any
) -> None:
    mine = planet_api.get(f"/api/v1/graph/risk/flags/?zone={ZONE}&status=open").json()["flags"]
    theirs = reviewer_api.get("/api/v1/graph/risk/flags/").json()["flags"]
    assert [(f["id"], f["label"], f["may_resolve"]) for f in mine] == [
        (hotspot.pk, "Busy approver", True)
    ]
    # the zone's own reviewer sees that it is flagged, but reviews nothing about it
    assert [(f["id"], f["may_resolve"]) for f in theirs] == [(hotspot.pk, False)]
    assert mine[0]["share"] == pytest.approx(0.75)
    assert mine[0]["above_threshold"] is True
    assert mine[0]["flag_event"] == hotspot.event


def test_the_flags_list_refuses_bad_filters_and_foreign_zones(
    hotspot: GraphRiskFlag, planet_api: Any, person: Callable[..., Any], client_for: Any
) -> None:
    from coordinates.models import Role

    bad = planet_api.get("/api/v1/graph/risk/flags/?status=later")
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "status"
    legal = client_for(person("lex", Role.REVIEWER, "G1.U1.P2"))
    assert legal.get(f"/api/v1/graph/risk/flags/?zone={ZONE}").status_code == 404
    assert legal.get("/api/v1/graph/risk/flags/").json()["flags"] == []


def test_resolving_needs_the_parent_role_and_a_note_and_happens_once(
    hotspot: GraphRiskFlag,
    reviewer_api: Any,
    planet_api: Any,
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    from coordinates.models import Role

    url = f"/api/v1/graph/risk/flags/{hotspot.pk}/resolve/"
    note = "Known: busy covers for two colleagues on leave until March."
    # a reviewer of the zone itself is not the authority above it
    zone_only = reviewer_api.post(url, {"action": "acknowledge", "note": note}, format="json")
    assert zone_only.status_code == 403
    assert zone_only.json()["error"]["code"] == "permission_denied"
    # a reviewer elsewhere does not learn the flag exists
    legal = client_for(person("lex", Role.REVIEWER, "G1.U1.P2"))
    assert legal.post(url, {"action": "dismiss", "note": note}, format="json").status_code == 404
    # the planet's reviewer must say why, and say acknowledge or dismiss
    blank = planet_api.post(url, {"action": "acknowledge", "note": "  "}, format="json")
    assert (blank.status_code, blank.json()["error"]["field"]) == (400, "note")
    missing = planet_api.post(url, {"action": "acknowledge"}, format="json")
    assert (missing.status_code, missing.json()["error"]["field"]) == (400, "note")
    wrong = planet_api.post(url, {"action": "ignore", "note": note}, format="json")
    assert (wrong.status_code, wrong.json()["error"]["field"]) == (400, "action")
    hotspot.refresh_from_db()
    assert hotspot.status == "open"
    assert events("graph.risk_resolved") == []

    done = planet_api.post(url, {"action": "acknowledge", "note": note}, format="json")
    assert done.status_code == 200, done.json()
    assert (done.json()["status"], done.json()["resolved_by"]) == ("acknowledged", "pia")
    hotspot.refresh_from_db()
    assert (hotspot.status, hotspot.note) == ("acknowledged", note)
    assert hotspot.resolved_by is not None
    assert hotspot.resolved_by.username == "pia"
    [resolved] = events("graph.risk_resolved")
    assert (resolved.chain, resolved.actor, resolved.reason) == (ZONE, "pia", note)
    assert resolved.payload == {
        "node": "person:busy",
        "node_zone": ZONE,
        "flag": hotspot.event,
        "status": "acknowledged",
        "review_by": PLANET,
    }
    assert hotspot.resolution_event == f"{ZONE}#{resolved.seq}"

    # a second review, even by someone else entitled to it, is refused and changes nothing
    galaxy = client_for(person("gus", Role.ZONE_ADMIN, "G1"))
    again = galaxy.post(url, {"action": "dismiss", "note": "not a risk"}, format="json")
    assert again.status_code == 409
    assert "already acknowledged by pia" in again.json()["error"]["message"]
    assert len(events("graph.risk_resolved")) == 1
    assert verify.verify_database().intact


def test_nobody_reviews_a_flag_about_themselves(
    import_lines: Callable[..., Any],
    set_policy: Callable[..., None],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    from coordinates.models import Role

    # given pia, a planet reviewer, approved three of the zone's four decisions
    rows = [edge(f"decision:{n}", "person:pia", "approved_by") for n in (1, 2, 3)]
    import_lines([*rows, edge("decision:4", "person:idle", "approved_by")])
    set_policy(risk_threshold=0.6)
    periodic_scan()
    flag = GraphRiskFlag.objects.get(key="person:pia")
    pia = client_for(person("pia", Role.REVIEWER, PLANET))
    # when she tries to dismiss the concentration on herself, she is refused
    answer = pia.post(
        f"/api/v1/graph/risk/flags/{flag.pk}/resolve/",
        {"action": "dismiss", "note": "fine"},
        format="json",
    )
    assert answer.status_code == 403
    assert pia.get("/api/v1/graph/risk/flags/").json()["flags"][0]["may_resolve"] is False


def test_a_node_that_falls_below_and_rises_again_is_flagged_again(
    hotspot: GraphRiskFlag, set_policy: Callable[..., None], planet_api: Any
) -> None:
    # given the first crossing acknowledged
    planet_api.post(
        f"/api/v1/graph/risk/flags/{hotspot.pk}/resolve/",
        {"action": "acknowledge", "note": "seen"},
        format="json",
    )
    # when busy falls below the threshold and the scan runs, then rises above it again
    set_policy(risk_threshold=0.9)
    assert periodic_scan()["ended"] == 1
    set_policy(risk_threshold=0.6)
    assert periodic_scan()["raised"] == 1
    # then the second crossing is a new open flag and a second event; the first keeps its review
    first, second = GraphRiskFlag.objects.filter(key="person:busy").order_by("pk")
    assert first.pk == hotspot.pk
    assert (first.status, first.ended_at is not None) == ("acknowledged", True)
    assert (second.status, second.ended_at) == ("open", None)
    assert [e.payload["node"] for e in events("graph.risk_flagged")] == ["person:busy"] * 2
    listed = planet_api.get("/api/v1/graph/risk/flags/?status=open").json()["flags"]
    assert [f["id"] for f in listed] == [second.pk]
    assert verify.verify_database().intact


def test_an_open_flag_whose_node_fell_below_stays_for_review(
    hotspot: GraphRiskFlag, set_policy: Callable[..., None], planet_api: Any
) -> None:
    # a crossing nobody reviewed does not vanish when it ends: a person still closes it
    set_policy(risk_threshold=0.9)
    periodic_scan()
    [listed] = planet_api.get("/api/v1/graph/risk/flags/?status=open").json()["flags"]
    assert (listed["id"], listed["above_threshold"]) == (hotspot.pk, False)
    dismissed = planet_api.post(
        f"/api/v1/graph/risk/flags/{hotspot.pk}/resolve/",
        {"action": "dismiss", "note": "a month-end peak, gone"},
        format="json",
    )
    assert dismissed.json()["status"] == "dismissed"


def test_the_periodic_scan_is_scheduled_for_celery_beat() -> None:
    from django.conf import settings

    from maria.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["graph-risk-scan"]
    assert entry["task"] in app.tasks


def test_graph_changes_over_rest_are_scanned_after_commit(
    import_lines: Callable[..., Any],
    set_policy: Callable[..., None],
    admin_api: Any,
    planet_api: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from graph.models import GraphNode

    set_policy(risk_threshold=0.6)
    # an import that makes busy a hotspot is flagged once it commits, with no read or beat
    with django_capture_on_commit_callbacks(execute=True):
        assert import_lines(busy_rows()).status_code == 201
    flag = GraphRiskFlag.objects.get(key="person:busy")
    assert (flag.status, flag.ended_at) == ("open", None)
    # deleting the node ends its crossing; its flag waits for review, naming the lost node,
    # and the one path left (decision:4 -> idle) now carries the zone: both ends are flagged
    busy = GraphNode.objects.get(key="person:busy")
    with django_capture_on_commit_callbacks(execute=True):
        assert admin_api.delete(f"/api/v1/graph/nodes/{busy.pk}/?reason=merged").status_code == 204
    flags = planet_api.get("/api/v1/graph/risk/flags/").json()["flags"]
    by_node = {f["node"]: f for f in flags}
    assert set(by_node) == {"person:busy", "person:idle", "decision:4"}
    gone = by_node["person:busy"]
    assert (gone["id"], gone["status"], gone["above_threshold"]) == (flag.pk, "open", False)
    assert gone["label"] is None
    assert by_node["person:idle"]["above_threshold"] is True


@pytest.fixture
def _language_restored() -> Iterator[None]:
    """LocaleMiddleware leaves the request's language active in the test's thread."""
    before = translation.get_language()
    yield
    translation.activate(before or settings.LANGUAGE_CODE)


@pytest.mark.usefixtures("_language_restored")
def test_a_japanese_reviewer_is_refused_in_japanese(
    hotspot: GraphRiskFlag,
    reviewer_api: Any,
    planet_api: Any,
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    from coordinates.models import Role

    url = f"/api/v1/graph/risk/flags/{hotspot.pk}/resolve/"
    note = "既知: 二人の休職中の同僚の代理を務めています。"
    japanese: dict[str, Any] = {"format": "json", "HTTP_ACCEPT_LANGUAGE": "ja"}

    def refused(api: Any, path: str, body: dict[str, Any]) -> tuple[int, str]:
        answer = api.post(path, body, **japanese)
        return answer.status_code, answer.json()["error"]["message"]

    # each refusal of a review reads in Japanese, with the flag, level and reviewer named
    assert refused(planet_api, url, {"action": "acknowledge", "note": " "}) == (
        400,
        "メモは必須です。フラグを了承または却下する理由を記入してください",
    )
    assert refused(planet_api, url, {"action": "acknowledge", "note": "x" * 2001}) == (
        400,
        "メモが 2000 文字を超えています",
    )
    assert refused(planet_api, url, {"action": "ignore", "note": note}) == (
        400,
        "action は acknowledge（了承）または dismiss（却下）にしてください",
    )
    missing = f"/api/v1/graph/risk/flags/{hotspot.pk + 1000}/resolve/"
    assert refused(planet_api, missing, {"action": "dismiss", "note": note}) == (
        404,
        f"リスクフラグ {hotspot.pk + 1000} はありません",
    )
    assert refused(reviewer_api, url, {"action": "dismiss", "note": note}) == (
        403,
        f"このフラグをレビューできるのは {PLANET} 以上のレビュアーまたはゾーン管理者だけです",
    )
    assert planet_api.post(url, {"action": "dismiss", "note": note}, **japanese).status_code == 200
    galaxy = client_for(person("gus", Role.ZONE_ADMIN, "G1"))
    status, said = refused(galaxy, url, {"action": "acknowledge", "note": note})
    assert status == 409
    assert said.startswith(f"リスクフラグ {hotspot.pk} は ")
    assert said.endswith(" に pia が既に却下しています")
    # and a client that asks for nothing is still answered in English
    english = galaxy.post(url, {"action": "acknowledge", "note": note}, format="json")
    assert "was already dismissed by pia at " in english.json()["error"]["message"]
