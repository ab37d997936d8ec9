"""Claims of an answer, and the paragraph spans that best support each one.

`split_claims` cuts an answer (English or Japanese) into sentences, then each sentence into
clauses where two clauses joined by a conjunction each state a fact of their own; every
claim keeps exact character offsets into the answer and the citation markers ([1], [1][3],
[2, 3], 【1】) written in it. `align` finds, for one claim, the sentence (or two adjacent
sentences) of the given paragraphs holding most of the claim's content terms and numbers,
again with exact offsets.

Pure: the standard library and the project's pure text and number modules only. Every pass
is linear in the length of the text (regex scans without nested repetition, arrays for the
"is there a verb in this word range" questions, a bounded Sudachi window per candidate
break), so an answer of hundreds of thousands of characters is handled.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from evidence.numbers import Quantity, extract_numbers, same_quantity
from evidence.text import (
    ABBREVIATIONS,  # the list split_sentences reads, so both split alike
    ENGLISH_STOP_WORDS,
    content_terms,
    format_free,
    glued_end,
    has_japanese,
    japanese_morphemes,
    normalise,
    original_span,
)


@dataclass(frozen=True)
class Claim:
    """One claim of an answer.

    `text == answer[start:end]`, always. The span is the claim's clause with these stripped
    from its edges, and nothing else:

    * leading: whitespace, list bullets (- * • ・), a list number ("1. ", "2) ", "(3) "),
      citation markers, and a connective opening the clause (English "and", "but",
      "however,", "also,", "moreover,", "furthermore,", "additionally,", "in addition,";
      Japanese "しかし", "また、", "一方、" / "一方で", "さらに、", "なお、");
    * trailing: whitespace, citation markers and sentence / clause punctuation
      (. ! ? 。 ！ ？ ｡ , ; : 、 ， ； ： …), so "etc." ends as "etc".

    The conjunction that joins two clauses (", and", "; ", "が、", "、また"...) belongs to
    neither claim. A marker at either edge of the clause is outside the span, so `text`
    holds no markers in the usual case; a marker in the middle of a clause ("X [1] and Y
    ...", rare) stays in `text`, since `text` is always the slice (`align` ignores markers).

    `markers` are the citation numbers written anywhere in the clause, as written (1-based),
    distinct, in order of first appearance; a range "[1-3]" gives 1, 2, 3. A marker belongs
    to the clause it is written in: in "A is so, and B is so [2]." only the second claim
    cites 2. Markers just after a sentence's final period ("... so.[2] Next") belong to
    that sentence's last clause.
    """

    text: str
    start: int
    end: int
    markers: tuple[int, ...] = ()


@dataclass(frozen=True)
class Alignment:
    """A span of one paragraph supporting a claim: `paragraphs[paragraph][start:end] == text`.

    `score` in (0, 1]: the share of the claim's distinct content terms the span holds; when
    the claim states numbers, 0.9 of that plus 0.1 times the share of the claim's numbers
    the span states too (evidence.numbers.same_quantity: "3 days" = "three days").
    """

    paragraph: int
    start: int
    end: int
    text: str
    score: float


# --- citation markers -------------------------------------------------------------------

_SPACE = r"[ \t\u3000]*"
_DIGITS = r"[0-9０-９]{1,4}"
# [1] / [2, 3] / [1-3] / 【1】 / ［１］: numbers only, so "[sic]" and "[Note]" are no markers.
_MARKER_TEXT = (
    rf"[\[［【]{_SPACE}{_DIGITS}(?:{_SPACE}[,，、;；\-–~〜]{_SPACE}{_DIGITS})*{_SPACE}[\]］】]"
)
_MARKER = re.compile(_MARKER_TEXT)
_MARKER_NUMBER = re.compile(r"([0-9０-９]+)(?:[ \t\u3000]*[\-–~〜][ \t\u3000]*([0-9０-９]+))?")
# A range longer than this is taken for two numbers, not expanded.
_MAX_RANGE = 20


def without_markers(text: str) -> str:
    """The text with its citation markers blanked and its spaces made single: "[1]" is no
    number a claim states."""
    return " ".join(_MARKER.sub(" ", text).split())


def _marker_numbers(marker: str) -> list[int]:
    numbers: list[int] = []
    for m in _MARKER_NUMBER.finditer(marker):
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else None
        if last is not None and first <= last <= first + _MAX_RANGE:
            numbers.extend(range(first, last + 1))
        else:
            numbers.append(first)
            if last is not None:
                numbers.append(last)
    return numbers


# --- sentences with offsets ---------------------------------------------------------------

# The line ends str.splitlines knows.
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# As evidence.text._SENTENCE_END, plus the citation markers that may follow the end mark.
_SENTENCE_END = re.compile(rf"([。！？｡]|[.!?]+)([)\]\"'”’」』）】]*)((?:{_SPACE}{_MARKER_TEXT})*)")
_NON_SPACE = re.compile(r"\S")
_LEADING_BULLETS = re.compile(r"[\s\-*•・]*")
_BULLETS = "-*•・ "


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`, in order.

    The rules of evidence.text.split_sentences, with offsets: a line break ends a sentence;
    。！？｡ end one; . ! ? end one when whitespace or the line's end follows, unless the
    word before a lone "." is an abbreviation ("e.g.", "Inc."), a single letter ("J. Smith")
    or is followed by a lower-case word ("approx. five days"). So decimals ("3.5") and
    domains never end one. Two additions: citation markers right after the end mark
    ("approved.[2] Next") stay with the sentence, and a list number opening a line ("1. ")
    is not a sentence. Each span is stripped as split_sentences strips its sentences
    (whitespace, then leading "-*•・ "); empty ones are dropped. Linear in len(text): no
    slice of the rest of the line per candidate end, as split_sentences makes.

    Split as if `text` held no format (Cf) character, as split_sentences splits: the offsets
    are into `text` itself, a format character inside a span kept in it.
    """
    return list(_spans_of(text))


# A paragraph is split once however many claims are aligned to it: a plain answer aligns
# each of its claims to every paragraph of its sources (bench/bench_long_source.py).
@lru_cache(maxsize=4096)
def _spans_of(text: str) -> tuple[tuple[int, int], ...]:
    free, kept = format_free(text)
    if free is text:
        return tuple(_sentence_spans(text))
    return tuple(original_span(kept, s, e) for s, e in _sentence_spans(free))


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    line_start = 0
    for brk in _LINE_BREAK.finditer(text):
        _line_sentences(text, line_start, brk.start(), spans)
        line_start = brk.end()
    _line_sentences(text, line_start, len(text), spans)
    return spans


def _line_sentences(text: str, lo: int, hi: int, spans: list[tuple[int, int]]) -> None:
    start = lo
    # Where the line's leading bullets and spaces end: where a list number would start.
    lead = _LEADING_BULLETS.match(text, lo, hi)
    lead_end = lead.end() if lead else lo
    for end in _SENTENCE_END.finditer(text, lo, hi):
        mark, stop = end.group(1), end.end()
        if mark[0] in ".!?":
            if stop < hi and not text[stop].isspace() and not glued_end(text, end.start(), stop):
                continue  # "3.5", "example.com", "approved.[2]next"
            if mark == "." and _not_an_end(text, start, end.start(), stop, hi, lead_end):
                continue
        _add_span(text, start, stop, spans)
        start = stop
    _add_span(text, start, hi, spans)


def _not_an_end(text: str, start: int, mark: int, stop: int, hi: int, lead_end: int) -> bool:
    # The word before the period: the last whitespace-separated token of text[start:mark].
    j = mark
    while j > start and text[j - 1].isspace():
        j -= 1
    i = j
    while i > start and not text[i - 1].isspace():
        i -= 1
    word = text[i:j].lower()
    if word.isdigit() and len(word) <= 3 and i == lead_end:
        return True  # "1. Employees may ..." opening a line: a list number
    if word.lstrip("(\"'") in ABBREVIATIONS:
        return True
    if word[-1:] in ("]", "】", "］"):
        return False  # "... manager [2]. then": a citation, not an abbreviation
    following = _NON_SPACE.search(text, stop, hi)
    next_char = following.group() if following else ""
    return (len(word) == 1 and word.isalpha()) or (next_char.islower() and word[-1:] != ")")


def _add_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    # split_sentences' piece.strip().lstrip("-*•・ ").strip(), as offsets.
    while end > start and text[end - 1].isspace():
        end -= 1
    while start < end and (text[start].isspace() or text[start] in _BULLETS):
        start += 1
    if start < end:
        spans.append((start, end))


# --- clauses: English ---------------------------------------------------------------------

# Where a sentence may hold two clauses. ";", "but", "whereas", "while" and a comma before
# "and" join clauses far more often than nouns: they are "strong" breaks. A bare "and" joins
# nouns as often as clauses ("receipts and invoices"): it asks for more evidence.
_EN_BREAK = re.compile(r"(;)|(,[ \t]*)?\b(and|but|whereas|while)\b", re.IGNORECASE)
_LIST_COMMA = re.compile(r",(?![0-9])")
_EN_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*|[0-9]+(?:[.,][0-9]+)*")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_AUXILIARIES = _words(
    """
    am is are was were be been being has have had do does did can could may might must shall
    should will would cannot can't won't don't doesn't didn't isn't aren't wasn't weren't
    hasn't haven't hadn't shouldn't wouldn't couldn't mustn't needn't
    """
)
_DETERMINERS = _words(
    """
    the a an this that these those each every any no some both either neither all its their
    our his her my your whose such
    """
)
_PRONOUNS = _words("i you he she it we they there one")
_SUBJECT_STARTS = _DETERMINERS | _PRONOUNS
# Words ending in "-ed" that are no past forms; past forms that do not end in "-ed".
_NOT_PAST = _words("need bed red seed speed feed breed hundred indeed embed shed")
_IRREGULAR_PAST = _words(
    """
    paid made sent held kept took taken gave given sold bought spent met wrote written began
    begun brought chose chosen told said
    """
)

