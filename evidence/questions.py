"""Does an answer address its question? What the question asks (per part: a person, a number
of some unit, a date, a place, a reason, yes or no...), what each claim supplies, and a fitted
model's calibrated probability that the claims answer each part.

Pure: no Django. The signals are read with the project's own text analysis (evidence.text:
stemmed English, Sudachi for Japanese; evidence.numbers for quantities); the model is a small
JSON file beside this module (`addressing_model.json`), fitted by `bench/fit_addressing.py`
on question/sentence pairs built from public reading-comprehension sets.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from evidence import reasons as why
from evidence import scoring
from evidence.lexicon import _EN_PARTIES, _JA_PARTIES
from evidence.numbers import Quantity, extract_numbers
from evidence.text import (
    ENGLISH_STOP_WORDS,
    _sudachi,
    content_terms,
    english_stem,
    has_japanese,
    japanese_morphemes,
    normalise,
    split_sentences,
    term_surfaces,
)
from evidence.verifier import (
    LanguageModel,
    VerifierModel,
    VerifierModelError,
    load_model,
)
from evidence.verifier import model_from_json as verifier_model_from_json

AskedKind = Literal[
    "person",
    "number",
    "amount",
    "date",
    "period",
    "place",
    "reason",
    "choice",
    "yes_no",
    "open",
    "summary",
]
Mode = Literal["full", "partial", "off_topic"]

MODEL_FORMAT = "maria-addressing-v1"
DEFAULT_MODEL = Path(__file__).with_name("addressing_model.json")
# The suffix of a language's model for claims read beside their evidence's other sentences.
IN_CONTEXT = "+context"
# The pass mark a model is fitted with before bench/fit_addressing.py chooses each
# language's own (`pass_mark`): a part is answered by a claim whose probability reaches it.
ANSWERED = 0.5

# The signals of one question part against one claim, in the order the weights follow.
SIGNALS: tuple[str, ...] = (
    "focus_overlap",  # share of the part's content terms the claim holds
    "char_overlap",  # share of the question's character trigrams the claim holds
    "weighted_overlap",  # focus_overlap with each term weighted by its length (rarer words)
    "pair_overlap",  # share of the question's neighbouring term pairs near each other in it
    "density",  # the claim's words of the question, over the stretch of the claim they span
    "common_overlap",  # focus_overlap over the question's words that are not names
    "kind_supplied",  # the claim gives something of the asked kind the question does not
    "kind_missing",  # a typed thing is asked and the claim gives nothing of that kind
    "unit_conflict",  # a number is asked for in one unit; the claim's numbers are in others
    "novel_share",  # share of the claim's content terms the question does not hold
    "typed",  # the part asks for a typed thing (not open, which or yes/no)
    "claim_terms_log",
    # how much more of the question (weighted_overlap) the best other sentence of the cited
    # evidence holds than the claim: the evidence answers it where the answer does not.
    "outdone",
)
AGAINST = frozenset({"unit_conflict", "kind_missing", "outdone"})

# In the reasons' words (evidence.reasons translates them where a page shows a reason).
_KIND_WORDS: Mapping[str, str] = why.ASKED_KINDS


@dataclass(frozen=True)
class Part:
    """One thing the question asks: its kind, the unit a number should come in, its words."""

    text: str
    kind: AskedKind
    unit: str | None = None  # canonical unit a number must have: "day", "JPY", "%", "night"
    counted: str | None = None  # the counted thing as written: "days", "nights", "泊"
    focus: tuple[str, ...] = ()  # phrases naming what is asked: "nightly hotel limit"
    terms: frozenset[str] = frozenset()  # content terms of the part and the shared topic


@dataclass(frozen=True)
class Question:
    text: str
    language: str  # "en" or "ja"
    parts: tuple[Part, ...]
    terms: frozenset[str]  # content terms of the whole question
    grams: frozenset[str]  # character trigrams of the question less its question words


@dataclass(frozen=True)
class Number:
    """A number a claim states, with its canonical unit ("day", "JPY", "%") if it has one."""

    quantity: Quantity
    unit: str | None


@dataclass(frozen=True)
class Supplied:
    """What one claim sentence gives a question."""

    persons: tuple[str, ...] = ()
    numbers: tuple[Number, ...] = ()
    dates: tuple[str, ...] = ()
    periods: tuple[str, ...] = ()
    places: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    statement: bool = False  # a factual statement: it can answer a yes/no question
    polarity: Literal["yes", "no"] | None = None  # an explicit yes / no, or a negation
    terms: frozenset[str] = frozenset()
    surfaces: Mapping[str, str] = field(default_factory=dict)  # term -> the claim's word

    def kinds(self) -> frozenset[AskedKind]:
        """The kinds of question this claim can answer."""
        found: set[AskedKind] = {"open", "choice"} if self.terms else set()
        if self.persons:
            found.add("person")
        if any(n.quantity.kind != "date" for n in self.numbers):
            found.add("number")
        if any(n.quantity.kind == "currency" for n in self.numbers):
            found.add("amount")
        if self.dates:
            found.add("date")
        if self.periods:
            found.add("period")
        if self.places:
            found.add("place")
        if self.reasons:
            found.add("reason")
        if self.statement:
            found.add("yes_no")
        return frozenset(found)


@dataclass(frozen=True)
class PartAnswer:
    part: Part
    answered: bool
    claim: int | None  # index of the claim that answers it best
    probability: float
    # Unanswered, and a sentence of the cited evidence no claim states holds more of it than
    # the best claim: that sentence (the reviewer sees where the answer was).
    elsewhere: str | None = None
    # A "who" part answered because the claim names who does the asked act (`names_actor`):
    # the person or role it names.
    names: str | None = None


@dataclass(frozen=True)
class Addressing:
    """Whether the claims address the question, part by part, in words a reviewer reads."""

    probability: float  # calibrated P(every part is answered): the lowest part's
    mode: Mode
    parts: tuple[PartAnswer, ...]
    missing: tuple[Part, ...]
    reason: str

    @property
    def addresses(self) -> bool:
        return self.mode == "full"


# --- what the question asks -----------------------------------------------------------

# Canonical units of the counted nouns a question names ("how many nights").
_UNIT_WORDS: dict[str, str] = {
    "day": "day",
    "days": "day",
    "business days": "day",
    "week": "week",
    "weeks": "week",
    "month": "month",
    "months": "month",
    "year": "year",
    "years": "year",
    "hour": "hour",
    "hours": "hour",
    "minute": "minute",
    "minutes": "minute",
    "night": "night",
    "nights": "night",
    "people": "person",
    "persons": "person",
    "person": "person",
    "times": "times",
    "percent": "%",
    "percentage": "%",
    "%": "%",
    "yen": "JPY",
    "dollars": "USD",
    "euros": "EUR",
}
_JA_COUNTERS: dict[str, tuple[AskedKind, str | None]] = {
    "日間": ("period", "day"),
    "日": ("number", "day"),
    "営業日": ("number", "day"),
    "週間": ("period", "week"),
    "週": ("number", "week"),
    "か月": ("period", "month"),
    "ヶ月": ("period", "month"),
    "カ月": ("period", "month"),
    "年間": ("period", "year"),
    "年": ("date", "year"),
    "月": ("date", None),
    "世紀": ("date", None),
    "時代": ("date", None),
    "時間": ("period", "hour"),
    "時": ("date", None),
    "分": ("number", "minute"),
    "円": ("amount", "JPY"),
    "ドル": ("amount", "USD"),
    "割": ("number", "%"),
    "パーセント": ("number", "%"),
    "%": ("number", "%"),
    "人": ("number", "person"),
    "名": ("number", "person"),
    "回": ("number", "times"),
    "倍": ("number", "times"),
    "泊": ("number", "泊"),
    "歳": ("number", "age"),
}
_JA_COUNTER = re.compile(
    "何(" + "|".join(sorted(map(re.escape, _JA_COUNTERS), key=len, reverse=True)) + ")"
)
_JA_KINDS: tuple[tuple[re.Pattern[str], AskedKind], ...] = (
    (re.compile(r"誰|だれ|どなた|何者|どの人"), "person"),
    (re.compile(r"なぜ|何故|どうして|理由|なんで"), "reason"),
    (re.compile(r"いつ|何月何日|何時頃|いつ頃"), "date"),
    (re.compile(r"どこ|何処|どの(?:国|地域|都市|場所|町|県|州|島|あたり|辺り)"), "place"),
    (re.compile(r"いくら|金額|費用|価格"), "amount"),
    (re.compile(r"いくつ|何個|何種類|何本|何台|何件|何番目|何位"), "number"),
    (re.compile(r"どの(?:よう|ように)|どう(?:やって)?|どんな"), "open"),
    (re.compile(r"どの|どれ|どちら"), "choice"),
    (re.compile(r"何|なに|なん"), "open"),
)
# The words that ask (stripped before the focus is read, and from the character trigrams).
_JA_ASKING = re.compile(
    r"誰|だれ|どなた|何者|なぜ|何故|どうして|なんで|いつ頃|いつ|どこ|何処|いくら|いくつ|"
    r"どのよう|どの|どれ|どちら|どう|どんな|何|なに|なん|でしょうか|ですか|ますか|か[。?？]?$"
)
# A Japanese question of several parts: "…は何日で、誰が承認しますか".
_JA_PART_BREAK = re.compile(r"(?<=[でかし])、|、また|。|[?？](?=.)")

_EN_AUX = (
    "is|are|was|were|do|does|did|can|could|may|might|must|should|will|would|has|have|had|shall"
)
_EN_AUXES = frozenset(_EN_AUX.split("|"))
_EN_WH = re.compile(
    rf"^(?:(?:and|or|but|also|so)\s+)?(?:{_EN_AUX}|who|whom|whose|what|when|where|which|why|how"
    r"|in what|in which|on what|at what|to what|from what|for what|by what|of what)\b"
)
_EN_PART_BREAK = re.compile(
    r"(?i)"
    rf"\?\s+|;\s*|,?\s+(?:and|or)\s+(?=(?:who|whom|whose|what|when|where|which|why|how|{_EN_AUX})"
    r"\b)"
)
_DATE_NOUNS = "year|date|day|time|month|century|decade|era|period|season|age|deadline|hour|week"
_PLACE_NOUNS = (
    "country|city|town|place|state|region|area|location|province|county|continent|island|"
    "river|street|building|site|venue|office|nation|village|district|capital|stadium"
)
_PERSON_NOUNS = (
    "person|man|woman|people|company|organization|organisation|team|group|king|queen|leader|"
    "president|author|artist|player|coach|scientist|official|role|department|body|committee|"
    "manager|director|officer|emperor|general|member|individual|writer|composer|founder"
)
_MONEY_NOUNS = "cost|price|fee|amount|budget|salary|pay|wage|allowance|fine|rent|sum|charge"
_NUMBER_NOUNS = (
    "number|limit|cap|maximum|minimum|ceiling|rate|percentage|percent|share|proportion|"
    "ratio|total|count|size|population|length|height|distance|speed|temperature|score"
)
_WHAT_IS = r"\bwhat (?:is|was|are|were) (?:the |a |an )?(?:\w+ ){0,3}"
# The first pattern that matches decides the kind.
_EN_KINDS: tuple[tuple[re.Pattern[str], AskedKind], ...] = (
    (
        re.compile(r"\bwhy\b|\bwhat (?:was |is |were |are )?(?:the )?(?:reason|cause|purpose)"),
        "reason",
    ),
    (
        re.compile(
            r"\bhow (?:much|many) (?:money|dollars|yen|euros)\b"
            r"|\bhow much (?:does|did|is|was|do|will|would)\b|\bhow much\s*\??$"
        ),
        "amount",
    ),
    (re.compile(r"\bhow (?:many|much)\b|\bhow (?:old|far|big|large|tall|high|often)\b"), "number"),
    (re.compile(r"\bhow long\b"), "period"),
    (re.compile(r"\bwhen\b|\b(?:what|which) (?:" + _DATE_NOUNS + r")s?\b"), "date"),
    (re.compile(r"\bwhere\b|\b(?:what|which) (?:" + _PLACE_NOUNS + r")\b"), "place"),
    (re.compile(r"\bwho(?:m|se)?\b|\b(?:what|which) (?:" + _PERSON_NOUNS + r")\b"), "person"),
    (re.compile(_WHAT_IS + r"(?:" + _MONEY_NOUNS + r")\b"), "amount"),
    (re.compile(_WHAT_IS + r"(?:" + _NUMBER_NOUNS + r")\b"), "number"),
    (re.compile(r"\bwhat (?:percentage|percent|share|proportion|fraction)\b"), "number"),
    (re.compile(r"\bwhich\b"), "choice"),
    (re.compile(rf"^(?:(?:and|or|but|so)\s+)?(?:{_EN_AUX})\b"), "yes_no"),
)
# A "what" or "how" that asks for something untyped ("what happened", "how did they").
_EN_OPEN = re.compile(r"\b(?:what|how)\b")
_HOW_MANY = re.compile(r"\bhow (?:many|much|long|often|old)\s+([a-z%]+)?")
_EN_ASKING = re.compile(
    rf"\b(?:who|whom|whose|what|when|where|which|why|how|much|many|{_EN_AUX}|the|a|an|does|do)\b"
)


# A request for what the cited source says as a whole ("Summarise the article", "What does
# the document say?", "要約してください"): it names no one thing, so any claim grounded in the
# cited source answers it, and every cited span is relevant to it. Only the source as a
# whole: "tell me about the refund policy" asks about one subject and stays an open part, as
# does "what does the policy cover?" (its scope).
_SOURCE_NOUNS = (
    r"(?:document|article|text|report|paper|passage|memo|transcript|meeting"
    r"|conversation|dialogue|discussion|email|e-mail|story|source|post|thread|call|episode)s?"
)
_EN_SUMMARY = re.compile(
    r"^(?:please\s+|can you\s+|could you\s+)?(?:summari[sz]e|sum up|recap|outline"
    r"|give (?:me |us )?(?:a |an |the )?(?:short |brief |quick )?"
    r"(?:summary|overview|gist|synopsis|recap|tl;?dr))\b"
    r"|^(?:tl;?dr|summary|overview)\b"
    r"|\bwhat (?:does|do|did) (?:the|this|these|that) "
    + _SOURCE_NOUNS
    + r" (?:say|said|state|report|tell us|discuss|describe)\b"
    r"|\bwhat (?:is|was|are|were) (?:the|this|these|that) " + _SOURCE_NOUNS + r" about\b"
    r"|\bwhat (?:was|were) (?:said|discussed|decided)\b"
    r"|\b(?:the )?main (?:points|findings|ideas|takeaways)\b"
)
_JA_SUMMARY = re.compile(r"要約|要点|概要|まとめ(?:て|る|を)|何[がと]書(?:かれ|いて)|何が話され")


def asks_summary(text: str) -> bool:
    """Whether the question asks what its source says as a whole (see _EN_SUMMARY)."""
    folded = unicodedata.normalize("NFKC", text).strip().lower()
    return bool(_JA_SUMMARY.search(folded) if has_japanese(folded) else _EN_SUMMARY.search(folded))


def _language(text: str) -> str:
    return "ja" if has_japanese(text) else "en"


@lru_cache(maxsize=8192)
def analyse_question(text: str) -> Question:
    """The question's parts, each with the kind it asks for and the words that name it."""
    language = _language(text)
    terms = frozenset(t for t in content_terms(text) if not _asking(t))
    if asks_summary(text):
        summary = Part(
            text=unicodedata.normalize("NFKC", text).strip(), kind="summary", terms=terms
        )
        return Question(text, language, (summary,), terms, _asked_grams(text, language))
    pieces = _split_parts(text, language)
    parts = []
    for piece in pieces:
        kind, unit, counted = (_ja_kind if language == "ja" else _en_kind)(piece)
        own = frozenset(t for t in content_terms(piece) if not _asking(t))
        # A part with no words of its own ("and when?") leans on the question's.
        parts.append(
            Part(
                text=piece,
                kind=kind,
                unit=unit,
                counted=counted,
                focus=_focus(piece, language),
                terms=own or terms,
            )
        )
    return Question(text, language, tuple(parts), terms, _asked_grams(text, language))


