"""G.U.P.Z.A coordinates: strict parsing, prefixes and the levels they name.

A coordinate is `G<n>.U<n>.P<n>.Z<n>.A<n>`; any leading run of segments is a prefix that
names a level (`G1.U2.P4` is a planet). Pure: no Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

MAX_NUMBER = 999_999  # keeps coordinates short and indexable; nobody has a million galaxies


class Level(StrEnum):
    GALAXY = "galaxy"
    UNIVERSE = "universe"
    PLANET = "planet"
    ZONE = "zone"
    AGENT = "agent"


LETTERS = ("G", "U", "P", "Z", "A")
LEVELS = (Level.GALAXY, Level.UNIVERSE, Level.PLANET, Level.ZONE, Level.AGENT)

# One segment: its letter and a positive number without leading zeros, so that every
# coordinate has exactly one spelling (G01 and G1 would otherwise name the same galaxy).
_NUMBER = "[1-9][0-9]{0,5}"
_SEGMENT = re.compile(f"({_NUMBER})")


class CoordinateError(ValueError):
    """A string that is not a coordinate; the message says what is wrong."""


@dataclass(frozen=True, order=True, slots=True)
class Coordinate:
    numbers: tuple[int, ...]

    def __post_init__(self) -> None:
        if not 1 <= len(self.numbers) <= len(LETTERS):
            raise CoordinateError("a coordinate has 1 to 5 segments")
        for n in self.numbers:
            if not 1 <= n <= MAX_NUMBER:
                raise CoordinateError(f"segment numbers run from 1 to {MAX_NUMBER}")

    @classmethod
    def parse(cls, text: str) -> Coordinate:
        return parse(text)

    @property
    def level(self) -> Level:
        return LEVELS[len(self.numbers) - 1]

    @property
    def depth(self) -> int:
        return len(self.numbers)

    @property
    def parent(self) -> Coordinate | None:
        return Coordinate(self.numbers[:-1]) if len(self.numbers) > 1 else None

    def ancestors(self) -> list[Coordinate]:
        """From the galaxy down to the parent, outermost first."""
        return [Coordinate(self.numbers[:i]) for i in range(1, len(self.numbers))]

    def lineage(self) -> list[Coordinate]:
        """The ancestors and this coordinate itself, outermost first."""
        return [*self.ancestors(), self]

    def covers(self, other: Coordinate) -> bool:
        """True when `other` is this coordinate or lies beneath it."""
        return other.numbers[: len(self.numbers)] == self.numbers

    def related(self, other: Coordinate) -> bool:
        """True when one of the two covers the other."""
        return self.covers(other) or other.covers(self)

    def zone(self) -> Coordinate:
        """The zone an agent coordinate belongs to; a zone is its own zone."""
        if self.depth < 4:
            raise CoordinateError(f"{self} is a {self.level}, not inside a zone")
        return Coordinate(self.numbers[:4])

    def child(self, number: int) -> Coordinate:
        return Coordinate((*self.numbers, number))

    def __str__(self) -> str:
        return ".".join(f"{letter}{n}" for letter, n in zip(LETTERS, self.numbers, strict=False))


def pattern(*, shortest: int = 1, longest: int = len(LETTERS)) -> str:
    """The regular expression (ECMA 262, as OpenAPI reads it) of the coordinates `parse`
    accepts with `shortest` to `longest` segments: `^G1(\\.U2(\\.P4)?)?$` in spirit."""
    if not 1 <= shortest <= longest <= len(LETTERS):
        raise ValueError("1 <= shortest <= longest <= 5")
    segments = [f"{letter}{_NUMBER}" for letter in LETTERS[:longest]]
    optional = ""
    for segment in reversed(segments[shortest:]):
        optional = f"(\\.{segment}{optional})?"
    required = "\\.".join(segments[:shortest])
    return f"^{required}{optional}$"


def parse(text: str, *, level: Level | None = None) -> Coordinate:
    """Parse `G<n>.U<n>.P<n>.Z<n>.A<n>` or a prefix of it; optionally insist on a level."""
    if not isinstance(text, str):
        raise CoordinateError("a coordinate must be a string")
    if text == "":
        raise CoordinateError("a coordinate must not be empty")
    segments = text.split(".")
    if len(segments) > len(LETTERS):
        raise CoordinateError(f"too many segments in {text!r}: at most 5 (G.U.P.Z.A)")
    numbers: list[int] = []
    for position, segment in enumerate(segments):
        letter = LETTERS[position]
        if not segment.startswith(letter):
            raise CoordinateError(
                f"segment {position + 1} of {text!r} must start with {letter!r} "
                f"({LEVELS[position]}), got {segment[:8]!r}"
            )
        digits = segment[1:]
        # fullmatch on ASCII digits only: str.isdigit would accept "١" or "²".
        if not _SEGMENT.fullmatch(digits):
            raise CoordinateError(
                f"segment {segment[:12]!r} of {text!r} needs a number from 1 to {MAX_NUMBER} "
                "without leading zeros"
            )
        numbers.append(int(digits))
    coordinate = Coordinate(tuple(numbers))
    if level is not None and coordinate.level != level:
        raise CoordinateError(
            f"{text!r} is a {coordinate.level} coordinate; expected the {level} level"
        )
    return coordinate
