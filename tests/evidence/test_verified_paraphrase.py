"""Faithful paraphrase the verdict vouches for (DESIGN.md §6, issue 27): each rule is general
(an inflection or derivation, a word that carries no content, a claim of two clauses, a
setting named in another sentence of the paragraph), and none lets a chimera through."""

from __future__ import annotations

import json
from pathlib import Path

from evidence.grounding import check_claim

CORPUS = json.loads(
    (Path(__file__).parent / "corpus" / "grounding_corpus.json").read_text(encoding="utf-8")
)
PARAGRAPHS = CORPUS["paragraphs"]


def test_a_verified_claim_has_whole_coverage() -> None:
    # given a claim every word of which the span says, some in other forms (needs / required)
    found = check_claim("Every item over 5,000 yen needs a receipt.", PARAGRAPHS["travel"])
    # then it is verified, and its coverage (which the item's confidence reads) is whole
    assert found.verdict == "verified", found.reasons
    assert found.coverage == 1.0
