"""A long memo of short policy-like paragraphs, generated: the shape of the upload of issue 28
(1.9 MB, 43,687 paragraphs) with subjects and numbers that repeat, so that the knowledge-
conflict scan finds real candidates and real disagreements in it."""

from __future__ import annotations

import random

MEMO_PARAGRAPHS = 43_687

_WHO = (
    "Staff",
    "Leads",
    "Interns",
    "Drivers",
    "Nurses",
    "Agents",
    "Clerks",
    "Chefs",
    "Pilots",
    "Cooks",
    "Guards",
    "Tutors",
    "Vets",
    "Judges",
    "Medics",
    "Buyers",
    "Coders",
    "Porters",
    "Tellers",
    "Scouts",
)
_DO = ("must file", "may claim", "must log", "may book", "must keep", "may pay")
_WHAT = tuple(
    f"{kind} {thing}"
    for kind in ("taxi", "rail", "hotel", "meal", "fuel", "phone")
    for thing in ("fares", "bills", "tips", "fees", "slips", "costs", "notes", "kits", "cards")
)
_WHEN = ("within {n} days", "above {n} yen", "under {n} yen", "after {n} hours")


def memo_paragraphs(count: int = MEMO_PARAGRAPHS, *, seed: int = 28) -> list[str]:
    """`count` one-sentence paragraphs such as "Staff must file taxi fares within 12 days."
    (about 40 characters each): 20 x 6 x 54 x 4 subjects, each stated with many numbers."""
    chance = random.Random(seed)  # test data, not a secret
    return [
        f"{chance.choice(_WHO)} {chance.choice(_DO)} {chance.choice(_WHAT)} "
        f"{chance.choice(_WHEN).format(n=chance.randint(2, 99))}."
        for _ in range(count)
    ]


def memo_text(count: int = MEMO_PARAGRAPHS, *, seed: int = 28) -> str:
    """The memo as plain text: a heading, then its paragraphs a blank line apart."""
    return "Expense memo\n\n" + "\n\n".join(memo_paragraphs(count, seed=seed)) + "\n"
