from __future__ import annotations

import sys
import unicodedata

import pytest
import Stemmer
from hypothesis import given
from hypothesis import strategies as st

from evidence import reasons as why
from evidence.grounding import check_claim
from evidence.text import (
    _EN_TOKEN,
    _FORMAT,
    _IRREGULAR,
    _THOUSANDS,
    check_form,
    content_terms,
    english_stem,
    format_characters,
    format_free,
    has_japanese,
    japanese_morphemes,
    name_format_characters,
    normalise,
    original_span,
    span_morphemes,
    split_sentences,
    term_surfaces,
    tokenize,
    without_format,
)


def test_english_terms_are_lower_cased_and_stemmed() -> None:
    assert tokenize("Approvals REQUIRED") == tokenize("approval required")


def test_numbers_are_kept_as_tokens_without_thousands_separators() -> None:
    assert "1200000" in tokenize("a fee of 1,200,000 yen")
    assert "3.5" in tokenize("3.5 percent")


def test_full_width_text_is_folded_by_nfkc() -> None:
    assert tokenize("ＡＢＣ　１２３") == ["abc", "123"]


def test_japanese_spelling_variants_share_a_normalised_form() -> None:
    assert tokenize("行なう") == tokenize("行う")


def test_japanese_particles_and_auxiliaries_are_dropped() -> None:
    terms = tokenize("事前承認は不要です。")
    assert terms == ["事前", "承認", "不要"]


def test_japanese_numerals_are_folded_to_digits() -> None:
    assert "120000000" in tokenize("金1億2000万円")
    assert "3000" in tokenize("三千円")


def test_mixed_english_and_japanese_text_is_tokenized_by_both_paths() -> None:
    terms = tokenize("The 稟議 must be approved by 部長 within 5 days")
    assert {"稟議", "部長", "approv", "5"} <= set(terms)


def test_content_terms_drop_stop_words_in_both_languages() -> None:
    assert content_terms("The buyer shall pay the seller") == ["buyer", "pay", "seller"]
    assert "為る" not in content_terms("承認することがある")
    assert "承認" in content_terms("承認することがある")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The limit is 3.5 million. Approval is required.", 2),
        ("Use e.g. a taxi. Then pay.", 2),
        ("上限は500万円です。承認が必要です！本当ですか？", 3),
        ("Mr. Smith approved it. Ms. Lee did not.", 2),
        ("- first point\n- second point", 2),
        ("「承認は不要です。」と部長は述べた。", 2),
    ],
)
def test_split_sentences_counts(text: str, expected: int) -> None:
    assert len(split_sentences(text)) == expected


def test_split_sentences_keeps_decimals_whole() -> None:
    assert split_sentences("The rate rose to 3.5% in 2024.") == ["The rate rose to 3.5% in 2024."]


def test_has_japanese() -> None:
    assert has_japanese("承認")
    assert not has_japanese("approval 123")


@given(st.lists(st.sampled_from(["alpha", "beta", "gamma", "承認", "不要", "42"]), max_size=8))
def test_tokenize_is_insensitive_to_case_and_width(words: list[str]) -> None:
    text = " ".join(words)
    assert tokenize(text.upper()) == tokenize(text)


def test_term_surfaces_map_each_stem_to_the_first_word_written() -> None:
    assert term_surfaces("Approval REQUIRED; approvals required") == {
        "approv": "approval",
        "requir": "required",
    }
    assert term_surfaces("事前承認は不要です")["承認"] == "承認"


def test_english_stem_is_the_term_tokenize_gives_one_word() -> None:
    for word in ("sellers", "paid", "required", "don't", "1200"):
        assert [english_stem(word)] == tokenize(word)


def test_span_morphemes_are_sudachis_reading_of_each_japanese_span() -> None:
    text = "Approval by 部長 is 必要ない, see 第5条。"
    spans = ["部長", "必要ない", "第5条"]
    expected = tuple(m for span in spans for m in japanese_morphemes(span))
    assert span_morphemes(text) == expected
    assert span_morphemes("no japanese here") == ()


_WORDS = st.text(alphabet="abcdeilmnoprstuy'", min_size=1, max_size=12)


@given(
    st.lists(_WORDS | st.sampled_from(["paid", "sold", "met", "the", "1,200", "3.5"]), max_size=10)
)
def test_english_terms_equal_stemming_each_word_afresh(words: list[str]) -> None:
    # Independent oracle: what the tokenizer did before it memoised words, Snowball on every
    # word of the text (irregular forms folded first).
    text = " ".join(words)
    stemmer = Stemmer.Stemmer("english")
    found = _EN_TOKEN.findall(_THOUSANDS.sub("", text))
    expected = [w if w[0].isdigit() else stemmer.stemWord(_IRREGULAR.get(w, w)) for w in found]
    assert tokenize(text) == expected


# --- the check form: no format (Cf) characters, then NFKC -------------------------------------

