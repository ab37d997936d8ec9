"""Quantities in English and Japanese text, normalised so a claim's numbers can be found in
a paragraph however they are written (１２，０００円 = 12,000 yen = 1.2万円, 8割 = 80%)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal

import kanjize
from text_to_num import alpha2digit

from evidence.text import normalise

# "points": percentage points, the difference of two percentages (10% -> 12% is +2 points, not
# +2%); a claim must not turn one into the other.
QuantityKind = Literal["plain", "percent", "points", "currency", "date", "ordinal"]


@dataclass(frozen=True)
class Quantity:
    """A number as the text states it: value, what kind of number, unit or currency."""

    value: Decimal
    kind: QuantityKind = "plain"
    # ISO currency code for kind "currency"; a unit (day, year, person, 条...) otherwise.
    unit: str | None = None
    surface: str = ""

    def __str__(self) -> str:
        if self.kind == "date":
            return _format_date(self.value)
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
# Japanese eras still used in contracts: year N of the era is base + N.
_ERAS = {"令和": 2018, "平成": 1988, "昭和": 1925}

_DATE_PATTERNS = [
    re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)"),
    re.compile(
        r"(?:(?P<era>令和|平成|昭和)(?P<ey>\d{1,2}|元)|(?P<y>\d{4}))\s*年\s*"
        r"(?P<m>\d{1,2})\s*月(?:\s*(?P<d>\d{1,2})\s*日)?"
    ),
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
    "倍": "times",
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
    rf"(?<![\d.,])(?P<num>\d[\d,]*(?:\.\d+)?(?:[{_KANJI_DIGITS}][\d.,{_KANJI_DIGITS}]*)?"
    rf"|[{_KANJI_DIGITS}][\d.,{_KANJI_DIGITS}]*)"
    rf"(?:\s*(?P<scale>{_alternation(_SCALES)})\b)?"
    rf"(?P<suffix>(?:st|nd|rd|th)(?![a-z]))?"
    rf"(?:\s*(?P<割>割)(?:(?P<分>\d|[一二三四五六七八九])分)?(?:(?P<厘>\d|[一二三四五六七八九])厘)?"
    # Points before percent: "2% points" is a difference of points, not 2%.
    rf"|\s*(?P<pts>{_alternation(_POINT_WORDS)})"
    rf"|\s*(?P<pct>{_alternation(_PERCENT_WORDS)})"
    rf"|\s*(?P<cur>{_alternation(w for w in _CURRENCY_WORDS if w not in '$¥€£')})"
    rf"|\s*(?P<unit>{_alternation(_UNITS)})"
    rf"|\s*(?P<counter>条|項|号|章|節|社|台|個|枚|部門|以上|以下|未満|超|まで|を超))?"
)
_DIGITS_AND_SCALE = re.compile(rf"(\d[\d,]*(?:\.\d+)?)\s*({_alternation(_SCALES)})\b")
_NUMBER_WORD_LIST = """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety hundred thousand million billion third fourth fifth tenth
"""
_NUMBER_WORDS = frozenset(_NUMBER_WORD_LIST.split())
# Whole words of a-z only (as `\bword\b` would find them): a set lookup per word is cheaper
# than one alternation tried at every position.
_PLAIN_WORD = re.compile(r"\b[a-z]+\b")
_NUMERAL = re.compile(rf"[\d{_KANJI_DIGITS}]")
# Words that hold a kanji numeral but are not numbers: 十分 (enough), 一部 (part), 万一 (just
# in case), 数百 (several hundred: no definite value).
_NOT_NUMBERS = (
    "十分",
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


def extract_numbers(text: str) -> list[Quantity]:
    """Every quantity in the text, normalised (value, kind, unit / currency)."""
    return list(_extract(text))


@lru_cache(maxsize=32768)
def _extract(text: str) -> tuple[Quantity, ...]:
    folded = normalise(text)
    has_numeral = _NUMERAL.search(folded) is not None
    # Every scale word but "thousand" ends in "illion": a substring test skips the pass.
    if has_numeral and ("illion" in folded or "thousand" in folded):
        folded = _DIGITS_AND_SCALE.sub(_expand_scale, folded)
    words = frozenset(_PLAIN_WORD.findall(folded))
    if not _NUMBER_WORDS.isdisjoint(words):
        # text2num turns "one hundred and five" / "three million" into digits; lone "one"
        # and "first" / "second" are left alone (too often not numbers at all).
        folded = alpha2digit(folded, "en")
        has_numeral = _NUMERAL.search(folded) is not None
        words = frozenset(_PLAIN_WORD.findall(folded))
    if not has_numeral:
        return ()
    found: list[Quantity] = []
    folded = _take_dates(folded, found, words)
    for match in _NUMBER.finditer(folded):
        quantity = _quantity(match, folded)
        if quantity is not None:
            found.append(quantity)
    return tuple(found)


def _expand_scale(match: re.Match[str]) -> str:
    value = Decimal(match.group(1).replace(",", "")) * _SCALES[match.group(2)]
    return f"{value.normalize():f}"


def _take_dates(text: str, found: list[Quantity], words: frozenset[str]) -> str:
    for pattern in _date_patterns_that_may_match(text, words):
        matches = list(pattern.finditer(text))
        for match in matches:
            parts = match.groupdict()
            if parts.get("era"):
                era_year = 1 if parts["ey"] == "元" else int(parts["ey"])
                year = _ERAS[parts["era"]] + era_year
            else:
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
    if match.group("割"):
        tenths = [match.group("分"), match.group("厘")]
        value = value * 10 + sum(
            (Decimal(_digit(t)) / 10**i for i, t in enumerate(tenths) if t), Decimal(0)
        )
        return Quantity(value, "percent", None, surface)
    if match.group("pts"):
        return Quantity(value, "points", None, surface)
    if match.group("pct"):
        return Quantity(value, "percent", None, surface)
    currency = match.group("pre") or match.group("cur")
    if currency:
        return Quantity(value, "currency", _CURRENCY_WORDS[currency], surface)
    if match.group("ord"):
        return Quantity(value, "ordinal", match.group("counter"), surface)
    if match.group("suffix"):
        return Quantity(value, "ordinal", None, surface)
    unit = match.group("unit")
    if unit:
        if unit == "年" and value >= 1900:
            # 2024年 is the year 2024, as "in 2024" would say; 3年 is a duration.
            return Quantity(value, "plain", None, surface)
        return Quantity(value, "plain", _UNITS[unit], surface)
    return Quantity(value, "plain", None, surface)


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
        if raw.replace(".", "", 1).isdigit():
            return Decimal(raw)
        # 三千, 1万, 2.5億, 1億2000万: kanjize reads Japanese numerals and multipliers.
        return Decimal(kanjize.kanji2number(raw))
    except (ValueError, InvalidOperation, KeyError, IndexError):
        return None


def same_quantity(a: Quantity, b: Quantity) -> bool:
    """Equal values, and equal kinds / units wherever both state one ("plain" states none)."""
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


def numbers_match(
    claim_numbers: list[Quantity] | tuple[Quantity, ...],
    paragraph_numbers: list[Quantity] | tuple[Quantity, ...],
) -> tuple[bool, list[Quantity]]:
    """Every claim quantity has an equal quantity in the paragraph; returns (ok, missing)."""
    missing = [q for q in claim_numbers if not any(same_quantity(q, p) for p in paragraph_numbers)]
    return not missing, missing
