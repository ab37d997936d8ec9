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
    reading: str = ""  # in katakana, as Sudachi reads the surface (立っ, たっ -> タッ)


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
        fields = {"pos", "normalized_form", "reading_form"}
        _local.sudachi = Dictionary().tokenizer(mode=SplitMode.B, fields=fields)
    return _local.sudachi


def _stemmer() -> Stemmer.Stemmer:
    if _local.stemmer is None:
        import Stemmer

        _local.stemmer = Stemmer.Stemmer("english")
    return _local.stemmer


# Every character of Unicode category Cf (format) in Python's Unicode 14 tables: the soft
# hyphen, Arabic number signs, zero-width space / non-joiner / joiner, LRM / RLM, the bidi
# embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), the word joiner and
# invisible operators, the BOM, interlinear annotation marks, tags. None is drawn, so "not"
# with a zero-width space inside reads "not" to a person and "n", "ot" to a tokenizer.
# Written out rather than built from unicodedata at import (90 ms);
# tests/evidence/test_text.py checks it against unicodedata.
_FORMAT_CLASS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)
_FORMAT = re.compile(f"[{_FORMAT_CLASS}]")


# Characters str.isprintable() refuses that are common in text and are no format character.
_UNPRINTABLE_SPACES = ("\n", "\t", "\r", "\u3000", "\u00a0")


def _may_hold_format(text: str) -> bool:
    # normalise is on every check's path, and a regex scan of non-ASCII text costs ~14 ns a
    # character (100 us for 1,000 words with one curly quote). ASCII holds no format
    # character (the first is U+00AD); str.isprintable() is False for every one of them and
    # scans at ~2 ns a character, so only text that fails it, once its line breaks, tabs and
    # wide spaces are set aside, is scanned.
    if text.isascii() or text.isprintable():
        return False
    for space in _UNPRINTABLE_SPACES:
        text = text.replace(space, " ")
    return not text.isprintable()


def without_format(text: str) -> str:
    """The text without its format (Cf) characters, nothing else changed."""
    return _FORMAT.sub("", text) if _may_hold_format(text) else text


def check_form(text: str) -> str:
    """The form every check reads: format (Cf) characters removed, then NFKC."""
    return unicodedata.normalize("NFKC", without_format(text))


def format_characters(text: str) -> list[tuple[int, str, str]]:
    """(offset in `text`, character, Unicode name) of each format (Cf) character, in order:
    what a reason names ("ZERO WIDTH SPACE at 14")."""
    if not _may_hold_format(text):
        return []
    return [(m.start(), m.group(), character_name(m.group())) for m in _FORMAT.finditer(text)]


def name_format_characters(text: str) -> str:
    """The format characters of `text` as a reason names them (evidence.reasons
    HIDDEN_CHARACTERS): "ZERO WIDTH SPACE at 14, SOFT HYPHEN at 20"; "" when there are none."""
    return ", ".join(f"{name} at {offset}" for offset, _, name in format_characters(text))


def character_name(char: str) -> str:
    """The Unicode name of one character, or its code point when it has none."""
    return unicodedata.name(char, f"U+{ord(char):04X}")


def format_free(text: str) -> tuple[str, list[int]]:
    """(`without_format(text)`, where each of its characters stands in `text` plus a last
    entry len(text)); when the text holds no format character, (`text` itself, []).
    Offsets found in the first map back to `text` through `original_span`."""
    if not _may_hold_format(text) or _FORMAT.search(text) is None:
        return text, []
    kept = [i for i, c in enumerate(text) if _FORMAT.match(c) is None]
    kept.append(len(text))
    return "".join(text[i] for i in kept[:-1]), kept


def original_span(kept: list[int], start: int, end: int) -> tuple[int, int]:
    """The span of the original text that [start, end) of its `format_free` form came from:
    from its first kept character to just after its last, so format characters inside the
    span stay in it and those at its edges do not. With no `kept` (nothing was removed),
    the span itself."""
    if not kept:
        return start, end
    if end <= start:
        return kept[start], kept[start]
    return kept[start], kept[end - 1] + 1