_NO_VERB, _WEAK_VERB, _STRONG_VERB = 0, 1, 2


def _verb_level(words: list[str], i: int) -> int:
    """How surely words[i] is a finite verb, without a part-of-speech tagger.

    Strong: an auxiliary, modal or copula ("must", "is", "has", "won't"). Weak: a past form
    ("approved", "paid") after a word that is not a determiner ("the approved budget" is
    no verb). Plain present forms ("pays", "approve") are not recognised: "-s" marks plural
    nouns as often ("travel costs"), and a missed split costs less than a wrong one.
    """
    word = words[i]
    if word in _AUXILIARIES:
        return _STRONG_VERB
    past = word in _IRREGULAR_PAST or (
        len(word) > 3 and word.endswith("ed") and word not in _NOT_PAST
    )
    if past and i > 0 and words[i - 1] not in _DETERMINERS:
        return _WEAK_VERB
    return _NO_VERB


def _english_clauses(sentence: str) -> list[tuple[int, int]]:
    """Clauses of an English sentence, as (start, end) in it.

    A break (see _EN_BREAK) splits the sentence when both sides assert a fact of their own:

    1. the left side (since the last split) holds a verb;
    2. the right side (up to the next strong break) opens with a subject - a determiner or
       pronoun, or a word that is neither a stop-word nor a verb - and holds a verb after
       that first word (so "and must be approved", sharing the subject, stays joined);
    3. the left side is not a list: when it holds a comma, the stretch after its last comma
       holds a verb ("covers meals, hotels, and the cars booked by staff" is one claim).

    At a strong break a weak verb (a past form) counts; at a bare "and" both sides need a
    strong one (an auxiliary or modal). So "Receipts and invoices are required" and "must
    keep receipts and invoices for seven years" stay whole, while "Requests are approved by
    HR and payments are made by finance" splits.
    """
    masked = _MARKER.sub(lambda m: " " * len(m.group()), sentence)
    breaks = list(_EN_BREAK.finditer(masked))
    if not breaks:
        return [(0, len(sentence))]
    found = list(_EN_WORD.finditer(masked))
    starts = [m.start() for m in found]
    words = [m.group().lower().replace("’", "'") for m in found]
    levels = [_verb_level(words, i) for i in range(len(words))]
    # next_verb[need][i]: the first index >= i whose level is at least `need`, else len.
    next_verb = {_WEAK_VERB: _next_at_least(levels, _WEAK_VERB)}
    next_verb[_STRONG_VERB] = _next_at_least(levels, _STRONG_VERB)
    # Commas that separate words: not the one in "1,000".
    commas = [m.start() for m in _LIST_COMMA.finditer(masked)]
    strong = [
        b.group(3) is None or b.group(2) is not None or b.group(3).lower() != "and" for b in breaks
    ]
    # Where the right side of each break ends: the next strong break, or the sentence's end.
    right_ends = [len(masked)] * len(breaks)
    bound = len(masked)
    for k in range(len(breaks) - 1, -1, -1):
        right_ends[k] = bound
        if strong[k]:
            bound = breaks[k].start()

    pieces: list[tuple[int, int]] = []
    prev = 0
    for k, brk in enumerate(breaks):
        need = _WEAK_VERB if strong[k] else _STRONG_VERB
        verbs = next_verb[need]
        left_lo, left_hi = bisect_left(starts, prev), bisect_left(starts, brk.start())
        right_lo, right_hi = bisect_left(starts, brk.end()), bisect_left(starts, right_ends[k])
        if left_lo >= left_hi or right_lo >= right_hi:
            continue
        if verbs[left_lo] >= left_hi:
            continue  # (1) no verb on the left
        first = words[right_lo]
        opens_with_subject = first in _SUBJECT_STARTS or (
            first not in ENGLISH_STOP_WORDS and levels[right_lo] == _NO_VERB
        )
        if not opens_with_subject or verbs[right_lo + 1] >= right_hi:
            continue  # (2) no subject + verb on the right
        comma = bisect_left(commas, brk.start()) - 1
        if comma >= 0 and commas[comma] >= prev:
            after_comma = bisect_left(starts, commas[comma])
            if next_verb[_WEAK_VERB][after_comma] >= left_hi:
                continue  # (3) "A, B, and C ...": a list
        pieces.append((prev, brk.start()))
        prev = brk.end()
    pieces.append((prev, len(sentence)))
    return pieces