# A question over a stretch of time ("how has it evolved over the past 3 years", "since
# 2020", 過去3年間の推移): seed 000 §4.3's complex question, covering several documents and
# periods. Plain "change" is left out: "who approves changes?" is a simple lookup.
_EN_TIME_SPAN = re.compile(
    r"\b(?:evolv\w*|evolution|over (?:the )?(?:past|last)\b|over time|since (?:\d{4}|last)\b"
    r"|between \d{4} and \d{4}|history of|trends?\b)",
    re.IGNORECASE,
)
_JA_TIME_SPAN = re.compile(r"過去|推移|変遷|経緯|以来|変わ(?:っ|り|る)|変化")
# Parts that ask for analysis rather than a fact to look up: a reason, a summary, or what
# something implies ("what are the compliance implications?", コンプライアンスへの影響).
ANALYTIC_KINDS: frozenset[str] = frozenset({"reason", "summary"})
_EN_IMPLICATION = re.compile(r"\b(?:implications?|impacts?|consequences?)\b", re.IGNORECASE)
_JA_IMPLICATION = re.compile(r"影響|意味合い|波及")


def required_evidence_of(text: str) -> int:
    """RequiredEvidence of a question (seed 000 §4.3, evidence.scoring.required_evidence):
    from its parts, the parts that ask for analysis, and whether it spans time."""
    asked = analyse_question(text)
    folded = unicodedata.normalize("NFKC", text)
    japanese = asked.language == "ja"
    spans = _JA_TIME_SPAN if japanese else _EN_TIME_SPAN
    implies = _JA_IMPLICATION if japanese else _EN_IMPLICATION
    return scoring.required_evidence(
        len(asked.parts),
        analytic=sum(
            part.kind in ANALYTIC_KINDS or bool(implies.search(part.text)) for part in asked.parts
        ),
        spans_time=bool(spans.search(folded)),
    )


