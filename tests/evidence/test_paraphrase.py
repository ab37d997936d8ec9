"""Rewrites of form that verification by construction reads as the same statement
(evidence.paraphrase): a contraction, "no" for "not ... any", a vague count that is no limit.
Each beside the change of meaning that must still not be verified."""

from __future__ import annotations

import pytest

from evidence.grounding import check_claim

GARDEN = "Elisabeth: I'll prepare the garden and the lanterns."
INQUIRY = "The inspectors, who opened an inquiry, have not found any evidence of fraud."
FARMERS = (
    "Hundreds of farmers lost cattle this spring, with some farmers saying the wells were poisoned."
)


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("Elisabeth will prepare the garden", GARDEN),
        ("The inspectors found no evidence of fraud", INQUIRY),
        ("Some farmers say that the wells were poisoned", FARMERS),
        # a closed compound's head names the kind's general word
        ("Dozens of girls fell ill at the camp", "Dozens of schoolgirls fell ill at the camp."),
        (
            "Staff must delete the app from their phones",
            "Staff must delete the app from their smartphones.",
        ),
    ],
)
def test_the_same_statement_in_another_form_is_verified(claim: str, source: str) -> None:
    result = check_claim(claim, source)
    assert result.verdict == "verified", result.reasons


@pytest.mark.parametrize(
    ("claim", "source", "verdict"),
    [
        ("Elisabeth will not prepare the garden", GARDEN, "refuted"),
        ("The inspectors found evidence of fraud", INQUIRY, "refuted"),
        (
            "The inspectors found no evidence of fraud",
            "The inspectors found evidence of fraud.",
            "refuted",
        ),
        # a bound that selects is still a limit the claim may not drop
        ("Expenses need approval", "Expenses above 500,000 yen need approval.", "unverified"),
        ("Visitors need a badge", "At least 200 visitors need a badge.", "unverified"),
        # the specific word for the span's general one says more
        (
            "Staff must delete the app from their smartphones",
            "Staff must delete the app from their phones.",
            "unverified",
        ),
        # a word that merely ends like another is no compound of it
        ("The pupils stand the noise", "The pupils understand the noise.", "unverified"),
    ],
)
def test_a_change_of_meaning_is_still_caught(claim: str, source: str, verdict: str) -> None:
    result = check_claim(claim, source)
    assert result.verdict == verdict, result.reasons
