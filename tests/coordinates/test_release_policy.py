"""Which document kinds and statuses may carry an answer to release without a person: two list
fields of the zone policy, checked, inherited, normalised, served by the API and edited on the
zone admin page like the thresholds."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.test import APIClient

from coordinates import policy
from coordinates.coordinate import parse
from coordinates.models import Role, ZonePolicyVersion
from coordinates.selectors import effective_policy, zone_get
from coordinates.services import policy_update

ZONE = "G1.U1.P1.Z1"
POLICY_URL = f"/api/v1/zones/{ZONE}/policy/"


# --- the fields, pure ----------------------------------------------------------------------


def test_the_defaults_release_on_approved_policies_contracts_and_reports() -> None:
    assert policy.SYSTEM_DEFAULT.release_kinds == ("policy", "contract", "report")
    assert policy.SYSTEM_DEFAULT.release_statuses == ("approved",)
    assert {"release_kinds", "release_statuses"} <= set(policy.FIELD_NAMES)
    assert set(policy.NUMBER_FIELDS) == (
        set(policy.FIELD_NAMES) - set(policy.LIST_FIELDS) - set(policy.CHOICE_FIELDS)
    )


def test_the_known_names_are_the_document_models_choices() -> None:
    from evidence.models import DocumentKind, DocumentStatus

    assert set(policy.DOCUMENT_KINDS) == set(DocumentKind.values)
    assert set(policy.DOCUMENT_STATUSES) == set(DocumentStatus.values)


def test_the_default_passes_its_own_checks() -> None:
    assert policy.check_overrides(policy.SYSTEM_DEFAULT.as_dict()) == []
    assert policy.check_effective(policy.SYSTEM_DEFAULT) == []


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("release_kinds", "policy", "must be a list"),
        ("release_kinds", [], "at least one"),
        ("release_kinds", ["policy", "policy"], "more than once"),
        ("release_kinds", ["policy", "tweet"], "unknown name 'tweet'"),
        ("release_kinds", ["policy", 3], "must be a list"),
        ("release_kinds", {"policy": True}, "must be a list"),
        ("release_kinds", ["approved"], "unknown name 'approved'"),  # a status is no kind
        ("release_statuses", ["draft", "final"], "unknown name 'final'"),
        ("release_statuses", [], "at least one"),
        ("release_statuses", 1, "must be a list"),
    ],
)
def test_a_bad_list_is_a_problem_naming_its_field(name: str, value: Any, words: str) -> None:
    problems = policy.check_overrides({name: value})
    assert problems, value
    assert {p.field for p in problems} == {name}
    assert all(p.message.startswith(name) for p in problems)
    assert any(words in p.message for p in problems)


def test_a_good_list_and_null_pass() -> None:
    assert policy.check_overrides({"release_kinds": ["memo", "policy"]}) == []
    assert policy.check_overrides({"release_statuses": ("approved", "draft")}) == []
    assert policy.check_overrides({"release_kinds": None}) == []


def test_a_zones_list_replaces_its_parents_and_null_inherits_it() -> None:
    galaxy = {"release_kinds": ["policy", "contract", "report", "minutes"]}
    zone = {"release_kinds": ["policy"], "release_statuses": ["approved", "draft"]}
    values = policy.merge([galaxy, zone])
    assert values.release_kinds == ("policy",)  # replaced, not united
    assert values.release_statuses == ("approved", "draft")
    inherited = policy.merge([galaxy, {"release_kinds": None, "tau": 0.8}])
    assert inherited.release_kinds == ("policy", "contract", "report", "minutes")
    assert inherited.release_statuses == policy.SYSTEM_DEFAULT.release_statuses
    assert policy.sources([("G1", galaxy), ("G1.U1.P1.Z1", zone)])["release_kinds"] == (
        "G1.U1.P1.Z1"
    )
    assert policy.sources([("G1", galaxy)])["release_statuses"] == "default"


def test_normalised_lists_are_sorted_so_equal_policies_store_equal() -> None:
    one = policy.normalise_overrides({"release_kinds": ["report", "policy"], "tau": 1})
    other = policy.normalise_overrides({"release_kinds": ("policy", "report"), "tau": 1.0})
    assert one == other == {"tau": 1.0, "release_kinds": ["policy", "report"]}


def test_values_built_from_stored_json_lists_equal_the_ones_built_from_tuples() -> None:
    # a report stores values.as_dict() as JSON; rebuilding it gives lists back
    stored = policy.SYSTEM_DEFAULT.as_dict()
    assert stored["release_kinds"] == ["policy", "contract", "report"]
    rebuilt = policy.PolicyValues(**stored)
    # the stored tau_c is the one in force (the risk level's), so it comes back set
    judged_under = dataclasses.replace(policy.SYSTEM_DEFAULT, cohesion_tau=0.15)
    assert rebuilt == judged_under
    assert hash(rebuilt) == hash(judged_under)
    assert isinstance(rebuilt.release_kinds, tuple)


_kinds = st.lists(st.sampled_from(policy.DOCUMENT_KINDS), min_size=1, unique=True)
_statuses = st.lists(st.sampled_from(policy.DOCUMENT_STATUSES), min_size=1, unique=True)


@given(kinds=_kinds, statuses=_statuses, shuffle=st.randoms(use_true_random=False))
def test_normalising_ignores_order_and_is_idempotent(
    kinds: list[str], statuses: list[str], shuffle: Any
) -> None:
    overrides = {"release_kinds": kinds, "release_statuses": statuses}
    shuffled = {"release_kinds": list(kinds), "release_statuses": list(statuses)}
    shuffle.shuffle(shuffled["release_kinds"])
    shuffle.shuffle(shuffled["release_statuses"])
    clean = policy.normalise_overrides(overrides)
    assert clean == policy.normalise_overrides(shuffled)
    assert clean == policy.normalise_overrides(clean)
    assert policy.check_overrides(clean) == []
    assert set(clean["release_kinds"]) == set(kinds)


@given(chain=st.lists(st.one_of(st.none(), _kinds), max_size=5))
def test_the_effective_list_is_the_innermost_one_set(chain: list[list[str] | None]) -> None:
    values = policy.merge([{"release_kinds": kinds} for kinds in chain])
    set_lists = [kinds for kinds in chain if kinds is not None]
    expected = tuple(set_lists[-1]) if set_lists else policy.SYSTEM_DEFAULT.release_kinds
    assert values.release_kinds == expected


# --- the zone policy API -----------------------------------------------------------------


@pytest.mark.django_db
def test_the_api_serves_the_lists_and_where_they_come_from(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    # given a galaxy that also releases on minutes, and a zone that also takes drafts
    policy_update(
        zone=zone_get(parse("G1")),
        overrides={"release_kinds": ["policy", "contract", "report", "minutes"]},
        reason="minutes count",
        actor=None,
    )
    admin = client_for(person("ada", Role.ZONE_ADMIN, "G1"))
    # when the zone admin puts its own statuses, unsorted
    put = admin.put(
        POLICY_URL,
        {"release_statuses": ["draft", "approved"], "reason": "pilot"},
        format="json",
    )
    # then it is stored sorted and served with its sources
    assert put.status_code == 200, put.json()
    body = admin.get(POLICY_URL).json()
    assert body["effective"]["release_kinds"] == ["contract", "minutes", "policy", "report"]
    assert body["effective"]["release_statuses"] == ["approved", "draft"]
    assert body["sources"]["release_kinds"] == "G1"
    assert body["sources"]["release_statuses"] == ZONE
    assert body["own"] == {"release_statuses": ["approved", "draft"]}
    assert body["history"][0]["overrides"] == {"release_statuses": ["approved", "draft"]}
    assert effective_policy(parse(ZONE)).values.release_statuses == ("approved", "draft")
    # the same set in another order is no new version
    again = admin.put(
        POLICY_URL,
        {"release_statuses": ["approved", "draft"], "reason": "again"},
        format="json",
    )
    assert again.json()["version"] == body["version"] == 1


@pytest.mark.django_db
def test_the_api_serves_the_defaults_when_nobody_set_them(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    body = client_for(person("rita", Role.REVIEWER, ZONE)).get(POLICY_URL).json()
    assert body["effective"]["release_kinds"] == ["policy", "contract", "report"]
    assert body["effective"]["release_statuses"] == ["approved"]
    assert body["sources"]["release_kinds"] == "default"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"release_kinds": "policy"}, "release_kinds"),
        ({"release_kinds": []}, "release_kinds"),
        ({"release_kinds": ["policy", "tweet"]}, "release_kinds"),
        ({"release_kinds": ["memo", "memo"]}, "release_kinds"),
        ({"release_statuses": ["approved", 2]}, "release_statuses"),
        ({"release_statuses": ["final"]}, "release_statuses"),
    ],
)
def test_a_bad_list_is_a_400_naming_the_field_and_writes_nothing(
    org: Any,
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
    payload: dict[str, Any],
    field: str,
) -> None:
    client = client_for(person("ada", Role.ZONE_ADMIN, "G1"))
    response = client.put(POLICY_URL, {**payload, "reason": "r"}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["field"] == field
    assert field in error["message"]
    assert not ZonePolicyVersion.objects.exists()


def test_the_write_schema_describes_the_lists() -> None:
    from coordinates.api import PolicyWrite

    body: dict[str, Any] = PolicyWrite["application/json"]
    properties: dict[str, Any] = body["properties"]
    kinds = properties["release_kinds"]
    assert kinds["type"] == "array"
    assert kinds["items"]["enum"] == list(policy.DOCUMENT_KINDS)
    assert kinds["minItems"] == 1
    assert kinds["uniqueItems"] is True
    assert properties["release_statuses"]["items"]["enum"] == list(policy.DOCUMENT_STATUSES)
    assert properties["tau"]["type"] == "number"  # the numbers are as they were


# --- the zone admin page -----------------------------------------------------------------


def _login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_zone_page_shows_the_effective_lists_and_where_they_come_from(
    org: Any, person: Callable[..., Any]
) -> None:
    policy_update(
        zone=zone_get(parse("G1.U1.P1")),
        overrides={"release_kinds": ["policy", "minutes"]},
        reason="minutes count",
        actor=None,
    )
    admin = _login(person("zed", Role.ZONE_ADMIN, "G1.U1.P1"))
    page = admin.get(f"/zones/{ZONE}/").content.decode()
    effective = page.split("Effective policy", 1)[1]
    kinds = effective.split("<th>release_kinds</th>", 1)[1].split("</tr>", 1)[0]
    assert "minutes, policy" in kinds
    assert "↑ G1.U1.P1" in kinds
    statuses = effective.split("<th>release_statuses</th>", 1)[1].split("</tr>", 1)[0]
    assert ">approved<" in statuses
    assert "default" in statuses
    # the form offers every kind as a checkbox, the inherited list beside it
    form = page.split('id="policy-form"', 1)[1].split("</form>", 1)[0]
    for kind in policy.DOCUMENT_KINDS:
        assert f'name="release_kinds" value="{kind}"' in form
    assert "inherited: minutes, policy" in form


@pytest.mark.django_db
def test_the_zone_page_saves_ticked_boxes_and_refuses_unknown_ones(
    org: Any, person: Callable[..., Any]
) -> None:
    admin = _login(person("zed", Role.ZONE_ADMIN, "G1.U1.P1"))
    bad = admin.post(f"/zones/{ZONE}/", {"release_kinds": ["policy", "tweet"], "reason": "try"})
    assert "tweet" in bad.content.decode()
    assert not ZonePolicyVersion.objects.exists()
    saved = admin.post(
        f"/zones/{ZONE}/",
        {"release_kinds": ["report", "policy"], "release_statuses": [], "reason": "narrower"},
        follow=True,
    )
    assert saved.status_code == 200
    version = ZonePolicyVersion.objects.get()
    # no box ticked for the statuses: they stay inherited
    assert version.overrides == {"release_kinds": ["policy", "report"]}
    page = saved.content.decode()
    kinds = page.split("<th>release_kinds</th>", 1)[1].split("</tr>", 1)[0]
    assert "policy, report" in kinds
    assert 'class="num own"' in kinds
    # the boxes of the own list come back ticked
    form = page.split('id="policy-form"', 1)[1].split("</form>", 1)[0]
    ticked = [
        kind
        for kind in policy.DOCUMENT_KINDS
        if f'name="release_kinds" value="{kind}"' in form
        and "checked" in form.split(f'name="release_kinds" value="{kind}"', 1)[1].split(">", 1)[0]
    ]
    assert ticked == ["policy", "report"]


@pytest.mark.django_db
def test_the_what_if_preview_takes_the_lists_and_saves_nothing(
    org: Any, person: Callable[..., Any]
) -> None:
    admin = _login(person("zed", Role.ZONE_ADMIN, "G1.U1.P1"))
    ok = admin.post(
        f"/zones/{ZONE}/preview/", {"release_kinds": ["memo"], "release_statuses": ["draft"]}
    )
    assert ok.status_code == 200
    assert "release_kinds" not in ok.content.decode()  # no problem named
    bad = admin.post(f"/zones/{ZONE}/preview/", {"release_kinds": ["tweet"]})
    assert "release_kinds" in bad.content.decode()
    assert not ZonePolicyVersion.objects.exists()
