from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidence.embeddings import HashingEmbedder, l2_normalise
from evidence.grounding import check_claim, claims_without_numbers_share, classify_claim, cosine
from evidence.scoring import item_confidence

CORPUS = json.loads(
    (Path(__file__).parent / "corpus" / "grounding_corpus.json").read_text(encoding="utf-8")
)
REJECT = {"number", "reversal", "unsupported"}

PURCHASE = CORPUS["paragraphs"]["purchase"]
KEIHI = CORPUS["paragraphs"]["ja_keihi"]


def cases(*labels: str) -> list[Any]:
    # A known gap carries an xfail_reason: pytest reports it as xfail (strict, so a fix shows
    # up as XPASS and the entry must be updated) instead of it passing or failing silently.
    return [
        pytest.param(
            c["claim"],
            CORPUS["paragraphs"][c["p"]],
            id=c["claim"][:40],
            marks=[pytest.mark.xfail(strict=True, reason=c["xfail_reason"])]
            if "xfail_reason" in c
            else [],
        )
        for c in CORPUS["claims"]
        if c["label"] in labels
    ]


@pytest.mark.parametrize(("claim", "paragraph"), cases("faithful"))
def test_faithful_paraphrases_are_kept(claim: str, paragraph: str) -> None:
    result = check_claim(claim, paragraph)
    assert result.supported, result.reasons
    assert result.kind == "factual"


@pytest.mark.parametrize(("claim", "paragraph"), cases("number"))
def test_number_mismatches_are_rejected(claim: str, paragraph: str) -> None:
    result = check_claim(claim, paragraph)
    assert not result.supported
    assert not result.numbers_ok
    assert result.missing_numbers


@pytest.mark.parametrize(("claim", "paragraph"), cases("reversal"))
def test_reversed_claims_are_rejected(claim: str, paragraph: str) -> None:
    result = check_claim(claim, paragraph)
    assert not result.supported
    assert result.reversal, result.reasons


@pytest.mark.parametrize(("claim", "paragraph"), cases("unsupported"))
def test_claims_the_paragraph_never_makes_are_rejected(claim: str, paragraph: str) -> None:
    assert not check_claim(claim, paragraph).supported


@pytest.mark.parametrize(("claim", "paragraph"), cases("opinion", "meta"))
def test_opinions_and_meta_comments_need_no_evidence(claim: str, paragraph: str) -> None:
    result = check_claim(claim, paragraph)
    assert result.supported
    assert result.kind != "factual"
    assert "not a factual claim" in result.reasons[0]


def test_rejection_precision_and_recall_over_the_corpus() -> None:
    tp = fp = fn = 0
    for case in CORPUS["claims"]:
        rejected = not check_claim(case["claim"], CORPUS["paragraphs"][case["p"]]).supported
        should = case["label"] in REJECT
        tp += rejected and should
        fp += rejected and not should
        fn += should and not rejected
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    print(
        f"\ngrounding corpus: {len(CORPUS['claims'])} claims, rejection precision "
        f"{precision:.3f}, recall {recall:.3f}"
    )
    assert precision >= 0.9
    assert recall >= 0.9


def test_rejection_precision_and_recall_with_known_gaps_listed() -> None:
    # given the whole corpus, known gaps included
    tp = fp = fn = 0
    gaps = []
    for case in CORPUS["claims"]:
        rejected = not check_claim(case["claim"], CORPUS["paragraphs"][case["p"]]).supported
        should = case["label"] in REJECT
        tp += rejected and should
        fp += rejected and not should
        fn += should and not rejected
        if "xfail_reason" in case:
            gaps.append(f"  [{case['label']}] {case['claim']}: {case['xfail_reason']}")
    # then the figures hold the project's floor, and every known gap is printed, not hidden
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    print(
        f"\ngrounding corpus: {len(CORPUS['claims'])} claims, rejection precision "
        f"{precision:.3f}, recall {recall:.3f}; {len(gaps)} known gaps:\n" + "\n".join(gaps)
    )
    assert precision >= 0.95
    assert recall >= 0.95


def test_the_corpus_covers_what_a_compliance_team_asks_about() -> None:
    claims = " ".join(c["claim"] for c in CORPUS["claims"])
    for phrase in ("percentage points", "ポイント", "at most", "未満", "dollars", "only if"):
        assert phrase in claims


