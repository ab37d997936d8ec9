"""What a Japanese claim may say in other words than its span and still be verified.

Japanese paraphrase moves words about and writes them otherwise; the grounding rules ask
that every content word of a claim be in the aligned span (evidence.grounding). Each rule
here says when a claim's word counts as said though the span has another word, and none lets
a claim add content (a word the span lacks in every form):

- orthographic variants: the same reading and part of speech, one side all kana (イス /
  椅子, たって / 立って); Sudachi's normal form already folds the variants its dictionary
  lists (ネコ / 猫, 子ども / 子供);
- synonyms from SudachiDict's synonym dictionary (evidence/ja_synonyms.tsv, built by
  bench/build_ja_synonyms.py; Apache-2.0): the span's word must be one the dictionary expands
  from (flag 0), the claim's may be an ambiguous member (バイク for オートバイ);
- the honorific prefix お / ご (お皿 is 皿), a plural suffix (象たち is 象), and a counter
  after a number (二匹 / 2頭: the number check compares the quantities);
- 人 / 人物 where the span names a person (男性, 少年, スキーヤー: the dictionary's 人 field);
- 置く in 置いてある / 置かれている where the span says only that the thing is there (ある,
  いる): where a thing lies is what both say;
- derivation (`_derived`): a verb and its continuative form as a noun (持ち出す / 持ち出し), a
  one-kanji word and a two-kanji verbal noun of the span built on that kanji that no other
  word of the claim accounts for (増 / 増加, 与える / 付与), a unit and its period (年 / 年間);
- 禁止 for a prohibition said with a negation (行ってはならない): the negation it carries is
  the prohibition's (`prohibitions_said`), not one of polarity.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from evidence.text import Morpheme, content_terms, japanese_morphemes, span_morphemes

SYNONYMS = Path(__file__).with_name("ja_synonyms.tsv")

_KANA = re.compile(r"[\u3041-\u309f\u30a0-\u30ffー]+")

# Morphemes that add nothing a span must hold (Sudachi normal forms): the honorific prefix
# (お / ご / 御 all read 御) and plural suffixes (たち / 達, ら, 共 as in 子供ら).
_HONORIFIC = frozenset({"御"})
_PLURAL = frozenset({"達", "ら", "等", "共"})
# Person words a claim may use for any person the span names.
_PERSON = frozenset({"人", "人物", "人々"})
# Sudachi normal forms of the verbs of being there, and the verb a claim may use for them.
_THERE = frozenset({"有る", "居る", "置く"})
_PLACED = "置く"
# Words for "many" (Sudachi normal forms), one meaning whichever the span uses: the synonym
# dictionary puts 沢山 and 大勢 in groups that never expand from them.
_MANY = frozenset({"多く", "多い", "沢山", "大勢", "多数", "数多く", "大量", "一杯"})
# A word of the claim -> words of the span that name a kind of it (hyponyms a claim may say
# less than): the synonym dictionary holds equals, not kinds. 女 and 男 as in 女の人 / 男の人.
_KINDS_OF = {
    "子供": frozenset({"少年", "少女", "男の子", "女の子", "男児", "女児", "幼児", "赤ちゃん"}),
    "女": frozenset({"女性", "少女", "女の子", "女児", "婦人"}),
    "男": frozenset({"男性", "少年", "男の子", "男児"}),
}
# Words for "beside" (normal forms: わき is 脇), as above: the dictionary has no
# group for them.
_BESIDE = frozenset({"横", "隣", "そば", "側", "傍", "脇", "傍ら"})


def said_otherwise(terms: set[str], statement: str, span: str) -> set[str]:
    """The claim's Japanese terms among `terms` that the span says in another form (the
    module's rules); the others remain unsaid."""
    if not terms or statement.isascii():
        return set()
    said = span_morphemes(statement)
    heard = span_morphemes(span)
    heard_terms = frozenset(content_terms(span))
    return {
        t
        for t in terms
        if t in _empty_terms(said)
        or _synonym(t, heard_terms)
        or _person(t, heard)
        or _placed(t, heard)
        or _written_otherwise(t, said, heard)
        or (t in _MANY and bool(_MANY & heard_terms))
        or (t in _BESIDE and bool(_BESIDE & heard_terms))
        or bool(_KINDS_OF.get(t, frozenset()) & heard_terms)
        or _colour(t, heard_terms)
        or _head_of(t, heard)
        or _derived(t, said, heard, statement)
        or (t in _PROHIBITION_WORDS and bool(_PROHIBITIVE.search(span)))
    }


