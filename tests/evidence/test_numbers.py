from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidence.numbers import (
    _DATE_PATTERNS,
    _PLAIN_WORD,
    Quantity,
    _date_patterns_that_may_match,
    extract_numbers,
    numbers_match,
    same_quantity,
)


def only(text: str) -> Quantity:
    found = extract_numbers(text)
    assert len(found) == 1, found
    return found[0]


def same(a: str, b: str) -> bool:
    return same_quantity(only(a), only(b))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("8割", "80%"),
        ("3割5分", "35 percent"),
        ("15パーセント", "15%"),
        ("１２，０００円", "12,000 yen"),
        ("12,000 yen", "1.2万円"),
        ("¥12,000", "JPY 12000"),
        ("three million dollars", "$3,000,000"),
        ("3 million dollars", "USD 3,000,000"),
        ("2.5 billion yen", "25億円"),
        ("250 million yen", "2.5億円"),
        ("1億2000万円", "120,000,000 yen"),
        ("三千円", "3,000 yen"),
        ("千円", "1000円"),
        ("€15,000", "15,000 euros"),
        ("2024年4月1日", "2024-04-01"),
        ("April 1, 2024", "2024/4/1"),
        ("1st of April 2024", "令和6年4月1日"),
        ("one hundred and five days", "105日"),
        ("twelve months", "12か月"),
        ("30 days", "30日以内"),
        ("in 2024", "2024年"),
        ("第5条", "Article 5"),
    ],
)
def test_equal_quantities_written_differently_match(a: str, b: str) -> None:
    assert same(a, b)
    assert same(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("15%", "12%"),
        ("8割", "8%"),
        ("12,000 yen", "$12,000"),
        ("15%", "15 yen"),
        ("30 days", "30 business days"),
        ("2024-04-01", "2024-05-01"),
        ("3 years", "3 months"),
        ("1.2万円", "1.2円"),
    ],
)
def test_different_quantities_do_not_match(a: str, b: str) -> None:
    assert not same(a, b)


def test_a_date_without_a_year_matches_the_full_date() -> None:
    assert same("April 1", "2024年4月1日")


def test_kinds_and_values_are_normalised() -> None:
    assert only("８割") == Quantity(Decimal(80), "percent", None, "8割")
    assert only("1.2万円").value == Decimal(12000)
    assert only("1.2万円").unit == "JPY"
    assert only("2024年4月1日").kind == "date"


@pytest.mark.parametrize(
    "text", ["十分な説明が必要", "一般に", "一部の部署", "万一の場合", "統一基準"]
)
def test_words_containing_kanji_numerals_are_not_numbers(text: str) -> None:
    assert extract_numbers(text) == []


def test_a_unit_word_must_end_where_the_word_ends() -> None:
    assert only("3 timesheets") == Quantity(Decimal(3), "plain", None, "3")


def test_digits_inside_a_date_are_not_read_again() -> None:
    assert [q.kind for q in extract_numbers("On 2024-04-01 the fee was 15%.")] == [
        "date",
        "percent",
    ]


def test_numbers_match_reports_the_missing_claim_quantities() -> None:
    ok, missing = numbers_match(extract_numbers("15% and 30 days"), extract_numbers("30日, 12%"))
    assert not ok
    assert [str(q) for q in missing] == ["15%"]


def test_numbers_match_is_true_with_no_claim_numbers() -> None:
    assert numbers_match([], extract_numbers("12%")) == (True, [])


integers = st.integers(min_value=1, max_value=10**12)


@given(integers)
def test_thousands_separators_round_trip(n: int) -> None:
    assert only(f"{n:,} yen").value == n


@given(integers)
def test_full_width_digits_round_trip(n: int) -> None:
    full_width = f"{n:,}".translate(str.maketrans("0123456789,", "０１２３４５６７８９，"))
    assert only(f"{full_width}円").value == n


@given(st.integers(min_value=1, max_value=9999), st.integers(min_value=0, max_value=9999))
def test_man_form_round_trips(man: int, rest: int) -> None:
    text = f"{man}万{rest}円" if rest else f"{man}万円"
    assert only(text).value == man * 10000 + rest


@given(st.integers(min_value=1, max_value=9999), st.integers(min_value=0, max_value=9999))
def test_oku_man_form_round_trips(oku: int, man: int) -> None:
    text = f"{oku}億{man}万円" if man else f"{oku}億円"
    assert only(text).value == oku * 10**8 + man * 10**4


@given(st.integers(min_value=1, max_value=10), st.integers(min_value=0, max_value=9))
def test_wari_round_trips_to_percent(wari: int, bu: int) -> None:
    text = f"{wari}割{bu}分" if bu else f"{wari}割"
    assert only(text) == Quantity(Decimal(wari * 10 + bu), "percent", None, text)


@pytest.mark.parametrize(
    "text", ["2 percentage points", "2% points", "2pp", "2ポイント", "2%ポイント"]
)
def test_percentage_points_are_their_own_kind(text: str) -> None:
    assert only(text).kind == "points"
    assert not same(text, "2%")
    assert same(text, "2")


@pytest.mark.parametrize("text", ["3 separate copies", "5 decisions", "2 marketing plans"])
def test_a_month_name_must_be_a_whole_word(text: str) -> None:
    assert only(text).kind == "plain"


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("no numbers at all", []),
        ("three million dollars", ["currency"]),
        ("Leave may be taken on 3 May 2024.", ["date"]),
        ("On 2024.4.1 the rate was 3.5%.", ["date", "percent"]),
        ("翌月末日までに5万円を支払う。", ["currency"]),
    ],
)
def test_quick_checks_skip_only_passes_that_cannot_match(text: str, kinds: list[str]) -> None:
    assert [q.kind for q in extract_numbers(text)] == kinds


_DATE_PIECES = st.sampled_from(
    [
        "2024",
        "-",
        "/",
        ".",
        "4",
        "12",
        "月",
        "日",
        "年",
        "令和",
        "may",
        "sept",
        " ",
        "1st",
        "of",
        "april",
        "x",
        "5,000",
        "万",
    ]
)


@given(st.lists(_DATE_PIECES, max_size=12))
def test_the_date_prefilter_never_skips_a_pattern_that_matches(pieces: list[str]) -> None:
    text = "".join(pieces)
    words = frozenset(_PLAIN_WORD.findall(text))
    kept = _date_patterns_that_may_match(text, words)
    assert all(p in kept for p in _DATE_PATTERNS if p.search(text))
