"""Zone policy changes are trail events, committed with the new version or not at all."""

from __future__ import annotations

from typing import Any

import pytest

from coordinates import events
from coordinates.coordinate import parse
from coordinates.models import ZonePolicyVersion
from coordinates.selectors import zone_get
from coordinates.services import policy_update
from maria.errors import ApplicationError
from trail import verify
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

ZONE = "G1.U1.P1.Z1"


def policy_events() -> Any:
    """Policy events only: creating the test zones and roles writes trail events too."""
    return TrailEvent.objects.filter(kind="policy.changed")


def test_a_policy_update_records_its_thresholds_actor_and_reason(
    org: dict[str, Any], person: Any
) -> None:
    # given a zone admin raising tau twice
    zed = person("zed", "zone_admin", "G1")
    zone = zone_get(parse(ZONE))
    policy_update(zone=zone, overrides={"tau": 0.7}, reason="audit finding 12", actor=zed)
    policy_update(zone=zone, overrides={"tau": 0.75}, reason="tighter", actor=zed)
    # then the zone's chain holds both changes, in order
    first, second = policy_events().filter(chain=ZONE).order_by("seq")
    assert (first.kind, first.actor, first.reason) == ("policy.changed", "zed", "audit finding 12")
    assert first.payload == {
        "zone": ZONE,
        "version": 1,
        "overrides": {"tau": 0.7},
        "previous_version": None,
    }
    assert second.payload["previous_version"] == 1
    assert second.prev_hash == first.hash
    assert verify.verify_database().intact


def test_a_galaxy_policy_change_goes_to_the_galaxy_s_chain(org: dict[str, Any]) -> None:
    policy_update(zone=zone_get(parse("G1")), overrides={"floor": 0.2}, reason="base", actor=None)
    event = policy_events().get()
    assert (event.chain, event.actor) == ("G1", "system")


def test_the_same_values_again_record_nothing(org: dict[str, Any]) -> None:
    zone = zone_get(parse(ZONE))
    policy_update(zone=zone, overrides={"tau": 0.7}, reason="set", actor=None)
    policy_update(zone=zone, overrides={"tau": 0.7}, reason="again", actor=None)
    assert policy_events().count() == 1


def test_a_refused_policy_records_nothing(org: dict[str, Any]) -> None:
    zone = zone_get(parse(ZONE))
    with pytest.raises(ApplicationError):
        policy_update(
            zone=zone, overrides={"tau": 0.1, "refusal_floor": 0.5}, reason="x", actor=None
        )
    assert not policy_events().exists()
    assert not ZonePolicyVersion.objects.exists()


def test_no_new_version_survives_without_its_trail_event(
    org: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given the trail failing at the moment of the append
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("trail unavailable")

    monkeypatch.setattr(events, "policy_changed", broken)
    # then the policy change fails as a whole
    with pytest.raises(RuntimeError):
        policy_update(zone=zone_get(parse(ZONE)), overrides={"tau": 0.7}, reason="x", actor=None)
    assert not ZonePolicyVersion.objects.exists()


def test_a_policy_put_over_the_api_is_on_the_trail(
    org: dict[str, Any], person: Any, client_for: Any
) -> None:
    zed = person("zed", "zone_admin", "G1.U1")
    response = client_for(zed).put(
        f"/api/v1/zones/{ZONE}/policy/", {"tau": 0.8, "reason": "quarterly review"}, format="json"
    )
    assert response.status_code == 200, response.content
    event = policy_events().get(chain=ZONE)
    assert (event.actor, event.reason, event.payload["overrides"]) == (
        "zed",
        "quarterly review",
        {"tau": 0.8},
    )
