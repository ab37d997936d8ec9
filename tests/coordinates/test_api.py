from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from coordinates.coordinate import parse
from coordinates.models import ApiToken, Role, ZonePolicyVersion
from coordinates.selectors import zone_get
from coordinates.services import policy_update, token_revoke

pytestmark = pytest.mark.django_db

ZONE = "G1.U1.P1.Z1"
POLICY_URL = f"/api/v1/zones/{ZONE}/policy/"


def _versions() -> int:
    return ZonePolicyVersion.objects.count()


def test_anonymous_requests_get_401_in_the_error_shape(org: Any) -> None:
    response = APIClient().get("/api/v1/zones/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_reviewer_sees_the_tree_around_their_scope_only(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    reviewer = person("rita", Role.REVIEWER, "G1.U1.P1")
    tree = client_for(reviewer).get("/api/v1/zones/").json()["zones"]
    galaxy = tree[0]
    assert [root["coordinate"] for root in tree] == ["G1"]
    planets = galaxy["children"][0]["children"]
    assert [p["coordinate"] for p in planets] == ["G1.U1.P1"]  # not the legal planet P2
    assert [z["coordinate"] for z in planets[0]["children"]] == ["G1.U1.P1.Z1", "G1.U1.P1.Z2"]


def test_effective_policy_says_where_each_value_comes_from(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    # given a galaxy baseline and a zone override
    policy_update(zone=zone_get(parse("G1")), overrides={"tau": 0.6}, reason="base", actor=None)
    policy_update(zone=zone_get(parse(ZONE)), overrides={"delta": 0.05}, reason="z", actor=None)
    reviewer = person("rita", Role.REVIEWER, ZONE)
    # when
    body = client_for(reviewer).get(POLICY_URL).json()
    # then
    assert body["effective"]["tau"] == 0.6
    assert body["effective"]["delta"] == 0.05
    assert body["sources"]["tau"] == "G1"
    assert body["sources"]["delta"] == ZONE
    assert body["sources"]["floor"] == "default"
    assert body["own"] == {"delta": 0.05}
    assert body["version"] == 1
    assert body["policy_label"] == f"G1@1/{ZONE}@1"


def test_a_zone_admin_edit_makes_a_new_version_with_who_and_why(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    admin = person("ada", Role.ZONE_ADMIN, "G1.U1")
    client = client_for(admin)
    first = client.put(POLICY_URL, {"tau": 0.9, "reason": "regulator asked"}, format="json")
    second = client.put(POLICY_URL, {"tau": 0.8, "reason": "too many refusals"}, format="json")
    assert first.status_code == 200, first.json()
    assert second.status_code == 200
    body = second.json()
    assert body["version"] == 2
    assert body["effective"]["tau"] == 0.8
    assert [(h["version"], h["created_by"], h["reason"]) for h in body["history"]] == [
        (2, "ada", "too many refusals"),
        (1, "ada", "regulator asked"),
    ]
    # the first version is still there, unchanged
    assert ZonePolicyVersion.objects.get(zone__coordinate=ZONE, version=1).overrides == {"tau": 0.9}


def test_fields_left_out_are_inherited_again(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    client = client_for(person("ada", Role.ZONE_ADMIN, "G1"))
    client.put(POLICY_URL, {"tau": 0.9, "hops": 2, "reason": "x"}, format="json")
    body = client.put(
        POLICY_URL, {"hops": 2, "reason": "back to default tau"}, format="json"
    ).json()
    assert body["effective"]["tau"] == 0.7
    assert body["sources"]["tau"] == "default"


def test_the_same_values_again_make_no_new_version(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    client = client_for(person("ada", Role.ZONE_ADMIN, "G1"))
    client.put(POLICY_URL, {"tau": 0.9, "reason": "x"}, format="json")
    body = client.put(POLICY_URL, {"tau": 0.9, "reason": "again"}, format="json").json()
    assert body["version"] == 1


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"tau": 1.5, "reason": "r"}, "tau"),
        ({"floor": -0.2, "reason": "r"}, "floor"),
        ({"tau": 0.5, "refusal_floor": 0.6, "reason": "r"}, "refusal_floor"),
        ({"w1": 0.5, "reason": "r"}, "weights"),
        ({"review_sla_hours": -4, "reason": "r"}, "review_sla_hours"),
        ({"approvals_required": "two", "reason": "r"}, "approvals_required"),
        # seed 002 §6.2: PPR converges for rho < 1 only; rho = 0 would never leave the seeds
        ({"ppr_rho": 1.0, "reason": "r"}, "ppr_rho"),
        ({"ppr_rho": 0.0, "reason": "r"}, "ppr_rho"),
        ({"colour": "red", "reason": "r"}, "colour"),
        ({"tau": 0.9}, "reason"),
        ({"tau": 0.9, "reason": "   "}, "reason"),
    ],
)
def test_bad_values_are_a_400_naming_the_field_and_write_nothing(
    org: Any,
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
    payload: dict[str, Any],
    field: str,
) -> None:
    client = client_for(person("ada", Role.ZONE_ADMIN, "G1"))
    response = client.put(POLICY_URL, payload, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == field
    assert response.json()["error"]["message"]
    assert _versions() == 0


def test_an_edit_that_breaks_a_zone_below_is_refused_naming_it(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    policy_update(
        zone=zone_get(parse(ZONE)), overrides={"refusal_floor": 0.5}, reason="z", actor=None
    )
    client = client_for(person("ada", Role.ZONE_ADMIN, "G1"))
    response = client.put(
        "/api/v1/zones/G1.U1.P1/policy/", {"tau": 0.45, "reason": "r"}, format="json"
    )
    assert response.status_code == 400
    assert ZONE in response.json()["error"]["message"]
    assert _versions() == 1


def test_malformed_json_and_non_object_bodies_are_400(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    client = client_for(person("ada", Role.ZONE_ADMIN, "G1"))
    broken = client.put(POLICY_URL, "{not json", content_type="application/json")
    listed = client.put(POLICY_URL, [1, 2], format="json")
    assert broken.status_code == 400
    assert broken.json()["error"]["code"] == "parse_error"
    assert listed.status_code == 400
    assert _versions() == 0


@pytest.mark.parametrize("coordinate", ["G1.U1.P1.Q1", "g1", "G1..U1", "G01.U1"])
def test_a_malformed_coordinate_is_a_400_naming_it(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient], coordinate: str
) -> None:
    response = client_for(person("ada", Role.ZONE_ADMIN, "G1")).get(
        f"/api/v1/zones/{coordinate}/policy/"
    )
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "coordinate"


def test_an_unknown_zone_is_a_404(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    response = client_for(person("ada", Role.ZONE_ADMIN, "G1")).get("/api/v1/zones/G1.U9/policy/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_zone"


def test_a_reviewer_cannot_change_thresholds(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    client = client_for(person("rita", Role.REVIEWER, "G1"))
    response = client.put(
        POLICY_URL, {"tau": 0.1, "refusal_floor": 0.1, "reason": "r"}, format="json"
    )
    assert response.status_code == 403
    assert _versions() == 0


def test_a_zone_admin_of_another_planet_gets_404_and_writes_nothing(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    legal_admin = person("lee", Role.ZONE_ADMIN, "G1.U1.P2")
    response = client_for(legal_admin).put(POLICY_URL, {"tau": 0.9, "reason": "r"}, format="json")
    # the zone is not theirs to see: answered as one that does not exist
    assert response.status_code == 404
    assert _versions() == 0
    # nor may a zone admin edit the level above their scope
    zone_admin = person("zed", Role.ZONE_ADMIN, ZONE)
    above = client_for(zone_admin).put(
        "/api/v1/zones/G1.U1.P1/policy/", {"tau": 0.9, "reason": "r"}, format="json"
    )
    assert above.status_code == 403


def test_a_person_outside_the_scope_cannot_read_a_policy(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    other = person("olga", Role.AUDITOR, "G2")
    assert client_for(other).get(POLICY_URL).status_code == 404


def test_an_agent_reads_its_own_zone_policy_but_cannot_change_it(
    agent_client: Callable[[str], APIClient],
) -> None:
    client = agent_client("G1.U1.P1.Z1.A1")
    assert client.get(POLICY_URL).status_code == 200
    assert client.get("/api/v1/zones/G1.U1.P2.Z1/policy/").status_code == 404
    assert client.put(POLICY_URL, {"tau": 0.1, "reason": "r"}, format="json").status_code == 403
    assert _versions() == 0


def test_a_revoked_token_is_refused(agent_client: Callable[[str], APIClient]) -> None:
    client = agent_client("G1.U1.P1.Z1.A1")
    token_revoke(token=ApiToken.objects.get())
    response = client.get(POLICY_URL)
    assert response.status_code == 401
    assert "revoked" in response.json()["error"]["message"]


def test_a_wrong_token_is_refused(org: Any) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer maria_not-a-real-token")
    assert client.get("/api/v1/zones/").status_code == 401


def test_tokens_are_stored_hashed(agent_client: Callable[[str], APIClient]) -> None:
    agent_client("G1.U1.P1.Z1.A1")
    token = ApiToken.objects.get()
    assert len(token.key_hash) == 64
    assert token.agent == "G1.U1.P1.Z1.A1"
    assert token.user.username == "agent:G1.U1.P1.Z1.A1"


def test_the_openapi_schema_and_docs_page_are_served_without_a_cdn(org: Any) -> None:
    client = APIClient()
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    assert "/api/v1/zones/{coordinate}/policy/" in schema.json()["paths"]
    docs = client.get("/api/v1/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "swagger-ui" in html
    assert "cdn" not in html.lower()


def test_the_documented_policy_ranges_are_the_ones_enforced() -> None:
    from coordinates import policy
    from coordinates.api import HIGH_OPEN, POLICY_RANGES

    assert set(POLICY_RANGES) == set(policy.NUMBER_FIELDS)
    for name, (low, high, low_open) in POLICY_RANGES.items():
        step = 1 if isinstance(getattr(policy.SYSTEM_DEFAULT, name), int) else 1e-9
        assert bool(policy.check_overrides({name: high})) == (name in HIGH_OPEN), name
        assert not policy.check_overrides({name: high - step}), name
        assert policy.check_overrides({name: high + step}), name
        assert policy.check_overrides({name: low - step}), name
        assert bool(policy.check_overrides({name: low})) == low_open, name