def _empty_terms(said: tuple[Morpheme, ...]) -> frozenset[str]:
    """The claim's terms that carry no content of their own: an honorific prefix, a plural
    suffix, a counter right after a number."""
    found = set()
    for i, m in enumerate(said):
        form = m.normalized.lower()
        honorific = m.pos == "接頭辞" and form in _HONORIFIC
        plural_or_counter = m.pos == "接尾辞" and (
            form in _PLURAL or (i > 0 and said[i - 1].pos_detail == "数詞")
        )
        if honorific or plural_or_counter:
            found.add(form)
    return frozenset(found)


class _Synonyms(NamedTuple):
    groups: dict[str, list[int]]  # normal form -> the groups it belongs to
    expanding: list[frozenset[str]]  # group -> its forms the dictionary expands from (flag 0)
    people: frozenset[str]  # the forms of the groups in the 人 (person) field


@lru_cache(maxsize=1)
def _synonym_index() -> _Synonyms:
    groups: dict[str, list[int]] = {}
    expanding: list[frozenset[str]] = []
    people: set[str] = set()
    for line in SYNONYMS.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        field, _, words = line.partition("\t")
        entries = [entry.rpartition(":") for entry in words.split()]
        for form, _, _ in entries:
            groups.setdefault(form, []).append(len(expanding))
        expanding.append(frozenset(form for form, _, flag in entries if flag == "0"))
        if "人" in field.split("/"):
            people.update(form for form, _, _ in entries)
    return _Synonyms(groups, expanding, frozenset(people))


@lru_cache(maxsize=16384)
def synonyms(term: str) -> frozenset[str]:
    """The words the span may say for the claim's `term`: the other members of its synonym
    groups that the dictionary expands from (flag 0)."""
    index = _synonym_index()
    found: set[str] = set()
    for group in index.groups.get(term, ()):
        found |= index.expanding[group]
    found.discard(term)
    return frozenset(found)


def _synonym(term: str, heard_terms: frozenset[str]) -> bool:
    return bool(synonyms(term) & heard_terms)


def _person(term: str, heard: tuple[Morpheme, ...]) -> bool:
    if term not in _PERSON:
        return False
    people = _synonym_index().people
    return any(m.normalized.lower() in people for m in heard)


def _placed(term: str, heard: tuple[Morpheme, ...]) -> bool:
    # ある / いる as verbs of their own, not the ている / てある of another verb's aspect.
    return term == _PLACED and any(
        m.normalized in _THERE and (i == 0 or heard[i - 1].surface not in ("て", "で"))
        for i, m in enumerate(heard)
    )


def _colour(term: str, heard_terms: frozenset[str]) -> bool:
    """黒色 for 黒い or 黒, 黒い for 黒色, 茶色い for 茶色: a colour as a noun or an adjective."""
    stem = term.removesuffix("い").removesuffix("色")
    if stem == term or not stem:
        return False
    return bool({stem, f"{stem}い", f"{stem}色", f"{stem}色い"} - {term} & heard_terms)


def _head_of(term: str, heard: tuple[Morpheme, ...]) -> bool:
    """Whether a noun of the span ends in the claim's noun: a Japanese compound names a kind of
    its last part (マグカップ is a カップ, 野鳥 a 鳥, 深皿 a 皿), so the claim says less."""
    return any(
        m.pos == "名詞" and len(m.normalized) > len(term) and m.normalized.lower().endswith(term)
        for m in heard
    )