@lru_cache(maxsize=8192)
def _asked_grams(text: str, language: str) -> frozenset[str]:
    """Character trigrams of a question (or one part of it) less the words that ask."""
    asking = _JA_ASKING if language == "ja" else _EN_ASKING
    return _grams(asking.sub(" ", normalise(text)))


_ASKING_TERMS = frozenset(
    content_terms("何 なに 誰 いつ どこ いくら いくつ なぜ どの どれ どちら どう どんな 何故")
) | frozenset({"much", "mani", "many", "how"})


def _asking(term: str) -> bool:
    return term in _ASKING_TERMS or term.startswith("何")


def _split_parts(text: str, language: str) -> list[str]:
    # NFKC-folded, case kept: the focus is shown to a reviewer as the question writes it.
    folded = unicodedata.normalize("NFKC", text).strip()
    if language == "ja":
        pieces = [p.strip() for p in _JA_PART_BREAK.split(folded) if p.strip()]
        # Only pieces that ask something are parts; the rest joins the piece before it.
        out: list[str] = []
        for piece in pieces:
            if (out and not _asks_ja(piece)) or (out and not _asks_ja(out[-1])):
                out[-1] += "、" + piece
            else:
                out.append(piece)
        return out or [folded]
    pieces = [p.strip(" ,?") for p in _EN_PART_BREAK.split(folded) if p.strip(" ,?")]
    merged: list[str] = []
    for piece in pieces:
        if merged and not _EN_WH.search(piece.lower()):
            merged[-1] += ", " + piece
        else:
            merged.append(piece)
    return merged or [folded]


