"""The decision page's first sentence (issue 18.5): why the answer is here, each number
beside its threshold, in words a reviewer reads at a glance."""

from __future__ import annotations

from typing import Any

from gates.presenters import explanation

POLICY = {"tau": 0.85, "refusal_floor": 0.3, "required_evidence": 3}


def _claim(
    sufficiency: float | None, *, supported: bool = True, kept: int = 1, kind: str = "factual"
) -> dict[str, Any]:
    return {
        "kind": kind,
        "supported": supported,
        "sufficiency": sufficiency,
        "evidence": [{"kept": True}] * kept,
    }


def test_a_short_answer_names_the_sources_and_the_weakest_claim_against_tau() -> None:
    body = {"claims": [_claim(0.91), _claim(0.59)], "contradictions": []}
    assert explanation("required", body, POLICY) == (
        "A person must decide: 2 of the 3 sources the zone requires; "
        "the weakest claim (2) scores 0.59 against τ 0.85."
    )


def test_a_count_the_question_asked_for_is_named_as_the_questions() -> None:
    # seed 000 §4.3: the zone leaves RequiredEvidence to the question (policy 0), and this
    # two-part question asked for 4
    body = {
        "claims": [_claim(0.91), _claim(0.59)],
        "contradictions": [],
        "score": {"required_evidence": 4},
    }
    assert explanation("required", body, POLICY | {"required_evidence": 0}) == (
        "A person must decide: 2 of the 4 sources the question asks for; "
        "the weakest claim (2) scores 0.59 against τ 0.85."
    )


def test_a_released_answer_does_not_read_as_a_failure() -> None:
    body = {"claims": [_claim(0.93)], "contradictions": []}
    assert explanation("auto", body, POLICY) == (
        "Released without review: the weakest claim (1) scores 0.93 against τ 0.85."
    )


def test_unsupported_claims_contradictions_and_the_refusal_floor_are_named() -> None:
    body = {
        "claims": [_claim(0.0, supported=False, kept=0), _claim(0.2)],
        "contradictions": [{"claim": 1, "items": []}],
    }
    sentence = explanation("blocked", body, POLICY)
    assert sentence.startswith("Blocked: the paragraphs it cites disagree with each other; ")
    assert "claim 1 has no supporting evidence" in sentence
    assert "1 of the 3 sources" in sentence
    assert sentence.endswith("below the refusal floor 0.30.")


def test_a_knowledge_base_conflict_is_told_apart_from_the_answers_own_citations() -> None:
    body = {"claims": [_claim(0.95)], "contradictions": [{"claim": 0, "conflict": 7}]}
    assert "the knowledge base disagrees with itself" in explanation("required", body, POLICY)


def test_an_answer_with_no_fact_says_so() -> None:
    body = {"claims": [_claim(None, kind="opinion")], "contradictions": []}
    assert explanation("flagged", body, POLICY) == (
        "Released, flagged for the periodic review: the answer states no fact to check."
    )
