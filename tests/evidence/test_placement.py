"""A claim's word found only in another part of a long sentence is not where the claim says
it: "detained on deception charges" against "detained on fraud charges ..., amid reports of
deceptive practices" (evidence.placement). Not verified; a person decides."""

from __future__ import annotations

import pytest

from evidence.grounding import check_claim

SPAN = (
    "Lane, head of the small courier firm Dartline, was detained on Monday on fraud charges "
    "as part of a plan to rescue the ailing business, which lost millions of dollars before "
    "it closed amid reports of deceptive sales practices."
)


def test_a_word_taken_from_another_clause_is_not_verified() -> None:
    claim = "The head of the courier firm Dartline was detained on deception charges"
    result = check_claim(claim, SPAN)
    assert result.verdict != "verified", result.reasons
    assert any("deception" in reason for reason in result.reasons), result.reasons


@pytest.mark.parametrize(
    "claim",
    [
        # the span's own words, in place
        "The head of the courier firm Dartline was detained on fraud charges",
        # a word said before its neighbours, a pronoun standing for it between them
        "Investors suspect that the couriers were underpaid",
    ],
)
def test_words_in_place_are_still_verified(claim: str) -> None:
    span = (
        SPAN
        if "Dartline" in claim
        else (
            "Dozens of couriers quit in March, with some investors suspecting they were underpaid."
        )
    )
    result = check_claim(claim, span)
    assert result.verdict == "verified", result.reasons


def test_a_word_named_before_its_neighbours_may_be_referred_back_to() -> None:
    span = "At the council session on May 3, 2025, the members approved the new library wing."
    claim = "On May 3, 2025 the council approved the new library wing"
    assert check_claim(claim, span).verdict == "verified"
