"""Quantities in English and Japanese text, normalised so a claim's numbers can be found in
a paragraph however they are written (１２，０００円 = 12,000 yen = 1.2万円, 8割 = 80%), each with
the interval it asserts ("over $181 million", 約5万円), and compared by those intervals."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache
from typing import Literal

import kanjize
from text_to_num import alpha2digit, text2num

from evidence.approximation import Bound, Interval, asserted
from evidence.text import normalise

# "points": percentage points, the difference of two percentages (10% -> 12% is +2 points, not
# +2%); a claim must not turn one into the other.
# "fraction": a ratio (a third = 1/3), compared with percentages on their scale. "multiplier":
# a factor (twice, 3倍), not a count of times ("twice a year" is 2 "times").
QuantityKind = Literal[
    "plain", "percent", "points", "currency", "date", "ordinal", "fraction", "multiplier"
]
Relation = Literal["entails", "contradicts", "compatible", "unrelated"]


@dataclass(frozen=True)
class Quantity:
    """A number as the text states it: value, what kind of number, unit or currency."""

    value: Decimal
    kind: QuantityKind = "plain"
    # ISO currency code for kind "currency"; a unit (day, year, person, 条...) otherwise.
    unit: str | None = None
    surface: str = ""
    # The precision the value is written to ("$181 million": 1,000,000; 0 when written in full)
    # and the bound word put on it; together they give the interval it asserts.
    rounding: Decimal = Decimal(0)
    bound: Bound | None = None

    @property
    def asserted(self) -> Interval:
        """The values this statement allows (evidence.approximation.asserted)."""
        if self.kind in ("date", "ordinal"):
            return Interval.point(self.value)
        return asserted(self.value, self.rounding, self.bound)

    @property
    def stated(self) -> str:
        """As str(), with the bound word: "over 181,000,000 USD"."""
        return f"{self.bound} {self}" if self.bound else str(self)

    def __str__(self) -> str:
        if self.kind == "date":
            return _format_date(self.value)
        if self.kind == "fraction":
            return str(Fraction(self.value).limit_denominator(1000))
        if self.kind == "multiplier":
            return f"×{self.value.normalize():f}"
        value = self.value.normalize()
        number = f"{value:,f}" if abs(value) >= 10000 else f"{value:f}"
        if self.kind == "percent":
            return f"{number}%"
        if self.kind == "points":
            return f"{number} percentage points"
        if self.kind == "currency":
            return f"{number} {self.unit}"
        if self.kind == "ordinal":
            return f"#{number}" + (f" ({self.unit})" if self.unit else "")
        return f"{number} {self.unit}" if self.unit else number


def _format_date(value: Decimal) -> str:
    return "-".join(f"{part:02d}" if part else "?" for part in _date_parts(value))


_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
# A month is a whole word: "3 separate copies" and "5 decisions" are not dates.
_MONTH = "(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?"
# Japanese eras still used in contracts: year N of the era is base + N (元年 is year 1). Era
# years are rewritten as Gregorian ones before anything else reads the text (平成30年 = 2018年).
_ERAS = {"令和": 2018, "平成": 1988, "昭和": 1925}
ERAS = tuple(_ERAS)  # the era names a year may be written in (令和7年 is 2025年)
_ERA_YEAR = re.compile(r"(令和|平成|昭和)\s*(元|\d{1,2}|[一二三四五六七八九十]{1,3})\s*年")

_DATE_PATTERNS = [
    re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)"),
    re.compile(r"(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月(?:\s*(?P<d>\d{1,2})\s*日)?"),
    re.compile(r"(?<![\d年])(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*日"),
    re.compile(rf"\b{_MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s*(?P<y>\d{{4}})\b)?"),
    re.compile(
        rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s*(?P<y>\d{{4}})\b)?"
    ),
    re.compile(rf"\b{_MONTH}\s+(?P<y>\d{{4}})\b"),
]

# What the numeric pattern needs, without its look-behind: a plain scan for it is quick.
_NUMERIC_DATE_HINT = re.compile(r"\d{4}[-/.]\d")

_KANJI_DIGITS = "〇一二三四五六七八九十百千万億兆"
_CURRENCY_WORDS = {
    "$": "USD",
    "us$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "ドル": "USD",
    "米ドル": "USD",
    "¥": "JPY",
    "jpy": "JPY",
    "yen": "JPY",
    "円": "JPY",
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "ユーロ": "EUR",
    "£": "GBP",
    "gbp": "GBP",
    "pounds": "GBP",
}
_UNITS = {
    "business day": "business_day",
    "business days": "business_day",
    "営業日": "business_day",
    "day": "day",
    "days": "day",
    "calendar days": "day",
    "日": "day",
    "日間": "day",
    "week": "week",
    "weeks": "week",
    "週": "week",
    "週間": "week",
    "month": "month",
    "months": "month",
    "か月": "month",
    "ヶ月": "month",
    "カ月": "month",
    "ケ月": "month",
    "箇月": "month",
    "year": "year",
    "years": "year",
    "年": "year",
    "年間": "year",
    "hour": "hour",
    "hours": "hour",
    "時間": "hour",
    "minute": "minute",
    "minutes": "minute",
    "分": "minute",
    "person": "person",
    "persons": "person",
    "people": "person",
    "名": "person",
    "人": "person",
    "times": "times",
    "倍": "倍",  # a multiplier (Quantity kind), not a unit
    "回": "times",
    "件": "case",
    "cases": "case",
    "歳": "age",
}
_PERCENT_WORDS = ("%", "percent", "per cent", "パーセント")
_POINT_WORDS = (
    "percentage point",
    "percentage points",
    "percentage-point",
    "percentage-points",
    "% point",
    "% points",
    "pp",
    "p.p.",
    "ポイント",
    "%ポイント",
)
_SCALES = {
    "thousand": 1000,
    "million": 1_000_000,
    "billion": 1_000_000_000,
    "trillion": 1_000_000_000_000,
}


def _alternation(words: Iterable[str]) -> str:
    # An English word must end there ("5 yen", not the "times" in "3 timesheets").
    return "|".join(
        re.escape(w) + ("(?![a-z])" if w[-1].isascii() and w[-1].isalpha() else "")
        for w in sorted(words, key=len, reverse=True)
    )


_NUMBER = re.compile(
    # What a match can start with, checked first: without it every position of a long text
    # would try the whole pattern. It only says what the pattern already implies.
    rf"(?=[第$¥€£uje\d{_KANJI_DIGITS}]|\s+[\d{_KANJI_DIGITS}])"
    rf"(?P<ord>第\s*)?"
    rf"(?P<pre>us\$|\$|¥|€|£|usd|jpy|eur)?\s*"
    rf"(?<![\d.,])(?P<num>\d[\d,]*(?:\.\d+)?(?:e\d{{1,2}}(?!\d))?"
    rf"(?:[{_KANJI_DIGITS}][\d.,{_KANJI_DIGITS}]*)?"
    rf"|[{_KANJI_DIGITS}][\d.,{_KANJI_DIGITS}]*)"
    rf"(?:\s*(?P<scale>{_alternation(_SCALES)})\b)?"
    rf"(?P<suffix>(?:st|nd|rd|th)(?![a-z]))?"
    rf"(?:\s*(?P<割>割)(?:(?P<分>\d|[一二三四五六七八九])分)?(?:(?P<厘>\d|[一二三四五六七八九])厘)?"
    # Points before percent: "2% points" is a difference of points, not 2%.
    rf"|\s*(?P<pts>{_alternation(_POINT_WORDS)})"
    rf"|\s*(?P<pct>{_alternation(_PERCENT_WORDS)})"
    rf"|\s*(?P<cur>{_alternation(w for w in _CURRENCY_WORDS if w not in '$¥€£')})"
    rf"|\s*(?P<unit>{_alternation(_UNITS)})"
    rf"|\s*(?P<counter>条|項|号|章|節|社|台|個|枚|部門|以上|以下|未満|超|まで|を超"
    # Japanese counters of things and animals (二階建て, 一頭, 四つ): a kanji numeral before
    # one is a number as its digits are.
    rf"|階|頭|匹|羽|本|冊|機|隻|つ))?"
)
_DIGITS_AND_SCALE = re.compile(rf"(\d[\d,]*(?:\.\d+)?)\s*({_alternation(_SCALES)})\b")
_NUMBER_WORD_LIST = """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety hundred thousand million billion third fourth fifth tenth
"""
_NUMBER_WORDS = frozenset(_NUMBER_WORD_LIST.split())
NUMBER_WORDS = _NUMBER_WORDS  # the English number words, for checks that skip them as terms
# Whole words of a-z only (as `\bword\b` would find them): a set lookup per word is cheaper
# than one alternation tried at every position.
_PLAIN_WORD = re.compile(r"\b[a-z]+\b")
_NUMERAL = re.compile(rf"[\d{_KANJI_DIGITS}]")
# Words that hold a kanji numeral but are not numbers: 十分 (enough), 一部 (part), 万一 (just
# in case), 数百 (several hundred: no definite value).
_NOT_NUMBERS = (
    "十分",
    "一本化",
    "万一",
    "一般",
    "一部",
    "一定",
    "一度",
    "一時",
    "一方",
    "同一",
    "第三者",
    "唯一",
    "統一",
)


# Spoken forms text2num does not read, rewritten as digits first: "two and a half" (2.5),
# "half a million" (0.5 million), "a dozen" (12), "hundreds of" (at least 200: plural
# "hundreds" means two hundred or more).
_SPOKEN_WORDS = frozenset(
    {"half", "dozen", "dozens", "hundreds", "thousands", "millions", "billions"}
)
_WORD_NUMBER = rf"(?:(?:{'|'.join(_NUMBER_WORD_LIST.split()[:29])})[\s-]*)+"
_AND_A_HALF = re.compile(rf"\b(\d[\d,]*(?:\.\d+)?|{_WORD_NUMBER})\s+and\s+a\s+half\b")
_HALF_A = re.compile(r"\bhalf[\s-]+(?:an?\s+|(?=(?:day|hour|week|month|year)s?\b))")
_DOZEN = re.compile(rf"\b(an?|\d+(?:\.\d+)?|{_WORD_NUMBER})\s+dozen\b")
_MANY = re.compile(
    r"\b(dozens|hundreds|thousands|millions|billions)(?:\s+of\s+(thousands|millions|billions))?"
    r"\s+of\b"
)
_MANY_LEAST = {
    "dozens": 24,
    "hundreds": 200,
    "thousands": 2000,
    "millions": 2 * 10**6,
    "billions": 2 * 10**9,
}
_MANY_OF = {"thousands": 1000, "millions": 10**6, "billions": 10**9}

# Ratios and factors written as words. Each must qualify something to be a number: "a third
# party", "the second half of the year", "once approved" and "full name" are not.
# Not "payment": "on full payment" names the moment the price is paid, not a share of it.
_AMOUNT = (
    r"(?:costs?|amounts?|fees?|prices?|refunds?|salary|salaries|sums?|balance|"
    r"premiums?|deposits?|charges?|expenses?|reimbursements?|wages?|rent|budget)\b"
)
_DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4}
_DENOMINATORS |= {"fourth": 4, "fourths": 4, "fifth": 5, "fifths": 5, "tenth": 10, "tenths": 10}
_NUMERATORS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_WORD_QUANTITY = re.compile(
    # "full" / "whole" and 全額 are all of an amount; "half the cost" and 半額 half of it.
    rf"(?P<full>\b(?:full|whole|entire)(?=\s+{_AMOUNT})|\bin full\b|全額)"
    rf"|(?P<half_amount>\bhalf(?=\s+(?:of\s+)?(?:the\s+|its\s+|their\s+|your\s+|our\s+)?{_AMOUNT})"
    r"|半額)"
    r"|(?<!first )(?<!second )(?<!other )(?<!latter )(?<!the )"
    r"(?P<half>\b(?:(?:a|one)\s+)?half(?=\s+of\b|\s+(?:the|its|their|all)\b)|\b(?:a|one)\s+half\b)"
    r"|\b(?P<n>a|an|one|two|three|four|five|[1-9])[\s-]+"
    r"(?P<d>thirds?|quarters?|fourths?|fifths?|tenths?|halves)\b"
    r"|(?<![\d/.,])(?P<fn>\d{1,3})/(?P<fd>\d{1,3})(?![\d/])"
    r"|\b(?P<times>once|twice|thrice)\b"
)
# The word every form above holds: the full pattern is tried only around one (trying it at
# every position of a paragraph cost more than the rest of the extraction).
_WORD_QUANTITY_HINT = re.compile(
    r"full|whole|entire|half|halves|third|quarter|fourth|fifth|tenth|once|twice|thrice|\d/\d|額"
)
_WORD_QUANTITY_TRIGGERS = frozenset(
    {"full", "whole", "entire", "half", "halves", "once", "twice", "thrice"} | set(_DENOMINATORS)
)
# "a third party", "a fifth reminder", "a quarter" (three months) are not fractions: a
# fraction word after "a" is one when "of" or the clause's end follows it, any other when no
# noun does.
_OF_AFTER = re.compile(r"\s+of\b|\s*(?:[.,;:)]|$)")
_NOUN_AFTER = re.compile(r"[\s-]+(?:part|day|week|month|year|time|round|reminder|quarter)")
# "twice a year" counts occurrences (2 "times"); "twice the fee" is a factor.
_FREQUENCY_AFTER = re.compile(r"\s+(?:a|an|per|every|each|daily|weekly|monthly|yearly|annually)\b")
# "once" is a conjunction ("once approved, ...") unless it ends the clause or is counted.
_ONCE_AFTER = re.compile(r"\s*(?:[.,;:)]|$|only\b)")
_ONCE_BEFORE = re.compile(r"\b(?:only|just|exactly|than|most|least)\s+$")


def extract_numbers(text: str) -> list[Quantity]:
    """Every quantity in the text, normalised (value, kind, unit / currency, interval)."""
    return list(_extract(text))


@lru_cache(maxsize=32768)
def _extract(text: str) -> tuple[Quantity, ...]:
    folded = normalise(text)
    if "年" in folded and _ERA_YEAR.search(folded):
        folded = _ERA_YEAR.sub(_gregorian_year, folded)
    words = frozenset(_PLAIN_WORD.findall(folded))
    if not _SPOKEN_WORDS.isdisjoint(words):
        folded = _spoken_as_digits(folded, words)
    found: list[Quantity] = []
    if not _WORD_QUANTITY_TRIGGERS.isdisjoint(words) or "/" in folded or "額" in folded:
        folded = _take_word_quantities(folded, found)
    has_numeral = _NUMERAL.search(folded) is not None
    # Every scale word but "thousand" ends in "illion": a substring test skips the pass.
    if has_numeral and ("illion" in folded or "thousand" in folded):
        folded = _DIGITS_AND_SCALE.sub(_expand_scale, folded)
    if has_numeral and _SHORT_SCALE_HINT.search(folded):
        folded = _SHORT_SCALE.sub(_expand_short_scale, folded)
    words = frozenset(_PLAIN_WORD.findall(folded))
    if not _NUMBER_WORDS.isdisjoint(words):
        # text2num turns "one hundred and five" / "three million" into digits; lone "one"
        # and "first" / "second" are left alone (too often not numbers at all).
        folded = alpha2digit(folded, "en")
        has_numeral = _NUMERAL.search(folded) is not None
        words = frozenset(_PLAIN_WORD.findall(folded))
    if not has_numeral:
        return tuple(found)
    folded = _take_dates(folded, found, words)
    for match in _NUMBER.finditer(folded):
        quantity = _quantity(match, folded)
        if quantity is not None:
            found.append(quantity)
    return tuple(found)


def _gregorian_year(match: re.Match[str]) -> str:
    era, year = match.group(1), match.group(2)
    number = 1 if year == "元" else int(year) if year.isdigit() else kanjize.kanji2number(year)
    return f"{_ERAS[era] + number}年"


# Scales written short, as the financial press does: "$5bn", "£2.5bn", "30mn", "$3.2tn";
# "k", "m" and "b" only right after a currency sign ("$181m"), since "5m" alone is metres
# and "5k" a race.
_SHORT_SCALES = {"k": 3, "m": 6, "mn": 6, "b": 9, "bn": 9, "tn": 12}
_SHORT_SCALE = re.compile(
    r"(?P<sign>[$£€¥])?(?P<digits>\d[\d,]*(?:\.\d+)?)\s?(?P<scale>bn|mn|tn|k|m|b)\b"
)
_SHORT_SCALE_HINT = re.compile(r"\d\s?(?:bn|mn|tn|k|m|b)\b")


def _expand_short_scale(match: re.Match[str]) -> str:
    sign, scale = match.group("sign") or "", match.group("scale")
    if scale in ("k", "m", "b") and not sign:
        return match.group(0)
    return f"{sign}{match.group('digits').replace(',', '')}e{_SHORT_SCALES[scale]}"


def _expand_scale(match: re.Match[str]) -> str:
    # "181 million" -> "181e6": the value, and the precision it is written to (the million),
    # in a form text2num leaves alone and the number pattern reads.
    digits = match.group(1).replace(",", "")
    return f"{digits}e{len(str(_SCALES[match.group(2)])) - 1}"


def _spoken_as_digits(text: str, words: frozenset[str]) -> str:
    # Each pass only where its word is in the text: each is a scan of the whole text.
    if "and a half" in text:
        text = _AND_A_HALF.sub(lambda m: _digits(_word_value(m.group(1)) + Decimal("0.5")), text)
    if "half" in words:
        text = _HALF_A.sub("0.5 ", text)
    if "dozen" in words:
        text = _DOZEN.sub(lambda m: _digits(_word_value(m.group(1)) * 12), text)
    if not _MANY_LEAST.keys().isdisjoint(words):
        text = _MANY.sub(_at_least_many, text)
    return text


def _at_least_many(match: re.Match[str]) -> str:
    least = _MANY_LEAST[match.group(1)] * _MANY_OF.get(match.group(2) or "", 1)
    return f"at least {least}"


def _word_value(words: str) -> Decimal:
    words = words.strip().replace(",", "")
    if words in ("a", "an"):
        return Decimal(1)
    if words[0].isdigit():
        return Decimal(words)
    return Decimal(text2num(words.replace("-", " "), "en"))


def _digits(value: Decimal) -> str:
    return f"{value.normalize():f}"


def _counts_once(text: str, start: int, end: int) -> bool:
    before = _ONCE_BEFORE.search(text, max(0, start - 10), start)
    return before is not None or _ONCE_AFTER.match(text, end) is not None


def _take_word_quantities(text: str, found: list[Quantity]) -> str:
    pieces: list[str] = []
    last = 0
    for hint in _WORD_QUANTITY_HINT.finditer(text):
        # The longest form starts 6 characters before its word ("three thirds") and looks
        # up to some 40 after it ("half of their reimbursements").
        match = _WORD_QUANTITY.search(text, max(last, hint.start() - 8), hint.end() + 40)
        if match is None or not match.start() <= hint.start() < match.end():
            continue
        quantity = _word_quantity(match, text)
        if quantity is not None:
            found.append(quantity)
            # Blanked out, so their digits ("1/2") and words ("third") are not read again.
            pieces += [text[last : match.start()], " " * len(match.group())]
            last = match.end()
    return "".join(pieces) + text[last:] if pieces else text


def _word_quantity(match: re.Match[str], text: str) -> Quantity | None:
    surface = match.group()
    kind: QuantityKind
    rounding = Decimal(0)
    unit = None
    if match.group("full"):
        kind, value = "percent", Decimal(100)
    elif match.group("half_amount"):
        kind, value = "percent", Decimal(50)
    elif match.group("half"):
        kind, value = "fraction", Decimal("0.5")
    elif match.group("d") or match.group("fn"):
        if match.group("d"):
            qualifies = _OF_AFTER.match(text, match.end())
            if match.group("d")[0] == "q" and not (qualifies and qualifies.group().strip()):
                return None  # "once a quarter" is the calendar's
            if not qualifies and match.group("n") in ("a", "an"):
                return None
            if not qualifies and _NOUN_AFTER.match(text, match.end()):
                return None
            numerator = _NUMERATORS.get(match.group("n")) or int(match.group("n"))
            denominator = _DENOMINATORS[match.group("d")]
        else:
            numerator, denominator = int(match.group("fn")), int(match.group("fd"))
        if not denominator:
            return None
        kind, value = "fraction", Decimal(numerator) / Decimal(denominator)
        if Fraction(numerator, denominator).denominator not in (1, 2, 4, 5, 8, 10, 20, 25, 50):
            # A third is 33.3...%: as exact as "33%" written to a whole percent, no more.
            rounding = Decimal("0.01")
    else:
        value = Decimal(("once", "twice", "thrice").index(match.group("times")) + 1)
        if _FREQUENCY_AFTER.match(text, match.end()):
            kind, unit = "plain", "times"
        elif match.group("times") != "once" or _counts_once(text, match.start(), match.end()):
            kind = "multiplier"
        else:
            return None
    bound = _bound_around(text, match.start(), match.end())
    return Quantity(value, kind, unit, surface, rounding, bound)


def _take_dates(text: str, found: list[Quantity], words: frozenset[str]) -> str:
    for pattern in _date_patterns_that_may_match(text, words):
        matches = list(pattern.finditer(text))
        for match in matches:
            parts = match.groupdict()
            year = int(parts["y"]) if parts.get("y") else 0
            month = int(parts["m"]) if parts.get("m") else _MONTHS[parts["mon"]]
            day = int(parts["d"]) if parts.get("d") else 0
            if not (1 <= month <= 12 and day <= 31):
                continue
            value = Decimal(year * 10000 + month * 100 + day)
            found.append(Quantity(value, "date", None, match.group()))
        if matches:
            # Blank the dates out so their digits are not read again as plain numbers.
            text = pattern.sub(lambda m: " " * len(m.group()), text)
    return text


def _date_patterns_that_may_match(text: str, words: frozenset[str]) -> list[re.Pattern[str]]:
    """The date patterns, in order, less those whose tell-tale the text lacks (most texts hold
    no date, and six full scans of a paragraph cost more than the rest of the extraction)."""
    numeric, japanese_year, japanese_day, english_day, english_month, english_year = _DATE_PATTERNS
    patterns = []
    if _NUMERIC_DATE_HINT.search(text):
        patterns.append(numeric)
    if "月" in text:
        patterns += [japanese_year, japanese_day]
    if any(_month_by_a_number(month).search(text) for month in words & _MONTHS.keys()):
        patterns += [english_day, english_month, english_year]
    return patterns


@lru_cache(maxsize=64)
def _month_by_a_number(month: str) -> re.Pattern[str]:
    # What the English patterns need around a month: a number after it ("april 1", "may
    # 2024") or before it ("1st of april"). "may" is mostly the verb, and this spares it the
    # three full scans.
    return re.compile(rf"\b{month}\b\.?\s+\d|\d(?:st|nd|rd|th)?\s+(?:of\s+)?{month}\b")


def _quantity(match: re.Match[str], text: str) -> Quantity | None:
    surface = match.group()
    raw = match.group("num")
    value = _parse_number(raw)
    if value is None:
        return None
    is_kanji_only = not any(c.isdigit() for c in raw)
    if is_kanji_only and _is_not_a_number(raw, match, text):
        return None
    if match.group("scale"):
        value *= _SCALES[match.group("scale")]
    kind, unit = _kind_and_unit(match, value, text)
    if match.group("割"):
        tenths = [match.group("分"), match.group("厘")]
        value = value * 10 + sum(
            (Decimal(_digit(t)) / 10**i for i, t in enumerate(tenths) if t), Decimal(0)
        )
    if kind in ("ordinal", "date"):
        return Quantity(value, kind, unit, surface)
    # A bound word may stand where the counter is ("5以上"); it is read as a bound from there.
    end = match.start("counter") if match.group("counter") else match.end()
    bound = _bound_around(text, match.start(), end)
    return Quantity(value, kind, unit, surface, _rounding(raw), bound)


def _kind_and_unit(
    match: re.Match[str], value: Decimal, text: str
) -> tuple[QuantityKind, str | None]:
    if match.group("割"):
        return "percent", None
    if match.group("pts"):
        return "points", None
    if match.group("pct"):
        return "percent", None
    currency = match.group("pre") or match.group("cur")
    if currency:
        return "currency", _CURRENCY_WORDS[currency]
    if match.group("ord"):
        counter = match.group("counter")
        return "ordinal", None if counter in _BOUND_WORDS else counter
    if match.group("suffix"):
        return "ordinal", None
    unit = match.group("unit")
    if not unit:
        return "plain", None
    if unit == "年" and value >= 1900:
        # 2024年 is the year 2024, as "in 2024" would say; 3年 is a duration.
        return "plain", None
    if unit == "倍" or (unit == "times" and _FACTOR_AFTER.match(text, match.end())):
        return "multiplier", None
    return "plain", _UNITS[unit]


# "3 times the fee" is a factor; "3 times a year" a count.
_FACTOR_AFTER = re.compile(r"\s+(?:the|as|that|more|less|higher|greater|larger|its|their)\b")

# Bound words and what each says of the true value x against the stated v. The widths of the
# approximate ones are evidence.approximation's.
_BOUND_WORDS: dict[str, Bound] = {
    # x > v
    "over": "over",
    "more than": "over",
    "exceeding": "over",
    "in excess of": "over",
    "above": "over",
    "greater than": "over",
    "upwards of": "over",
    "longer than": "over",
    "超": "over",
    "超え": "over",
    "超える": "over",
    "を超え": "over",
    "を超える": "over",
    "を超": "over",
    "超過": "over",
    "を上回る": "over",
    # x < v
    "under": "under",
    "below": "under",
    "less than": "under",
    "fewer than": "under",
    "shorter than": "under",
    "未満": "under",
    "を下回る": "under",
    # x <= v: "within 30 days" and 30日以内 allow any time up to the 30th day.
    "up to": "at most",
    "at most": "at most",
    "no more than": "at most",
    "not more than": "at most",
    "not exceeding": "at most",
    "no longer than": "at most",
    "no later than": "at most",
    "a maximum of": "at most",
    "maximum of": "at most",
    "within": "at most",
    "or less": "at most",
    "or fewer": "at most",
    "or below": "at most",
    "or under": "at most",
    "最大": "at most",
    "以下": "at most",
    "以内": "at most",
    "まで": "at most",
    # x >= v
    "at least": "at least",
    "no less than": "at least",
    "no fewer than": "at least",
    "not fewer than": "at least",
    "not less than": "at least",
    "a minimum of": "at least",
    "minimum of": "at least",
    "or more": "at least",
    "or above": "at least",
    "or greater": "at least",
    "or over": "at least",
    "少なくとも": "at least",
    "最低": "at least",
    "以上": "at least",
    # a little under / over v
    "nearly": "nearly",
    "almost": "nearly",
    "just under": "nearly",
    "弱": "nearly",
    "just over": "slightly over",
    "強": "slightly over",
    # about v
    "about": "about",
    "around": "about",
    "roughly": "about",
    "approximately": "about",
    "approx.": "about",
    "some": "about",
    "circa": "about",
    "~": "about",
    "約": "about",
    "およそ": "about",
    "ほぼ": "about",
    "程度": "about",
    "ほど": "about",
    "くらい": "about",
    "ぐらい": "about",
    "前後": "about",
}
_JA_BOUNDS_BEFORE = ("約", "およそ", "ほぼ", "最大", "最低", "少なくとも")
_EN_BOUNDS_BEFORE = [w for w in _BOUND_WORDS if w.isascii() and w[:3] != "or " and w != "~"]
_BOUND_BEFORE = re.compile(
    rf"(?:\b(?:{_alternation(_EN_BOUNDS_BEFORE)})"
    rf"|{_alternation(_JA_BOUNDS_BEFORE)}"
    # "~5" is about 5; "5~10" is a range, not "about 10".
    r"|(?<![^\s(])~)(?=\s*$)"
)
_BOUND_AFTER = re.compile(
    rf"\s*({_alternation(w for w in _BOUND_WORDS if w[:3] == 'or ')}"
    rf"|{_alternation(w for w in _BOUND_WORDS if not w.isascii() and w not in _JA_BOUNDS_BEFORE)})"
)


# An English bound phrase with its number: before it ("no fewer than 50", "over $5") or after
# the number and its word ("12 or more", "5,000 yen or less").
_EN_BOUND_PHRASE = re.compile(
    rf"\b(?:{_alternation(w for w in _EN_BOUNDS_BEFORE if w != 'approx.')})\s+"
    rf"(?=[$£€¥]?\s?(?:\d|(?:{_alternation(NUMBER_WORDS)})))"
    rf"|(?<=\d)((?:\s+[a-z%]+)?)\s+(?:{_alternation(w for w in _BOUND_WORDS if w[:3] == 'or ')})"
)


def without_bounds(text: str) -> str:
    """The text without the English bound phrases of its numbers ("no fewer than 50 licences"
    -> "50 licences", "12 or more characters" -> "12 characters"). The number comparison
    checks a bound (`numbers_match`, by interval); a word check that read "no", "fewer" or
    "more" in them would ask for the span's very words, or see a negation."""
    folded = normalise(text)
    return _EN_BOUND_PHRASE.sub(lambda m: m.group(1) or "", folded)


