"""Text analysis shared by retrieval and grounding: terms, content terms and sentences.

English by a regex word tokenizer with Snowball (Porter2) stemming; Japanese by SudachiPy.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import Stemmer
    from sudachipy import Tokenizer

# Kana, kanji and the iteration / long-vowel marks. Half-width katakana are folded by NFKC.
_JA_CHARS = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆ヵヶー"
# A Japanese span may carry digits inside it (2024年4月1日, 1億2000万円): Sudachi reads those
# better as a whole than the English path would piece by piece.
_JA_SPAN = re.compile(rf"(?:\d[\d.,]*)?(?:[{_JA_CHARS}]+(?:\d[\d.,]*)?)+")
# English words (with an inner apostrophe: don't, party's) and numbers (1,200,000 / 3.5).
_EN_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")

# Sudachi part-of-speech heads that carry content. 形状詞 holds na-adjectives such as
# 必要 / 不要, which grounding must see. Particles, auxiliaries, symbols, conjunctions and
# interjections are dropped.
_JA_CONTENT_POS = frozenset({"名詞", "動詞", "形容詞", "形状詞", "接尾辞", "副詞", "接頭辞"})


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


ENGLISH_STOP_WORDS = _word_set(
    """
    a about above after again all also am an and any are as at be because been being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into
    is it its itself just me more most my myself nor of off on once only or other ought
    our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves shall may must might every each
    not no never none without don't doesn't isn't aren't wasn't weren't won't can't cannot
    """
)
# Normalised forms (Sudachi normalized_form) of Japanese function-like content words.
JAPANESE_STOP_WORDS = _word_set(
    """
    為る 有る 居る 成る 出来る 無い 事 こと 物 もの 為 ため 様 よう 此れ 其れ 彼れ 此の 其の
    ところ 所 等 など 又 及び 並びに 若しくは 或いは 其処 此処 上 中 下 際 場合 方 的 化 者
    """
)


class Morpheme(NamedTuple):
    """One Sudachi morpheme: what was written, its dictionary form and its POS head pair."""

    surface: str
    normalized: str
    pos: str
    pos_detail: str
    verbal: bool = False  # a noun that takes する (承認, 負担): Sudachi's サ変可能


class Term(NamedTuple):
    """A retrieval term, whether the word it came from is a stop-word, and that word."""

    term: str
    stop: bool
    # The word as written (NFKC, lower-case): what a reviewer should read, not the stem.
    surface: str


class _PerThread(threading.local):
    # Neither Sudachi tokenizers nor Snowball stemmers are thread-safe: one of each per thread.
    sudachi: Tokenizer | None = None
    stemmer: Stemmer.Stemmer | None = None
    # Sudachi POS id -> (head, detail, verbal): part_of_speech() builds a 6-tuple per morpheme.
    pos: dict[int, tuple[str, str, bool]]

    def __init__(self) -> None:
        self.pos = {}


_local = _PerThread()


def _sudachi() -> Tokenizer:
    if _local.sudachi is None:
        from sudachipy import Dictionary, SplitMode

        # Mode B (middle units): 事前承認 -> 事前 / 承認, so a claim that says 承認 finds the
        # paragraph's 事前承認, while it keeps words like 取締役会 whole (mode A would cut
        # them into 取締 / 役 / 会 and match unrelated text). Mode C keeps compounds whole and
        # loses those partial matches.
        _local.sudachi = Dictionary().tokenizer(mode=SplitMode.B, fields={"pos", "normalized_form"})
    return _local.sudachi


def _stemmer() -> Stemmer.Stemmer:
    if _local.stemmer is None:
        import Stemmer

        _local.stemmer = Stemmer.Stemmer("english")
    return _local.stemmer


def normalise(text: str) -> str:
    """NFKC-fold (full-width digits and letters, half-width kana) and lower-case."""
    return unicodedata.normalize("NFKC", text).lower()


def has_japanese(text: str) -> bool:
    """Whether the text holds any kana or kanji."""
    return re.search(f"[{_JA_CHARS}]", text) is not None


@lru_cache(maxsize=16384)
def japanese_morphemes(text: str) -> tuple[Morpheme, ...]:
    """Sudachi morphemes (mode B) of already-normalised text, punctuation included."""
    tokens = _sudachi().tokenize(text)
    pos_names = _local.pos
    out = []
    for m in tokens:
        pos_id = m.part_of_speech_id()
        pos = pos_names.get(pos_id)
        if pos is None:
            head, detail, kind = m.part_of_speech()[:3]
            pos = pos_names[pos_id] = (head, detail, kind == "サ変可能")
        out.append(Morpheme(m.surface(), m.normalized_form(), *pos))
    return tuple(out)


# Irregular forms Snowball cannot fold, common in policy and contract text (paid -> pay).
_IRREGULAR = {
    "paid": "pay",
    "payment": "pay",
    "payments": "pay",
    "made": "make",
    "given": "give",
    "gave": "give",
    "took": "take",
    "taken": "take",
    "held": "hold",
    "sent": "send",
    "sold": "sell",
    "bought": "buy",
    "spent": "spend",
    "kept": "keep",
    "chose": "choose",
    "chosen": "choose",
    "began": "begin",
    "begun": "begin",
    "wrote": "write",
    "written": "write",
    "brought": "bring",
    "met": "meet",
}


# Word -> its Term. Stemming and building a Term per word dominated tokenising new text;
# the vocabulary of policy text is small, so the map stays small. Numbers are not kept
# (unbounded), and the map is emptied if an odd corpus ever grows it past the cap.
_EN_TERMS: dict[str, Term] = {}
_EN_TERMS_MAX = 200_000


def _english_terms(text: str) -> list[Term]:
    if "," in text:
        text = _THOUSANDS.sub("", text)
    known = _EN_TERMS
    out = []
    for word in _EN_TOKEN.findall(text):
        term = known.get(word)
        if term is None:
            term = _english_term(word)
        out.append(term)
    return out


def _english_term(word: str) -> Term:
    if word[0].isdigit():
        return Term(word, False, word)
    base = _IRREGULAR.get(word, word)
    term = Term(_stemmer().stemWord(base), base in ENGLISH_STOP_WORDS, word)
    if len(_EN_TERMS) >= _EN_TERMS_MAX:
        _EN_TERMS.clear()
    _EN_TERMS[word] = term
    return term


@lru_cache(maxsize=16384)
def _japanese_terms(span: str) -> tuple[Term, ...]:
    terms = []
    for m in japanese_morphemes(span):
        if m.pos not in _JA_CONTENT_POS:
            continue
        # 数詞: Sudachi already folds 三千 -> 3000 and 1億2000万 -> 120000000.
        term = m.normalized.lower()
        if "," in term:
            term = _THOUSANDS.sub("", term)
        terms.append(Term(term, term in JAPANESE_STOP_WORDS or m.pos == "副詞", m.surface))
    return tuple(terms)


@lru_cache(maxsize=32768)
def _terms(text: str) -> tuple[Term, ...]:
    folded = normalise(text)
    if folded.isascii():
        # No kana or kanji: skip the span search (most English text).
        return tuple(_english_terms(folded))
    out: list[Term] = []
    start = 0
    for span in _JA_SPAN.finditer(folded):
        out.extend(_english_terms(folded[start : span.start()]))
        out.extend(_japanese_terms(span.group()))
        start = span.end()
    out.extend(_english_terms(folded[start:]))
    return tuple(out)


def english_stem(word: str) -> str:
    """The term `tokenize` gives one lower-case English word ("sellers" -> "seller")."""
    term = _EN_TERMS.get(word)
    return (term or _english_term(word)).term


def span_morphemes(text: str) -> tuple[Morpheme, ...]:
    """Sudachi morphemes of the Japanese spans of `text`, in order: the same reading `tokenize`
    makes (and caches), so a text goes through Sudachi once however many passes look at it."""
    folded = normalise(text)
    if folded.isascii():
        return ()
    out: list[Morpheme] = []
    for span in _JA_SPAN.finditer(folded):
        out.extend(japanese_morphemes(span.group()))
    return tuple(out)


def term_surfaces(text: str) -> dict[str, str]:
    """Each term of the text -> the first word it came from (required -> "required")."""
    surfaces: dict[str, str] = {}
    for t in _terms(text):
        surfaces.setdefault(t.term, t.surface)
    return surfaces


def tokenize(text: str) -> list[str]:
    """Retrieval terms: NFKC + lower-case; English words stemmed, Japanese content words."""
    return [t.term for t in _terms(text)]


def content_terms(text: str) -> list[str]:
    """Key terms for coverage: `tokenize` without English and Japanese stop-words."""
    return [t.term for t in _terms(text) if not t.stop]


# Words whose trailing period is not a sentence end.
ABBREVIATIONS = _word_set(
    """
    e.g i.e etc vs mr mrs ms dr prof inc ltd co corp no nos art sec para fig approx
    jan feb mar apr jun jul aug sep sept oct nov dec st jr sr u.s u.k
    """
)
_SENTENCE_END = re.compile(r"([。！？｡]|[.!?]+)([)\]\"'”’」』）】]*)")


def split_sentences(text: str) -> list[str]:
    """Sentences of an answer: ends at 。！？ or . ! ? before a space; lines end sentences too."""
    sentences: list[str] = []
    for line in text.splitlines():
        start = 0
        for end in _SENTENCE_END.finditer(line):
            mark, stop = end.group(1), end.end()
            if mark[0] in ".!?":
                rest = line[stop:]
                # "3.5", "example.com": no space after the period, so not an end.
                if rest and not rest[0].isspace():
                    continue
                if mark == "." and _is_abbreviation(line[start : end.start()], rest):
                    continue
            _append(sentences, line[start:stop])
            start = stop
        _append(sentences, line[start:])
    return sentences


def _is_abbreviation(before: str, rest: str) -> bool:
    word = before.rsplit(None, 1)[-1].lower() if before.strip() else ""
    if word.lstrip("(\"'") in ABBREVIATIONS:
        return True
    # A single initial ("J. Smith") or a lower-case continuation ("approx. five days").
    next_char = rest.lstrip()[:1]
    return (len(word) == 1 and word.isalpha()) or (next_char.islower() and word[-1:] != ")")


def _append(sentences: list[str], piece: str) -> None:
    piece = piece.strip().lstrip("-*•・ ").strip()
    if piece:
        sentences.append(piece)
