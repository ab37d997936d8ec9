"""The reranker after the hybrid top 15 (seed 000 §11.6): the paragraph that answers the
question comes first, whatever the search's order; otherwise the search's order stands."""

from __future__ import annotations

from evidence.questions import analyse_question, relevance
from evidence.rerank import answering_score, rerank

ASKED = analyse_question("How many days per week may employees work remotely?")
ANSWERS = "Employees may work remotely up to three days per week."
LOOSE = [
    "Remote work days per week are recorded in the attendance system.",
    "Employees who work remotely log in to the network each week.",
    "The canteen opens at eight.",
]


def test_the_answering_paragraph_ranked_last_by_the_search_comes_first() -> None:
    order = rerank(ASKED, [*LOOSE, ANSWERS])
    assert order[0] == 3
    assert sorted(order) == [0, 1, 2, 3]  # a permutation: nothing dropped, nothing added


def test_paragraphs_that_score_alike_keep_the_search_order() -> None:
    same = ["The canteen opens at eight.", "The canteen opens at eight."]
    assert rerank(ASKED, same) == [0, 1]
    assert rerank(ASKED, []) == []


def test_the_score_is_the_relevance_r_j_uncapped() -> None:
    # r_j = min(1, p / pass mark) (docs/math.md §2): below the pass mark the two agree; above
    # it the reranker still tells a better answer from a merely sufficient one
    for text in [ANSWERS, *LOOSE]:
        score = answering_score(ASKED, text)
        assert min(1.0, score) == relevance(ASKED, text)
    assert answering_score(ASKED, ANSWERS) >= 1.0 > answering_score(ASKED, LOOSE[2])


def test_a_summary_is_answered_by_every_paragraph_so_the_search_order_stands() -> None:
    asked = analyse_question("Summarise the remote work policy.")
    assert [answering_score(asked, text) for text in LOOSE] == [1.0, 1.0, 1.0]
    assert rerank(asked, LOOSE) == [0, 1, 2]