def _bound_around(text: str, start: int, end: int) -> Bound | None:
    """The bound word just after the number (5万円以下, "50 or more") or else just before it
    ("over $5", 約5万円)."""
    after = _BOUND_AFTER.match(text, end)
    if after:
        return _BOUND_WORDS[after.group(1)]
    before = _BOUND_BEFORE.search(text, max(0, start - 16), start)
    return _BOUND_WORDS[before.group()] if before else None


def _rounding(raw: str) -> Decimal:
    """The precision a number is written to, if it ends in a scale: 181e6 (181 million) and
    5万 are to the million and the 10,000; 1.2万 to the 1,000. Digits in full are exact."""
    raw = raw.replace(",", "")
    if "e" in raw:
        mantissa, exponent = raw.split("e")
        return Decimal(10) ** (int(exponent) - _decimals(mantissa))
    scale = raw[-1:]
    if scale in _KANJI_SCALES:
        # The digits before the last scale (2000 in 1億2000万) set its precision.
        before = re.split(f"[{''.join(_KANJI_SCALES)}]", raw[:-1])[-1]
        return _KANJI_SCALES[scale] * Decimal(10) ** -_decimals(before)
    return Decimal(0)


_KANJI_SCALES = {"万": Decimal(10**4), "億": Decimal(10**8), "兆": Decimal(10**12)}


