from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidence.approximation import Interval
from evidence.numbers import (
    _DATE_PATTERNS,
    _PLAIN_WORD,
    Quantity,
    _date_patterns_that_may_match,
    compare_numbers,
    extract_numbers,
    numbers_match,
    relation,
    same_quantity,
    without_bounds,
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


# Intervals: what a number asserts, and how a claim's number relates to a paragraph's.


def relation_of(claim: str, paragraph: str) -> str:
    return relation(only(claim), only(paragraph))


@pytest.mark.parametrize(
    ("claim", "paragraph"),
    [
        ("over $181 million", "$181,674,817"),
        ("$181 million", "$181,674,817"),
        ("more than 10 days", "14 days"),
        ("exceeding 5%", "6%"),
        ("above 5%", "5.5%"),
        ("greater than 3", "4"),
        ("under 500,000 yen", "450,000 yen"),
        ("below 10%", "9%"),
        ("less than 5 days", "4 days"),
        ("fewer than 20 people", "15 people"),
        ("up to 30 days", "30 days"),
        ("at most 30 days", "30 days"),
        ("no more than 5%", "5%"),
        ("a maximum of 12 months", "12 months"),
        ("at least 50 licences", "more than 50 licences"),
        ("a minimum of 3 years", "3 years"),
        ("50 or more licences", "50 licences"),
        ("nearly 500 people", "480 people"),
        ("almost $2,000", "$1,900"),
        ("about 30 days", "32 days"),
        ("around 1,000 yen", "1,080 yen"),
        ("roughly 20%", "19%"),
        ("approximately $5 million", "$5,400,000"),
        ("some 200 cases", "190 cases"),
        ("circa 40 hours", "41 hours"),
        ("~500", "520"),
        ("1.2万円", "12,340円"),
        ("約5万円", "52,000円"),
        ("5万円以上", "5万円"),
        ("5万円以下", "5万円まで"),
        ("5万円未満", "49,999円"),
        ("10年超", "12年"),
        ("100万円を超える", "1,500,000円"),
        ("5万円弱", "48,000円"),
        ("5万円強", "52,000円"),
        ("5万円程度", "55,000円"),
        ("5万円ほど", "46,000円"),
        ("5万円くらい", "50,000円"),
        ("5万円ぐらい", "54,000円"),
        ("a third of the staff", "33% of the staff"),
        ("平成30年", "2018年"),
        ("令和元年5月1日", "2019-05-01"),
        ("April 1", "2024年4月1日"),
    ],
)
def test_a_paragraph_figure_inside_the_claimed_interval_is_entailed(
    claim: str, paragraph: str
) -> None:
    assert relation_of(claim, paragraph) == "entails"


@pytest.mark.parametrize(
    ("claim", "paragraph"),
    [
        ("over 500,000 yen", "under 500,000 yen"),
        ("$500", "$600"),
        ("2 days", "3 days"),
        ("$5 million", "$6 million"),
        ("over 10 days", "7 days"),
        ("at least 50 licences", "40 licences"),
        ("nearly 500 people", "300 people"),
        ("about 30 days", "60 days"),
        ("半額", "全額"),
        ("half the cost", "the full cost"),
        ("1/2", "2/1"),
        ("twice the fee", "3 times the fee"),
        ("5万円以上", "3万円"),
        ("10年超", "10年"),
        ("2024-04-01", "April 2, 2024"),
        ("平成30年", "2019年"),
    ],
)
def test_disjoint_intervals_contradict(claim: str, paragraph: str) -> None:
    assert relation_of(claim, paragraph) == "contradicts"
    assert relation_of(paragraph, claim) == "contradicts"


@pytest.mark.parametrize(
    ("claim", "paragraph"),
    [
        ("$181,674,817", "over $181 million"),
        ("over 5 days", "at most 10 days"),
        ("about 100 people", "about 115 people"),
        ("33%", "a third"),
    ],
)
def test_overlap_without_containment_is_compatible(claim: str, paragraph: str) -> None:
    assert relation_of(claim, paragraph) == "compatible"


@pytest.mark.parametrize(
    ("claim", "paragraph"),
    [
        ("15%", "15 yen"),
        ("30 days", "30 business days"),
        ("2 percentage points", "2%"),
        ("×2", "2 times"),
    ],
)
def test_different_kinds_or_units_are_unrelated(claim: str, paragraph: str) -> None:
    claimed = only(claim) if claim != "×2" else only("twice the fee")
    assert relation(claimed, only(paragraph)) == "unrelated"


def test_a_plain_number_relates_to_any_kind_by_value() -> None:
    assert relation_of("15", "15%") == "entails"
    assert relation_of("15", "16%") == "unrelated"
    assert relation_of("30 days", "30%") == "unrelated"


@pytest.mark.parametrize(
    ("claim", "paragraph"),
    [
        ("up to $200 per night", "$150 per night"),
        ("at least 50 licences", "60 licences"),
        ("5万円以下", "48,000円"),
        ("within 30 days", "20 days"),
    ],
)
def test_a_limit_is_not_restated_by_a_figure_inside_it(claim: str, paragraph: str) -> None:
    assert relation_of(claim, paragraph) == "compatible"


def test_a_bare_figure_repeats_the_paragraphs_inclusive_limit() -> None:
    # "30 days" for "within 30 days" is how summaries state a deadline; the bound word dropped
    # is for evidence.grounding's bound check to judge
    assert relation_of("30 days", "within 30 days") == "entails"
    assert relation_of("30 days", "30日以内") == "entails"
    assert relation_of("500,000 yen", "over 500,000 yen") == "contradicts"
    assert relation_of("over 500,000 yen", "500,000 yen") == "contradicts"


@pytest.mark.parametrize(
    ("claim", "paragraph"),
    [
        ("within 60 days", "within 30 days"),
        ("at least 8 characters", "at least 12 characters"),
        ("週5日まで", "週3日まで"),
        ("over 500,000 yen", "more than 400,000 yen"),
    ],
)
def test_two_limits_on_one_side_with_other_figures_contradict(claim: str, paragraph: str) -> None:
    # a rule's limit moved is a misstated rule, though "within 30" lies within "within 60"
    assert relation_of(claim, paragraph) == "contradicts"


def test_inclusive_and_strict_bounds_at_one_figure_entail_for_the_bound_check_to_judge() -> None:
    assert relation_of("100万円超", "100万円以上") == "entails"
    assert relation_of("45時間未満", "45時間以下") == "entails"


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("over $5", "over"),
        ("more than 5 days", "over"),
        ("in excess of 5%", "over"),
        ("under 5 days", "under"),
        ("up to 5 days", "at most"),
        ("not more than 5 days", "at most"),
        ("within 30 days", "at most"),
        ("5 days or less", "at most"),
        ("at least 5 days", "at least"),
        ("not less than 5 days", "at least"),
        ("no fewer than 5 days", "at least"),
        ("longer than 5 days", "over"),
        ("nearly 5 days", "nearly"),
        ("almost 5 days", "nearly"),
        ("about 5 days", "about"),
        ("approximately 5 days", "about"),
        ("約5日", "about"),
        ("5日以上", "at least"),
        ("5以上", "at least"),
        ("5日以下", "at most"),
        ("5日未満", "under"),
        ("5日超", "over"),
        ("5日を超える", "over"),
        ("5万円弱", "nearly"),
        ("5万円強", "slightly over"),
        ("5日程度", "about"),
        ("5日前後", "about"),
        ("5 days", None),
    ],
)
def test_bound_words_are_read_before_and_after_the_number(text: str, bound: str | None) -> None:
    assert only(text).bound == bound