def _next_at_least(levels: list[int], need: int) -> list[int]:
    out = [len(levels)] * (len(levels) + 1)
    for i in range(len(levels) - 1, -1, -1):
        out[i] = i if levels[i] >= need else out[i + 1]
    return out


# --- clauses: Japanese --------------------------------------------------------------------

_JA_BREAK = re.compile(r"が[、，]|[、，]また[、，]?|一方(?:で[、，]?|[、，])|しかし[、，]?")
_JA_PREDICATES = frozenset({"動詞", "形容詞", "助動詞"})
_JA_IGNORED_POS = frozenset({"補助記号", "空白"})
_JA_TRAILING = " \t\u3000。．.！？!?｡、，,；;：:…)）」』】］]\"'”’"
# Only the end of a clause is read: this many characters before a break are enough for its
# last morphemes, and bound the work (and Sudachi's input) per break.
_JA_WINDOW = 48


def _japanese_clauses(sentence: str) -> list[tuple[int, int]]:
    """Clauses of a Japanese sentence, as (start, end) in it.

    A break - "が、", "、また", "一方、" / "一方で", "しかし" - splits the sentence when the
    text before it ends in a predicate and so does the text after it (up to the next break
    that splits, or the sentence's end): its last morpheme (SudachiPy) is a verb (動詞), an
    adjective (形容詞) or an auxiliary / copula (助動詞: です, ない, だ). For "が、" the が
    itself must be the conjunctive particle (接続助詞), not the subject marker: "超過分は
    自己負担とするが、役員は会社が負担する" splits, "会社が、負担する" does not. Japanese
    drops subjects freely, so only the predicates are asked for.
    """
    masked = _MARKER.sub(lambda m: " " * len(m.group()), sentence)
    breaks = list(_JA_BREAK.finditer(masked))
    if not breaks:
        return [(0, len(sentence))]
    before: list[bool] = []
    prev_end = 0
    for brk in breaks:
        conjunctive_ga = brk.group().startswith("が")
        left = masked[prev_end : brk.start() + (1 if conjunctive_ga else 0)]
        before.append(_ends_in_predicate(left, conjunctive_ga))
        prev_end = brk.end()
    # Does some predicate close the text after break k: a later break's left side, or the end?
    closed = [False] * len(breaks)
    after = _ends_in_predicate(masked[prev_end:], conjunctive_ga=False)
    for k in range(len(breaks) - 1, -1, -1):
        closed[k] = after
        after = after or before[k]
    pieces: list[tuple[int, int]] = []
    prev = 0
    for k, brk in enumerate(breaks):
        if before[k] and closed[k] and masked[prev : brk.start()].strip():
            pieces.append((prev, brk.start()))
            prev = brk.end()
    pieces.append((prev, len(sentence)))
    return pieces


