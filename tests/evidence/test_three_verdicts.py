"""The three verdicts (docs/math.md §9, DESIGN.md §6): refuted only when certain, verified only
by construction, unverified for the rest. Each case of issue 27's "Why" and of seed 000's
examples, with the verdict it should get; and the properties the gate relies on."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence.grounding import check_claim

REMOTE = (
    "Employees may request to work remotely up to 3 days per week, subject to approval by "
    "their line manager."
)
HOTEL = "宿泊費は1泊あたり12,000円を上限とし、超過分は自己負担とする。"
APPROVAL = "Expenses above 500,000 yen require prior approval by the division head."
MANAGER = "Employees must obtain manager approval before booking travel."
FILM = (
    "The film premiered in May 2015 and went on to gross $181,674,817 at the worldwide box "
    "office against a production budget of $60 million."
)


def verdict(claim: str, evidence: str) -> str:
    return check_claim(claim, evidence).verdict


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # seed 000's worked equivalences
        ("出席率は8割以上が必要です。", "出席率は80%以上が必要である。"),
        ("上限は1万2千円です。", "上限は12,000円とする。"),
        (
            "Equipment costs above five hundred dollars need approval.",
            "Equipment costs above $500 need approval.",
        ),
        # the claim in the span's own words, numbers written otherwise
        ("宿泊費は1泊あたり12,000円を上限とする。", HOTEL),
        (APPROVAL, APPROVAL),
        ("Expenses above 500,000 yen require prior approval.", APPROVAL),
        # an era year: 令和 is part of the number, as "five" is
        ("本規程は令和7年4月1日から施行される。", "本規程は2025年4月1日から施行する。"),
    ],
)
def test_the_same_fact_in_the_spans_words_is_verified(claim: str, evidence: str) -> None:
    found = check_claim(claim, evidence)
    assert found.verdict == "verified", found.reasons


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # the payer swapped (seed 000): 会社が負担 where the span says 自己負担
        ("宿泊費の超過分は会社が負担します。", HOTEL),
        # the approver swapped
        ("Expenses above 500,000 yen require prior approval by finance.", APPROVAL),
        ("Finance must approve requests to work remotely.", REMOTE),
        # a number the aligned span contradicts
        ("Expenses above 300,000 yen require prior approval by the division head.", APPROVAL),
        ("Employees may request to work remotely up to 5 days per week.", REMOTE),
        # an explicit negation
        ("Expenses above 500,000 yen do not require prior approval.", APPROVAL),
    ],
)
def test_what_the_span_says_otherwise_is_refuted(claim: str, evidence: str) -> None:
    found = check_claim(claim, evidence)
    assert found.verdict == "refuted", found.reasons
    assert not found.supported


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # 67% of key terms: shown to reviewers as supported before; nothing in the span says
        # who approves reimbursements, nor "every"
        (
            "Finance must approve every reimbursement.",
            "Approved expenses are reimbursed within 30 days of submission.",
        ),
        # a scope word the span does not have
        ("All employees may request to work remotely.", REMOTE),
        # a paraphrase: plausibly right, not verifiable by construction
        ("Staff can ask to telework a few days each week.", REMOTE),
        # the span never says it (and nothing in it says otherwise)
        ("Business class flights are always allowed.", APPROVAL),
        # a number the span does not state at all: absent, not contradicted
        ("Employees get 25 days of annual leave.", REMOTE),
    ],
)
def test_what_the_engine_cannot_vouch_for_is_unverified(claim: str, evidence: str) -> None:
    found = check_claim(claim, evidence)
    assert found.verdict == "unverified", found.reasons


def test_an_unverified_claim_says_what_the_span_lacks() -> None:
    found = check_claim("All employees may request to work remotely.", REMOTE)
    assert found.supported  # the old check passed it
    assert any("does not say all" in r for r in found.reasons), found.reasons


@pytest.mark.parametrize(
    "claim",
    [
        "",
        "   ",
        "\u200b\u200d\u2060",
        "500,000",
        "¥500,000 円 yen",
        "Employees 従業員 may リモート work.",
    ],
)
def test_bad_claims_get_a_verdict_and_no_exception(claim: str) -> None:
    found = check_claim(claim, APPROVAL)
    assert found.verdict in ("verified", "unverified", "refuted")
    assert found.reasons


@pytest.mark.parametrize(
    "source",
    [
        ("The division head approves expenses above 500,000 yen in advance. " * 30_000)[:2_000_000],
        # one Japanese run far past the 49,149 bytes Sudachi reads at once
        "部長は50万円を超える経費を事前に承認する。" * 35_000,
    ],
)
def test_a_two_megabyte_source_gets_a_verdict_read_around_the_claim(source: str) -> None:
    found = check_claim(APPROVAL, source)
    assert found.verdict in ("verified", "unverified")
    assert found.reasons


def test_a_source_of_only_numbers_gets_a_verdict() -> None:
    assert verdict(APPROVAL, "1 2 3 4 500 600 700,000") in ("unverified", "refuted")


UNRELATED = st.sampled_from(
    [
        "The cafeteria opens at 8 am.",
        "Parking permits are issued by facilities.",
        "The office is closed on national holidays.",
        "会議室の予約は総務部が管理する。",
        "Printers are serviced every quarter.",
    ]
)


@settings(max_examples=40, deadline=None)
@given(UNRELATED, st.booleans())
def test_an_unrelated_sentence_never_turns_verified_into_refuted(
    unrelated: str, before: bool
) -> None:
    for claim, evidence in [
        ("Expenses above 500,000 yen require prior approval.", APPROVAL),
        ("宿泊費は1泊あたり12,000円を上限とする。", HOTEL),
        ("Employees may request to work remotely up to 3 days per week.", REMOTE),
    ]:
        assert verdict(claim, evidence) == "verified"
        padded = f"{unrelated} {evidence}" if before else f"{evidence} {unrelated}"
        assert verdict(claim, padded) != "refuted", padded


MINUTES = (
    "Anna opened the meeting and went through the agenda. Ben said the printer on the third "
    "floor is not working again. Carla presented the new budget for the marketing campaign."
)


def test_a_negation_against_a_clause_about_something_else_refutes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the closest clause ("Carla presented the new budget ...") shares one word of six
    loose = "Dave did not present the travel plans for the sales team."
    found = check_claim(loose, MINUTES)
    assert (found.verdict, found.supported) == ("unverified", False)
    # the same negation against the clause it is about refutes
    assert verdict("Carla did not present the new budget for the marketing campaign.", MINUTES) == (
        "refuted"
    )
    assert verdict("Ben said the printer on the third floor is working again.", MINUTES) == (
        "refuted"
    )
    # and without the alignment rule the loose one would be refused
    monkeypatch.setattr("evidence.grounding.REVERSAL_ALIGNMENT", 0.0)
    assert verdict(loose, MINUTES) == "refuted"


def test_a_negation_of_a_word_the_claim_never_says_is_no_reversal() -> None:
    # a meeting summary: the cost came down by not using the feature; the claim says the
    # feature made it expensive. Not the words of the span, but not its reversal either.
    evidence = (
        "The designer cut the price to twelve euros by not using the voice recognition feature."
    )
    claim = "The price was too high because of the voice recognition feature."
    assert verdict(claim, evidence) == "unverified"
    # a claim that states the negated word is reversed
    assert verdict("The designer used the voice recognition feature.", evidence) == "refuted"


def test_a_claim_one_citation_states_is_not_refuted_by_another_with_more_of_its_words() -> None:
    from evidence.validation import claim_verdict

    # another company's figure, told with more of the claim's words, against the paragraph
    # that states the claim's own: a person decides, nothing is refused
    assert claim_verdict([("refuted", 0.8, False), ("unverified", 0.6, True)]) == "unverified"
    # no citation states it, and the closest refutes it
    assert claim_verdict([("refuted", 0.8, False), ("unverified", 0.6, False)]) == "refuted"
    # a made-up source refutes whatever else is cited
    assert claim_verdict([("refuted", 0.0, False), ("verified", 1.0, True)]) == "refuted"


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("4頭のキリンがたっています。", "4頭のキリンが立っています。"),
        ("4頭のキリンが立っています。", "4頭のキリンがたっています。"),
        ("ゾウに水をかけています。", "象に水をかけています。"),
        ("象に水をかけています。", "ゾウに水をかけています。"),
        ("部長がしょうにんする。", "部長が承認する。"),
    ],
)
def test_a_japanese_word_written_in_kana_for_its_kanji_is_verified(
    claim: str, evidence: str
) -> None:
    # the same reading and part of speech, one side all kana: an orthographic variant
    assert verdict(claim, evidence) == "verified"


# Every word of the claim is in the span, the roles are not (evidence.grounding._roles_differ).
CONTRACT = (
    "The supplier pays the shipping costs to the buyer's warehouse, and the buyer pays the "
    "import duties on arrival. The carrier checks each incoming parcel against the outgoing "
    "manifest."
)


@pytest.mark.parametrize(
    ("claim", "reason"),
    [
        # two words trade places, the rest in the span's order
        (
            "The carrier checks each outgoing parcel against the incoming manifest.",
            '"outgoing" before "incoming"',
        ),
        # a word said twice where the span says it once: the second is said of something else
        ("The supplier pays the shipping costs to the supplier's warehouse.", '"supplier"'),
    ],
)
def test_the_same_words_in_other_roles_are_not_verified(claim: str, reason: str) -> None:
    found = check_claim(claim, CONTRACT)
    assert found.verdict == "unverified", found.reasons
    assert any(reason in r for r in found.reasons), found.reasons


@pytest.mark.parametrize(
    "claim",
    [
        # a phrase reworded in place ("shipping costs" / "costs of shipping")
        "The supplier pays the costs of shipping to the buyer's warehouse.",
        # the same clause in the span's order
        "The buyer pays the import duties on arrival.",
    ],
)
def test_a_phrase_reworded_in_place_stays_verified(claim: str) -> None:
    found = check_claim(claim, CONTRACT)
    assert found.verdict == "verified", found.reasons


def test_a_claim_read_without_its_hidden_characters_says_so() -> None:
    # "n\u200bot" reads as "not" to the check, and as "n ot" to nobody: the reviewer is told.
    found = check_claim("Employees do n\u200bot need manager approval.", MANAGER)
    assert found.verdict == "refuted", found.reasons
    assert found.reasons[0] == (
        "the text holds invisible characters that change how it reads (ZERO WIDTH SPACE at "
        "14); they were removed for the check"
    )
    plain = check_claim("Employees do not need manager approval.", MANAGER)
    assert not any("invisible" in r for r in plain.reasons)


LICENCES = "Orders of at least 50 licences qualify for volume pricing."


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        # the same bound in other words: the number check compares bounds as intervals
        ("Orders of no fewer than 50 licences qualify for volume pricing.", "verified"),
        ("Orders of 50 licences or more qualify for volume pricing.", "verified"),
        # a bound the span's does not hold: no fewer than 50 is not fewer than 50
        ("Orders of fewer than 50 licences qualify for volume pricing.", "refuted"),
        ("Orders of no more than 50 licences qualify for volume pricing.", "refuted"),
    ],
)
def test_a_bound_said_in_other_words_is_read_by_its_number(claim: str, expected: str) -> None:
    found = check_claim(claim, LICENCES)
    assert found.verdict == expected, found.reasons


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        # an irregular inflection (WordNet's lemma) and a word of the same side of a group
        (
            "The marketing budget rose by 15% to 230 million yen.",
            "The marketing budget increased by 15% to 230 million yen.",
            "verified",
        ),
        (
            "Every item over 5,000 yen needs a receipt.",
            "A receipt is required for every item over 5,000 yen.",
            "verified",
        ),
        # the other side of the group is never the same word
        (
            "A receipt is optional for every item over 5,000 yen.",
            "A receipt is required for every item over 5,000 yen.",
            "refuted",
        ),
        # a word of a group left out ("eligible" is not "valid")
        (
            "The offer is eligible until March.",
            "The offer is valid until March.",
            "unverified",
        ),
    ],
)
def test_a_word_said_in_another_form_of_its_side_verifies(
    claim: str, evidence: str, expected: str
) -> None:
    found = check_claim(claim, evidence)
    assert found.verdict == expected, found.reasons


def test_a_claim_that_leaves_out_the_spans_limit_is_not_verified() -> None:
    # every word is there, but the claim speaks of every expense, the span of large ones
    found = check_claim("Expenses require prior approval by the division head.", APPROVAL)
    assert found.verdict == "unverified", found.reasons
    assert any("without its limit (over 500,000 JPY)" in r for r in found.reasons)
    # the limit stated: verified
    assert verdict("Expenses over 500,000 yen require prior approval.", APPROVAL) == "verified"


LEAVE = "Full-time employees receive 20 days of paid leave per year."
LAPTOPS = "All laptops must use full-disk encryption."
LEARNER = (
    "We propose the Neuro-Symbolic Concept Learner (NS-CL), a model that learns visual "
    "concepts, words, and semantic parsing of sentences without explicit supervision on any of "
    "them; instead, our model learns by simply looking at images and reading paired questions "
    "and answers."
)


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # a WordNet synonym in place: receive's second verb sense is "get"
        ("Full-time employees get 20 days of paid leave per year.", LEAVE),
        # a word of the modal's side: the span's "must" is a scope word, not a key term
        ("Full-disk encryption is mandatory on all laptops.", LAPTOPS),
        ("All laptops need full-disk encryption.", LAPTOPS),
        # a scope word of the same side: "can" / "may" (permission)
        (
            "Unused leave can be carried over for one year only.",
            "Unused leave may be carried over for one year only.",
        ),
    ],
)
def test_a_documented_synonym_in_place_verifies(claim: str, evidence: str) -> None:
    found = check_claim(claim, evidence)
    assert found.verdict == "verified", found.reasons


@pytest.mark.parametrize(
    "claim",
    [
        # "interpretation" is a synonym of the span's "reading", but not where the span says it
        "We propose the Neuro-Symbolic Interpretation Learner (NS-CL), a model that learns "
        "visual concepts, words, and semantic parsing of sentences without explicit "
        "supervision on any of them.",
        # "phrase" and "word" are synonyms as verbs only; these are nouns
        "We propose the Neuro-Symbolic Concept Learner (NS-CL), a model that learns visual "
        "concepts, phrases, and semantic parsing of sentences without explicit supervision on "
        "any of them.",
    ],
)
def test_a_synonym_out_of_place_or_of_another_part_of_speech_is_not_verified(
    claim: str,
) -> None:
    assert verdict(claim, LEARNER) == "unverified"


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        # an irregular past tense names its antonym group's side as its base form does
        ("Revenue fell by 15% last year.", "Revenue increased by 15% last year.", "refuted"),
        ("Revenue rose by 15% last year.", "Revenue decreased by 15% last year.", "refuted"),
        ("Staff numbers grew by 3%.", "Staff numbers were reduced by 3%.", "refuted"),
        ("Revenue fell by 15% last year.", "Revenue decreased by 15% last year.", "verified"),
    ],
)
def test_an_irregular_verb_is_read_as_its_base_form_for_the_reversal(
    claim: str, evidence: str, expected: str
) -> None:
    found = check_claim(claim, evidence)
    assert found.verdict == expected, found.reasons


VERIFICATION = (
    "We present the first verification that a neural network for perception tasks produces a "
    "correct output within a specified tolerance for every input of interest."
)


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        (
            "We present the first verification that a neural network for perception tasks "
            "produces an output within a specified tolerance for every input of interest.",
            VERIFICATION,
        ),
        ("The form needs a signature.", "The form needs a valid signature."),
        ("Contracts signed abroad are binding.", "Legal contracts signed abroad are binding."),
    ],
)
def test_a_claim_that_drops_a_polar_qualifier_of_a_noun_is_not_verified(
    claim: str, evidence: str
) -> None:
    found = check_claim(claim, evidence)
    assert found.verdict == "unverified", found.reasons
    assert any("qualifier" in reason for reason in found.reasons), found.reasons


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # descriptive modifiers name no opposite kind: a summary may leave them out
        (
            "The subscription fee is invoiced on January 15, 2025.",
            "The annual subscription fee is invoiced on January 15, 2025.",
        ),
        (VERIFICATION, VERIFICATION),
    ],
)
def test_a_claim_that_drops_a_descriptive_modifier_stays_verified(
    claim: str, evidence: str
) -> None:
    found = check_claim(claim, evidence)
    assert found.verdict == "verified", found.reasons


TRAVEL = "Employees must submit travel expense reports within 30 days of returning from a trip."
BUYER = "The Buyer shall pay the Seller the price of 12,000,000 yen within 60 days of delivery."


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        # a distributive for a distributive
        ("Full-time employees get 20 days of paid leave each year.", LEAVE, "verified"),
        ("Full-time employees get 20 days of paid leave every year.", LEAVE, "verified"),
        # a period counted from an event: "within N days after" is "within N days of"
        (
            "Travel expense reports have to be submitted within 30 days after the trip.",
            TRAVEL,
            "verified",
        ),
        # a deadline in other words: "no later than N days after", "N days after ... at the latest"
        ("The buyer pays the price 60 days after delivery at the latest.", BUYER, "verified"),
        ("The buyer pays the price no later than 60 days after delivery.", BUYER, "verified"),
        # ... but not a period before the event, nor one with no deadline
        ("The buyer pays the price 60 days after delivery.", BUYER, "unverified"),
        (
            "Travel expense reports are submitted within 30 days before the trip.",
            TRAVEL,
            "unverified",
        ),
    ],
)
def test_a_scope_word_said_in_other_words_verifies(
    claim: str, evidence: str, expected: str
) -> None:
    found = check_claim(claim, evidence)
    assert found.verdict == expected, found.reasons


def test_an_era_name_is_no_missing_word_in_the_coverage_figure() -> None:
    # 令和 is part of the year, as the verdict reads it: the reason's figure agrees
    found = check_claim(
        "本規程は令和7年4月1日から施行される。", "本規程は2025年4月1日から施行する。"
    )
    assert found.verdict == "verified"
    assert found.coverage == 1.0, found.reasons


QUALIFIED = st.sampled_from([
    "The system produces a {}output for every input of interest.",
    "The form needs a {}signature from the line manager.",
    "Each expense report includes a {}receipt for the hotel.",
])  # fmt: skip
POLAR = st.sampled_from(["correct", "valid", "legal", "complete", "accurate", "successful"])


@settings(max_examples=30, deadline=None)
@given(QUALIFIED, POLAR)
def test_dropping_a_polar_qualifier_never_verifies_and_keeping_it_does(
    template: str, adjective: str
) -> None:
    span = template.format(adjective + " ")
    assert verdict(template.format(""), span) == "unverified"
    assert verdict(span, span) == "verified"
