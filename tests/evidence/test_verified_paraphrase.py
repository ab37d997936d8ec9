"""Faithful paraphrase the verdict vouches for (DESIGN.md §6, issue 27): each rule is general
(an inflection or derivation, a word that carries no content, a claim of two clauses, a
setting named in another sentence of the paragraph), and none lets a chimera through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


def verdict(claim: str, paragraph: str) -> str:
    return check_claim(claim, PARAGRAPHS.get(paragraph, paragraph)).verdict


@pytest.mark.parametrize(
    ("claim", "paragraph"),
    [
        # a claim of two statements, each a sentence of the paragraph
        (
            "Receipts are required for every item over 5,000 yen, and the department head "
            "approves each report before the finance team reimburses it.",
            "travel",
        ),
        (
            "The buyer pays 12,000,000 yen within 60 days of delivery and late payments incur "
            "3% interest per year.",
            "purchase",
        ),
        (
            "出張旅費は帰着後30日以内に精算し、5万円を超える支出には部長の事前承認が必要である。",
            "ja_keihi",
        ),
        # a setting another sentence of the paragraph names
        ("Two of the seven directors were absent from the board meeting.", "minutes"),
        ("Ownership passes to the buyer on full payment of the price.", "purchase"),
        # a verb that only says an amount; a word of obligation for the span's modal
        ("Receipts are required if an item costs over 5,000 yen.", "travel"),
        ("Payment of the 12,000,000 yen price is due within 60 days after delivery.", "purchase"),
        # Japanese derivation: continuative noun, verbal noun on the kanji, a unit's period
        ("データを社外へ持ち出すことは禁止されている。", "ja_joho"),
        ("研究開発費は前年比80%増の3.5億円となった。", "ja_gijiroku"),
        ("正社員には年に20日の有給休暇が与えられる。", "ja_jinji"),
        # 禁止 for a prohibition said with a negation
        ("試用期間中の従業員は副業が禁止されている。", "ja_jinji"),
    ],
)
def test_faithful_shapes_are_verified(claim: str, paragraph: str) -> None:
    found = check_claim(claim, PARAGRAPHS[paragraph])
    assert found.verdict == "verified", found.reasons


@pytest.mark.parametrize(
    ("claim", "paragraph"),
    [
        # chimeras: the subject of one sentence, the predicate of another
        ("Personal USB drives require approval from the security team.", "security"),
        (
            "Access to production systems requires approval from the security team on "
            "company devices.",
            "security",
        ),
        # a thing another sentence names, but not as the setting of this one
        ("Two of the seven directors were absent from the Nagoya branch.", "minutes"),
        # a second statement that borrows the first's subject
        ("Receipts are required for every item over 5,000 yen and reimburses it.", "travel"),
        # a list is one statement, not two
        ("Receipts, invoices, and tickets are required for every item over 5,000 yen.", "travel"),
        # the same shapes, something else said
        ("Receipts are required if a trip costs over 5,000 yen.", "travel"),
        ("研究開発費は前年比80%減の3.5億円となった。", "ja_gijiroku"),
        ("Payment of the 12,000,000 yen price is due within 60 days after the trip.", "purchase"),
    ],
)
def test_look_alikes_are_not_verified(claim: str, paragraph: str) -> None:
    found = check_claim(claim, PARAGRAPHS[paragraph])
    assert found.verdict != "verified", found.reasons


def test_a_prohibition_said_otherwise_still_refutes_a_permission() -> None:
    assert verdict("試用期間中の従業員は副業が許可されている。", "ja_jinji") == "refuted"


def test_a_chimera_says_why_it_is_not_verified() -> None:
    found = check_claim(
        "Personal USB drives require approval from the security team.", PARAGRAPHS["security"]
    )
    assert any("its words come from two" in r for r in found.reasons), found.reasons


def test_a_sentence_wrapped_over_two_lines_is_one_sentence() -> None:
    # given a source whose sentence a line break wraps, as extracted text often is
    source = (
        "We present the first verification that a neural network for perception tasks produces\n"
        "a correct output within a specified tolerance for every input of interest."
    )
    claim = "We present the first verification that a neural network produces a correct output."
    # then the claim is verified there, as against the sentence on one line
    assert verdict(claim, source) == "verified"