def test_a_range_with_a_tilde_is_not_about_its_upper_end() -> None:
    assert [q.bound for q in extract_numbers("5~10日")] == [None, None]


def test_the_written_precision_sets_the_rounding() -> None:
    assert only("$181 million").asserted == Interval(
        Decimal(180_500_000), Decimal(182_000_000), high_open=True
    )
    assert only("1.2万円").asserted == Interval(Decimal(11_500), Decimal(13_000), high_open=True)
    assert only("$181,674,817").asserted == Interval.point(Decimal(181_674_817))
    assert only("1万2千円").asserted == Interval.point(Decimal(12_000))


def test_about_keeps_the_wider_of_a_tenth_and_the_rounding() -> None:
    assert only("about 200 days").asserted == Interval(Decimal(180), Decimal(220))
    assert only("約1億円").asserted == Interval(Decimal(5 * 10**7), Decimal(2 * 10**8))


def test_the_bound_word_is_shown_with_the_number() -> None:
    assert only("over $181 million").stated == "over 181,000,000 USD"
    assert str(only("over $181 million")) == "181,000,000 USD"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("two and a half million yen", Quantity(Decimal(2_500_000), "currency", "JPY")),
        ("two and a half days", Quantity(Decimal("2.5"), "plain", "day")),
        ("half a day", Quantity(Decimal("0.5"), "plain", "day")),
        ("half a million dollars", Quantity(Decimal(500_000), "currency", "USD")),
        ("a third of the staff", Quantity(Decimal(1) / 3, "fraction")),
        ("one third", Quantity(Decimal(1) / 3, "fraction")),
        ("costs fell by a third.", Quantity(Decimal(1) / 3, "fraction")),
        ("two thirds of the votes", Quantity(Decimal(2) / 3, "fraction")),
        ("a quarter of the budget", Quantity(Decimal("0.25"), "fraction")),
        ("a half", Quantity(Decimal("0.5"), "fraction")),
        ("half of the staff", Quantity(Decimal("0.5"), "fraction")),
        ("half the cost", Quantity(Decimal(50), "percent")),
        ("the full cost", Quantity(Decimal(100), "percent")),
        ("a full refund", Quantity(Decimal(100), "percent")),
        ("the whole amount", Quantity(Decimal(100), "percent")),
        ("半額", Quantity(Decimal(50), "percent")),
        ("全額", Quantity(Decimal(100), "percent")),
        ("twice the fee", Quantity(Decimal(2), "multiplier")),
        ("paid only once.", Quantity(Decimal(1), "multiplier")),
        ("3倍", Quantity(Decimal(3), "multiplier")),
        ("3 times the salary", Quantity(Decimal(3), "multiplier")),
        ("twice a year", Quantity(Decimal(2), "plain", "times")),
        ("a dozen", Quantity(Decimal(12), "plain")),
        ("1/2", Quantity(Decimal("0.5"), "fraction")),
        ("2/1", Quantity(Decimal(2), "fraction")),
        ("平成30年", Quantity(Decimal(2018), "plain")),
        ("8割", Quantity(Decimal(80), "percent")),
        ("1万2千円", Quantity(Decimal(12_000), "currency", "JPY")),
    ],
)
def test_number_words_and_forms_are_read(text: str, expected: Quantity) -> None:
    found = only(text)
    assert (found.value, found.kind, found.unit) == (expected.value, expected.kind, expected.unit)


