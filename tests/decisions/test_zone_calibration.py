"""A zone's calibration of the claim verifier, learned from its reviewers' per-claim
verdicts: proposed (service, command, weekly job), previewed, adopted by a zone admin with a
reason, and then grading the zone's next decisions, and no other zone's."""

from __future__ import annotations

from collections.abc import Callable
from io import StringIO
from typing import Any
from unittest import mock

import numpy as np
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from coordinates.coordinate import parse
from coordinates.models import Role, Zone
from decisions import calibration as service
from decisions import tasks
from decisions.models import ClaimVerdict, Decision
from evidence import calibration
from evidence.models import ZoneCalibration
from maria.errors import ApplicationError, Conflict, Forbidden, NotFound
from tests.decisions.conftest import GOOD, ZONE, cite
from tests.samples import POLICY_EN
from trail.models import TrailEvent
from trail.verify import verify_database

OTHER = "G1.U1.P1.Z2"  # a sibling zone: its answers must not feel Z1's calibration
PLANET = "G1.U1.P1"

pytestmark = pytest.mark.django_db


def _zone(coordinate: str = ZONE) -> Zone:
    return Zone.objects.get(coordinate=coordinate)


@pytest.fixture
def relaxed(set_policy: Callable[..., Any]) -> None:
    """Thresholds under which the good claim passes on its own: only a veto can stop it."""
    set_policy(ZONE, tau=0.2, delta=0.05, refusal_floor=0.05, floor=0.01)
    set_policy(OTHER, tau=0.2, delta=0.05, refusal_floor=0.05, floor=0.01)


@pytest.fixture
def verdicts(person: Callable[..., Any], policy_doc: Any, submit: Callable[..., Any]) -> Any:
    """Add `n` reviewer verdicts in `zone` whose truth is sigmoid(a*logit(p)+b) of the
    engine's probability p: reviewers who reject, in a known way, what the engine accepts."""
    reviewers = [person("rhea", Role.REVIEWER, ZONE), person("ravi", Role.REVIEWER, ZONE)]
    decision = Decision.objects.get(
        pk=submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()["id"]
    )
    made = {"count": 0}

    def add(n: int, *, zone: str = ZONE, a: float = 0.3, b: float = -3.0, seed: int = 3) -> None:
        rng = np.random.default_rng(seed)
        p = rng.uniform(0.02, 0.98, n)
        truth = calibration.apply_all(calibration.Calibration({"a": a, "b": b}, 0), p)
        supported = rng.uniform(size=n) < truth
        start = made["count"]
        ClaimVerdict.objects.bulk_create(
            ClaimVerdict(
                decision=decision,
                reviewer=reviewers[i % 2],
                action=ClaimVerdict.Action.APPROVE if supported[i] else ClaimVerdict.Action.REJECT,
                claim=start + i,  # one row per claim index: the uniqueness is per claim
                supported=bool(supported[i]),
                engine_supported=bool(p[i] >= 0.5),
                engine_probability=float(p[i]),
                zone=zone,
            )
            for i in range(n)
        )
        made["count"] += n

    return add


def _kinds(kind: str) -> list[TrailEvent]:
    return list(TrailEvent.objects.filter(kind=kind).order_by("pk"))


# --- propose --------------------------------------------------------------------------------


def test_too_few_verdicts_propose_nothing_and_say_why(org: Any, verdicts: Any) -> None:
    verdicts(calibration.MIN_VERDICTS - 1)
    proposal = service.calibration_propose(zone=_zone(), fitted_by="manage.py calibrate")
    assert proposal.calibration is None
    assert "too few verdicts" in proposal.why_not
    assert f"{calibration.MIN_VERDICTS - 1} reviewer verdicts" in proposal.why_not
    assert not ZoneCalibration.objects.exists()