def _ends_in_predicate(text: str, conjunctive_ga: bool) -> bool:
    window = normalise(text.rstrip(_JA_TRAILING)[-_JA_WINDOW:])
    if not window.strip():
        return False
    morphemes = [m for m in japanese_morphemes(window) if m.pos not in _JA_IGNORED_POS]
    if conjunctive_ga:
        if not morphemes or morphemes[-1].surface != "が" or morphemes[-1].pos_detail != "接続助詞":
            return False
        morphemes.pop()
    return bool(morphemes) and morphemes[-1].pos in _JA_PREDICATES


# --- claims -------------------------------------------------------------------------------

_CONNECTIVE = (
    r"(?i:(?:and|but|however|also|moreover|furthermore|additionally|in[ \t]+addition)\b,?)"
    r"|(?:また|一方で?|さらに|更に|なお)[、，]|しかし[、，]?"
)
_LEADING = re.compile(rf"(?:\s+|[\-*•・]+|\(?[0-9]{{1,3}}[.)](?=\s)|{_MARKER_TEXT}|{_CONNECTIVE})*")
_LETTER = re.compile(r"[^\W\d_]")
_TRAILING_PUNCTUATION = frozenset(".!?。！？｡,;:、，；：…")


def split_claims(answer: str) -> list[Claim]:
    """The claims of an answer, in order: its sentences, each cut into its clauses where two
    clauses joined by a conjunction state separate facts (see `_english_clauses` and
    `_japanese_clauses` for when). Lists of nouns, numbers ("1,000", "3.5") and
    abbreviations are never split. Offsets and markers as `Claim` documents them; a clause
    with no letter (kana and kanji count) once its edges are stripped - a lone "[1]." line,
    a stray "2." - gives no claim.

    Read as if the answer held no format (Cf) character: a zero-width space (U+200B) after
    a period does not glue two sentences, nor one inside "and" hide a clause break. Offsets
    and `text` are the answer's own, a format character inside a claim kept in it.
    """
    free, kept = format_free(answer)
    if free is answer:
        return _split_claims(answer)
    claims = []
    for claim in _split_claims(free):
        start, end = original_span(kept, claim.start, claim.end)
        claims.append(Claim(answer[start:end], start, end, claim.markers))
    return claims


