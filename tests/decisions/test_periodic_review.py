"""Periodic review of flagged answers (issue 18 point 1): sampled at the zone policy's rate,
deterministically; listed for the zones a reviewer holds; claimed under a lock, released and
closed with a verdict and a note, each on the trail; refused with errors that name the field;
counted in the zone's figures, also on a day whose other figures are settled."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from coordinates.models import Role, ZonePolicyVersion
from decisions import periodic
from decisions.models import Decision, PeriodicReview
from gates.models import KpiDay
from maria.errors import ApplicationError, Conflict, Forbidden, NotFound
from tests.decisions.conftest import GOOD, ZONE, cite
from tests.gates.test_kpis import Clock, clock
from trail import verify
from trail.models import TrailEvent

__all__ = ["clock"]

pytestmark = pytest.mark.django_db

PLANET = "G1.U1.P1"
FLAGGING = {"tau": 0.2, "refusal_floor": 0.1, "floor": 0.33}  # 3*floor: no item is that strong


@pytest.fixture
def flag(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> Callable[..., Decision]:
    """Submit an answer the gate flags (released, with weak evidence); `rate` is the zone's
    periodic_review_rate (None: inherited)."""
    configured: dict[str, Any] = {}

    def run(rate: float | None = None) -> Decision:
        wanted = {**FLAGGING, **({} if rate is None else {"periodic_review_rate": rate})}
        if configured != wanted:
            set_policy(**wanted)
            configured.clear()
            configured.update(wanted)
        body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
        assert body["gate"] == "flagged", body
        assert body["state"] == "completed"
        return Decision.objects.get(pk=body["id"])

    return run


@pytest.fixture
def reviewers(person: Callable[..., Any]) -> dict[str, Any]:
    return {
        "ann": person("ann", Role.REVIEWER, PLANET),
        "ben": person("ben", Role.REVIEWER, PLANET),
        "zed": person("zed", Role.ZONE_ADMIN, PLANET),
        "gus": person("gus", Role.REVIEWER, "G2"),  # another galaxy
        "olga": person("olga", Role.AUDITOR, "G1"),
    }


def review_of(decision: Decision) -> PeriodicReview:
    return PeriodicReview.objects.get(decision=decision)


def lane_kinds(decision: Decision) -> list[str]:
    return list(
        TrailEvent.objects.filter(decision_id=decision.pk, kind__startswith="periodic_review.")
        .order_by("seq")
        .values_list("kind", flat=True)
    )


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


# --- sampling ------------------------------------------------------------------------------


def test_sampling_takes_none_at_rate_0_all_at_rate_1_and_about_the_rate_between() -> None:
    ids = range(1, 20_001)
    assert not any(PeriodicReview.sampled(i, 0.0) for i in ids)
    assert all(PeriodicReview.sampled(i, 1.0) for i in ids)
    share = sum(PeriodicReview.sampled(i, 0.3) for i in ids) / len(ids)
    assert 0.28 < share < 0.32, share


def test_sampling_is_the_same_every_time_and_a_higher_rate_keeps_every_lower_one_s_sample() -> None:
    ids = range(1, 2001)
    first = [PeriodicReview.sampled(i, 0.5) for i in ids]
    assert first == [PeriodicReview.sampled(i, 0.5) for i in ids]
    for i in ids:
        if PeriodicReview.sampled(i, 0.2):
            assert PeriodicReview.sampled(i, 0.6), i


def test_by_default_every_flagged_answer_is_sampled_and_its_trail_says_so(
    flag: Callable[..., Decision],
) -> None:
    decision = flag()
    review = review_of(decision)
    assert review.zone == ZONE
    assert review.verdict is None
    assert "weak" in review.reason
    opened = TrailEvent.objects.get(decision_id=decision.pk, kind="periodic_review.opened")
    assert opened.payload["review"] == review.pk
    assert opened.actor == "system"


def test_at_rate_0_no_flagged_answer_is_sampled(flag: Callable[..., Decision]) -> None:
    decisions = [flag(rate=0.0) for _ in range(3)]
    assert not PeriodicReview.objects.filter(decision__in=decisions).exists()
    assert lane_kinds(decisions[0]) == []


def test_at_a_rate_between_exactly_the_decisions_the_hash_picks_are_sampled(
    flag: Callable[..., Decision],
) -> None:
    decisions = [flag(rate=0.5) for _ in range(8)]
    sampled = set(PeriodicReview.objects.values_list("decision_id", flat=True))
    assert sampled == {d.pk for d in decisions if PeriodicReview.sampled(d.pk, 0.5)}


def test_a_zone_inherits_the_rate_from_its_planet(
    flag: Callable[..., Decision], set_policy: Callable[..., Any]
) -> None:
    set_policy(PLANET, periodic_review_rate=0.0)
    decision = flag()  # the zone sets no rate of its own
    assert not PeriodicReview.objects.filter(decision=decision).exists()


def test_a_rate_outside_0_to_1_is_refused_by_the_api_naming_the_field(
    org: Any, person: Callable[..., Any]
) -> None:
    zed = person("zed", Role.ZONE_ADMIN, PLANET)
    client = api(zed)
    for bad in (1.5, -0.1, "half"):
        response = client.put(
            f"/api/v1/zones/{ZONE}/policy/",
            {"periodic_review_rate": bad, "reason": "sample"},
            format="json",
        )
        assert response.status_code == 400, response.content
        assert response.json()["error"]["field"] == "periodic_review_rate"
    response = client.put(
        f"/api/v1/zones/{ZONE}/policy/",
        {"periodic_review_rate": 0.25, "reason": "a quarter is enough"},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["effective"]["periodic_review_rate"] == 0.25
    assert body["sources"]["periodic_review_rate"] == ZONE
    changed = TrailEvent.objects.get(kind="policy.changed", chain=ZONE)
    assert changed.payload["overrides"] == {"periodic_review_rate": 0.25}
    assert changed.reason == "a quarter is enough"


def test_the_zone_page_form_validates_and_saves_the_rate(
    org: Any, person: Callable[..., Any]
) -> None:
    admin = Client()
    admin.force_login(person("zed", Role.ZONE_ADMIN, PLANET))
    page = admin.get(f"/zones/{ZONE}/").content.decode()
    assert 'name="periodic_review_rate"' in page
    bad = admin.post(f"/zones/{ZONE}/", {"periodic_review_rate": "2", "reason": "x"})
    assert "periodic_review_rate must lie in [0, 1]" in bad.content.decode()
    assert not ZonePolicyVersion.objects.exists()
    admin.post(f"/zones/{ZONE}/", {"periodic_review_rate": "0.1", "reason": "fewer"})
    assert ZonePolicyVersion.objects.get().overrides == {"periodic_review_rate": 0.1}


# --- scope ---------------------------------------------------------------------------------


def test_reviewers_see_the_items_of_the_zones_they_hold_only(
    flag: Callable[..., Decision], reviewers: dict[str, Any]
) -> None:
    review = review_of(flag())
    assert list(periodic.periodic_reviews_for(reviewers["ann"])) == [review]
    assert list(periodic.periodic_reviews_for(reviewers["zed"], zone=ZONE)) == [review]
    assert list(periodic.periodic_reviews_for(reviewers["ann"], zone="G1.U1.P1.Z2")) == []
    assert list(periodic.periodic_reviews_for(reviewers["gus"])) == []
    assert list(periodic.periodic_reviews_for(reviewers["olga"])) == []  # auditors review none
    with pytest.raises(NotFound):
        periodic.periodic_review_claim(review_id=review.pk, user=reviewers["gus"])
    with pytest.raises(NotFound):
        periodic.periodic_review_claim(review_id=review.pk, user=reviewers["olga"])


# --- claim, release, close -----------------------------------------------------------------


def test_a_claim_locks_the_item_against_a_second_reviewer_until_released(
    flag: Callable[..., Decision], reviewers: dict[str, Any]
) -> None:
    ann, ben = reviewers["ann"], reviewers["ben"]
    review = review_of(flag())
    periodic.periodic_review_claim(review_id=review.pk, user=ann)
    with pytest.raises(Conflict, match="claimed by ann"):
        periodic.periodic_review_claim(review_id=review.pk, user=ben)
    with pytest.raises(Conflict, match="claimed by ann"):
        periodic.periodic_review_close(review_id=review.pk, user=ben, verdict="ok")
    with pytest.raises(Forbidden):
        periodic.periodic_review_release(review_id=review.pk, user=ben)
    # the next item for ben is none: the only one is held
    assert periodic.periodic_review_next(ben) is None
    assert periodic.periodic_review_next(ann) == review
    periodic.periodic_review_release(review_id=review.pk, user=ann)
    periodic.periodic_review_claim(review_id=review.pk, user=ben)
    assert review_of(review.decision).claimed_by == ben


def test_a_claim_that_ran_out_holds_nothing_and_a_zone_admin_may_release_any(
    flag: Callable[..., Decision], reviewers: dict[str, Any]
) -> None:
    ann, ben, zed = reviewers["ann"], reviewers["ben"], reviewers["zed"]
    first, second = review_of(flag()), review_of(flag())
    periodic.periodic_review_claim(review_id=first.pk, user=ann)
    PeriodicReview.objects.filter(pk=first.pk).update(
        claimed_until=timezone.now() - timedelta(seconds=1)
    )
    periodic.periodic_review_claim(review_id=first.pk, user=ben)  # ann's claim ran out
    periodic.periodic_review_claim(review_id=second.pk, user=ann)
    periodic.periodic_review_release(review_id=second.pk, user=zed)
    assert review_of(second.decision).claimed_by is None


def test_closing_records_the_verdict_note_and_reviewer_and_a_closed_item_stays_closed(
    flag: Callable[..., Decision], reviewers: dict[str, Any]
) -> None:
    ann, ben = reviewers["ann"], reviewers["ben"]
    ok_one, wrong_one = review_of(flag()), review_of(flag())
    periodic.periodic_review_claim(review_id=ok_one.pk, user=ann)
    periodic.periodic_review_close(review_id=ok_one.pk, user=ann, verdict="ok")
    periodic.periodic_review_close(
        review_id=wrong_one.pk, user=ben, verdict="wrong", note="  cites the 2019 limit  "
    )
    ok_one.refresh_from_db()
    wrong_one.refresh_from_db()
    assert (ok_one.verdict, ok_one.note, ok_one.reviewed_by, ok_one.claimed_by) == (
        "ok",
        "",
        ann,
        None,
    )
    assert ok_one.reviewed_at is not None
    assert (wrong_one.verdict, wrong_one.note, wrong_one.reviewed_by) == (
        "wrong",
        "cites the 2019 limit",
        ben,
    )
    with pytest.raises(Conflict, match="closed already"):
        periodic.periodic_review_close(review_id=ok_one.pk, user=ben, verdict="wrong", note="x")
    with pytest.raises(Conflict, match="closed already"):
        periodic.periodic_review_claim(review_id=ok_one.pk, user=ben)
    assert list(periodic.periodic_reviews_for(ann)) == []
    closed = list(periodic.periodic_reviews_for(ann, state="closed"))
    assert set(closed) == {ok_one, wrong_one}
    assert list(periodic.periodic_reviews_for(ann, state="closed", verdict="wrong")) == [wrong_one]


@pytest.mark.parametrize(
    ("verdict", "note", "field"),
    [
        ("wrong", "", "note"),
        ("wrong", "   ", "note"),
        ("wrong", "x" * 2001, "note"),
        ("ok", 7, "note"),
        ("maybe", "fine", "verdict"),
        (None, "", "verdict"),
        ("", "", "verdict"),
    ],
)
def test_a_bad_verdict_or_note_is_refused_naming_the_field_and_changes_nothing(
    flag: Callable[..., Decision],
    reviewers: dict[str, Any],
    verdict: Any,
    note: Any,
    field: str,
) -> None:
    review = review_of(flag())
    with pytest.raises(ApplicationError) as refused:
        periodic.periodic_review_close(
            review_id=review.pk, user=reviewers["ann"], verdict=verdict, note=note
        )
    assert refused.value.field == field
    assert refused.value.status_code == 400
    review.refresh_from_db()
    assert review.verdict is None
    assert lane_kinds(review.decision) == ["periodic_review.opened"]


def test_the_database_refuses_a_wrong_verdict_without_a_note_or_a_closed_item_without_reviewer(
    flag: Callable[..., Decision], reviewers: dict[str, Any]
) -> None:
    review = review_of(flag())
    for change in (
        {
            "verdict": "wrong",
            "note": "",
            "reviewed_at": timezone.now(),
            "reviewed_by": reviewers["ann"],
        },
        {"verdict": "ok"},
    ):
        with pytest.raises(IntegrityError), transaction.atomic():
            PeriodicReview.objects.filter(pk=review.pk).update(**change)


# --- the trail -----------------------------------------------------------------------------


def test_each_act_is_on_the_decision_s_trail_and_a_wrong_verdict_on_a_released_answer_is_serious(
    flag: Callable[..., Decision], reviewers: dict[str, Any]
) -> None:
    ann = reviewers["ann"]
    decision = flag()
    review = review_of(decision)
    periodic.periodic_review_claim(review_id=review.pk, user=ann)
    periodic.periodic_review_release(review_id=review.pk, user=ann)
    periodic.periodic_review_close(
        review_id=review.pk, user=ann, verdict="wrong", note="the limit is 300,000 yen now"
    )
    assert lane_kinds(decision) == [
        "periodic_review.opened",
        "periodic_review.claimed",
        "periodic_review.released",
        "periodic_review.closed",
    ]
    claimed, closed = (
        TrailEvent.objects.get(decision_id=decision.pk, kind=kind)
        for kind in ("periodic_review.claimed", "periodic_review.closed")
    )
    assert claimed.actor == "ann"
    assert claimed.payload["until"]
    assert (closed.actor, closed.reason) == ("ann", "the limit is 300,000 yen now")
    assert closed.payload["verdict"] == "wrong"
    assert closed.payload["released"] is True  # the flagged answer went out at once
    assert closed.payload["serious"] is True
    assert verify.verify_database().intact


def test_an_ok_verdict_is_not_serious(
    flag: Callable[..., Decision], reviewers: dict[str, Any]
) -> None:
    decision = flag()
    periodic.periodic_review_close(
        review_id=review_of(decision).pk, user=reviewers["ben"], verdict="ok"
    )
    closed = TrailEvent.objects.get(decision_id=decision.pk, kind="periodic_review.closed")
    assert (closed.payload["verdict"], closed.payload["serious"]) == ("ok", False)


# --- the API -------------------------------------------------------------------------------


def test_the_api_lists_claims_and_closes_with_the_row_it_documents(
    flag: Callable[..., Decision], reviewers: dict[str, Any]
) -> None:
    decision = flag()
    review = review_of(decision)
    ann = api(reviewers["ann"])
    listed = ann.get(f"/api/v1/periodic-reviews/?zone={PLANET}&state=open")
    assert listed.status_code == 200, listed.content
    (row,) = listed.json()["results"]
    assert row["id"] == review.pk
    assert row["decision"] == decision.pk
    assert row["answer"] == decision.answer
    assert (row["state"], row["verdict"], row["claimed_by"]) == ("open", None, None)
    assert listed.json()["next_offset"] is None
    claimed = ann.post(f"/api/v1/periodic-reviews/{review.pk}/claim/")
    assert claimed.status_code == 200, claimed.content
    assert claimed.json()["claimed_by"] == "ann"
    closed = ann.post(
        f"/api/v1/periodic-reviews/{review.pk}/close/",
        {"verdict": "wrong", "note": "outdated"},
        format="json",
    )
    assert closed.status_code == 200, closed.content
    body = closed.json()
    assert (body["state"], body["verdict"], body["note"], body["reviewed_by"]) == (
        "closed",
        "wrong",
        "outdated",
        "ann",
    )
    assert body["claimed_by"] is None
    assert ann.get("/api/v1/periodic-reviews/").json()["results"] == []
    (again,) = ann.get("/api/v1/periodic-reviews/?state=closed&verdict=wrong").json()["results"]
    assert again["id"] == review.pk


def test_the_api_refuses_with_the_status_and_field_it_documents(
    flag: Callable[..., Decision],
    reviewers: dict[str, Any],
    agent_client: Callable[[str], APIClient],
) -> None:
    review = review_of(flag())
    ann, ben, gus = (api(reviewers[n]) for n in ("ann", "ben", "gus"))

    def error(response: Any, status: int) -> Any:
        assert response.status_code == status, response.content
        return response.json()["error"]["field"]

    assert error(ann.get("/api/v1/periodic-reviews/?state=pending"), 400) == "state"
    assert error(ann.get("/api/v1/periodic-reviews/?zone=G1.X"), 400) == "zone"
    assert error(ann.get("/api/v1/periodic-reviews/?offset=x"), 400) == "offset"
    assert error(ann.get("/api/v1/periodic-reviews/?state=closed&verdict=so-so"), 400) == "verdict"
    close = f"/api/v1/periodic-reviews/{review.pk}/close/"
    assert error(ann.post(close, {"verdict": "wrong"}, format="json"), 400) == "note"
    assert error(ann.post(close, {"verdict": "fine"}, format="json"), 400) == "verdict"
    assert error(ann.post(close, ["ok"], format="json"), 400) is None
    assert error(ann.post(close, {"verdict": "ok", "note": 3}, format="json"), 400) == "note"
    assert error(gus.post(f"/api/v1/periodic-reviews/{review.pk}/claim/"), 404) == "id"
    assert error(ann.post("/api/v1/periodic-reviews/999999/claim/"), 404) == "id"
    beyond = 2**64  # past any id a row may have: still a 404, never a 500
    closing = ann.post(
        f"/api/v1/periodic-reviews/{beyond}/close/", {"verdict": "ok"}, format="json"
    )
    assert error(closing, 404) == "id"
    assert error(ann.post(f"/api/v1/periodic-reviews/{beyond}/claim/"), 404) == "id"
    agent = agent_client("G1.U1.P1.Z1.A1")
    assert agent.get("/api/v1/periodic-reviews/").status_code == 403
    assert agent.post(f"/api/v1/periodic-reviews/{review.pk}/claim/").status_code == 403
    assert ann.post(f"/api/v1/periodic-reviews/{review.pk}/claim/").status_code == 200
    assert ben.post(f"/api/v1/periodic-reviews/{review.pk}/claim/").status_code == 409
    assert ben.post(f"/api/v1/periodic-reviews/{review.pk}/release/").status_code == 403
    assert ben.post(close, {"verdict": "ok"}, format="json").status_code == 409
    assert APIClient().get("/api/v1/periodic-reviews/").status_code == 401
    review.refresh_from_db()
    assert review.verdict is None


# --- the zone's figures --------------------------------------------------------------------


def test_the_zone_s_figures_count_open_closed_and_wrong_items_even_on_a_settled_day(
    clock: Clock, flag: Callable[..., Decision], reviewers: dict[str, Any]
) -> None:
    # given five flagged answers sampled on one day, two closed (one wrong) that day
    proposed = clock.now
    reviews = [review_of(flag()) for _ in range(5)]
    periodic.periodic_review_close(review_id=reviews[0].pk, user=reviewers["ann"], verdict="ok")
    periodic.periodic_review_close(
        review_id=reviews[1].pk, user=reviewers["ann"], verdict="wrong", note="stale"
    )
    zed = api(reviewers["zed"])
    query = f"?since={proposed.date().isoformat()}&until={proposed.date().isoformat()}"

    def figures() -> dict[str, Any]:
        response = zed.get(f"/api/v1/zones/{ZONE}/kpis/{query}")
        assert response.status_code == 200, response.content
        return response.json()

    def counted() -> tuple[int, int, int]:
        rows = PeriodicReview.objects.filter(zone=ZONE)
        return (
            sum(1 for r in rows if r.verdict is None),
            sum(1 for r in rows if r.verdict is not None),
            sum(1 for r in rows if r.verdict == "wrong"),
        )

    # when the zone admin reads the figures days later (the day is settled and kept)
    clock.at(proposed + timedelta(days=3))
    body = figures()
    assert counted() == (3, 2, 1)
    assert (
        body["periodic_reviews_open"],
        body["periodic_reviews_closed"],
        body["periodic_reviews_wrong"],
    ) == (3, 2, 1)
    assert body["series"]["periodic_reviews_wrong"] == [
        {"date": proposed.date().isoformat(), "value": 1}
    ]
    assert body["decisions"]["flagged"] == 5
    assert KpiDay.objects.filter(coordinate=ZONE).exists()
    # then a verdict given later still shows, though the day's other counts are kept
    periodic.periodic_review_close(
        review_id=reviews[2].pk, user=reviewers["ben"], verdict="wrong", note="wrong figure"
    )
    later = figures()
    assert counted() == (2, 3, 2)
    assert (
        later["periodic_reviews_open"],
        later["periodic_reviews_closed"],
        later["periodic_reviews_wrong"],
    ) == (2, 3, 2)
    # and the planet's figures hold the zone's; a sibling zone's hold none of them
    planet = zed.get(f"/api/v1/zones/{PLANET}/kpis/{query}").json()
    assert planet["periodic_reviews_closed"] == 3
    sibling = zed.get(f"/api/v1/zones/G1.U1.P1.Z2/kpis/{query}").json()
    assert sibling["periodic_reviews_open"] == sibling["periodic_reviews_closed"] == 0


def test_the_dashboard_page_shows_the_three_figures(
    flag: Callable[..., Decision], reviewers: dict[str, Any]
) -> None:
    flag()
    admin = Client()
    admin.force_login(reviewers["zed"])
    page = admin.get(f"/zones/{ZONE}/dashboard/").content.decode()
    for name in ("periodic_reviews_open", "periodic_reviews_closed", "periodic_reviews_wrong"):
        assert name in page
    assert "Periodic reviews open" in page
