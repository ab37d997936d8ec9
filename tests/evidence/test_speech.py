"""A summary of a chat reports each line as its speaker's act: "Nora suggests ..." for
"Nora: ...". The speech verb is what the line's colon says, so the claim is verified when
the rest of it is in the line; after another speaker's name, for a question turned into a
statement, or with anything else changed, it is not (evidence.speech)."""

from __future__ import annotations

import pytest

from evidence.grounding import check_claim

LINE = "Nora: Tom, please water the plants on Sunday."
QUESTION = "Nora: does the bakery open on Sunday?"


@pytest.mark.parametrize(
    ("claim", "line"),
    [
        ("Nora suggests that Tom waters the plants on Sunday", LINE),
        ("Nora tells Tom to water the plants on Sunday", LINE),
        ("Nora also asks Tom to water the plants on Sunday", LINE),
        ("Nora asks whether the bakery opens on Sunday", QUESTION),
        ("Nora wonders if the bakery opens on Sunday", QUESTION),
        ("Nora proposes that Tom waters the plants on Sunday", LINE),
        ("Tom recommends restarting the router", "Tom: did you restart the router?"),
    ],
)
def test_a_speech_verb_of_the_lines_own_speaker_is_read_as_the_colon(claim: str, line: str) -> None:
    result = check_claim(claim, line)
    assert result.verdict == "verified", result.reasons


@pytest.mark.parametrize(
    ("claim", "line"),
    [
        # someone else said it: the entity swap a summary edit makes
        ("Tom suggests that Nora waters the plants on Sunday", LINE),
        # the line says Sunday, the claim Monday
        ("Nora tells Tom to water the plants on Monday", LINE),
        # a question asserts nothing
        ("Nora says the bakery opens on Sunday", QUESTION),
        ("Nora says that Tom waters the plants on Sunday", "Nora: does Tom water the plants?"),
        # a decision is no speech act: the line must show it
        ("Nora promises to water the plants on Sunday", LINE),
        # no line of dialogue: a reporting verb is still asked of the span
        ("Nora suggests that Tom waters the plants on Sunday", "Tom waters the plants on Sunday."),
    ],
)
def test_otherwise_the_claim_is_not_verified(claim: str, line: str) -> None:
    result = check_claim(claim, line)
    assert result.verdict != "verified", result.reasons


def test_a_negated_report_of_the_line_is_not_verified() -> None:
    result = check_claim("Nora never asks Tom to water the plants on Sunday", LINE)
    assert result.verdict != "verified", result.reasons