def _split_claims(answer: str) -> list[Claim]:
    if not answer.strip():
        return []
    markers = [(m.start(), m.end(), _marker_numbers(m.group())) for m in _MARKER.finditer(answer)]
    marker_start_at_end = {end: start for start, end, _ in markers}
    claims: list[Claim] = []
    next_marker = 0
    for s, e in _sentence_spans(answer):
        sentence = answer[s:e]
        split = _japanese_clauses if has_japanese(sentence) else _english_clauses
        for piece_start, piece_end in split(sentence):
            lo, hi = s + piece_start, s + piece_end
            while next_marker < len(markers) and markers[next_marker][0] < lo:
                next_marker += 1  # in a break between clauses: cited by neither
            numbers: list[int] = []
            while next_marker < len(markers) and markers[next_marker][0] < hi:
                numbers.extend(n for n in markers[next_marker][2] if n not in numbers)
                next_marker += 1
            start, end = _trim(answer, lo, hi, marker_start_at_end)
            if _has_letter(answer, start, end):
                claims.append(Claim(answer[start:end], start, end, tuple(numbers)))
    return claims


def _has_letter(answer: str, start: int, end: int) -> bool:
    # A "2." or "(3)" left over from a list, or a lone "30%", states nothing to ground.
    return _LETTER.search(answer, start, end) is not None


def _trim(answer: str, lo: int, hi: int, marker_start_at_end: dict[int, int]) -> tuple[int, int]:
    leading = _LEADING.match(answer, lo, hi)
    start = leading.end() if leading else lo
    end = hi
    while end > start:
        if answer[end - 1].isspace() or answer[end - 1] in _TRAILING_PUNCTUATION:
            end -= 1
        elif marker_start_at_end.get(end, -1) >= start:
            end = marker_start_at_end[end]
        else:
            break
    return start, end


# --- alignment ----------------------------------------------------------------------------

# Weight of the claim's numbers in the score, when it states any.
NUMBER_WEIGHT = 0.1
# Two adjacent sentences are offered as one span when together they hold at least this much
# more of the claim's terms than the better of the two alone.
PAIR_GAIN = 0.2
MAX_ALIGNMENTS = 3


@dataclass(frozen=True)
class _Sentence:
    start: int
    end: int
    terms: frozenset[str]  # the claim's terms it holds
    numbers: frozenset[int]  # indexes of the claim's quantities it states


# A claim citing more paragraphs than this is checked in full only against those that hold
# its best aligned spans (at most MAX_ALIGNMENTS of them): a plain answer may cite a whole
# 50-paragraph article, and the rest cannot say it better than its closest spans do.
CHECKED_PARAGRAPHS = MAX_ALIGNMENTS


