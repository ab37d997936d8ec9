"""RequiredEvidence depends on the question (seed 000 §4.3, issue 30): 1-2 evidence items for
a simple factual lookup, 5-10 for a complex analytical question; the zone's single number is
kept as a policy option. The questions are the paper's own examples."""

from __future__ import annotations

import pytest

from evidence.questions import required_evidence_of

# The paper's examples of §4.3, in its words (English) and as the Japanese seed gives them.
SIMPLE_EN = "What is the company's parental leave policy?"
COMPLEX_EN = (
    "How has our data retention policy evolved over the past 3 years, and what are the "
    "compliance implications?"
)
SIMPLE_JA = "会社の育児休暇ポリシーは何ですか?"
COMPLEX_JA = (
    "当社のデータ保持ポリシーは過去 3 年間でどのように進化してきたか、"
    "またコンプライアンスへの影響は何ですか?"
)


@pytest.mark.parametrize("question", [SIMPLE_EN, SIMPLE_JA])
def test_the_papers_simple_lookup_needs_one_to_two_items(question: str) -> None:
    assert 1 <= required_evidence_of(question) <= 2


@pytest.mark.parametrize("question", [COMPLEX_EN, COMPLEX_JA])
def test_the_papers_complex_question_needs_five_to_ten_items(question: str) -> None:
    assert 5 <= required_evidence_of(question) <= 10


def test_a_two_part_lookup_needs_the_worked_examples_four() -> None:
    # §6.3's deployment: RequiredEvidence = 4
    question = "How many days per week may employees work remotely and who approves the requests?"
    assert required_evidence_of(question) == 4


def test_a_question_about_changes_is_not_a_question_over_time() -> None:
    assert required_evidence_of("Who approves changes to the travel budget?") == 2
