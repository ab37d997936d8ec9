from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordinates import policy


def test_inheritance_runs_zone_over_planet_over_universe_over_galaxy_over_default() -> None:
    galaxy = {"tau": 0.6, "floor": 0.25}
    planet = {"tau": 0.8}
    zone = {"delta": 0.05}
    values = policy.merge([galaxy, planet, zone])
    assert values.tau == 0.8  # planet overrides galaxy
    assert values.floor == 0.25  # galaxy overrides the default
    assert values.delta == 0.05  # the zone's own
    assert values.refusal_floor == policy.SYSTEM_DEFAULT.refusal_floor  # nobody set it


def test_a_null_override_inherits() -> None:
    assert policy.merge([{"tau": 0.9}, {"tau": None}]).tau == 0.9


def test_sources_name_the_level_each_value_comes_from() -> None:
    origin = policy.sources([("G1", {"tau": 0.6}), ("G1.U1.P1.Z1", {"tau": 0.8, "hops": 2})])
    assert origin["tau"] == "G1.U1.P1.Z1"
    assert origin["hops"] == "G1.U1.P1.Z1"
    assert origin["floor"] == "default"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"tau": 1.5}, "tau"),
        ({"floor": -0.1}, "floor"),
        ({"refusal_floor": 2}, "refusal_floor"),
        ({"review_sla_hours": -1}, "review_sla_hours"),
        ({"review_sla_hours": 0}, "review_sla_hours"),
        ({"approvals_required": 0}, "approvals_required"),
        ({"approvals_required": 1.5}, "approvals_required"),
        ({"tau": "high"}, "tau"),
        ({"tau": True}, "tau"),
        ({"tau": float("nan")}, "tau"),
        ({"gamma": 0}, "gamma"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_each_bad_override_is_named(overrides: dict[str, object], field: str) -> None:
    problems = policy.check_overrides(overrides)
    assert [p.field for p in problems] == [field]


def test_refusal_floor_above_tau_is_refused() -> None:
    problems = policy.check_effective(policy.merge([{"tau": 0.5, "refusal_floor": 0.6}]))
    assert [p.field for p in problems] == ["refusal_floor"]


def test_weights_must_sum_to_one_within_a_millionth() -> None:
    near = policy.merge([{"w1": 0.4 + 5e-7}])
    assert policy.check_effective(near) == []
    off = policy.merge([{"w1": 0.5}])
    assert [p.field for p in policy.check_effective(off)] == ["weights"]


@given(
    st.lists(st.floats(min_value=0, max_value=1), min_size=4, max_size=4).filter(
        lambda ws: sum(ws) > 0
    )
)
def test_any_normalised_weights_are_accepted(weights: list[float]) -> None:
    total = sum(weights)
    w1, w2, w3 = (w / total for w in weights[:3])
    w4 = 1.0 - w1 - w2 - w3
    values = policy.merge([{"w1": w1, "w2": w2, "w3": w3, "w4": max(w4, 0.0)}])
    assert not [p for p in policy.check_effective(values) if p.field == "weights"]


def test_the_system_default_is_itself_valid() -> None:
    assert policy.check_effective(policy.SYSTEM_DEFAULT) == []
    assert policy.check_overrides(policy.SYSTEM_DEFAULT.as_dict()) == []


def test_a_floor_that_makes_auto_unreachable_is_refused() -> None:
    problems = policy.check_effective(policy.merge([{"floor": 0.34}]))
    assert [p.field for p in problems] == ["floor"]
