"""Fuzzing the two parsers every request meets first, on a bounded budget: the strict JSON
parser (maria.parsers) and the coordinate parser (coordinates.coordinate). Whatever they are
fed, they answer with the data or with their own error (a 400 or 413, a CoordinateError),
never anything else, and what they accept reads back as it was written."""

from __future__ import annotations

import contextlib
import io
import json
import math
from typing import Any

import pytest
from django.test import override_settings
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rest_framework.exceptions import ParseError

from coordinates.coordinate import LETTERS, LEVELS, MAX_NUMBER, Coordinate, CoordinateError, parse
from maria.errors import TooLarge
from maria.parsers import MAX_DEPTH, BodyError, StrictJSONParser

# Bounded: each test a few hundred examples, the file within a few seconds; no deadline, so a
# slow shared machine does not fail an example for its time.
BUDGET = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def strict(raw: bytes) -> Any:
    return StrictJSONParser().parse(io.BytesIO(raw))


def values_in(data: Any) -> list[Any]:
    """Every value in parsed JSON, keys included, the containers too."""
    found = [data]
    if isinstance(data, dict):
        for key, item in data.items():
            found += [key, *values_in(item)]
    elif isinstance(data, list):
        for item in data:
            found += values_in(item)
    return found


def depth(data: Any) -> int:
    """How deep the deepest value sits (the document itself at 0), as the parser counts."""
    if isinstance(data, dict):
        return 1 + max((depth(item) for item in data.values()), default=-1) if data else 0
    if isinstance(data, list):
        return 1 + max((depth(item) for item in data), default=-1) if data else 0
    return 0


def clean(data: Any) -> bool:
    """Nothing the parser refuses: no NUL, no lone surrogate, not nested too deep."""

    def fine(text: str) -> bool:
        return "\x00" not in text and not any(0xD800 <= ord(c) <= 0xDFFF for c in text)

    strings = [v for v in values_in(data) if isinstance(v, str)]
    return depth(data) <= MAX_DEPTH and all(fine(s) for s in strings)


def accepted(data: Any) -> None:
    """What the parser returned holds only what JSON means: finite numbers, clean text."""
    for value in values_in(data):
        assert value is None or isinstance(value, bool | int | float | str | list | dict)
        if isinstance(value, float):
            assert math.isfinite(value), value
    assert clean(data)


# --- the strict JSON parser ---------------------------------------------------------------

any_char = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(any_char, max_size=6)
)
documents = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(any_char, max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)
# Nesting around a document, past the limit as often as within it.
nested = st.tuples(documents, st.lists(st.booleans(), max_size=2 * MAX_DEPTH)).map(
    lambda pair: _wrap(*pair)
)
# Number literals JSON's grammar allows, with exponents big enough to overflow a float.
numbers = st.from_regex(
    r"-?(0|[1-9][0-9]{0,3})(\.[0-9]{1,3})?([eE][+-]?[0-9]{1,4})?", fullmatch=True
)
# Token soup: mostly near-valid JSON, to get past the first character.
PUNCTUATION = ["{", "}", "[", "]", ",", ":", " ", '"k"', "true", "null", "NaN"]
ESCAPES = ['"\\u0000"', '"\\ud800"', '"\\udc00\\ud800"']
tokens = st.lists(
    st.sampled_from(PUNCTUATION + ESCAPES)
    | numbers
    | st.text(any_char, max_size=3).map(json.dumps),
    max_size=24,
).map("".join)


def _wrap(data: Any, shapes: list[bool]) -> Any:
    for as_list in shapes:
        data = [data] if as_list else {"k": data}
    return data


def _encode(text: str) -> bytes:
    # Lone surrogates have no UTF-8: written as the bytes a careless client would send.
    return text.encode("utf-8", "surrogatepass")


@BUDGET
@given(st.one_of(documents, nested), st.booleans())
@example({"a": [1, {"b": "x"}]}, False)
@example({"": "\ud800"}, True)
@example(_wrap(0, [True] * (MAX_DEPTH + 1)), True)
def test_json_reads_back_as_written_or_is_refused_with_a_body_error(
    data: Any, ensure_ascii: bool
) -> None:
    raw = _encode(json.dumps(data, ensure_ascii=ensure_ascii))
    if clean(data):
        assert strict(raw) == data
    else:
        with pytest.raises(ParseError):  # BodyError, or invalid UTF-8 (the raw surrogates)
            strict(raw)
        if ensure_ascii:
            with pytest.raises(BodyError):
                strict(raw)


@BUDGET
@given(st.one_of(st.binary(max_size=200), tokens.map(_encode), numbers.map(_encode)))
@example(b"1E400")  # found by this test (shrunk): inf, past the refusal of Infinity
@example(b"[-1E999]")
@example(b"\xef\xbb\xbf{}")
@example(b"[" * 100_000)
@example(b'{"a": 1, "a": 2}')
@example(b"9" * 5_000)
def test_any_bytes_are_parsed_or_refused_with_a_parse_error_never_anything_else(
    raw: bytes,
) -> None:
    try:
        data = strict(raw)
    except ParseError:
        return
    accepted(data)


@BUDGET
@given(st.binary(max_size=120))
def test_a_body_over_the_limit_is_refused_as_too_large_before_it_is_parsed(raw: bytes) -> None:
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=60):
        if len(raw) > 60:
            with pytest.raises(TooLarge):
                strict(raw)
        else:
            with contextlib.suppress(ParseError):
                accepted(strict(raw))


# --- the coordinate parser ----------------------------------------------------------------

coordinates = st.lists(st.integers(1, MAX_NUMBER), min_size=1, max_size=len(LETTERS)).map(
    lambda numbers: Coordinate(tuple(numbers))
)
near_coordinates = st.text(alphabet="GUPZA0123456789.١²１ \n-", max_size=24)


@BUDGET
@given(st.one_of(st.text(any_char, max_size=30), near_coordinates, coordinates.map(str)))
@example("G1.U1.P1.Z1.A1\n")
@example("G1.U01")
@example("G1.U1.P1.Z1.A1.B1")
def test_any_text_is_a_coordinate_spelt_one_way_or_a_coordinate_error(text: str) -> None:
    try:
        coordinate = parse(text)
    except CoordinateError:
        return
    assert str(coordinate) == text  # one spelling: whatever parses is written back as it was
    assert parse(str(coordinate)) == coordinate


@BUDGET
@given(coordinates, st.sampled_from(LEVELS))
def test_every_coordinate_round_trips_and_keeps_its_level(
    coordinate: Coordinate, level: Any
) -> None:
    assert parse(str(coordinate)) == coordinate
    assert parse(str(coordinate), level=coordinate.level) == coordinate
    if level != coordinate.level:
        with pytest.raises(CoordinateError):
            parse(str(coordinate), level=level)


@BUDGET
@given(st.one_of(st.none(), st.integers(), st.binary(max_size=8), st.lists(st.text(max_size=3))))
def test_what_is_not_text_is_a_coordinate_error(value: Any) -> None:
    with pytest.raises(CoordinateError):
        parse(value)