def _written_otherwise(term: str, said: tuple[Morpheme, ...], heard: tuple[Morpheme, ...]) -> bool:
    """Whether the span writes the claim's word in kana where the claim has kanji, or the
    other way round (たって / 立って, イス / 椅子): the same reading and part of speech, one
    side all kana. Sudachi's normal form folds the variants its dictionary lists; this folds
    the rest of the orthographic variants. An inflected verb reads otherwise in each form
    (おか-れる, 置い-て), so dictionary forms are compared by their readings too (おく / 置く)."""
    mine = [m for m in said if m.normalized.lower() == term and m.reading]
    if not mine:
        return False
    any_script, kana_only = _readings(heard)
    for m in mine:
        for key, written in (
            ((m.pos, m.reading), m.surface),
            ((m.pos, _reading(m.normalized)), m.normalized),
        ):
            if key[1] and key in (any_script if _is_kana(written) else kana_only):
                return True
    return False


@lru_cache(maxsize=4096)
def _readings(
    heard: tuple[Morpheme, ...],
) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]:
    """(part of speech, reading) of each morpheme of the span, as written and as its dictionary
    form: all of them, and those written in kana only."""
    any_script: set[tuple[str, str]] = set()
    kana_only: set[tuple[str, str]] = set()
    for m in heard:
        for reading, written in ((m.reading, m.surface), (_reading(m.normalized), m.normalized)):
            if reading:
                any_script.add((m.pos, reading))
                if _is_kana(written):
                    kana_only.add((m.pos, reading))
    return frozenset(any_script), frozenset(kana_only)


def _is_kana(text: str) -> bool:
    return _KANA.fullmatch(text) is not None


@lru_cache(maxsize=16384)
def _reading(form: str) -> str:
    """A word's reading in katakana: of kana, the kana; else Sudachi's, when it reads the word
    as one morpheme ("" otherwise)."""
    if _KANA.fullmatch(form):
        return "".join(chr(ord(c) + 0x60) if "\u3041" <= c <= "\u3096" else c for c in form)
    morphemes = japanese_morphemes(form)
    return morphemes[0].reading if len(morphemes) == 1 else ""


# Words the term lists leave out that still set what a Japanese claim says: positions (上 /
# 下 / 中 are stop words, since "テーブルの上に" says what "テーブルに" does), sizes (大きな /
# 小さな are adnominals, no content part of speech), and a verb's mood (止まろうとしている
# is not 止まっている). Each pair: the claim's word, and the words of the span that say the
# other way.
_OPPOSITE_POSITIONS = {"上": "下", "下": "上", "中": "外", "外": "中", "前": "後ろ", "後ろ": "前"}
_SIZES = {"大きな": ("小さな", "小さい"), "小さな": ("大きな", "大きい")}
_FEW = frozenset({"少し", "少ない", "僅か", "少々"})
# Auxiliaries of wish and conjecture (Sudachi normal forms): 食べたい, 来るらしい.
_MOOD = frozenset({"う", "よう", "らしい", "たい"})


def _moods(morphemes: tuple[Morpheme, ...]) -> set[str]:
    found = {m.normalized for m in morphemes if m.pos == "助動詞"} & _MOOD
    for i, m in enumerate(morphemes[:-1]):
        # A verb in its volitional form before と (止まろうとする): about to, not done.
        volitional = m.surface != m.normalized and m.surface.endswith("う")
        if m.pos == "動詞" and volitional and morphemes[i + 1].surface == "と":
            found.add("ようとする")
    return found