def test_a_proposal_fits_on_the_older_verdicts_and_beats_the_global_model_on_the_rest(
    org: Any, verdicts: Any
) -> None:
    # given 200 verdicts from two reviewers that disagree with the engine in a known way
    verdicts(200)
    # when a calibration is proposed
    proposal = service.calibration_propose(zone=_zone(), fitted_by="manage.py calibrate")
    # then version 1 is stored, proposed, fitted on the older 150 and measured on the last 50
    row = proposal.calibration
    assert row is not None
    assert (row.version, row.status, row.verdicts) == (1, "proposed", 150)
    assert row.fitted_by == "manage.py calibrate"
    assert row.reliability_before["n"] == row.reliability_after["n"] == 50
    assert row.window_from <= row.window_until
    # and it is more reliable than the global probability on the held-back verdicts
    assert row.reliability_after["brier"] < row.reliability_before["brier"]
    assert row.reliability_after["log_loss"] < row.reliability_before["log_loss"]
    assert row.params["b"] < 0  # the reviewers find fewer claims supported
    # and the proposal is on the zone's trail, judging nothing yet
    (event,) = _kinds("calibration.proposed")
    assert event.payload["zone"] == ZONE
    assert event.payload["version"] == 1
    assert service.adopted_calibrations([ZONE])[ZONE] is None
    # a second proposal is the next version
    again = service.calibration_propose(zone=_zone(), fitted_by="someone")
    assert again.calibration is not None
    assert again.calibration.version == 2


def test_a_planet_learns_from_the_verdicts_of_its_zones(org: Any, verdicts: Any) -> None:
    verdicts(120, zone=ZONE)
    verdicts(80, zone=OTHER, seed=5)
    proposal = service.calibration_propose(zone=_zone(PLANET), fitted_by="manage.py calibrate")
    assert proposal.calibration is not None
    assert proposal.verdicts == 200


# --- adopt ------------------------------------------------------------------------------


@pytest.fixture
def proposed(org: Any, verdicts: Any) -> ZoneCalibration:
    verdicts(200)
    row = service.calibration_propose(zone=_zone(), fitted_by="manage.py calibrate").calibration
    assert row is not None
    return row


def test_only_a_zone_admin_adopts_and_always_with_a_reason(
    proposed: ZoneCalibration, person: Callable[..., Any]
) -> None:
    admin = person("ada", Role.ZONE_ADMIN, ZONE)
    auditor = person("otto", Role.AUDITOR, ZONE)
    reviewer = person("rita", Role.REVIEWER, ZONE)
    stranger = person("sam", Role.ZONE_ADMIN, OTHER)
    zone = _zone()
    with pytest.raises(Forbidden):
        service.calibration_adopt(zone=zone, version=1, user=auditor, reason="looks right")
    for outsider in (reviewer, stranger):
        with pytest.raises(NotFound):
            service.calibration_adopt(zone=zone, version=1, user=outsider, reason="looks right")
    with pytest.raises(ApplicationError) as blank:
        service.calibration_adopt(zone=zone, version=1, user=admin, reason="   ")
    assert blank.value.field == "reason"
    with pytest.raises(NotFound) as missing:
        service.calibration_adopt(zone=zone, version=9, user=admin, reason="looks right")
    assert missing.value.field == "version"
    assert not _kinds("calibration.adopted")
    proposed.refresh_from_db()
    assert proposed.status == "proposed"


def test_adopting_a_version_retires_the_one_before_on_the_trail(
    proposed: ZoneCalibration, person: Callable[..., Any], django_capture_on_commit_callbacks: Any
) -> None:
    admin = person("ada", Role.ZONE_ADMIN, PLANET)  # an admin above the zone may adopt
    zone = _zone()
    second = service.calibration_propose(zone=zone, fitted_by="weekly job").calibration
    assert second is not None
    service.calibration_adopt(zone=zone, version=1, user=admin, reason="reviewers agree")
    with django_capture_on_commit_callbacks(execute=True):
        service.calibration_adopt(zone=zone, version=2, user=admin, reason="fresher verdicts")
    statuses = dict(ZoneCalibration.objects.values_list("version", "status"))
    assert statuses == {1: "retired", 2: "adopted"}
    second.refresh_from_db()
    assert second.adopted_by == admin
    assert second.adopt_reason == "fresher verdicts"
    events = _kinds("calibration.adopted")
    assert [e.payload["version"] for e in events] == [1, 2]
    assert events[1].payload["retired_version"] == 1
    assert events[1].reason == "fresher verdicts"
    assert events[1].actor == "ada"
    with pytest.raises(Conflict):
        service.calibration_adopt(zone=zone, version=2, user=admin, reason="again")
    # a retired version may be adopted again: a rollback
    service.calibration_adopt(zone=zone, version=1, user=admin, reason="back to v1")
    # and the trail with these events on it still verifies, column by column
    report = verify_database(deep=True)
    assert report.intact, report.lines()
    assert service.adopted_calibrations([ZONE])[ZONE].version == 1  # type: ignore[union-attr]


