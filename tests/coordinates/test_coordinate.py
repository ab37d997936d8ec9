from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from coordinates.coordinate import Coordinate, CoordinateError, Level, parse, pattern

# An independent oracle: the coordinate grammar (docs/architecture.md) as one regular expression.
N = r"[1-9][0-9]{0,5}"
GRAMMAR = re.compile(rf"G{N}(?:\.U{N}(?:\.P{N}(?:\.Z{N}(?:\.A{N})?)?)?)?", flags=re.ASCII)

numbers = st.integers(min_value=1, max_value=999_999)
valid = st.lists(numbers, min_size=1, max_size=5).map(lambda ns: Coordinate(tuple(ns)))


@given(valid)
def test_every_valid_coordinate_round_trips(coordinate: Coordinate) -> None:
    text = str(coordinate)
    assert parse(text) == coordinate
    assert str(parse(text)) == text
    assert GRAMMAR.fullmatch(text)


@given(st.text(alphabet="GUPZA0123456789.٣１ x-_", max_size=30))
@example("G01")
@example("G1..U2")
@example("G1.U2.P3.Z4.A5.X6")
@example("G1.U2.P3.Z4.A5.G6")
@example(" G1")
@example("G1.P2")
@example("g1")
@example("G１")
@example("G1.U1234567")
@example("")
def test_a_string_parses_exactly_when_the_grammar_accepts_it(text: str) -> None:
    if GRAMMAR.fullmatch(text):
        assert str(parse(text)) == text
    else:
        with pytest.raises(CoordinateError):
            parse(text)


@given(
    st.text(alphabet="GUPZA0123456789.٣１ x-_", max_size=30),
    st.integers(1, 5),
    st.integers(1, 5),
)
@example("G1.U2.P3.Z4", 4, 4)
@example("G1.U2.P3.Z4.A5", 5, 5)
@example("G1.U2.P3", 4, 4)
@example("", 1, 5)
def test_the_documented_pattern_accepts_what_parse_accepts_at_those_levels(
    text: str, shortest: int, longest: int
) -> None:
    shortest, longest = min(shortest, longest), max(shortest, longest)
    try:
        depth = parse(text).depth
    except CoordinateError:
        depth = 0
    documented = re.fullmatch(pattern(shortest=shortest, longest=longest), text)
    assert bool(documented) == (shortest <= depth <= longest)


@given(st.text(max_size=40))
def test_garbage_never_parses(text: str) -> None:
    if not GRAMMAR.fullmatch(text):
        with pytest.raises(CoordinateError):
            parse(text)


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("G1", Level.GALAXY),
        ("G1.U2", Level.UNIVERSE),
        ("G1.U2.P4", Level.PLANET),
        ("G1.U2.P4.Z3", Level.ZONE),
        ("G1.U2.P4.Z3.A9", Level.AGENT),
    ],
)
def test_prefixes_name_their_level(text: str, level: Level) -> None:
    assert parse(text).level == level


def test_a_prefix_covers_everything_beneath_it_and_nothing_beside_it() -> None:
    planet = parse("G1.U2.P4")
    assert planet.covers(parse("G1.U2.P4"))
    assert planet.covers(parse("G1.U2.P4.Z3.A1"))
    assert not planet.covers(parse("G1.U2.P41"))  # a textual prefix is not a coordinate prefix
    assert not planet.covers(parse("G1.U2"))
    assert planet.related(parse("G1.U2"))


def test_lineage_runs_from_galaxy_to_the_coordinate() -> None:
    agent = parse("G1.U2.P4.Z3.A9")
    assert [str(c) for c in agent.lineage()] == [
        "G1",
        "G1.U2",
        "G1.U2.P4",
        "G1.U2.P4.Z3",
        "G1.U2.P4.Z3.A9",
    ]
    assert str(agent.zone()) == "G1.U2.P4.Z3"
    assert str(agent.parent) == "G1.U2.P4.Z3"
    assert parse("G7").parent is None


def test_a_level_can_be_required() -> None:
    assert parse("G1.U1.P1.Z1.A1", level=Level.AGENT).depth == 5
    with pytest.raises(CoordinateError, match=r"is a zone coordinate; expected the agent level"):
        parse("G1.U1.P1.Z1", level=Level.AGENT)


def test_the_error_says_what_is_wrong() -> None:
    with pytest.raises(CoordinateError, match=r"segment 2 .* must start with 'U'"):
        parse("G1.P2")
    with pytest.raises(CoordinateError, match="without leading zeros"):
        parse("G01")
    with pytest.raises(CoordinateError, match="at most 5"):
        parse("G1.U1.P1.Z1.A1.A2")


def test_a_zone_is_its_own_zone_and_a_level_above_has_none() -> None:
    assert parse("G1.U2.P4.Z3").zone() == parse("G1.U2.P4.Z3")
    assert parse("G1.U2.P4.Z3.A9").zone() == parse("G1.U2.P4.Z3")
    with pytest.raises(CoordinateError, match=r"^G1\.U2\.P4 is a planet, not inside a zone$"):
        parse("G1.U2.P4").zone()


def test_every_refusal_names_its_reason() -> None:
    # What a coordinate is built from, as an API error would show it.
    with pytest.raises(CoordinateError, match=r"^a coordinate has 1 to 5 segments$"):
        Coordinate(())
    with pytest.raises(CoordinateError, match=r"^segment numbers run from 1 to 999999$"):
        Coordinate((1, 0))
    with pytest.raises(CoordinateError, match=r"^a coordinate must be a string$"):
        parse(12)  # type: ignore[arg-type]
    with pytest.raises(CoordinateError, match=r"^a coordinate must not be empty$"):
        parse("")
    # A long wrong segment is quoted cut short, so an error never echoes a whole payload.
    with pytest.raises(CoordinateError, match=r"must start with 'U' \(universe\), got 'X1234567'$"):
        parse("G1.X123456789")
    with pytest.raises(
        CoordinateError,
        match=r"^segment 'U01234567890' of 'G1\.U0123456789012' needs a number from 1 to "
        r"999999 without leading zeros$",
    ):
        parse("G1.U0123456789012")
    with pytest.raises(ValueError, match=r"^1 <= shortest <= longest <= 5$"):
        pattern(shortest=3, longest=2)


def test_the_pattern_is_the_grammar_written_out() -> None:
    segment = "[1-9][0-9]{0,5}"
    assert pattern(shortest=1, longest=3) == (rf"^G{segment}(\.U{segment}(\.P{segment})?)?$")
    assert pattern(shortest=2, longest=2) == rf"^G{segment}\.U{segment}$"


def test_by_default_the_pattern_reads_every_level_and_a_child_is_one_level_down() -> None:
    assert re.fullmatch(pattern(), "G1")
    assert re.fullmatch(pattern(), "G1.U2.P3.Z4.A5")
    assert Coordinate.parse("G1.U2").child(7) == parse("G1.U2.P7")
