"""Who does what: the actor a claim names for an act must be the one its evidence names;
numbers written in words or with Japanese units still match (the seeds' weak spots); and
odd claims get a verdict with a readable reason, never an exception."""

from __future__ import annotations

import pytest

from evidence.actors import actor_conflicts, acts
from evidence.grounding import check_claim

REMOTE = (
    "Employees may request to work remotely up to 3 days per week. Requests must be approved "
    "by the line manager in advance."
)
HOTEL = "宿泊費は1泊あたり12,000円を上限とし、超過分は自己負担とする。"


@pytest.mark.parametrize(
    ("text", "act", "actor"),
    [
        ("Requests must be approved by the line manager in advance.", "approv", "line manager"),
        ("The line manager must approve requests.", "approv", "line manager"),
        ("The department head approves each report.", "approv", "department head"),
        ("The buyer is paid by the seller within 30 days.", "pay", "seller"),
        ("宿泊費の超過分は会社が負担します。", "負担", "会社"),
        ("超過分は自己負担とする。", "負担", "自己"),
        ("申請は部長の承認が必要です。", "承認", "部長"),
        ("費用は甲が支払う。", "支払う", "甲"),
    ],
)
def test_the_actor_of_an_act_is_read_from_the_sentence(text: str, act: str, actor: str) -> None:
    assert (act, actor) in {(a.act, a.actor) for a in acts(text)}


def test_a_topic_marked_with_wa_is_not_taken_for_the_actor() -> None:
    # 超過分 (the excess) is what is borne, not who bears it
    assert all(a.actor != "超過分" for a in acts(HOTEL))


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("宿泊費の超過分は会社が負担します。", HOTEL),
        ("Finance must approve remote work requests in advance.", REMOTE),
        ("Remote work requests must be approved by the finance team.", REMOTE),
    ],
)
def test_a_claim_that_names_another_actor_is_not_supported(claim: str, evidence: str) -> None:
    verdict = check_claim(claim, evidence)
    assert not verdict.supported
    assert verdict.reversal
    assert any("another actor" in reason for reason in verdict.reasons)


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Requests must be approved by the line manager.", REMOTE),
        ("The line manager must approve requests in advance.", REMOTE),
        ("宿泊費の超過分は自己負担です。", HOTEL),
        (
            "Equipment costs above five hundred dollars need approval.",
            "Equipment costs above $500 need approval from the department head.",
        ),
        ("出席率は8割以上が必要です。", "出席率80%以上が必要である。"),
        ("上限は1万2千円です。", "上限は12,000円とする。"),
    ],
)
def test_the_same_fact_in_other_words_is_supported(claim: str, evidence: str) -> None:
    verdict = check_claim(claim, evidence)
    assert verdict.supported, verdict.reasons


def test_an_act_the_evidence_gives_no_actor_raises_no_conflict() -> None:
    assert actor_conflicts("The finance team approves requests.", "Requests need approval.") == []


def test_the_reason_names_both_actors() -> None:
    [reason] = [
        r
        for r in check_claim("Finance must approve remote work requests.", REMOTE).reasons
        if "another actor" in r
    ]
    assert "line manager" in reason
    assert "finance" in reason


@pytest.mark.parametrize(
    "claim",
    [
        "",
        "   ",
        "x" * 200_000,
        "Les employés peuvent travailler à distance trois jours par semaine.",
        "Employees 在宅勤務 may работать 3 days.",
        "\x00\x01",
    ],
)
def test_odd_claims_get_a_verdict_with_a_short_reason_never_an_exception(claim: str) -> None:
    verdict = check_claim(claim, REMOTE)
    assert verdict.reasons
    assert all(len(reason) < 500 for reason in verdict.reasons)
    assert verdict.probability is None or 0.0 <= verdict.probability <= 1.0


def test_a_paragraph_of_only_numbers_supports_no_worded_claim() -> None:
    verdict = check_claim("Employees may work remotely 3 days.", "1 2 3 4 5 6 7 8")
    assert not verdict.supported
    assert "never says this" in " ".join(verdict.reasons)