# --- grading with it ----------------------------------------------------------------------


def test_after_adoption_the_zones_next_decision_is_graded_with_it_and_names_it(
    proposed: ZoneCalibration,
    person: Callable[..., Any],
    relaxed: None,
    policy_doc: Any,
    submit: Callable[..., Any],
) -> None:
    # given a good claim that passes on the global model alone
    before = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    assert before["gate"] == "auto"
    # when the zone admin adopts a calibration from reviewers who reject claims like it
    admin = person("ada", Role.ZONE_ADMIN, ZONE)
    service.calibration_adopt(zone=_zone(), version=1, user=admin, reason="reviewers disagree")
    after = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    # then the same claim is not supported any more, and the report says why and by which
    report = Decision.objects.get(pk=after["id"]).report
    assert report is not None
    assert report.body["calibration"] == {"zone": ZONE, "version": 1}
    item = report.body["claims"][0]["evidence"][0]
    global_p = item["signals"]["probability"]
    first = Decision.objects.get(pk=before["id"]).report
    assert first is not None
    assert first.body["calibration"] is None
    assert global_p == first.body["claims"][0]["evidence"][0]["signals"]["probability"]
    calibrated = item["signals"]["calibrated_probability"]
    assert calibrated == pytest.approx(
        calibration.apply(calibration.Calibration(proposed.params, 0), global_p), abs=1e-6
    )
    assert calibrated < 0.5 < global_p
    assert item["supported"] is False
    assert item["vetoed_by"] == "calibration"
    assert item["kept"] is False  # it drops out of sufficiency as any unsupported item does
    assert item["reasons"][0] == (
        f"reviewers in this zone reject claims like this: calibrated probability "
        f"{calibrated:.2f} (calibration v1)"
    )
    assert report.body["claims"][0]["supported"] is False
    assert after["gate"] == "required"  # a calibration veto is "could not tell": a person decides


