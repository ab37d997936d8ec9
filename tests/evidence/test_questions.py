"""What a question asks, what a claim supplies, and whether the claims address the question
(evidence.questions): pure, no database."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence.questions import (
    SIGNALS,
    addresses,
    analyse_question,
    model,
    pass_mark,
    reader,
    relevance,
    signals,
    supplied,
)

HOTEL = "What is the nightly hotel limit for business trips to Tokyo?"
REMOTE_CLAIM = "Employees may request to work remotely up to 3 days per week."
REMOTE_QUESTION = "How many days per week may employees work remotely?"


# --- what is asked ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "kind", "unit"),
    [
        ("Who approves travel expenses?", "person", None),
        ("When does the new policy take effect?", "date", None),
        ("What year was the office opened?", "date", None),
        ("Where is the head office?", "place", None),
        ("How many days per week may employees work remotely?", "number", "day"),
        ("How many nights may a trip last?", "number", "night"),
        ("How much does the company pay for a hotel?", "amount", None),
        ("What percentage of costs is reimbursed?", "number", "%"),
        ("Why was the policy changed?", "reason", None),
        ("Which form must be filed?", "choice", None),
        ("Is remote work allowed on Fridays?", "yes_no", None),
        ("What does the policy cover?", "open", None),
        ("How long is the notice period?", "period", None),
        # The first asking word decides: a later "when" or "where" opens a clause.
        ("What happens when an expense report is late?", "open", None),
        ("Which form is filed when a trip is cancelled?", "choice", None),
        ("In what year was the office opened?", "date", None),
        ("Who signs the contract when the director is away?", "person", None),
    ],
)
def test_english_question_kinds(question: str, kind: str, unit: str | None) -> None:
    part = analyse_question(question).parts[0]

    assert (part.kind, part.unit) == (kind, unit)


@pytest.mark.parametrize(
    ("question", "kind", "unit"),
    [
        ("経費は誰が承認しますか", "person", None),
        ("新しい規程はいつから施行されますか", "date", None),
        ("本社はどこにありますか", "place", None),
        ("会議室はいくつありますか", "number", None),
        ("在宅勤務は週何日まで認められますか", "number", "day"),
        ("交通費はいくらまで支給されますか", "amount", None),
        ("ホテル代の上限は何円ですか", "amount", "JPY"),
        ("経費の何割が払い戻されますか", "number", "%"),
        ("なぜ方針が変更されたのか", "reason", None),
        ("どの部署が経費を承認しますか", "choice", None),
        ("在宅勤務は金曜日も認められますか", "yes_no", None),
        ("梅雨とは何季の一種か", "open", None),
    ],
)
def test_japanese_question_kinds(question: str, kind: str, unit: str | None) -> None:
    part = analyse_question(question).parts[0]

    assert (part.kind, part.unit) == (kind, unit)


def test_focus_names_what_is_asked_in_the_questions_words() -> None:
    part = analyse_question(HOTEL).parts[0]

    assert part.focus[:1] == ("nightly hotel limit",)
    assert "Tokyo" in part.focus


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("What is the hotel limit and who approves it?", ["number", "person"]),
        ("When does it start? Where does it apply?", ["date", "place"]),
        ("ホテルの上限は何円で、誰が承認しますか", ["amount", "person"]),
    ],
)
def test_multi_part_questions_split_into_parts(question: str, kinds: list[str]) -> None:
    assert [p.kind for p in analyse_question(question).parts] == kinds


def test_a_single_question_with_and_stays_one_part() -> None:
    parts = analyse_question("Who approves hotels and flights for trips abroad?").parts

    assert len(parts) == 1


# --- what a claim supplies --------------------------------------------------------------


def test_english_claim_supplies_people_numbers_dates_places_reasons() -> None:
    given = supplied(
        "On April 1, 2025 the finance director in Osaka raised the limit to 15,000 yen "
        "because costs rose."
    )

    assert "finance director" in " ".join(given.persons).lower()
    assert any(n.unit == "JPY" for n in given.numbers)
    assert given.dates
    assert "Osaka" in given.places
    assert given.reasons == ("because",)
    assert {"person", "amount", "date", "place", "reason", "yes_no"} <= given.kinds()


def test_number_units_are_read_from_the_counted_word() -> None:
    assert [n.unit for n in supplied(REMOTE_CLAIM).numbers] == ["day"]
    assert [n.unit for n in supplied("A trip may last 3 nights.").numbers] == ["night"]
    assert [n.unit for n in supplied("経費の8割が払い戻される。").numbers] == ["%"]
    assert [n.unit for n in supplied("ホテルは1泊まで。").numbers] == ["泊"]


def test_japanese_claim_supplies_people_places_dates_reasons() -> None:
    given = supplied("織田信長は1582年に京都で明智光秀に討たれたため、部長が承認した。")

    assert {"織田", "明智"} <= set(given.persons)
    assert "部長" in given.persons
    assert "京都" in given.places
    assert "1582年" in given.dates
    assert "ため" in given.reasons


def test_negated_statement_supplies_a_no() -> None:
    assert supplied("Remote work is not allowed on Fridays.").polarity == "no"
    assert supplied("在宅勤務は金曜日には認められない。").polarity == "no"
    assert supplied("Yes, remote work is allowed.").polarity == "yes"


def test_a_claim_with_only_the_questions_name_supplies_no_person() -> None:
    question = analyse_question("Who founded Sony?")

    found = signals(question, question.parts[0], "Sony was founded in 1946.")

    assert found["kind_supplied"] == 0.0


# --- whether the answer addresses the question ------------------------------------------


def test_off_topic_answer_is_not_addressing_and_the_reason_names_both() -> None:
    result = addresses(HOTEL, [REMOTE_CLAIM])

    assert result.probability < 0.5
    assert result.mode == "off_topic"
    assert "nightly hotel limit" in result.reason
    assert "3 days" in result.reason
    assert "remotely" in result.reason


def test_matching_answer_addresses_the_question() -> None:
    result = addresses(REMOTE_QUESTION, [REMOTE_CLAIM])

    assert result.probability >= 0.5
    assert result.mode == "full"
    assert result.parts[0].claim == 0
    assert result.missing == ()


def test_multi_part_question_with_one_part_answered_is_partial_and_names_the_missing() -> None:
    result = addresses(
        "What is the hotel limit and who approves it?", ["The hotel limit is 15,000 yen."]
    )

    assert result.mode == "partial"
    assert [p.kind for p in result.missing] == ["person"]
    assert "approves" in result.reason
    assert [p.answered for p in result.parts] == [True, False]


def test_multi_part_question_answered_by_two_claims_is_full() -> None:
    result = addresses(
        "What is the hotel limit and who approves it?",
        ["The hotel limit is 15,000 yen.", "The department manager approves it."],
    )

    assert result.mode == "full"
    assert [p.claim for p in result.parts] == [0, 1]


def test_japanese_multi_part_question_names_the_missing_part() -> None:
    result = addresses(
        "ホテルの上限は何円で、誰が承認しますか", ["ホテルの上限は1泊1万5千円です。"]
    )

    assert result.mode == "partial"
    assert "承認" in result.reason


def test_japanese_off_topic_answer_is_not_addressing() -> None:
    result = addresses(
        "東京出張のホテル代の上限はいくらですか", ["在宅勤務は週3日まで認められる。"]
    )

    assert result.mode == "off_topic"
    assert "ホテル代" in result.reason


@pytest.mark.parametrize(
    ("question", "claim"),
    [
        ("Who approves travel expenses?", "Travel expenses are approved by the finance director."),
        ("Why was the policy changed?", "The policy was changed because costs rose."),
        ("When does the new policy take effect?", "The new policy takes effect on April 1, 2025."),
        ("Is remote work allowed on Fridays?", "Remote work is not allowed on Fridays."),
        ("経費の何割が払い戻されますか", "経費の8割が払い戻される。"),
        ("本社はどこにありますか", "本社は大阪にある。"),
        ("なぜ方針が変更されたのか", "費用が増えたため、方針が変更された。"),
        ("交通費はいくらまで支給されますか", "交通費は月3万円まで支給される。"),
    ],
)
def test_answers_of_the_asked_kind_address_their_question(question: str, claim: str) -> None:
    assert addresses(question, [claim]).mode == "full"


def test_no_claims_address_nothing() -> None:
    result = addresses(HOTEL, [])

    assert (result.probability, result.mode) == (0.0, "off_topic")
    assert result.missing == analyse_question(HOTEL).parts


def test_the_shipped_model_names_its_corpora_and_held_out_figures() -> None:
    fitted = model()

    # Each language read alone and beside its evidence's other sentences.
    assert set(fitted.languages) == {"en", "ja", "en+context", "ja+context"}
    assert fitted.provenance["corpora"]
    for language in fitted.languages:
        assert set(fitted.provenance["figures"][language]) >= {
            "matched_addressing",
            "mismatched_addressing",
        }
        assert set(fitted.languages[language].signals) == set(SIGNALS)


# --- properties -------------------------------------------------------------------------

_VOCABULARY = (
    "hotel limit night yen employees remote days week manager approves Tokyo policy "
    "because 3 15,000 in on the is may who what how many when where why 東京 出張 上限 "
    "何日 誰 いつ どこ なぜ 円 ため 承認 3日 ですか"
)
_WORDS = st.sampled_from(_VOCABULARY.split(" "))
_TEXT = st.lists(_WORDS, min_size=0, max_size=12).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(question=_TEXT, claims=st.lists(_TEXT, max_size=3))
def test_probability_is_in_unit_interval_and_parts_are_consistent(
    question: str, claims: list[str]
) -> None:
    result = addresses(question or "?", claims)

    assert 0.0 <= result.probability <= 1.0
    assert len(result.parts) >= 1
    assert set(result.missing) == {a.part for a in result.parts if not a.answered}
    assert result.reason


@settings(max_examples=60, deadline=None)
@given(question=_TEXT, claims=st.lists(_TEXT, min_size=1, max_size=3), extra=_TEXT)
def test_adding_a_claim_never_unanswers_a_part(
    question: str, claims: list[str], extra: str
) -> None:
    before = addresses(question or "?", claims)
    after = addresses(question or "?", [*claims, extra])

    for old, new in zip(before.parts, after.parts, strict=True):
        assert new.probability >= old.probability
        assert new.answered or not old.answered


@pytest.mark.parametrize(
    ("question", "claim", "better"),
    [
        (
            REMOTE_QUESTION,
            "Employees who work remotely must be reachable during core hours.",
            "Remote work is allowed up to 3 days per week for each employee.",
        ),
        (
            "When was the Tokyo office opened?",
            "The Tokyo office has forty staff in two departments.",
            "The Tokyo office was opened in April 2019.",
        ),
    ],
)
def test_a_claim_beside_the_evidence_sentence_that_answers_does_not_address_the_question(
    question: str, claim: str, better: str
) -> None:
    """On its own the claim shares enough of the question to pass; beside the cited
    evidence's sentence that answers it, it is seen to share only the subject."""
    assert addresses(question, [claim]).mode == "full"
    assert addresses(question, [claim], elsewhere=[better]).mode == "off_topic"
    assert addresses(question, [better], elsewhere=[claim]).mode == "full"