def test_a_number_mismatch_names_both_numbers() -> None:
    result = check_claim("Late payments incur interest of 5% per year.", PURCHASE)
    assert result.reasons[0] == "number 5% not found in the cited paragraph (it says 3%)"


def test_negation_is_reported_with_the_words() -> None:
    claim = "Receipts are not required for items over 5,000 yen."
    result = check_claim(claim, CORPUS["paragraphs"]["travel"])
    assert result.reversal_words == [("not required", "required")]
    assert "reversed: claim says 'not required', paragraph says 'required'" in result.reasons


def test_payer_swap_is_rejected_even_with_full_word_overlap() -> None:
    claim = "The Seller shall pay the Buyer the purchase price of 12,000,000 yen."
    result = check_claim(claim, PURCHASE)
    assert result.coverage == 1.0
    assert not result.supported
    assert any("roles swapped" in r for r in result.reasons)


def test_passive_voice_keeps_the_roles() -> None:
    claim = "The Seller is paid the purchase price by the Buyer within 60 days of delivery."
    assert check_claim(claim, PURCHASE).supported


def test_japanese_payer_swap_is_rejected() -> None:
    paragraph = "甲は乙に対し、委託料として月額50万円を支払う。"
    assert check_claim("甲は乙に月額50万円を支払う。", paragraph).supported
    assert not check_claim("乙は甲に月額50万円を支払う。", paragraph).supported


def test_japanese_approver_swap_is_rejected() -> None:
    paragraph = "部長は申請者の出張申請を承認する。"
    assert check_claim("部長が申請者の出張申請を承認する。", paragraph).supported
    assert not check_claim("申請者は部長の出張申請を承認する。", paragraph).supported


@pytest.mark.parametrize(
    ("claim", "paragraph"),
    [
        ("事前承認は必要です。", "事前承認は不要です。"),
        ("The fee increased in 2024.", "The fee decreased in 2024."),
        ("Payments must be made before delivery.", "Payments must be made after delivery."),
        ("申請は承認された。", "申請は却下された。"),
        ("Pets are allowed in the office.", "Pets are prohibited in the office."),
        ("残業は許可される。", "残業は禁止する。"),
        ("The deposit is refundable.", "The deposit is non-refundable."),
    ],
)
def test_antonyms_in_both_languages_are_reversals(claim: str, paragraph: str) -> None:
    assert check_claim(claim, paragraph).reversal
    assert check_claim(paragraph, claim).reversal


@pytest.mark.parametrize(
    ("claim", "paragraph"),
    [
        ("Approval is optional.", "Approval is not required."),
        ("Smoking is prohibited on site.", "Smoking is not allowed on site."),
        ("残業は禁止されている。", "残業は許可されない。"),
        ("事前承認は不要です。", "事前承認は必要ない。"),
        ("The report must be filed within 10 days.", "The report must be filed in 10 days."),
    ],
)
def test_negated_antonyms_are_not_reversals(claim: str, paragraph: str) -> None:
    assert not check_claim(claim, paragraph).reversal


def test_meta_preamble_is_stripped_and_the_fact_checked() -> None:
    paragraph = "The approval limit for branch managers is 5 million yen."
    kept = check_claim("Based on the documents, the limit is 5 million yen.", paragraph)
    wrong = check_claim("Based on the documents, the limit is 8 million yen.", paragraph)
    assert kept.kind == wrong.kind == "factual"
    assert kept.supported
    assert not wrong.supported


@pytest.mark.parametrize(
    ("claim", "kind"),
    [
        ("Here is a summary of the policy.", "meta"),
        ("以下に要約します。", "meta"),
        ("I think the rule is sensible.", "opinion"),
        ("It may be worth considering a second approver.", "opinion"),
        ("この規定は見直しが必要と思われます。", "opinion"),
        ("資料によると、上限は500万円です。", "factual"),
        ("The limit is 5 million yen.", "factual"),
    ],
)
def test_claims_are_classified(claim: str, kind: str) -> None:
    assert classify_claim(claim)[0] == kind


def test_a_hedge_that_states_a_wrong_number_is_still_rejected() -> None:
    result = check_claim("The limit is probably 8 million yen.", "The limit is 5 million yen.")
    assert result.kind == "opinion"
    assert not result.supported