def _decimals(digits: str) -> int:
    return len(digits.split(".")[1]) if "." in digits else 0


def _is_not_a_number(raw: str, match: re.Match[str], text: str) -> bool:
    window = text[max(0, match.start("num") - 1) : match.end("num") + 1]
    if any(word in window for word in _NOT_NUMBERS) or text[: match.start("num")].endswith("数"):
        return True
    # A lone kanji numeral (一, 二) is part of a word unless a counter, unit or currency
    # follows it (一人, 三日, 五割) or 第 precedes it.
    has_context = any(match.group(g) for g in ("割", "pts", "pct", "cur", "unit", "counter", "ord"))
    return len(raw) == 1 and not has_context


def _digit(text: str) -> int:
    return int(text) if text.isdigit() else _KANJI_DIGITS.index(text)


def _parse_number(raw: str) -> Decimal | None:
    raw = raw.replace(",", "").rstrip(".")
    if not raw:
        return None
    try:
        if raw.replace(".", "", 1).replace("e", "", 1).isdigit():
            return Decimal(raw)
        # 三千, 1万, 2.5億, 1億2000万: kanjize reads Japanese numerals and multipliers.
        return Decimal(kanjize.kanji2number(raw))
    except (ValueError, InvalidOperation, KeyError, IndexError):
        return None