def normalise(text: str) -> str:
    """`check_form` (format characters removed, NFKC-folded: full-width digits and letters,
    half-width kana) and lower-cased."""
    return check_form(text).lower()


def has_japanese(text: str) -> bool:
    """Whether the text holds any kana or kanji."""
    return re.search(f"[{_JA_CHARS}]", text) is not None


# Sudachi refuses an input over 49,149 bytes: a longer text is read in pieces of at most
# this many characters (three bytes each at most), cut after a 。 where there is one.
SUDACHI_CHARS = 16_000


def _pieces(text: str) -> list[str]:
    pieces = []
    while len(text) > SUDACHI_CHARS:
        cut = text.rfind("。", 0, SUDACHI_CHARS) + 1 or SUDACHI_CHARS
        pieces.append(text[:cut])
        text = text[cut:]
    return [*pieces, text] if text else pieces


@lru_cache(maxsize=16384)
def japanese_morphemes(text: str) -> tuple[Morpheme, ...]:
    """Sudachi morphemes (mode B) of already-normalised text, punctuation included."""
    if len(text) > SUDACHI_CHARS:
        return tuple(m for piece in _pieces(text) for m in japanese_morphemes(piece))
    tokens = _sudachi().tokenize(text)
    pos_names = _local.pos
    out = []
    for m in tokens:
        pos_id = m.part_of_speech_id()
        pos = pos_names.get(pos_id)
        if pos is None:
            head, detail, kind = m.part_of_speech()[:3]
            pos = pos_names[pos_id] = (head, detail, kind == "サ変可能")
        out.append(Morpheme(m.surface(), m.normalized_form(), *pos, m.reading_form()))
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
    """Sentences of an answer: ends at 。！？ or . ! ? before a space; lines end sentences too.

    Split as if the text held no format (Cf) character, so "approved." with a zero-width
    space (U+200B) before " Next" is two sentences; each is returned as written, format
    characters inside it kept (a page shows them, and a caller may look the sentence up in
    the text)."""
    free, kept = format_free(text)
    if free is text:
        return _split_sentences(text)
    sentences = []
    cursor = 0
    for sentence in _split_sentences(free):
        # A sentence is a stripped slice of `free`, after the one before it.
        start = free.find(sentence, cursor)
        cursor = start + len(sentence)
        lo, hi = original_span(kept, start, cursor)
        sentences.append(text[lo:hi])
    return sentences


def _split_sentences(text: str) -> list[str]:
    sentences: list[str] = []
    for line in text.splitlines():
        start = 0
        for end in _SENTENCE_END.finditer(line):
            mark, stop = end.group(1), end.end()
            if mark[0] in ".!?":
                rest = line[stop:]
                # "3.5", "example.com": no space after the period, so not an end.
                if rest and not rest[0].isspace() and not glued_end(line, end.start(), stop):
                    continue
                if mark == "." and _is_abbreviation(line[start : end.start()], rest):
                    continue
            _append(sentences, line[start:stop])
            start = stop
        _append(sentences, line[start:])
    return sentences


def glued_end(text: str, mark: int, stop: int) -> bool:
    """Whether the end mark at `mark` (its closing quotes up to `stop`) ends a sentence that
    the next one is glued to, the space lost when a page was scraped: "for longer.Markets
    fell", "a client note.\"It concerns". A word of lower-case letters before it and a
    capitalised word after: "3.5", "example.com", "U.S.Army" and "v2.The" are not ends, nor
    is a token that holds another period, a slash or an @ (a web address)."""
    if stop + 1 >= len(text) or not (text[stop].isupper() and text[stop + 1].isalpha()):
        return False
    before = text[max(0, mark - 2) : mark]
    if len(before) < 2 or not (before.isascii() and before.isalpha() and before.islower()):
        return False
    token_start = max(text.rfind(" ", 0, mark), text.rfind("\n", 0, mark)) + 1
    return not any(c in text[token_start:mark] for c in "./@")


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