def _asks_ja(piece: str) -> bool:
    return (bool(_JA_ASKING.search(piece)) and any(p.search(piece) for p, _ in _JA_KINDS)) or (
        bool(_JA_COUNTER.search(piece))
    )


def _en_kind(piece: str) -> tuple[AskedKind, str | None, str | None]:
    piece = piece.lower()
    kind: AskedKind = "open"
    # The asking word that comes first decides: in "What kind of disorders occur when part
    # of the immune system is inactive?" the "when" opens a clause of the question, it does
    # not ask for a date. At one place, the patterns' order breaks the tie.
    found = [
        (match.start(), rank, asked)
        for rank, (pattern, asked) in enumerate(_EN_KINDS)
        if (match := pattern.search(piece))
    ]
    if found:
        first = min(found)
        if not (first[2] != "open" and _EN_OPEN.search(piece[: first[0]])):
            kind = first[2]
    unit, counted = None, None
    if kind in ("number", "amount"):
        match = _HOW_MANY.search(piece)
        if match and match.group(1) and match.group(1) not in ENGLISH_STOP_WORDS | _EN_AUXES:
            counted = match.group(1)
            unit = _UNIT_WORDS.get(counted) or english_stem(counted)
            if re.search(r"\bhow long\b", piece) or unit in ("day", "week", "month", "year"):
                kind = "period" if re.search(r"\bhow long\b", piece) else kind
        elif re.search(r"\bhow long\b", piece):
            kind = "period"
        if re.search(r"\b(?:percentage|percent|proportion|share)\b", piece):
            unit, counted = "%", "percent"
        if kind == "number" and unit in ("JPY", "USD", "EUR"):
            kind = "amount"
    return kind, unit, counted


def _ja_kind(piece: str) -> tuple[AskedKind, str | None, str | None]:
    counter = _JA_COUNTER.search(piece)
    if counter and not re.search(r"何(?:年|月)何日|何月", piece):
        kind, unit = _JA_COUNTERS[counter.group(1)]
        if kind == "date" and re.search(r"何年(?:間|前|後|目)", piece):
            kind = "number"
        return kind, unit, counter.group(1)
    for pattern, kind in _JA_KINDS:
        if pattern.search(piece):
            return kind, None, None
    if re.search(r"(?:か|ですか|ますか|でしょうか)[。?？]?$|[?？]$", piece):
        return "yes_no", None, None
    return "open", None, None


_EN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")


def _focus(piece: str, language: str) -> tuple[str, ...]:
    """Runs of content words with no stop-word or question word between them."""
    phrases: list[str] = []
    run: list[str] = []
    if language == "ja":
        for m in _morphemes(piece):
            pos = m[1]
            content = pos[0] in ("名詞", "接頭辞", "接尾辞") and not _JA_ASKING.match(m[0])
            if (content and pos[1] != "数詞") or (run and pos[0] == "接尾辞"):
                run.append(m[0])
            elif run:
                phrases.append("".join(run))
                run = []
    else:
        for word in _EN_WORD.findall(piece):
            if word.lower() in ENGLISH_STOP_WORDS or _EN_ASKING.fullmatch(word.lower()):
                if run:
                    phrases.append(" ".join(run))
                    run = []
            else:
                run.append(word)
    if run:
        phrases.append("".join(run) if language == "ja" else " ".join(run))
    return tuple(dict.fromkeys(phrases))


# --- what a claim supplies --------------------------------------------------------------


@lru_cache(maxsize=16384)
def _morphemes(text: str) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    # Sudachi's full part of speech (固有名詞 / 人名 / 地名), which evidence.text's cached
    # reading folds away; on the same per-thread tokenizer.
    folded = normalise(text)
    return tuple(
        (m.surface(), tuple(m.part_of_speech()[:4]), m.normalized_form())
        for m in _sudachi().tokenize(folded)
    )