def same_quantity(a: Quantity, b: Quantity) -> bool:
    """Equal values, and equal kinds / units wherever both state one ("plain" states none),
    whatever bound either puts on its value ("30 days" = 30日以内)."""
    if a.kind == "date" or b.kind == "date":
        return a.kind == b.kind and _same_date(a.value, b.value)
    if a.value != b.value:
        return False
    if a.kind != b.kind and "plain" not in (a.kind, b.kind):
        return False
    return a.unit is None or b.unit is None or a.unit == b.unit


def _same_date(a: Decimal, b: Decimal) -> bool:
    # A date part left unsaid on one side (no year in "April 1") does not contradict.
    parts = zip(_date_parts(a), _date_parts(b), strict=True)
    return all(not (x and y) or x == y for x, y in parts)


def _date_parts(value: Decimal) -> tuple[int, int, int]:
    year, month_day = divmod(int(value), 10000)
    return (year, *divmod(month_day, 100))


def relation(claim: Quantity, paragraph: Quantity) -> Relation:
    """What the paragraph's quantity says of the claim's, by the intervals they assert:
    entails (the paragraph's lies within the claim's), contradicts (they share no value),
    compatible (they overlap), unrelated (different kinds or units)."""
    if claim.kind == "date" or paragraph.kind == "date":
        if claim.kind != paragraph.kind:
            return "unrelated"
        return "entails" if _same_date(claim.value, paragraph.value) else "contradicts"
    scales = _common_scale(claim, paragraph)
    if scales is None:
        return "unrelated"
    same = claim.value * scales[0] == paragraph.value * scales[1]
    if scales[2] is False:
        # A plain number met only by its value (15 against 15%) says nothing of other values.
        return "entails" if same else "unrelated"
    side = _LIMIT_SIDE.get(claim.bound)
    if side and side == _LIMIT_SIDE.get(paragraph.bound):
        # Two limits on one side ("within 60 days" for "within 30 days", "at least 8" for "at
        # least 12") are a rule stated twice: logic has 30 within 60, but a claim that moves a
        # rule's figure misstates the rule.
        return "entails" if same else "contradicts"
    if claim.bound in ("at most", "at least"):
        if same:
            return "entails"
        # "up to", "within", "at least", 以下, 以上, まで are how rules set limits, and a figure
        # inside a limit ("up to $200" for "$150 a night") is not the limit; "over" and "under"
        # are how summaries round a figure ("over $181 million") and keep the interval reading.
        claimed = claim.asserted.scaled(scales[0])
        stated = paragraph.asserted.scaled(scales[1])
        return "contradicts" if claimed.disjoint(stated) else "compatible"
    claimed = claim.asserted.scaled(scales[0])
    stated = paragraph.asserted.scaled(scales[1])
    if claimed.covers(stated) or _repeats_the_limit(claim, paragraph, scales):
        return "entails"
    if claimed.disjoint(stated) or _other_figures(claim, paragraph, claimed, stated, scales):
        return "contradicts"
    return "compatible"