FORMAT_CHARACTERS = [
    chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"
]
ZWSP, SOFT_HYPHEN, RLO = "\u200b", "\u00ad", "\u202e"
# Text with format characters among ordinary ones: ASCII, Japanese, full-width, combining.
format_laden = st.text(
    alphabet=st.one_of(
        st.sampled_from(FORMAT_CHARACTERS),
        st.sampled_from(list("ab .\n\t\u3000\u00a0ＡＢ１ｶﾞ承認です。e\u0301")),
        st.characters(codec="utf-8"),
    ),
    max_size=60,
)


def test_the_format_class_is_every_cf_character_of_this_python() -> None:
    # The class is written out (evidence.text); a Python with newer Unicode tables fails here.
    written = [chr(c) for c in range(sys.maxunicode + 1) if _FORMAT.match(chr(c))]
    assert written == FORMAT_CHARACTERS


@pytest.mark.parametrize("char", FORMAT_CHARACTERS, ids=lambda c: f"U+{ord(c):04X}")
def test_check_form_removes_each_format_character(char: str) -> None:
    assert check_form(f"n{char}ot 承{char}認") == "not 承認"
    assert [found[:2] for found in format_characters(f"n{char}ot")] == [(1, char)]


@given(format_laden)
def test_check_form_is_idempotent(text: str) -> None:
    once = check_form(text)
    assert check_form(once) == once
    assert not format_characters(once)


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cf"]), max_size=60))
def test_text_without_format_characters_is_only_nfkc_folded(text: str) -> None:
    assert without_format(text) is text
    assert check_form(text) == unicodedata.normalize("NFKC", text)


def test_japanese_and_ordinary_text_stay_as_written_but_for_nfkc() -> None:
    japanese = "従業員は出張の前に上長の承認を得なければならない。"
    assert check_form(japanese) == japanese
    assert check_form("Employees need approval.") == "Employees need approval."
    assert check_form("ＡＢＣ　１２３ ｶﾞｲﾄﾞ") == "ABC 123 ガイド"


def test_normalise_reads_the_check_form() -> None:
    assert normalise(f"Do N{ZWSP}OT pay") == "do not pay"
    assert normalise(f"ne{SOFT_HYPHEN}ver") == "never"
    assert tokenize(f"{RLO}approval n{ZWSP}ot") == tokenize("approval not")


def test_format_characters_are_named_where_they_stand() -> None:
    text = f"Employees do n{ZWSP}ot ne{SOFT_HYPHEN}ver {RLO}"
    assert format_characters(text) == [
        (14, ZWSP, "ZERO WIDTH SPACE"),
        (20, SOFT_HYPHEN, "SOFT HYPHEN"),
        (25, RLO, "RIGHT-TO-LEFT OVERRIDE"),
    ]
    assert name_format_characters(text) == (
        "ZERO WIDTH SPACE at 14, SOFT HYPHEN at 20, RIGHT-TO-LEFT OVERRIDE at 25"
    )
    assert format_characters("plain text, 承認") == []
    reason = why.say(why.HIDDEN_CHARACTERS, characters=name_format_characters(text))
    assert reason.startswith("the text holds invisible characters that change how it reads (ZERO")


@given(format_laden, st.data())
def test_offsets_in_the_format_free_text_map_back_to_the_same_characters(
    text: str, data: st.DataObject
) -> None:
    free, kept = format_free(text)
    assert free == without_format(text)
    start = data.draw(st.integers(0, len(free)))
    end = data.draw(st.integers(start, len(free)))
    lo, hi = original_span(kept, start, end)
    # the original span holds the same text once its format characters are removed, and
    # begins and ends on a character that is no format character
    assert without_format(text[lo:hi]) == free[start:end]
    if start < end:
        assert not format_characters(text[lo])
        assert not format_characters(text[hi - 1])


def test_a_format_character_after_a_period_does_not_glue_two_sentences() -> None:
    text = f"Travel is approved.{ZWSP} Employees do n{ZWSP}ot need it."
    assert split_sentences(text) == ["Travel is approved.", f"Employees do n{ZWSP}ot need it."]


@pytest.mark.parametrize(
    "claim",
    [
        f"Employees do n{ZWSP}ot need manager approval.",
        f"Employees ne{SOFT_HYPHEN}ver need manager approval.",
        f"Employees do no{RLO}t need manager approval.",
        f"Employees do n{ZWSP}{SOFT_HYPHEN}ot need manager approval.",
    ],
)
@pytest.mark.parametrize(
    "paragraph", ["Employees must obtain manager approval.", "Employees need manager approval."]
)
def test_a_hidden_character_inside_a_negation_does_not_hide_it(claim: str, paragraph: str) -> None:
    # the plain word is caught as a reversal; so is the word with a hidden character inside
    plain = check_claim(without_format(claim), paragraph)
    hidden = check_claim(claim, paragraph)
    assert not hidden.supported
    assert hidden.reversal_words == plain.reversal_words
    assert hidden.reversal_words
