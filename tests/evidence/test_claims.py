"""Claims of an answer and the paragraph spans that support them (evidence.claims): pure, no
database."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence.claims import _MARKER, Alignment, Claim, align, sentence_spans, split_claims
from evidence.text import format_characters, split_sentences, without_format


def texts(answer: str) -> list[str]:
    return [c.text for c in split_claims(answer)]


def assert_offsets(answer: str, claims: list[Claim]) -> None:
    for claim in claims:
        assert answer[claim.start : claim.end] == claim.text


# --- split_claims: examples ---------------------------------------------------------------


def test_english_clauses_with_their_own_subject_and_verb_are_two_claims() -> None:
    answer = (
        "Employees may work remotely up to 3 days per week, and requests must be approved by "
        "the line manager [2]."
    )
    claims = split_claims(answer)
    assert claims == [
        Claim("Employees may work remotely up to 3 days per week", 0, 49, ()),
        Claim("requests must be approved by the line manager", 55, 100, (2,)),
    ]
    assert_offsets(answer, claims)


def test_japanese_sentences_and_the_ga_clause_are_split() -> None:
    answer = "出張旅費は帰着後30日以内に精算する。超過分は自己負担とするが、役員は会社が負担する。"
    claims = split_claims(answer)
    assert [c.text for c in claims] == [
        "出張旅費は帰着後30日以内に精算する",
        "超過分は自己負担とする",
        "役員は会社が負担する",
    ]
    assert_offsets(answer, claims)
    assert all(c.markers == () for c in claims)


@pytest.mark.parametrize(
    "answer",
    [
        "Receipts and invoices are required.",
        "Receipts, invoices and contracts are required.",
        "Research and development costs are deductible.",
        "Staff must keep receipts and invoices for seven years.",
        "Managers must approve travel, hotels, and the rental cars booked by staff.",
        "Requests must be submitted in writing and must be approved by HR.",
        "The policy applies between 1 April and 31 March.",
        "The policy is strict, but not for managers.",
        "Staff must log their hours while travelling.",
    ],
)
def test_lists_of_nouns_and_shared_subjects_stay_one_claim(answer: str) -> None:
    assert texts(answer) == [answer.rstrip(".")]


@pytest.mark.parametrize(
    "answer",
    [
        "The fee is 1,000 yen per person.",
        "The rate is 3.5 percent.",
        "Costs, e.g. taxis and meals, are covered.",
        "Approx. five days are allowed.",
        "Invoices go to Acme Inc. for review.",
        "See example.com for details.",
        "J. Smith must approve it.",
    ],
)
def test_numbers_decimals_and_abbreviations_do_not_split(answer: str) -> None:
    assert texts(answer) == [answer.rstrip(".")]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            "Requests are approved by HR and payments are made by finance.",
            ["Requests are approved by HR", "payments are made by finance"],
        ),
        (
            "The buyer must pay within 30 days; the seller must ship within 5 days.",
            ["The buyer must pay within 30 days", "the seller must ship within 5 days"],
        ),
        (
            "Full-time staff are eligible, but contractors are not.",
            ["Full-time staff are eligible", "contractors are not"],
        ),
        (
            "Overtime is paid monthly whereas bonuses are paid yearly.",
            ["Overtime is paid monthly", "bonuses are paid yearly"],
        ),
        (
            "The manager signed the form, and the director approved it.",
            ["The manager signed the form", "the director approved it"],
        ),
        (
            "Staff must keep receipts, and invoices must be filed monthly.",
            ["Staff must keep receipts", "invoices must be filed monthly"],
        ),
        (
            "A is due, B is paid, and C is closed.",
            ["A is due, B is paid", "C is closed"],
        ),
        (
            "But the fee is waived. However, the deposit is kept.",
            ["the fee is waived", "the deposit is kept"],
        ),
    ],
)
def test_english_clause_splits(answer: str, expected: list[str]) -> None:
    claims = split_claims(answer)
    assert [c.text for c in claims] == expected
    assert_offsets(answer, claims)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("申請は部長が承認し、また経理部が確認する。", ["申請は部長が承認し", "経理部が確認する"]),
        (
            "しかし、費用は会社が負担する一方、交通費は自己負担です。",
            ["費用は会社が負担する", "交通費は自己負担です"],
        ),
        ("原則は対面だが、例外はオンラインで行う。", ["原則は対面だ", "例外はオンラインで行う"]),
        ("料金は高いが、品質は良い。", ["料金は高い", "品質は良い"]),
        # が after a noun marks the subject: no clause ends there.
        ("会社が、費用を負担する。", ["会社が、費用を負担する"]),
        # 一方の is "one of the two": no predicate before it.
        ("契約の一方の当事者は解除できる。", ["契約の一方の当事者は解除できる"]),
        (
            "領収書と請求書が必要です！確認してください？",
            ["領収書と請求書が必要です", "確認してください"],
        ),
    ],
)
def test_japanese_clause_splits(answer: str, expected: list[str]) -> None:
    claims = split_claims(answer)
    assert [c.text for c in claims] == expected
    assert_offsets(answer, claims)


@pytest.mark.parametrize(
    ("answer", "markers"),
    [
        ("Receipts are required [1][3].", (1, 3)),
        ("Receipts are required [2, 3].", (2, 3)),
        ("Receipts are required [1-3].", (1, 2, 3)),
        ("Receipts are required [3][3][1].", (3, 1)),
        ("Receipts are required.[4]", (4,)),
        ("Receipts are required. [4]", (4,)),
        ("領収書が必要です【1】。", (1,)),
        ("領収書が必要です［２］。", (2,)),
        ("領収書が必要です。【1】【2】", (1, 2)),
        ("Receipts are required [sic].", ()),
    ],
)
def test_markers_are_read_and_kept_out_of_the_text(answer: str, markers: tuple[int, ...]) -> None:
    [claim] = split_claims(answer)
    assert claim.markers == markers
    assert_offsets(answer, [claim])
    if markers:
        assert "[" not in claim.text
        assert "【" not in claim.text
        assert "［" not in claim.text


def test_markers_belong_to_the_clause_and_sentence_they_are_written_in() -> None:
    answer = (
        "Fees are paid monthly [1], and refunds are made yearly [2].[3] Staff are notified [4]."
    )
    claims = split_claims(answer)
    assert [(c.text, c.markers) for c in claims] == [
        ("Fees are paid monthly", (1,)),
        ("refunds are made yearly", (2, 3)),
        ("Staff are notified", (4,)),
    ]
    assert_offsets(answer, claims)


def test_a_marker_inside_a_clause_stays_in_its_text() -> None:
    answer = "Receipts [1] are required for taxis."
    [claim] = split_claims(answer)
    assert claim == Claim("Receipts [1] are required for taxis", 0, 35, (1,))


def test_lines_bullets_and_list_numbers_are_stripped() -> None:
    answer = "Summary:\n1. Remote work is allowed [1].\n2) Managers must approve it.\n- Fees apply"
    claims = split_claims(answer)
    assert [c.text for c in claims] == [
        "Summary",
        "Remote work is allowed",
        "Managers must approve it",
        "Fees apply",
    ]
    assert claims[1].markers == (1,)
    assert_offsets(answer, claims)


@pytest.mark.parametrize("answer", ["", "   ", "\n\t\n", "[1].", "1.\n2.", "。"])
def test_answers_with_nothing_to_claim_give_no_claims(answer: str) -> None:
    assert split_claims(answer) == []


def test_long_and_pathological_answers_are_split_with_exact_offsets() -> None:
    # Inputs that would make a quadratic splitter crawl (the suite would not finish): their
    # speed is a benchmark's business, not an assert's; here they must split correctly.
    sentence = (
        "Employees may work remotely up to 3 days per week, and requests must be approved by "
        "the line manager [2]. "
    )
    answer = sentence * 1200
    assert len(answer) > 100_000
    claims = split_claims(answer)
    assert len(claims) == 2400
    assert_offsets(answer, claims)
    # One endless sentence of breaks, of abbreviations, of markers, of Japanese breaks with no
    # predicate.
    for pathological in [
        "x and " * 30_000,
        "x is y, and z " * 10_000,
        "e.g. " * 30_000,
        "3.5 " * 30_000,
        "[1]" * 40_000,
        "会社が、" * 30_000,
        " " * 100_000 + "1. 2. 3. " * 1_000,
    ]:
        assert len(pathological) > 100_000
        for claim in split_claims(pathological):
            assert pathological[claim.start : claim.end] == claim.text


# --- split_claims: properties ---------------------------------------------------------------

SUBJECTS = ["The employee", "Each manager", "Staff", "The buyer", "Contractors", "It"]
AUXILIARIES = ["must", "may", "will", "should", "is required to", "can"]
VERBS = ["submit", "approve", "pay", "keep", "review", "sign"]
OBJECTS = [
    "the invoice",
    "receipts and invoices",
    "1,000 yen",
    "3.5 days of leave",
    "the form, e.g. by email",
    "costs at approx. 2.5%",
    "the request within 30 days",
]
EN_JOINS = [", and ", "; ", " but ", " and ", " while ", ", "]
JA_CLAUSES = [
    "出張旅費は帰着後30日以内に精算する",
    "超過分は自己負担とする",
    "役員は会社が負担する",
    "領収書と請求書が必要です",
    "申請は部長が承認し",
    "会社が",
]
JA_JOINS = ["が、", "、また", "一方、", "、"]
GAPS = [" ", "  ", "\n", "\n- ", "\n\n", " \t"]


@st.composite
def answers(draw: st.DrawFn, with_markers: bool = True) -> tuple[str, list[int]]:
    """An answer composed of English and Japanese sentences, and its markers in order."""
    parts: list[str] = []
    markers: list[int] = []

    def marker() -> str:
        if not with_markers or not draw(st.booleans()):
            return ""
        markers.append(len(markers) + 1)
        return f" [{markers[-1]}]" if draw(st.booleans()) else f"【{markers[-1]}】"

    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            clauses = []
            for _ in range(draw(st.integers(1, 3))):
                clause = " ".join(
                    [
                        draw(st.sampled_from(SUBJECTS)),
                        draw(st.sampled_from(AUXILIARIES)),
                        draw(st.sampled_from(VERBS)),
                        draw(st.sampled_from(OBJECTS)),
                    ]
                )
                clauses.append(clause + marker())
            sentence = clauses[0]
            for clause in clauses[1:]:
                sentence += draw(st.sampled_from(EN_JOINS)) + clause
            sentence += draw(st.sampled_from([".", "!", "?", ""]))
        else:
            sentence = draw(st.sampled_from(JA_CLAUSES))
            for _ in range(draw(st.integers(0, 2))):
                sentence += draw(st.sampled_from(JA_JOINS)) + draw(st.sampled_from(JA_CLAUSES))
            sentence += marker() + draw(st.sampled_from(["。", "！", "？"]))
        parts.append(sentence)
        parts.append(draw(st.sampled_from(GAPS)))
    return "".join(parts), markers


@settings(max_examples=100, deadline=None)
@given(answers())
def test_claims_slice_the_answer_in_order_and_keep_every_marker(
    generated: tuple[str, list[int]],
) -> None:
    answer, markers = generated
    claims = split_claims(answer)
    assert claims
    for claim in claims:
        assert answer[claim.start : claim.end] == claim.text
        assert claim.text.strip() == claim.text
        assert claim.text
        # Markers at a claim's edges are cut off; one is left inside only where two clauses
        # were not split apart.
        assert not _MARKER.match(claim.text)
        assert not re.search(f"(?:{_MARKER.pattern})$", claim.text)
    for before, after in itertools.pairwise(claims):
        assert before.end <= after.start
    assert [n for c in claims for n in c.markers] == markers


@settings(max_examples=100, deadline=None)
@given(answers(with_markers=False))
def test_sentences_are_those_of_split_sentences(generated: tuple[str, list[int]]) -> None:
    answer, _ = generated
    spans = sentence_spans(answer)
    assert [answer[s:e] for s, e in spans] == split_sentences(answer)


# Invisible format characters a hostile answer may hide in its text (evidence.text.check_form).
HIDDEN = ["\u200b", "\u00ad", "\u202e", "\u2066", "\u2060", "\ufeff"]


@st.composite
def with_hidden(draw: st.DrawFn, text: str) -> str:
    """`text` with format characters put in at drawn places."""
    places = draw(st.lists(st.integers(0, len(text)), max_size=6))
    for at in sorted(places, reverse=True):
        text = text[:at] + draw(st.sampled_from(HIDDEN)) + text[at:]
    return text


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_format_characters_change_no_claim_and_no_sentence_only_their_offsets(
    data: st.DataObject,
) -> None:
    # given an answer, and the same answer with invisible characters put in anywhere
    answer, _ = data.draw(answers())
    hidden = data.draw(with_hidden(answer))
    # when both are split
    plain, claims = split_claims(answer), split_claims(hidden)
    # then the claims are the same text, each the exact slice of the answer it came from,
    # and no claim begins or ends on an invisible character
    assert [without_format(c.text) for c in claims] == [c.text for c in plain]
    assert [c.markers for c in claims] == [c.markers for c in plain]
    assert_offsets(hidden, claims)
    for claim in claims:
        assert not format_characters(claim.text[0] + claim.text[-1])
    spans = sentence_spans(hidden)
    assert [hidden[s:e] for s, e in spans] == split_sentences(hidden)
    assert [without_format(s) for s in split_sentences(hidden)] == split_sentences(answer)


def test_a_hidden_character_does_not_glue_two_sentences_into_one_claim() -> None:
    answer = "Travel is approved by HR.\u200b Meals are paid by the employee [2]."
    assert texts(answer) == ["Travel is approved by HR", "Meals are paid by the employee"]
    assert [c.markers for c in split_claims(answer)] == [(), (2,)]
    assert_offsets(answer, split_claims(answer))


def test_alignment_offsets_stay_in_the_paragraph_as_written() -> None:
    paragraph = "Hotels are booked by HR.\u00ad Meals are paid by the employ\u200bee."
    (best, *_) = align("Meals are paid by the employee.", [paragraph])
    assert paragraph[best.start : best.end] == best.text
    assert best.text == "Meals are paid by the employ\u200bee."


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .,;!?。、が1[]【】-\n ")), max_size=80))
def test_any_text_gives_exact_nonempty_ordered_claims(answer: str) -> None:
    claims = split_claims(answer)
    end = 0
    for claim in claims:
        assert answer[claim.start : claim.end] == claim.text
        assert claim.text
        assert claim.start >= end
        end = claim.end


# --- align ------------------------------------------------------------------------------------

POLICY = [
    "Remote work is a privilege. Employees may work remotely up to 3 days per week. "
    "Requests go to the line manager.",
    "Expense claims are filed monthly. Receipts are required for every claim.",
]


def assert_alignment_offsets(paragraphs: list[str], alignments: list[Alignment]) -> None:
    for a in alignments:
        assert paragraphs[a.paragraph][a.start : a.end] == a.text


def test_align_picks_the_sentence_holding_the_claims_words_and_numbers() -> None:
    alignments = align("Employees may work remotely up to 3 days per week [2].", POLICY)
    assert alignments
    best = alignments[0]
    assert best.paragraph == 0
    assert best.text == "Employees may work remotely up to 3 days per week."
    assert best.start == POLICY[0].index("Employees")
    assert best.score == 1.0
    assert_alignment_offsets(POLICY, alignments)
    assert len(alignments) <= 3
    assert [a.score for a in alignments] == sorted((a.score for a in alignments), reverse=True)
    assert all(0 < a.score <= 1 for a in alignments)


def test_align_prefers_the_span_stating_the_claims_number() -> None:
    paragraphs = [
        "Staff may work remotely five days per week.",
        "Staff may work remotely three days per week.",
    ]
    alignments = align("Staff may work remotely 3 days per week.", paragraphs)
    assert [a.paragraph for a in alignments] == [1, 0]
    assert alignments[0].score > alignments[1].score
    assert_alignment_offsets(paragraphs, alignments)


def test_align_breaks_ties_by_paragraph_order() -> None:
    paragraphs = ["Receipts are required.", "Nothing here.", "Receipts are required."]
    alignments = align("Receipts are required", paragraphs)
    assert [(a.paragraph, a.score) for a in alignments] == [(0, 1.0), (2, 1.0)]


def test_align_joins_two_adjacent_sentences_that_together_cover_the_claim() -> None:
    paragraph = "Taxis are covered for staff. The reimbursement limit is 5,000 yen. Lunch is free."
    alignments = align("Taxis are covered up to a limit of 5,000 yen", [paragraph])
    best = alignments[0]
    assert best.text == "Taxis are covered for staff. The reimbursement limit is 5,000 yen."
    assert best.start == 0
    assert paragraph[best.start : best.end] == best.text
    # The pair's sentences are not offered again on their own.
    assert len(alignments) == 1


def test_align_works_for_japanese() -> None:
    paragraphs = ["出張規程。出張旅費は帰着後30日以内に精算する。超過分は自己負担とする！"]
    alignments = align("出張旅費は30日以内に精算する【1】", paragraphs)
    assert alignments[0].text == "出張旅費は帰着後30日以内に精算する。"
    assert alignments[0].start == 5
    assert_alignment_offsets(paragraphs, alignments)


def test_align_with_nothing_to_match_is_empty() -> None:
    assert align("The cafeteria serves vegetarian lunches.", POLICY) == []
    assert align("", POLICY) == []
    assert align("   [1]", POLICY) == []
    assert align("Receipts are required", []) == []
    assert align("Receipts are required", ["", "  "]) == []


@settings(max_examples=50, deadline=None)
@given(answers(with_markers=False), answers(with_markers=False))
def test_alignments_slice_their_paragraph(
    claim: tuple[str, list[int]], paragraph: tuple[str, list[int]]
) -> None:
    paragraphs = [paragraph[0], claim[0]]
    alignments = align(claim[0], paragraphs)
    assert len(alignments) <= 3
    assert_alignment_offsets(paragraphs, alignments)
    assert all(0 < a.score <= 1 for a in alignments)
    keys = [(-a.score, a.paragraph, a.start) for a in alignments]
    assert keys == sorted(keys)