def closest(claim: str, paragraphs: Sequence[str]) -> frozenset[int]:
    """The indexes of the paragraphs to check `claim` against in full: all of them up to
    CHECKED_PARAGRAPHS, else those holding its best aligned spans (none when no sentence
    shares a content term with it)."""
    if len(paragraphs) <= CHECKED_PARAGRAPHS:
        return frozenset(range(len(paragraphs)))
    return frozenset(a.paragraph for a in _align(claim, tuple(paragraphs)))


def align(claim: str, paragraphs: Sequence[str]) -> list[Alignment]:
    """The spans of `paragraphs` that best support `claim` (see `_align`)."""
    return list(_align(claim, tuple(paragraphs)))


# The checks of one claim against one paragraph ask for the same alignment several times
# (the antonym swap, what verification lacks, the span shown to the reviewer).
@lru_cache(maxsize=8192)
def _align(claim: str, paragraphs: tuple[str, ...]) -> tuple[Alignment, ...]:
    """The spans of `paragraphs` that best support `claim`, best first, at most three.

    A span is a sentence of a paragraph (split as `split_claims` splits sentences:
    。！？ end Japanese ones), or two adjacent sentences of one paragraph when together they
    hold at least PAIR_GAIN more of the claim's terms than the better one alone. Scored as
    `Alignment` documents. Only spans with a score above 0 (some content term shared) are
    returned; equal scores go by paragraph order, then position; returned spans never
    overlap. Citation markers in the claim are ignored. An empty claim, one with no content
    terms, or no paragraphs: [].
    """
    bare = _MARKER.sub(" ", claim)
    terms = frozenset(content_terms(bare)) if bare.strip() else frozenset()
    if not terms or not paragraphs:
        return ()
    quantities = extract_numbers(bare)
    candidates: list[Alignment] = []
    for index, paragraph in enumerate(paragraphs):
        sentences = [
            _read_sentence(paragraph, s, e, terms, quantities) for s, e in sentence_spans(paragraph)
        ]
        for i, sentence in enumerate(sentences):
            if sentence.terms:
                candidates.append(
                    _alignment(
                        paragraph,
                        index,
                        sentence.start,
                        sentence.end,
                        sentence.terms,
                        sentence.numbers,
                        terms,
                        quantities,
                    )
                )
            if i + 1 < len(sentences):
                following = sentences[i + 1]
                together = sentence.terms | following.terms
                better = max(len(sentence.terms), len(following.terms))
                if (len(together) - better) / len(terms) >= PAIR_GAIN:
                    candidates.append(
                        _alignment(
                            paragraph,
                            index,
                            sentence.start,
                            following.end,
                            together,
                            sentence.numbers | following.numbers,
                            terms,
                            quantities,
                        )
                    )
    candidates.sort(key=lambda a: (-a.score, a.paragraph, a.start, a.end))
    chosen: list[Alignment] = []
    for candidate in candidates:
        if any(
            c.paragraph == candidate.paragraph
            and c.start < candidate.end
            and candidate.start < c.end
            for c in chosen
        ):
            continue
        chosen.append(candidate)
        if len(chosen) == MAX_ALIGNMENTS:
            break
    return tuple(chosen)


@lru_cache(maxsize=65536)
def _sentence_terms(sentence: str) -> frozenset[str]:
    # Every claim of an answer is aligned to the same sentences of its sources.
    return frozenset(content_terms(sentence))


def _read_sentence(
    paragraph: str, start: int, end: int, terms: frozenset[str], quantities: list[Quantity]
) -> _Sentence:
    text = paragraph[start:end]
    held = terms & _sentence_terms(text)
    stated: frozenset[int] = frozenset()
    if held and quantities:
        found = extract_numbers(text)
        stated = frozenset(
            k for k, q in enumerate(quantities) if any(same_quantity(q, p) for p in found)
        )
    return _Sentence(start, end, held, stated)


def _alignment(
    paragraph: str,
    index: int,
    start: int,
    end: int,
    held: frozenset[str],
    stated: frozenset[int],
    terms: frozenset[str],
    quantities: list[Quantity],
) -> Alignment:
    score = len(held) / len(terms)
    if quantities:
        score = (1 - NUMBER_WEIGHT) * score + NUMBER_WEIGHT * len(stated) / len(quantities)
    return Alignment(index, start, end, paragraph[start:end], score)
