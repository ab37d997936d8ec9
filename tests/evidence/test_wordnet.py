from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidence import wordnet
from evidence.lexicon import OPPOSITES
from evidence.wordnet import Kind, antonyms, lemmas, reverses

# The reversals the issue names, each as (claim word, span word).
REVERSALS = [
    ("over", "under"),
    ("exceeding", "under"),
    ("all", "some"),
    ("entitled to", "may request"),
    ("must", "may"),
    ("increase", "decrease"),
    ("approve", "reject"),
    ("permitted", "prohibited"),
    ("full", "partial"),
    ("以上", "未満"),
    ("承認", "却下"),
    ("増加", "減少"),
    ("必須", "任意"),
    ("全額", "半額"),
    ("会社負担", "自己負担"),
]


@pytest.mark.parametrize(("claim_word", "span_word"), REVERSALS)
def test_the_issues_examples_are_reversals_both_ways(claim_word: str, span_word: str) -> None:
    assert reverses(claim_word, span_word)
    assert reverses(span_word, claim_word)


@pytest.mark.parametrize(
    ("claim_word", "span_word"),
    [("increased", "decreased"), ("approved", "rejected"), ("Exceeds", "below"), ("MUST", "may")],
)
def test_inflected_and_capitalised_words_reverse_on_their_base_forms(
    claim_word: str, span_word: str
) -> None:
    assert reverses(claim_word, span_word)


def test_wordnet_itself_gives_the_direct_pairs_without_the_table() -> None:
    direct = frozenset({Kind.DIRECT})

    assert "decrease" in antonyms("increase", direct)
    assert "some" in antonyms("all", direct)
    assert "below" in antonyms("above", direct)
    assert antonyms("over", direct) == frozenset()  # a preposition: the table's business


def test_synonyms_and_unrelated_words_are_no_reversal() -> None:
    assert not reverses("increase", "rise")
    assert not reverses("approve", "approved")
    assert not reverses("over", "above")
    assert not reverses("payment", "invoice")


@pytest.mark.parametrize(
    "word",
    ["over", "under", "increase", "approved", "all", "must", "entitled to", "以上", "good"],
)
def test_a_word_is_no_antonym_of_itself(word: str) -> None:
    assert word not in antonyms(word)
    assert not (antonyms(word) & lemmas(word))
    assert not reverses(word, word)


def test_the_tables_entries_are_antonyms_both_ways() -> None:
    for words, opposites, source in OPPOSITES:
        assert source.strip()
        for word in words:
            for opposite in opposites:
                assert opposite in antonyms(word), (word, opposite)
                assert word in antonyms(opposite), (opposite, word)


@given(
    st.sampled_from(sorted(wordnet.table_words())), st.sampled_from(sorted(wordnet.table_words()))
)
def test_reverses_is_symmetric_over_the_tables_words(a: str, b: str) -> None:
    assert reverses(a, b) == reverses(b, a)


@pytest.mark.parametrize("word", ["", "   ", "qwzxv", "xyzzy plugh", "①", "ÄÖÜ"])
def test_unknown_words_have_no_antonyms(word: str) -> None:
    assert antonyms(word) == frozenset()
    assert not reverses(word, "under")


def test_every_kind_gives_a_superset_of_the_direct_links() -> None:
    direct = antonyms("wet", frozenset({Kind.DIRECT}))
    wider = antonyms("wet", frozenset(Kind))

    assert "dry" in direct
    assert direct <= wider


def test_the_database_is_wordnet_3_0_with_its_licence() -> None:
    folder = wordnet.database_dir()

    assert "WordNet 3.0" in (folder / "LICENSE").read_text(encoding="utf-8") or (
        folder.as_posix() == "/usr/share/wordnet"
    )


def test_a_listed_word_is_not_read_as_a_comparative() -> None:
    # "offer" is a word of its own, not "more off" (whose opposite is "on")
    assert wordnet.lemmas("offer") == frozenset({"offer"})
    assert "on" not in wordnet.antonyms("offer")
    # an unlisted comparative still finds its adjective
    assert "cheap" in wordnet.lemmas("cheaper")


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("get", "receive", True),  # receive's second verb sense
        ("received", "gets", True),  # on base forms
        ("mandatory", "required", True),
        ("phrases", "words", False),  # synonyms as verbs, nouns here
        ("get", "incur", False),  # get's fourth sense: not among its most frequent
        ("rose", "fell", False),
        ("receive", "receives", False),  # the same word is no synonym
    ],
)
def test_synonymous_reads_the_most_frequent_senses_of_the_main_part_of_speech(
    first: str, second: str, expected: bool
) -> None:
    assert wordnet.synonymous(first, second) is expected
