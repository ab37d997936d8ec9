"""A summary of a paper says "We suggest a framework for ...": what the source proposes, a
fact to check against it, not the answerer's advice (which needs no evidence)."""

from __future__ import annotations

from evidence.grounding import check_claim, classify_claim

ABSTRACT = "We propose a method for adding label noise to the decoder of a translation model."


def test_a_reported_proposal_is_checked_as_a_fact() -> None:
    claim = "We suggest a method for removing label noise from the encoder of a translation model"
    assert classify_claim(claim)[0] == "factual"
    assert check_claim(claim, ABSTRACT).verdict != "verified"


def test_advice_is_still_an_opinion() -> None:
    assert classify_claim("We suggest contacting the travel desk before booking")[0] == "opinion"
    assert classify_claim("I would recommend that you book early")[0] == "opinion"
