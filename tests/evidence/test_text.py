from __future__ import annotations

import pytest
import Stemmer
from hypothesis import given
from hypothesis import strategies as st

from evidence.text import (
    _EN_TOKEN,
    _IRREGULAR,
    _THOUSANDS,
    content_terms,
    english_stem,
    has_japanese,
    japanese_morphemes,
    span_morphemes,
    split_sentences,
    term_surfaces,
    tokenize,
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