_LIMIT_SIDE: dict[Bound | None, str] = {
    "over": "low",
    "at least": "low",
    "under": "high",
    "at most": "high",
}


def _common_scale(a: Quantity, b: Quantity) -> tuple[Decimal, Decimal, bool] | None:
    """The factors that put both values on one scale, or None when they measure different
    things, and whether they measure one thing. A fraction meets a percentage at 100 to 1 (a
    third = 33.3%); a plain number with no unit meets anything at its own value, as
    same_quantity allows, but not as the same measure; a count of something ("2 times", "30
    days") meets only counts of it."""
    one = Decimal(1)
    if a.unit is not None and b.unit is not None and a.unit != b.unit:
        return None
    if _measure(a) == _measure(b):
        hundred = Decimal(100)
        if a.kind == b.kind:
            return one, one, True
        return (hundred, one, True) if a.kind == "fraction" else (one, hundred, True)
    if (a.kind == "plain" and a.unit is None) or (b.kind == "plain" and b.unit is None):
        return one, one, False
    return None


def _repeats_the_limit(
    claim: Quantity, paragraph: Quantity, scales: tuple[Decimal, Decimal, bool]
) -> bool:
    # A bare figure that repeats the paragraph's inclusive limit or approximate figure ("30
    # days" for "within 30 days", 5万円 for 約5万円) is read as stating it, as before bounds
    # were read; whether the bound word may be dropped is evidence.grounding's bound check.
    inclusive = paragraph.bound in ("at most", "at least", "about")
    return (
        claim.bound is None and inclusive and claim.value * scales[0] == paragraph.value * scales[1]
    )


