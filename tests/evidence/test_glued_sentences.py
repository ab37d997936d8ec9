"""Scraped pages lose the space after a period ("for longer.Markets fell"): the sentences
are still two, so a claim is checked against its own sentence, not against a run-on that
carries a neighbour's negation or limit (evidence.text.glued_end)."""

from __future__ import annotations

import pytest

from evidence.claims import sentence_spans
from evidence.grounding import check_claim
from evidence.text import split_sentences

GLUED = (
    "Factory output was not growing yet, a survey showed.The central bank said on Monday it "
    "would buy bonds to hold down yields.Rents rose to a more than 10-year high."
)


def test_a_claim_on_one_of_glued_sentences_is_verified() -> None:
    claim = "The central bank said on Monday it would buy bonds to hold down yields"
    result = check_claim(claim, GLUED)
    assert result.verdict == "verified", result.reasons


def test_a_claim_that_reverses_it_is_still_refuted() -> None:
    claim = "The central bank said on Monday it would not buy bonds to hold down yields"
    assert check_claim(claim, GLUED).verdict == "refuted"


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Prices rose for longer.Markets fell.", ["Prices rose for longer.", "Markets fell."]),
        (
            'He wrote in a note."It hurts," he said.',
            ['He wrote in a note."', 'It hurts," he said.'],
        ),
        # not glued sentences: a decimal, a domain, initials, a web address
        ("Version 3.5 is out.", ["Version 3.5 is out."]),
        ("See shop.example.com today.", ["See shop.example.com today."]),
        ("The U.S.Army won.", ["The U.S.Army won."]),
        ("Visit www.example.org/News.Then stop.", ["Visit www.example.org/News.Then stop."]),
    ],
)
def test_glued_sentences_are_split_alike_by_both_splitters(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences
    assert [text[s:e] for s, e in sentence_spans(text)] == sentences