def unseen_differences(statement: str, span: str) -> list[str]:
    """The claim's Japanese words that the span says the other way though the term check
    cannot see them: a position, a size, many against few, or a mood one side has and the
    other lacks. Each keeps a claim from being verified; none refutes it."""
    if statement.isascii():
        return []
    said = span_morphemes(statement)
    heard = span_morphemes(span)
    heard_forms = {m.normalized for m in heard}
    lacking = [
        m.surface
        for m in said
        if (
            m.normalized in _OPPOSITE_POSITIONS
            and m.normalized not in heard_forms
            and _OPPOSITE_POSITIONS[m.normalized] in heard_forms
        )
        or (m.normalized in _SIZES and not heard_forms.isdisjoint(_SIZES[m.normalized]))
        or (m.normalized in _MANY and not heard_forms.isdisjoint(_FEW))
        or (m.normalized in _FEW and not heard_forms.isdisjoint(_MANY))
    ]
    return lacking + sorted(_moods(said) ^ _moods(heard))


# --- derivation and prohibition ---------------------------------------------------------------

# The continuative (連用形) ending of a godan verb's dictionary ending: 持ち出す -> 持ち出し.
_CONTINUATIVE = dict(zip("うくぐすつぬぶむる", "いきぎしちにびみり", strict=True))
_KANJI = re.compile(r"[\u4e00-\u9fff]")
# Periods named by a unit and 間: 年間 is "for a year", as 年に is "a year".
_PERIOD_UNITS = frozenset({"年", "月", "週", "日"})
# A prohibition said with a negation (evidence.lexicon's neutral phrase for it), and the words
# that say it without one (Sudachi normal forms).
_PROHIBITIVE = re.compile(r"(?:て|で)は(?:ならない|ならず|いけない|いけません|なりません)")
_PROHIBITION_WORDS = frozenset({"禁止", "禁じる"})


def _continuative_nouns(verb: str) -> set[str]:
    """The nouns a verb's continuative form makes: godan 持ち出す -> 持ち出し, ichidan
    遅れる -> 遅れ (a godan verb in る gives 走り, so both are read)."""
    if len(verb) < 2 or verb[-1] not in _CONTINUATIVE:
        return set()
    found = {verb[:-1] + _CONTINUATIVE[verb[-1]]}
    if verb.endswith("る"):
        found.add(verb[:-1])
    return {f for f in found if len(f) >= 2}


def _derived(
    term: str, said: tuple[Morpheme, ...], heard: tuple[Morpheme, ...], statement: str
) -> bool:
    """Whether the span says the claim's word by a documented derivation of it: a verb's
    continuative noun (or the verb for the noun), a Sino-Japanese verbal noun built on the
    word's one kanji (増 / 増加, 与える / 付与) that no other word of the claim accounts for, or
    the unit's period (年 / 年間)."""
    mine = [m for m in said if m.normalized.lower() == term]
    if not mine:
        return False
    heard_forms = {m.normalized.lower() for m in heard}
    for m in mine:
        if m.pos == "動詞" and _continuative_nouns(term) & heard_forms:
            return True
        if m.pos == "名詞" and any(
            h.pos == "動詞" and term in _continuative_nouns(h.normalized) for h in heard
        ):
            return True
        if term in _PERIOD_UNITS and f"{term}間" in heard_forms:
            return True
    kanji = _KANJI.findall(term)
    if len(kanji) != 1 or not any(m.pos in ("動詞", "名詞") for m in mine):
        return False
    claimed = set(content_terms(statement))
    return any(
        h.verbal
        and len(h.normalized) == 2
        and kanji[0] in h.normalized
        and h.normalized not in claimed
        for h in heard
    )


def prohibitions_said(statement: str, span: str) -> int:
    """How many of the span's prohibitions said with a negation (してはならない) the claim says
    with a word of prohibition (禁止されている): their negations are the prohibition's, not
    a polarity the claim lacks."""
    if statement.isascii():
        return 0
    words = sum(1 for m in span_morphemes(statement) if m.normalized in _PROHIBITION_WORDS)
    return min(words, len(_PROHIBITIVE.findall(span)))