def _other_figures(
    claim: Quantity,
    paragraph: Quantity,
    claimed: Interval,
    stated: Interval,
    scales: tuple[Decimal, Decimal, bool],
) -> bool:
    # Two figures given without a bound word that each fall outside the other's rounding are
    # different figures, even where truncation lets the intervals touch: "$5 million" covers
    # 4.5-6 million and "$6 million" 5.5-7 million, yet one is not the other.
    if claim.bound is not None or paragraph.bound is not None:
        return False
    return not stated.holds(claim.value * scales[0]) and not claimed.holds(
        paragraph.value * scales[1]
    )


@dataclass(frozen=True)
class NumberCheck:
    """How a claim's quantities fare against a paragraph's."""

    # Claim quantities some paragraph quantity entails.
    found: tuple[Quantity, ...]
    # (claim quantity, the paragraph's quantities of its kind and unit) where every one of those
    # contradicts it: only then is the claim's number certainly wrong.
    contradicted: tuple[tuple[Quantity, tuple[Quantity, ...]], ...]
    # The rest: not stated, or stated only loosely ("about 5" for a claim of 5).
    missing: tuple[Quantity, ...]

    @property
    def ok(self) -> bool:
        return not self.contradicted and not self.missing


def compare_numbers(
    claim_numbers: Iterable[Quantity], paragraph_numbers: Iterable[Quantity]
) -> NumberCheck:
    """Each claim quantity found (entailed), contradicted (by all alike) or missing."""
    paragraph = tuple(paragraph_numbers)
    found: list[Quantity] = []
    contradicted: list[tuple[Quantity, tuple[Quantity, ...]]] = []
    missing: list[Quantity] = []
    for quantity in claim_numbers:
        relations = [relation(quantity, p) for p in paragraph]
        if "entails" in relations:
            found.append(quantity)
            continue
        alike = tuple(p for p in paragraph if _measure(p) == _measure(quantity))
        if alike and all(relation(quantity, p) == "contradicts" for p in alike):
            contradicted.append((quantity, alike))
        else:
            missing.append(quantity)
    return NumberCheck(tuple(found), tuple(contradicted), tuple(missing))


def _measure(quantity: Quantity) -> tuple[str, str | None]:
    # What a quantity measures: its kind (fractions and percentages are one) and unit.
    kind = "percent" if quantity.kind == "fraction" else quantity.kind
    return kind, quantity.unit


def numbers_match(
    claim_numbers: list[Quantity] | tuple[Quantity, ...],
    paragraph_numbers: list[Quantity] | tuple[Quantity, ...],
) -> tuple[bool, list[Quantity]]:
    """Every claim quantity is entailed by a paragraph quantity (compare_numbers); returns
    (ok, the claim quantities that are not, in claim order)."""
    check = compare_numbers(claim_numbers, paragraph_numbers)
    missing = [q for q in claim_numbers if q not in check.found]
    return not missing, missing
