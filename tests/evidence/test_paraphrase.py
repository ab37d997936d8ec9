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
    ],
)
def test_a_change_of_meaning_is_still_caught(claim: str, source: str, verdict: str) -> None:
    result = check_claim(claim, source)
    assert result.verdict == verdict, result.reasons