def test_similarity_only_rescues_borderline_coverage_never_a_number() -> None:
    paragraph = "Contractors must submit timesheets every Friday."
    claim = "Contractors must submit signed weekly timesheets every Friday afternoon."
    assert not check_claim(claim, paragraph).supported
    assert check_claim(claim, paragraph, similarity=0.9).supported
    wrong = check_claim("Contractors submit 3 timesheets.", paragraph, similarity=0.99)
    assert not wrong.supported


def test_claims_without_numbers_share_counts_factual_claims_only() -> None:
    claims = [
        "The limit is 5 million yen.",
        "Approval is required.",
        "Here is a summary.",
        "I think this is fine.",
    ]
    assert claims_without_numbers_share(claims) == 0.5
    assert claims_without_numbers_share([]) == 0.0


@given(
    st.integers(min_value=1, max_value=10**9),
    st.integers(min_value=1, max_value=10**9),
)
def test_any_changed_amount_is_rejected(stated: int, claimed: int) -> None:
    paragraph = f"The Buyer shall pay the Seller {stated:,} yen on delivery."
    result = check_claim(f"The Buyer pays the Seller {claimed:,} yen on delivery.", paragraph)
    assert result.supported == (stated == claimed)


def test_reasons_quote_the_claims_words_not_their_stems() -> None:
    result = check_claim(
        "Written approval is required for all hotel bookings.",
        "Hotel bookings go through the travel agency.",
    )
    assert result.reasons[-1].endswith("(missing: written, approval, required)")


def test_japanese_reasons_quote_the_words_as_written() -> None:
    result = check_claim("海外出張には日当が支給される。", KEIHI)
    assert result.reasons[-1].endswith("(missing: 海外, 日当, 支給)")


@pytest.mark.parametrize(
    ("percent", "points", "paragraph"),
    [
        (
            "The fee rose by 2%.",
            "The fee rose by 2 percentage points.",
            "The fee rose from 10% to 12%, up 2 percentage points.",
        ),
        (
            "割引率は2%引き上げる。",
            "割引率は2ポイント引き上げる。",
            "割引率は10%から12%へ2ポイント引き上げる。",
        ),
    ],
)
def test_percent_is_not_percentage_points(percent: str, points: str, paragraph: str) -> None:
    # given a paragraph that moves a rate by points, when a claim says percent
    result = check_claim(percent, paragraph)
    # then the number is not found, and the reason shows the points beside the percentages
    assert not result.numbers_ok
    assert "2 percentage points" in result.reasons[0]
    assert check_claim(points, paragraph).supported


@pytest.mark.parametrize(
    ("claim", "paragraph"),
    [
        ("Orders of at least 50 licences qualify.", "Orders of more than 50 licences qualify."),
        ("Orders of 50 or more licences qualify.", "Orders above 50 licences qualify."),
        ("100万円超の取引は承認を要する。", "100万円以上の取引は承認を要する。"),
        ("残業は月45時間未満とする。", "残業は月45時間以下とする。"),
    ],
)
def test_an_inclusive_bound_is_not_a_strict_one(claim: str, paragraph: str) -> None:
    result = check_claim(claim, paragraph)
    assert result.reversal
    assert result.reasons[0].startswith("bound changed:")


def test_each_bound_belongs_to_its_own_number() -> None:
    paragraph = CORPUS["paragraphs"]["leave"]
    kept = "Leave of more than 5 consecutive days must be requested at least two weeks ahead."
    turned = "Leave of more than 5 consecutive days must be requested at most two weeks ahead."
    assert check_claim(kept, paragraph).supported
    assert check_claim(turned, paragraph).reversal_words == [("at most", "at least")]


def test_a_restriction_the_paragraph_does_not_state_is_rejected() -> None:
    paragraph = CORPUS["paragraphs"]["travel"]
    added = check_claim("Receipts are only required for items over 5,000 yen abroad.", paragraph)
    assert not added.supported
    assert "adds a condition the cited paragraph does not state" in added.reasons[-1]
    assert added.reasons[-1].endswith("(missing: abroad)")


def test_a_condition_the_paragraph_states_itself_is_judged_by_coverage() -> None:
    paragraph = "Refunds are issued only if the customer cancels within 14 days."
    claim = "Refunds are only issued if the customer cancels in 14 days."
    assert check_claim(claim, paragraph).supported


