"""The interval a stated number asserts: the rounding of how it is written, widened or cut by
the bound word put on it ("over", "about", 約, 以下)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

# What a bound word says about the true value x, against the stated value v.
Bound = Literal["over", "under", "at most", "at least", "nearly", "about", "slightly over"]

# "about", "nearly", 弱 and 強 are read as within a tenth of the value: in contracts and reports
# a round figure said "about" is rarely more than 10% off (a larger gap is written "over" or
# "some N-1"), and a narrower band would veto faithful summaries of exact figures.
_APPROXIMATE = Decimal("0.1")


@dataclass(frozen=True)
class Interval:
    """The values x a statement allows: low <(=) x <(=) high; None is unbounded on that side."""

    low: Decimal | None
    high: Decimal | None
    low_open: bool = False
    high_open: bool = False

    @classmethod
    def point(cls, value: Decimal) -> Interval:
        return cls(value, value)

    def holds(self, x: Decimal) -> bool:
        """low <(=) x <(=) high, open ends excluded."""
        above = self.low is None or x > self.low or (x == self.low and not self.low_open)
        below = self.high is None or x < self.high or (x == self.high and not self.high_open)
        return above and below

    def covers(self, other: Interval) -> bool:
        """other lies within this interval's closure, and shares a value with it.

        Ends are compared closed: "over 100万円" against "100万円以上" differ only in whether
        100万円 itself is in, and evidence.grounding's bound check names that change better than
        a missing number would. A point on an open end ("over 5" against 5) shares nothing.
        """
        low_ok = self.low is None or (other.low is not None and other.low >= self.low)
        high_ok = self.high is None or (other.high is not None and other.high <= self.high)
        return low_ok and high_ok and not self.disjoint(other)

    def disjoint(self, other: Interval) -> bool:
        """No value lies in both (open ends excluded: "over 5" and "5 or less" share none)."""
        return _below(self, other) or _below(other, self)

    def scaled(self, factor: Decimal) -> Interval:
        low = None if self.low is None else self.low * factor
        high = None if self.high is None else self.high * factor
        return Interval(low, high, self.low_open, self.high_open)


def _below(a: Interval, b: Interval) -> bool:
    # Every value of a is below every value of b.
    if a.high is None or b.low is None:
        return False
    return a.high < b.low or (a.high == b.low and (a.high_open or b.low_open))


def asserted(value: Decimal, rounding: Decimal, bound: Bound | None) -> Interval:
    """The interval "v" asserts when written to the precision `rounding` (0: written in full)
    under the bound word `bound`."""
    if bound == "over":
        return Interval(value, None, low_open=True)
    if bound == "under":
        return Interval(None, value, high_open=True)
    if bound == "at most":
        return Interval(None, value)
    if bound == "at least":
        return Interval(value, None)
    tenth = abs(value) * _APPROXIMATE
    if bound == "nearly":
        # Slightly below: "nearly 500" is 450-500, 500 itself allowed (a writer rounding 498).
        return Interval(value - tenth, value)
    if bound == "slightly over":
        return Interval(value, value + tenth)
    written = _rounded(value, rounding)
    if bound == "about":
        # Within a tenth or the rounding, whichever is wider: "about $2 million" of a figure
        # written to the million keeps the million's rounding.
        low = min(value - tenth, written.low if written.low is not None else value)
        high = max(value + tenth, written.high if written.high is not None else value)
        return Interval(low, high)
    return written


def _rounded(value: Decimal, rounding: Decimal) -> Interval:
    # "$181 million" is 180.5-182 million: the writer may have rounded (180.5 up) or cut off
    # the digits (181.9 down), so both readings are allowed; the top end itself is not.
    if not rounding:
        return Interval.point(value)
    return Interval(value - rounding / 2, value + rounding, high_open=True)