def test_each_part_of_a_question_is_read_in_its_own_words() -> None:
    """The first part's wording, all in the claim, does not answer the second part."""
    result = addresses(
        "How many days per week may employees work remotely, and who approves it?",
        [REMOTE_CLAIM],
    )
    assert result.mode == "partial"
    assert [p.answered for p in result.parts] == [True, False]


def test_a_claim_read_alone_is_judged_by_the_model_fitted_alone() -> None:
    """The model that weighs a claim against its neighbours trusts one nothing outdoes; a
    claim with no neighbours is judged by the model fitted without them."""
    beside = reader("en", in_context=True)
    alone = reader("en")
    assert beside is not alone
    assert pass_mark("en") == alone.threshold
    assert pass_mark("en", in_context=True) == beside.threshold
    assert reader("ja", in_context=True) is model().languages["ja+context"]


def test_a_paragraph_is_as_relevant_as_its_best_sentence_read_beside_the_others() -> None:
    answering = "Remote work is allowed up to 3 days per week for each employee."
    other = "Employees who work remotely must be reachable during core hours."
    assert relevance(REMOTE_QUESTION, f"{other} {answering}") == pytest.approx(1.0)
    assert relevance(HOTEL, f"{other} {answering}") < 0.5


@pytest.mark.parametrize(
    "question",
    [
        "What does the document say?",
        "Summarize the article.",
        "Please summarise this meeting",
        "Give me a brief overview",
        "What is the report about?",
        "What does the article say?",
        "What were the main points?",
        "この記事を要約してください",
        "会議の要点は何ですか？",
        "文書には何と書かれていますか。",
    ],
)
def test_a_request_for_the_source_as_a_whole_is_answered_by_any_claim(question: str) -> None:
    # any grounded claim answers it; whether it is grounded is the claim check's to say
    found = addresses(question, ["The budget was cut by a third."])
    assert [p.part.kind for p in found.parts] == ["summary"]
    assert (found.mode, found.probability) == ("full", 1.0)
    assert relevance(question, "An unrelated sentence about the weather.") == 1.0
    assert addresses(question, []).mode == "off_topic"


@pytest.mark.parametrize(
    "question",
    [
        "Tell me about the refund policy",
        "What does the policy cover?",
        "What happened to the budget?",
        "Who approves it?",
    ],
)
def test_a_question_about_one_subject_is_not_a_summary_request(question: str) -> None:
    assert all(p.kind != "summary" for p in analyse_question(question).parts)
    assert relevance(question, "An unrelated sentence about the weather.") < 1.0