_EN_REASON = re.compile(
    r"\b(?:because|since|due to|owing to|as a result of|thanks to|in order to|so that|so as to|"
    r"caused by|the reason|to avoid|to prevent|to ensure|to allow|therefore|thus|hence|"
    r"for the purpose)\b"
)
_JA_REASON = re.compile(r"ため|ので|から[、。]|により|によって|のが原因|理由|目的|おかげ|せい")
_EN_DATE = re.compile(
    r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b|\b(?:january|february|march|april|june|july|august|"
    r"september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|spring|summer|autumn|winter|yesterday|today|tomorrow|century|centuries|decade|bc|"
    r"ad|bce|ce|noon|midnight|morning|evening|o'clock|a\.m|p\.m)\b|\b\d{1,2}:\d{2}\b"
)
_JA_DATE = re.compile(
    r"[\d〇一二三四五六七八九十百千]+(?:年|月|日|世紀|時|年代)|明治|大正|昭和|平成|令和|"
    r"江戸|室町|鎌倉|平安|奈良|戦国|時代|初期|中期|後期|末期|前半|後半|毎年|当時|現在|戦後|戦前"
)
_PERIOD_UNITS = frozenset({"day", "week", "month", "year", "hour", "minute", "business_day"})
_EN_PLACE_BEFORE = re.compile(
    r"\b(?:in|at|from|to|near|into|across|throughout|outside|inside|across|towards?|via|"
    r"between|within|on)\s+(?:the\s+)?((?:[A-Z][\w'-]+)(?:\s+(?:of\s+)?[A-Z][\w'-]+)*)"
)
_EN_PLACE_NOUN = re.compile(r"\b(?:" + _PLACE_NOUNS + r"|headquarters|region|abroad)s?\b")
_EN_NAME = re.compile(r"\b[A-Z][a-z][\w'-]*(?:\s+(?:[A-Z][\w'-]*|de|van|von|of))*")
_EN_TITLE = re.compile(
    r"\b(?:mr|mrs|ms|dr|sir|king|queen|president|prince|princess|lord|saint|st|pope|emperor|"
    r"general|captain|professor|governor|senator)\.?\s+[A-Z]"
)
# Roles a "who" question accepts besides names: the parties of evidence.lexicon and a few
# more. Not "people" or "group": they name no one in particular.
_EN_PERSON_NOUN = re.compile(
    r"\b(?:" + "|".join(sorted(_EN_PARTIES)) + r"|king|queen|president|mayor|governor|emperor|"
    r"minister|chancellor|pope|bishop|author|founder|inventor|player|quarterback|coach|"
    r"owner|chairman|chairwoman|leader|officer|official|secretary|spokesperson|supervisor|"
    r"hr|human resources|finance|legal|he|she|him|her)s?\b"
)
_CALENDAR_WORDS = (
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday"
)
# Capitalised only because they open a sentence or are calendar words: no one's name.
_NOT_NAMES = ENGLISH_STOP_WORDS | frozenset(_CALENDAR_WORDS.split())
_JA_PERSON_SUFFIX = re.compile(
    r"[\u4e00-\u9fff\u30a0-\u30ff]+(?:者|長|員|氏|さん|様|王|帝|天皇|将軍|首相|大臣|知事|教授|博士|選手|監督|社長|会長|"
    r"担当|委員会|部|課|庁|省|社|会)(?![ぁ-ん]{0,1}[所])"
)
_JA_PLACE_SUFFIX = re.compile(
    r"[\u4e00-\u9fff\u30a0-\u30ff]+(?:県|市|町|村|国|州|島|川|山|駅|区|都|府|道|地方|大陸|半島|"
    r"湖|海|港|空港|諸島|地域|沿岸|流域|付近|周辺|郡|省|城|寺)"
)
_EN_YES_NO = re.compile(r"^(?:yes|no)\b")
_EN_NEG = re.compile(r"\b(?:not|no|never|cannot|none)\b|n't")
_JA_NEG = re.compile(r"ない|ません|ず[、。]|不要|禁止")
_NUMBER_FOLLOWER = re.compile(
    r"([\d.,]+%?|\b(?:one|two|three|four|five|six|seven|eight|nine|ten)\b)\s*([a-z]+)"
)


@lru_cache(maxsize=16384)
def supplied(claim: str) -> Supplied:
    """What a claim sentence gives: people or roles, numbers with their units, dates and
    periods, places, reasons, and whether it states (or denies) something."""
    language = _language(claim)
    folded = normalise(claim)
    terms = frozenset(content_terms(claim))
    numbers = tuple(_numbers(claim, folded, language))
    dates = [str(n.quantity) for n in numbers if n.quantity.kind == "date"]
    periods = [str(n.quantity) for n in numbers if _is_period(n)]
    persons: list[str] = []
    places: list[str] = []
    if language == "ja":
        dates += [m.group() for m in _JA_DATE.finditer(folded)]
        reasons = [m.group() for m in _JA_REASON.finditer(folded)]
        for surface, pos, _normal in _morphemes(claim):
            if pos[1] == "固有名詞" and pos[2] == "人名":
                persons.append(surface)
            elif pos[1] == "固有名詞" and pos[2] == "地名":
                places.append(surface)
            elif pos[1] == "固有名詞" and pos[2] == "組織名":
                persons.append(surface)
        persons += [p for p in _JA_PARTIES if p in folded]
        persons += [m.group() for m in _JA_PERSON_SUFFIX.finditer(folded)]
        places += [m.group() for m in _JA_PLACE_SUFFIX.finditer(folded)]
        polarity: Literal["yes", "no"] | None = "no" if _JA_NEG.search(folded) else None
        if folded.startswith(("はい", "ええ")):
            polarity = "yes"
        elif folded.startswith("いいえ"):
            polarity = "no"
    else:
        dates += [m.group() for m in _EN_DATE.finditer(folded)]
        reasons = [m.group() for m in _EN_REASON.finditer(folded)]
        place_spans = [m.group(1) for m in _EN_PLACE_BEFORE.finditer(claim)]
        places += place_spans + [m.group() for m in _EN_PLACE_NOUN.finditer(folded)]
        names = [
            m.group().strip()
            for m in _EN_NAME.finditer(claim)
            if m.group().split()[0].lower() not in _NOT_NAMES
            and m.group().strip() not in place_spans
            # The sentence's first word is capitalised anyway: a name only if another follows.
            and (m.start() > 0 or " " in m.group().strip())
        ]
        # A name is a person's unless a preposition of place leads it; "who" accepts roles
        # (the manager, the board) as well as names.
        persons += names + [_with_qualifier(folded, m) for m in _EN_PERSON_NOUN.finditer(folded)]
        if _EN_TITLE.search(claim):
            persons.append(_EN_TITLE.search(claim).group())  # type: ignore[union-attr]
        polarity = "no" if _EN_NEG.search(folded) else None
        yes_no = _EN_YES_NO.match(folded)
        if yes_no:
            polarity = "yes" if yes_no.group() == "yes" else "no"
    return Supplied(
        persons=tuple(dict.fromkeys(persons)),
        numbers=numbers,
        dates=tuple(dict.fromkeys(dates)),
        periods=tuple(dict.fromkeys(periods)),
        places=tuple(dict.fromkeys(places)),
        reasons=tuple(dict.fromkeys(reasons)),
        statement=bool(terms),
        polarity=polarity,
        terms=terms,
        surfaces=term_surfaces(claim),
    )


# The word a determiner or "by" puts before a role, which names the role: "the division
# head", "by the team manager" (not "needs head", where the word before is no qualifier).
_QUALIFIED = re.compile(r"\b(?:the|a|an|its|their|our|your|each|every|any|by)\s+([a-z][\w-]*)\s+$")


def _with_qualifier(folded: str, role: re.Match[str]) -> str:
    before = _QUALIFIED.search(folded[: role.start()])
    if before is None or before.group(1) in _NOT_NAMES or before.group(1) in _EN_AUXES:
        return role.group()
    return f"{before.group(1)} {role.group()}"


def _is_period(number: Number) -> bool:
    # "1582年" is a year, not 1,582 years.
    return number.unit in _PERIOD_UNITS and not (
        number.unit == "year" and number.quantity.value >= 1000
    )


def _numbers(claim: str, folded: str, language: str) -> list[Number]:
    out = []
    followers: dict[str, str] = {}
    if language == "en":
        for match in _NUMBER_FOLLOWER.finditer(folded):
            followers.setdefault(match.group(1).strip(), match.group(2))
    else:
        morphemes = _morphemes(claim)
        for i, (surface, pos, _normal) in enumerate(morphemes[:-1]):
            if pos[1] == "数詞" and morphemes[i + 1][1][2] == "助数詞可能":
                followers.setdefault(surface, morphemes[i + 1][0])
    for quantity in extract_numbers(claim):
        if quantity.kind == "percent":
            unit: str | None = "%"
        elif quantity.kind == "currency":
            unit = quantity.unit
        elif quantity.unit:
            unit = "day" if quantity.unit == "business_day" else quantity.unit
        else:
            word = followers.get(quantity.surface.strip().rstrip("%"))
            unit = (_UNIT_WORDS.get(word) or english_stem(word)) if word else None
            if language == "ja" and word:
                unit = _JA_COUNTERS.get(word, ("number", word))[1]
        out.append(Number(quantity, unit))
    return out


# --- the signals and the model ----------------------------------------------------------


@lru_cache(maxsize=65536)
def _grams(text: str, n: int = 3) -> frozenset[str]:
    flat = re.sub(r"[\s\W_]+", " ", normalise(text)).strip()
    return frozenset(flat[i : i + n] for i in range(max(0, len(flat) - n + 1)))


def _new(items: Sequence[str], question: str) -> bool:
    # An answer names something the question does not: "Who founded Sony?" is not answered
    # by a sentence whose only name is Sony.
    return any(normalise(item).strip() not in question for item in items if item.strip())


def kind_signals(part: Part, claim: Supplied, question_text: str) -> tuple[float, float]:
    """(the claim supplies the asked kind, its numbers are in the wrong unit)."""
    q = normalise(question_text)
    kind = part.kind
    new_terms = claim.terms - _question_terms(question_text)
    if kind in ("number", "amount", "period"):
        numbers = [n for n in claim.numbers if n.quantity.kind != "date"]
        if kind == "amount":
            fitting = [n for n in numbers if n.quantity.kind == "currency"]
        elif kind == "period":
            fitting = [n for n in numbers if _is_period(n)]
        else:
            fitting = numbers
        if part.unit is not None:
            fitting = [n for n in fitting if n.unit in (part.unit, None) or _same_unit(n, part)]
            conflict = bool(numbers) and not any(n.unit == part.unit for n in numbers)
            conflict = conflict and all(n.unit is not None for n in numbers)
        else:
            conflict = bool(numbers) and not fitting
        found = _new([str(n.quantity.value) + " " for n in fitting], q) or bool(fitting)
        return float(found), float(conflict)
    if kind == "date":
        return float(_new(claim.dates, q)), 0.0
    if kind == "person":
        return float(_new(claim.persons, q)), 0.0
    if kind == "place":
        return float(_new(claim.places, q)), 0.0
    if kind == "reason":
        return float(bool(claim.reasons)), 0.0
    if kind == "yes_no":
        return float(claim.statement), 0.0
    return float(bool(new_terms)), 0.0


def _same_unit(number: Number, part: Part) -> bool:
    return part.counted is not None and number.unit == english_stem(part.counted)


@lru_cache(maxsize=8192)
def _question_terms(text: str) -> frozenset[str]:
    return frozenset(content_terms(text))


def best_elsewhere(
    question: Question, part: Part, elsewhere: Sequence[str]
) -> tuple[float, str | None]:
    """The best weighted_overlap, for this part, of the sentences in `elsewhere` (the cited
    evidence's sentences no claim rests on), and that sentence; 0 and None with none."""
    terms = part.terms or question.terms
    scored = [(_weighted_overlap(terms, supplied(s).terms), s) for s in elsewhere]
    return max(scored, key=lambda found: found[0], default=(0.0, None))


def _weighted_overlap(terms: frozenset[str], given: frozenset[str]) -> float:
    weight = sum(len(t) for t in terms)
    return sum(len(t) for t in terms & given) / weight if weight else 0.0


def signals(question: Question, part: Part, claim: str, rival: float = 0.0) -> dict[str, float]:
    """The signals of one claim against one part of the question, by name (SIGNALS).
    `rival`: the part's best weighted overlap among the cited evidence's other sentences
    (`best_elsewhere`); an answer citing a paragraph that answers the question in another sentence
    than the one the claim states does not address it, however much of the topic it shares."""
    given = supplied(claim)
    terms = part.terms or question.terms
    overlap = len(terms & given.terms) / len(terms) if terms else 0.0
    # A question of several parts: each part's own wording, so that one answered part does
    # not lend its words to another ("…remotely, and who approves it?").
    several = len(question.parts) > 1
    grams = (_asked_grams(part.text, question.language) if several else None) or question.grams
    claim_grams = _grams(claim)
    char = len(grams & claim_grams) / len(grams) if grams else 0.0
    supplies, conflict = kind_signals(part, given, question.text)
    novel = given.terms - _question_terms(question.text)
    typed = part.kind not in ("open", "choice", "yes_no")
    weighted = _weighted_overlap(terms, given.terms)
    return {
        "focus_overlap": overlap,
        "weighted_overlap": weighted,
        "pair_overlap": _pair_overlap(part.text if several else question.text, claim),
        "density": _density(terms, claim),
        "common_overlap": (
            len(common & given.terms) / len(common)
            if (common := terms - _names(question.text))
            else overlap
        ),
        "char_overlap": char,
        "kind_supplied": supplies,
        "kind_missing": float(typed and not supplies),
        "unit_conflict": conflict,
        "novel_share": len(novel) / len(given.terms) if given.terms else 0.0,
        "typed": float(typed),
        "claim_terms_log": math.log1p(len(given.terms)),
        "outdone": max(0.0, rival - weighted),
    }


def _pair_overlap(question: str, claim: str, window: int = 3) -> float:
    """Share of the question's neighbouring content-term pairs that the claim holds within
    `window` terms of each other: the question's phrasing kept, not only its words."""
    asked = [t for t in _ordered_terms(question) if not _asking(t)]
    pairs = set(itertools.pairwise(asked))
    if not pairs:
        return 0.0
    said = _ordered_terms(claim)
    near = {
        (a, b)
        for i, a in enumerate(said)
        for b in said[max(0, i - window) : i + window + 1]
        if a != b
    }
    return len(pairs & near) / len(pairs)


@lru_cache(maxsize=8192)
def _names(text: str) -> frozenset[str]:
    """The terms of the question's names (capitalised words past the first, 固有名詞): the
    topic a whole paragraph shares, where the other words name what is asked about it."""
    if has_japanese(text):
        found = [s for s, pos, _ in _morphemes(text) if pos[1] == "固有名詞"]
    else:
        found = [m.group() for m in _EN_NAME.finditer(text) if m.start() > 0]
    return frozenset(t for name in found for t in content_terms(name))


def _density(terms: frozenset[str], claim: str) -> float:
    """|question terms in the claim| / |claim terms from the first of them to the last|: a
    sentence that answers holds the question's words together around the answer; one that
    shares only its topic has them scattered."""
    said = _ordered_terms(claim)
    where = [i for i, t in enumerate(said) if t in terms]
    if not where:
        return 0.0
    return len(where) / (where[-1] - where[0] + 1)


@lru_cache(maxsize=16384)
def _ordered_terms(text: str) -> tuple[str, ...]:
    return tuple(content_terms(text))


# The addressing model is a verifier model over the addressing signals, in a file of its own
# format: evidence.verifier reads and checks it.
AddressingModel = VerifierModel
AddressingModelError = VerifierModelError


def model_from_json(data: Mapping[str, Any], *, source: str = "model") -> AddressingModel:
    """Check a model's JSON and build it; AddressingModelError names what is wrong."""
    return verifier_model_from_json(data, source=source, format=MODEL_FORMAT, signals=SIGNALS)


@lru_cache(maxsize=4)
def model(path: Path = DEFAULT_MODEL) -> AddressingModel:
    """The model, read once per process."""
    return load_model(path, format=MODEL_FORMAT, signals=SIGNALS)


# --- the verdict ------------------------------------------------------------------------


def addresses(
    question: str | Question,
    claims: Sequence[str],
    *,
    elsewhere: Sequence[str] = (),
    fitted: AddressingModel | None = None,
) -> Addressing:
    """Whether the claims answer each part of the question: a part's probability is that of
    the claim that answers it best (max over claims), the whole question's that of its least
    answered part (min over parts). `elsewhere`: the sentences of the cited evidence that no
    claim rests on, against which each claim's share of the question is weighed."""
    asked = question if isinstance(question, Question) else analyse_question(question)
    chosen = reader(asked.language, in_context=bool(elsewhere), fitted=fitted)
    answers = []
    for part in asked.parts:
        if part.kind == "summary":
            # Any claim answers a request for the source as a whole; that it is grounded in
            # the source is the claim check's to say, not the question check's.
            answers.append(
                PartAnswer(part, bool(claims), 0 if claims else None, float(bool(claims)))
            )
            continue
        best, best_p = None, 0.0
        rival, sentence = best_elsewhere(asked, part, elsewhere)
        outdone = True  # by the sentence elsewhere, for every claim
        each = []
        for index, claim in enumerate(claims):
            found = signals(asked, part, claim, rival)
            outdone = outdone and found["outdone"] > 0
            p = chosen.probability(found)
            each.append(p)
            if p > best_p:
                best, best_p = index, p
        answered = best_p >= chosen.threshold
        if not answered:
            # "Who approves it?" is answered by a claim naming who approves it, however few
            # of the question's other words it repeats (the model reads word overlap).
            for index, claim in enumerate(claims):
                if (named := names_actor(asked, part, claim)) is not None:
                    answers.append(PartAnswer(part, True, index, each[index], None, named))
                    break
            else:
                named = None
            if named is not None:
                continue
        where = sentence if not answered and claims and outdone else None
        answers.append(PartAnswer(part, answered, best, best_p, where))
    missing = tuple(a.part for a in answers if not a.answered)
    if not missing:
        mode: Mode = "full"
    elif len(missing) < len(answers):
        mode = "partial"
    else:
        mode = "off_topic"
    probability = min((a.probability for a in answers), default=0.0)
    return Addressing(
        probability=probability,
        mode=mode,
        parts=tuple(answers),
        missing=missing,
        reason=_reason(asked, answers, claims, mode),
    )


def reader(
    language: str, *, in_context: bool = False, fitted: AddressingModel | None = None
) -> LanguageModel:
    """The language's model of a claim read alone ("en"), or of one read beside other
    sentences of its evidence ("en+context", where the file has one). Two models, because
    the one that weighs a claim against its neighbours learns to trust a claim nothing
    outdoes, which a claim with no neighbours has not earned."""
    chosen = fitted or model()
    if in_context and (beside := chosen.languages.get(f"{language}{IN_CONTEXT}")):
        return beside
    return chosen.for_language(language)


def pass_mark(
    language: str, *, in_context: bool = False, fitted: AddressingModel | None = None
) -> float:
    """The probability a claim needs to count as answering a part, in this language (read
    alone or in context): the fitted model's (bench/fit_addressing.py chooses it on the fit
    split)."""
    return reader(language, in_context=in_context, fitted=fitted).threshold


def relevance(
    question: str | Question, span: str, *, fitted: AddressingModel | None = None
) -> float:
    """The relevance r_j of an evidence span to the question (seed 000, 4.1), in [0, 1]: the
    calibrated probability that the span answers the part of the question it answers best,
    counted in full from the language's pass mark up. A span the engine holds as answering
    is fully relevant; below that, in proportion, so a paragraph on another subject scores
    near 0. A span of several sentences is as relevant as its best sentence, each read
    beside the span's others (as the gate reads a claim beside its paragraph)."""
    asked = question if isinstance(question, Question) else analyse_question(question)
    if any(part.kind == "summary" for part in asked.parts):
        return 1.0  # every part of the source is what a summary is asked of
    best, threshold = answering(asked, span, fitted=fitted)
    return min(1.0, best / threshold) if threshold > 0 else 1.0


def answering(
    asked: Question, span: str, *, fitted: AddressingModel | None = None
) -> tuple[float, float]:
    """(p, pass mark): the calibrated probability that `span` answers the part of `asked` it
    answers best, uncapped (two spans above the pass mark still differ), and the pass mark
    of the reader that read it. A span of several sentences is read sentence by sentence,
    each beside the others."""
    sentences = split_sentences(span)
    chosen = reader(asked.language, in_context=len(sentences) > 1, fitted=fitted)
    readings: list[tuple[str, Sequence[str]]] = [(span, ())] if len(sentences) < 2 else [
        (one, sentences[:i] + sentences[i + 1 :]) for i, one in enumerate(sentences)
    ]  # fmt: skip
    best = max(
        (
            chosen.probability(signals(asked, part, one, best_elsewhere(asked, part, rest)[0]))
            for part in asked.parts
            for one, rest in readings
        ),
        default=0,
    )
    return float(best), chosen.threshold


# "Who approves ...?": the words after the asking ones, of which the first that is no helper
# names the act whose doer is asked for.
_EN_WHO = re.compile(r"\b(?:who(?:m|se)?|(?:what|which) (?:" + _PERSON_NOUNS + r")s?)\s+(.*)")
_JA_WHO = re.compile(r"誰|だれ|どなた|何者")


@lru_cache(maxsize=8192)
def asked_act(part_text: str) -> frozenset[str]:
    """The terms of the act a "who" part asks the doer of: approv for "Who approves a
    business trip?", 承認 for 「誰が承認しますか」; empty when the part names none."""
    if has_japanese(part_text):
        after = False
        for m in japanese_morphemes(normalise(part_text)):
            if _JA_WHO.fullmatch(m.surface):
                after = True
            elif after and (m.verbal or (m.pos == "動詞" and m.pos_detail == "一般")):
                return frozenset(content_terms(m.surface))
        return frozenset()
    found = _EN_WHO.search(part_text.lower())
    for word in _EN_WORD.findall(found.group(1)) if found else ():
        if word not in ENGLISH_STOP_WORDS and word not in _EN_AUXES:
            return frozenset(content_terms(word))
    return frozenset()


def names_actor(question: Question, part: Part, claim: str) -> str | None:
    """The person or role a claim names as doing the act a "who" part asks about, when it
    speaks of what the part asks about (shares another of its words) or of nothing else
    ("the division head approves it"); None otherwise."""
    act = asked_act(part.text) if part.kind == "person" else frozenset()
    given = supplied(claim)
    if not act or not act <= given.terms:
        return None
    asked = normalise(question.text)
    named = [p for p in given.persons if _new([p], asked)]
    if not named:
        return None
    own = given.terms - act - {t for p in named for t in content_terms(p)}
    if own and not own & (part.terms - act):
        return None
    return max(named, key=len)


# The question's words a reason quotes for one part, at most this many characters.
_QUOTED = 80


def _asking_words(part: Part) -> str:
    """The part's own words from its first asking word, as the question writes them: "Who
    approves a business trip"."""
    # Without invisible format characters: the question above it shows them as markers, and
    # a reason is shown as text wherever it goes (the queue, the why-banner).
    text = "".join(c for c in part.text if unicodedata.category(c) != "Cf")
    text = text.strip().rstrip("?？。 ")
    if not has_japanese(text):
        opening = re.search(
            r"\b(?:who|whom|whose|what|when|where|which|why|how)\b", text, re.IGNORECASE
        )
        text = text[opening.start() :] if opening else text
    if len(text) > _QUOTED:
        text = text[:_QUOTED].rsplit(" ", 1)[0] + "…"
    return text


def describe_part(part: Part) -> str:
    """What a part asks, in words: "a number of nights (how many nights may I claim)"."""
    what = _KIND_WORDS[part.kind]
    if part.counted and part.kind in ("number", "period"):
        what = f"a number of {part.counted}"
    elif part.counted and part.kind == "amount":
        what = f"an amount in {part.counted}"
    if part.kind == "summary":
        return what
    words = _asking_words(part)
    return f"{what} ({words})" if words else what


def describe_claim(claim: str, question: Question) -> str:
    """What a claim gives, in words: its typed items (numbers, who, where, why), then the
    words the question lacks: "500,000 yen, division head (about expense, needs)"."""
    given = supplied(claim)
    items = [n.quantity.surface.strip() or str(n.quantity) for n in given.numbers][:2]
    items += [*given.persons[:1], *given.places[:1], *given.reasons[:1]]
    items = list(dict.fromkeys(items))
    shown = {t for item in items for t in content_terms(item)}
    words = [
        given.surfaces[t]
        for t in given.surfaces
        if t in given.terms - question.terms - shown and not given.surfaces[t][0].isdigit()
    ][:4]
    head = ", ".join(items)
    about = ("、" if question.language == "ja" else ", ").join(words)
    if head and about:
        return f"{head} (about {about})"
    return head or (f"something about {about}" if about else "nothing new")


def _reason(asked: Question, answers: list[PartAnswer], claims: Sequence[str], mode: Mode) -> str:
    asks = _join(describe_part(p) for p in asked.parts)
    if not claims:
        return why.say(why.NO_ANSWER_TO, asked=asks)
    if mode == "full":
        given = "; ".join(f"{describe_part(a.part)} by claim {(a.claim or 0) + 1}" for a in answers)
        return why.say(why.ANSWERS_QUESTION, given=given)
    missing = [a for a in answers if not a.answered]
    if mode == "partial":
        done = _join(describe_part(a.part) for a in answers if a.answered)
        return why.say(
            why.PART_MISSING, given=done, missing=_join(describe_part(a.part) for a in missing)
        )
    best = max(answers, key=lambda a: a.probability).claim
    claim = claims[best if best is not None else 0]
    return why.say(why.OFF_TOPIC, asked=asks, given=describe_claim(claim, asked))


def _join(items: Any) -> str:
    listed = list(items)
    return listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]


__all__ = [
    "ANSWERED",
    "SIGNALS",
    "Addressing",
    "AddressingModel",
    "AddressingModelError",
    "Part",
    "PartAnswer",
    "Question",
    "Supplied",
    "addresses",
    "analyse_question",
    "asked_act",
    "asks_summary",
    "best_elsewhere",
    "describe_claim",
    "describe_part",
    "model",
    "model_from_json",
    "names_actor",
    "pass_mark",
    "reader",
    "relevance",
    "signals",
    "supplied",
]