def test_a_decision_in_another_zone_is_not_affected(
    proposed: ZoneCalibration,
    person: Callable[..., Any],
    relaxed: None,
    ingest: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    from evidence.models import Paragraph

    service.calibration_adopt(
        zone=_zone(), version=1, user=person("ada", Role.ZONE_ADMIN, ZONE), reason="ok"
    )
    ingest(POLICY_EN, zone=OTHER, title="Travel policy", key="travel-z2")
    theirs = Paragraph.objects.get(zone=OTHER, text__contains="500,000 yen require")
    body = submit(
        [{"text": GOOD, "citations": [cite(theirs)]}],
        zone=OTHER,
        agent=f"{OTHER}.A1",
        token_of=f"{OTHER}.A1",
    ).json()
    report = Decision.objects.get(pk=body["id"]).report
    assert report is not None
    assert report.body["calibration"] is None
    item = report.body["claims"][0]["evidence"][0]
    assert item["signals"]["calibrated_probability"] is None
    assert item["supported"] is True
    assert item["vetoed_by"] is None
    assert body["gate"] == "auto"


def test_a_zone_without_its_own_takes_its_nearest_ancestors(
    org: Any,
    verdicts: Any,
    person: Callable[..., Any],
    relaxed: None,
    policy_doc: Any,
    submit: Callable[..., Any],
) -> None:
    verdicts(200)
    planet = _zone(PLANET)
    row = service.calibration_propose(zone=planet, fitted_by="manage.py calibrate").calibration
    assert row is not None
    admin = person("pat", Role.ZONE_ADMIN, PLANET)
    service.calibration_adopt(zone=planet, version=1, user=admin, reason="the planet's reviewers")
    body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    report = Decision.objects.get(pk=body["id"]).report
    assert report is not None
    assert report.body["calibration"] == {"zone": PLANET, "version": 1}


# --- preview ------------------------------------------------------------------------------


def test_the_preview_counts_the_gates_that_would_change_and_then_do(
    proposed: ZoneCalibration,
    person: Callable[..., Any],
    relaxed: None,
    policy_doc: Any,
    submit: Callable[..., Any],
) -> None:
    # given three answers released on the global model in the last days
    released = [submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json() for _ in range(3)]
    assert {d["gate"] for d in released} == {"auto"}
    admin = person("ada", Role.ZONE_ADMIN, ZONE)
    # when the admin previews the proposed calibration
    preview = service.calibration_preview(zone=_zone(), version=1, user=admin)
    # then the replay says those three (and the one the verdicts hang on, released the same
    # way) would have gone to a person, and changes nothing
    assert preview.decisions == 4
    assert preview.moves == {("auto", "required"): 4}
    assert preview.changed == 4
    assert preview.stricter == 4
    assert preview.looser == 0
    assert {d["id"] for d in released} < set(preview.changed_decisions)
    assert ZoneCalibration.objects.get(version=1).status == "proposed"
    # and once adopted, the same answer goes to a person as the preview said
    service.calibration_adopt(zone=_zone(), version=1, user=admin, reason="the preview")
    assert submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()["gate"] == "required"
    # a replay of a decision graded with the calibration in force changes nothing for it
    again = service.calibration_preview(zone=_zone(), version=1, user=admin)
    assert again.decisions == 5
    assert again.changed == 4


def test_only_readers_of_the_zone_may_preview(
    proposed: ZoneCalibration, person: Callable[..., Any]
) -> None:
    with pytest.raises(NotFound):
        service.calibration_preview(
            zone=_zone(), version=1, user=person("rita", Role.REVIEWER, ZONE)
        )
    auditor = person("otto", Role.AUDITOR, ZONE)
    assert service.calibration_preview(zone=_zone(), version=1, user=auditor).version == 1


# --- the API ------------------------------------------------------------------------------


def test_the_api_lists_versions_to_admins_and_auditors_of_the_zone_or_above(
    proposed: ZoneCalibration, person: Callable[..., Any], client_for: Callable[[Any], Any]
) -> None:
    url = f"/api/v1/zones/{ZONE}/calibration/"
    for reader in (
        person("ada", Role.ZONE_ADMIN, ZONE),
        person("otto", Role.AUDITOR, PLANET),
    ):
        response = client_for(reader).get(url)
        assert response.status_code == 200
        body = response.json()
        assert body["zone"] == ZONE
        assert body["in_force"] is None
        (version,) = body["versions"]
        assert version["version"] == 1
        assert version["status"] == "proposed"
        assert version["verdicts"] == 150
        assert version["reliability_after"]["brier"] < version["reliability_before"]["brier"]
    for outsider in (person("rita", Role.REVIEWER, ZONE), person("sam", Role.ZONE_ADMIN, OTHER)):
        response = client_for(outsider).get(url)
        assert response.status_code == 404
        assert response.json()["error"]["field"] == "coordinate"
    bad = client_for(person("ada2", Role.ZONE_ADMIN, ZONE)).get("/api/v1/zones/G1.X/calibration/")
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "coordinate"


def test_the_api_previews_and_adopts_with_a_reason(
    proposed: ZoneCalibration,
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    admin = client_for(person("ada", Role.ZONE_ADMIN, ZONE))
    base = f"/api/v1/zones/{ZONE}/calibration"
    preview = admin.post(f"{base}/1/preview/")
    assert preview.status_code == 200
    assert preview.json()["version"] == 1
    assert "moves" in preview.json()
    assert admin.post(f"{base}/7/preview/").json()["error"]["field"] == "version"
    for body in ({}, {"reason": ""}, {"reason": 5}, ["why"]):
        refused = admin.post(f"{base}/1/adopt/", body, format="json")
        assert refused.status_code == 400, body
    assert refused.json()["error"]["field"] is None  # a list is not a body at all
    auditor = client_for(person("otto", Role.AUDITOR, ZONE))
    assert auditor.post(f"{base}/1/adopt/", {"reason": "x"}, format="json").status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        adopted = admin.post(f"{base}/1/adopt/", {"reason": "reviewers agree"}, format="json")
    assert adopted.status_code == 200
    assert adopted.json()["status"] == "adopted"
    assert adopted.json()["adopted_by"] == "ada"
    assert admin.post(f"{base}/1/adopt/", {"reason": "again"}, format="json").status_code == 409
    listing = admin.get(f"{base}/").json()
    assert listing["in_force"] == {"zone": ZONE, "version": 1}


# --- the command and the weekly job ------------------------------------------------------


def test_the_command_prints_what_it_proposed_with_reliability_before_and_after(
    org: Any, verdicts: Any
) -> None:
    verdicts(200)
    out = StringIO()
    call_command("calibrate", "--zone", ZONE, stdout=out)
    text = out.getvalue()
    row = ZoneCalibration.objects.get(zone__coordinate=ZONE, version=1)
    assert f"Proposed calibration v1 for {ZONE}" in text
    assert "fitted on 150 verdicts" in text
    assert "held-back verdicts" in text
    brier = next(line for line in text.splitlines() if line.strip().startswith("brier"))
    assert brier.split()[1:] == [
        f"{row.reliability_before['brier']:.4f}",
        f"{row.reliability_after['brier']:.4f}",
    ]
    assert row.fitted_by == "manage.py calibrate"


def test_the_command_refuses_what_it_cannot_do(org: Any, verdicts: Any) -> None:
    verdicts(10)
    with pytest.raises(CommandError, match="too few verdicts"):
        call_command("calibrate", "--zone", ZONE, stdout=StringIO())
    with pytest.raises(CommandError, match="--zone"):
        call_command("calibrate", "--zone", "Z9", stdout=StringIO())
    with pytest.raises(CommandError, match="unknown zone"):
        call_command("calibrate", "--zone", "G7.U1.P1.Z1", stdout=StringIO())


def test_the_weekly_job_proposes_where_there_are_enough_new_verdicts(
    org: Any, verdicts: Any
) -> None:
    assert settings.CELERY_BEAT_SCHEDULE["propose-calibrations"]["task"] == (
        tasks.propose_calibrations.name
    )
    verdicts(120, zone=ZONE)
    verdicts(10, zone=OTHER, seed=5)
    # the first run: Z1 has enough, Z2 too few; the planet above them is not asked
    assert tasks.propose_calibrations() == {
        "proposed": [f"{ZONE}@1"],
        "skipped": [],
        "failed": [],
    }
    assert ZoneCalibration.objects.get().fitted_by == "weekly job"
    # a second run with no new verdicts proposes nothing
    assert tasks.propose_calibrations()["proposed"] == []


def test_one_zones_failure_does_not_stop_the_others(org: Any, verdicts: Any) -> None:
    verdicts(120, zone=ZONE)
    verdicts(120, zone=OTHER, seed=5)
    real = service.calibration_propose

    def flaky(*, zone: Zone, **kwargs: Any) -> Any:
        if zone.coordinate == ZONE:
            raise RuntimeError("the fit fell over")
        return real(zone=zone, **kwargs)

    with mock.patch.object(service, "calibration_propose", side_effect=flaky):
        run = tasks.propose_calibrations()
    assert run == {"proposed": [f"{OTHER}@1"], "skipped": [], "failed": [ZONE]}


def test_agents_have_no_say(proposed: ZoneCalibration, agent_client: Callable[[str], Any]) -> None:
    client = agent_client("G1.U1.P1.Z1.A1")
    assert client.get(f"/api/v1/zones/{ZONE}/calibration/").status_code == 403
    parse(ZONE)  # the coordinate itself is fine: it is the principal that is refused