def test_a_paraphrased_condition_is_kept() -> None:
    claim = "Receipts are required if an item costs over 5,000 yen."
    assert check_claim(claim, CORPUS["paragraphs"]["travel"]).supported


def test_an_added_japanese_condition_is_rejected() -> None:
    claim = "部長の承認を得た場合、在宅勤務は週3日まで認める。"
    result = check_claim(claim, CORPUS["paragraphs"]["ja_jinji"])
    assert not result.supported
    assert any(r.startswith("adds a condition") for r in result.reasons)


def test_roles_are_checked_across_the_paragraph_when_the_matching_clause_names_none() -> None:
    # "Late payments incur interest" names no party; the paragraph's buyer pays the seller.
    claim = "The seller pays the buyer interest of 3% per year on late payments."
    result = check_claim(claim, PURCHASE)
    assert not result.supported
    # who pays, read from both sentences: the claim's seller, the paragraph's buyer
    assert result.reversal_words == [("seller pays", "buyer pay")]
    kept = check_claim("The buyer pays interest of 3% per year on late payments.", PURCHASE)
    assert kept.supported


def test_a_period_counted_after_an_event_is_a_deadline_not_a_reversal() -> None:
    paragraph = "The buyer pays within 60 days of delivery."
    assert check_claim("The buyer pays 60 days after delivery at the latest.", paragraph).supported
    assert check_claim("The buyer pays after 60 days.", paragraph).reversal


def test_a_party_after_a_preposition_is_not_the_subject() -> None:
    paragraph = "At the board meeting, the directors approved the new office."
    assert check_claim("The directors approved the new office.", paragraph).supported
    assert check_claim("The board approved the new office.", paragraph).supported
    assert not check_claim("The CFO approved the new office.", paragraph).supported


def test_a_verb_is_not_taken_for_a_party_noun() -> None:
    # "approved" and "requested" stem like "approver" and "requester"
    paragraph = "The manager approves each request."
    assert check_claim("Each request is approved by the manager.", paragraph).supported
    assert not check_claim("Each request is approved by the applicant.", paragraph).supported


def test_by_after_a_subject_names_the_agent_only_in_the_passive() -> None:
    paragraph = "The seller ships the goods within 30 days of payment by the buyer."
    assert check_claim("The seller ships the goods within 30 days.", paragraph).supported
    assert not check_claim("The buyer ships the goods within 30 days.", paragraph).supported
    passive = "The goods are shipped by the seller within 30 days."
    assert check_claim(passive, paragraph).supported


# --- the cosine the claim check is given -----------------------------------------------------

VERBATIM = "Expenses above 50,000 yen require prior approval by the division head."


def test_a_vector_against_itself_has_a_cosine_of_exactly_one_not_more() -> None:
    # given a float32 unit vector whose dot product with itself rounds above 1
    vector = HashingEmbedder().embed([VERBATIM])[0]
    assert vector.dtype == np.float32
    assert float(vector @ vector) > 1.0  # 1.0000001: what the validation used to compare
    # then its cosine with itself is 1, which the scores accept and the check is rescued by
    similarity = cosine(vector, vector)
    assert similarity == 1.0
    assert cosine(vector, -vector) == -1.0
    item_confidence([similarity], [1.0], [1.0], [1.0], (0.25, 0.25, 0.25, 0.25))
    assert check_claim(VERBATIM, VERBATIM, similarity=similarity).supported


@given(
    # Not all near zero: float32 squares of subnormals underflow, and the zero vector has
    # no direction (its cosine is 0 by design).
    st.lists(st.floats(-1e3, 1e3, allow_nan=False, width=32), min_size=2, max_size=64).filter(
        lambda xs: max(abs(x) for x in xs) > 1e-3
    )
)
def test_the_cosine_of_unit_float32_vectors_stays_within_minus_one_and_one(
    values: list[float],
) -> None:
    (vector,) = l2_normalise(np.asarray([values], dtype=np.float32))
    assert -1.0 <= cosine(vector, vector) <= 1.0
    assert -1.0 <= cosine(vector, -vector) <= 1.0
    assert cosine(vector, vector) == pytest.approx(1.0, abs=1e-5)