@pytest.mark.parametrize(("text", "least"), [("dozens of people", 24), ("hundreds of cases", 200)])
def test_plural_scales_are_lower_bounds(text: str, least: int) -> None:
    found = only(text)
    assert (found.value, found.bound) == (least, "at least")


@pytest.mark.parametrize(
    "text",
    ["a third party", "once approved, pay", "the second half of the year", "once a quarter"],
)
def test_fraction_and_multiplier_words_that_qualify_nothing_are_not_fractions(text: str) -> None:
    assert all(q.kind not in ("fraction", "multiplier") for q in extract_numbers(text))


def test_an_era_year_is_the_gregorian_year_not_a_duration() -> None:
    assert only("平成30年").kind == "plain"
    assert only("平成三十年").value == 2018
    assert only("令和元年").value == 2019


def test_compare_numbers_finds_approximations_and_certain_contradictions() -> None:
    paragraph = extract_numbers("Revenue was $181,674,817 in 3 years, and 15% went to fees.")
    claims = extract_numbers("Revenue of over $181 million in 4 years, 12% and 5 days.")
    check = compare_numbers(claims, paragraph)
    assert [str(q) for q in check.found] == ["181,000,000 USD"]
    assert [(str(q), [str(p) for p in ps]) for q, ps in check.contradicted] == [
        ("4 year", ["3 year"]),
        ("12%", ["15%"]),
    ]
    assert [str(q) for q in check.missing] == ["5 day"]
    assert not check.ok


def test_one_compatible_figure_keeps_a_claim_missing_not_contradicted() -> None:
    check = compare_numbers(extract_numbers("5 days"), extract_numbers("3 days or nearly 5 days"))
    assert check.found == ()
    assert check.contradicted == ()


def test_numbers_match_accepts_faithful_approximations() -> None:
    paragraph = extract_numbers("worldwide box office revenue of $181,674,817")
    assert numbers_match(extract_numbers("over $181 million"), paragraph)[0]
    ok, missing = numbers_match(
        extract_numbers("over 500,000 yen"), extract_numbers("under 500,000 yen")
    )
    assert not ok
    assert [str(q) for q in missing] == ["500,000 JPY"]


amounts = st.decimals(min_value=-(10**9), max_value=10**9, places=2, allow_nan=False)
kinds = st.sampled_from(["plain", "percent", "currency", "fraction", "multiplier"])


@given(amounts, kinds)
def test_a_point_entails_itself(value: Decimal, kind: str) -> None:
    point = Quantity(value, kind)  # type: ignore[arg-type]
    assert relation(point, point) == "entails"


@given(amounts, amounts, kinds)
def test_contradiction_between_two_points_is_symmetric(a: Decimal, b: Decimal, kind: str) -> None:
    one, other = Quantity(a, kind), Quantity(b, kind)  # type: ignore[arg-type]
    assert (relation(one, other) == "contradicts") == (relation(other, one) == "contradicts")
    assert (relation(one, other) == "contradicts") == (a != b)


bounds = st.sampled_from(
    ["over", "under", "at most", "at least", "nearly", "about", "slightly over", None]
)
roundings = st.sampled_from([Decimal(0), Decimal(1), Decimal(1000), Decimal("0.1")])


@given(amounts, roundings, bounds, amounts)
def test_an_interval_entails_every_point_inside_it_but_a_limit_only_its_own_figure(
    value: Decimal, rounding: Decimal, bound: str | None, x: Decimal
) -> None:
    claim = Quantity(value, "currency", "USD", rounding=rounding, bound=bound)  # type: ignore[arg-type]
    relation_to_x = relation(claim, Quantity(x, "currency", "USD"))
    if bound in ("at most", "at least") and x != value:
        # a rule's limit ("up to $200") is not restated by a figure inside it ($150)
        assert relation_to_x == ("compatible" if claim.asserted.holds(x) else "contradicts")
    elif claim.asserted.holds(x):
        assert relation_to_x == "entails"


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("guided for sales of $5bn in 2023", Decimal(5 * 10**9), "USD"),
        ("revenue of $181m", Decimal(181 * 10**6), "USD"),
        ("a £2.5bn deal", Decimal(25 * 10**8), "GBP"),
        ("$3.2tn of debt", Decimal(32 * 10**11), "USD"),
        ("a $500k budget", Decimal(500_000), "USD"),
        ("5bn dollars", Decimal(5 * 10**9), "USD"),
    ],
)
def test_scales_written_short_are_read_as_the_press_writes_them(
    text: str, value: Decimal, unit: str
) -> None:
    (found, *_) = extract_numbers(text)
    assert (found.value, found.unit) == (value, unit)


@pytest.mark.parametrize("text", ["a 5m wall", "she ran a 5k race", "plan b"])
def test_a_lone_k_m_or_b_is_no_scale(text: str) -> None:
    assert all(q.value < 10 for q in extract_numbers(text))


def test_short_and_long_scales_agree_and_disagree_as_values_do() -> None:
    assert numbers_match(extract_numbers("sales of $5bn"), extract_numbers("$5 billion"))[0]
    assert not numbers_match(extract_numbers("sales of $5bn"), extract_numbers("$10bn"))[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Orders of no fewer than 50 licences", "orders of 50 licences"),
        ("Passwords need 12 or more characters", "passwords need 12 characters"),
        ("Items of 5,000 yen or less", "items of 5,000 yen"),
        ("Expenses over $500 need approval", "expenses $500 need approval"),
        # not a number's bound: kept
        ("Over the weekend no one works", "over the weekend no one works"),
    ],
)
def test_without_bounds_drops_the_bound_phrases_of_numbers_only(text: str, expected: str) -> None:
    assert without_bounds(text) == expected
