"""Grounding: does a cited paragraph support a claim? Numbers must match, reversals veto,
key terms must be covered; opinions, hedges and meta-comments are held to no evidence."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from evidence.numbers import Quantity, extract_numbers, numbers_match, same_quantity
from evidence.text import (
    Morpheme,
    content_terms,
    japanese_morphemes,
    normalise,
    split_sentences,
    tokenize,
)

ClaimKind = Literal["factual", "opinion", "meta"]

# Share of the claim's key terms the paragraph must contain. Tuned on the test corpus
# (tests/evidence/corpus/): faithful paraphrases cover >= 0.67 of their terms, claims about
# things the paragraph never says cover <= 0.5 of theirs (a claim reusing the paragraph's
# subject while adding a new predicate sits at 0.5).
COVERAGE_MIN = 0.6
# An embedder's cosine this high vouches for a paraphrase whose coverage falls short by at
# most COVERAGE_RESCUE; it never overrides a number or a reversal.
SIMILARITY_RESCUE = 0.85
COVERAGE_RESCUE = 0.15


@dataclass(frozen=True)
class Grounding:
    """The verdict on one claim against one cited paragraph, with the signals behind it."""

    supported: bool
    reasons: list[str]
    kind: ClaimKind
    numbers_ok: bool = True
    missing_numbers: list[Quantity] = field(default_factory=list)
    coverage: float = 1.0
    reversal: bool = False
    # The words that reverse the claim: (what the claim says, what the paragraph says).
    reversal_words: list[tuple[str, str]] = field(default_factory=list)
    similarity: float | None = None


# --- opinions, hedges and meta-comments -------------------------------------------------

# A lead-in naming the sources ("Based on the documents provided, ..."): stripped, and what
# follows is checked as a fact. No digits allowed in it, so "From 2024-04-01, ..." stays.
_PREAMBLE = re.compile(
    r"^(?:(?:based on|according to|as (?:stated|described|noted|set out|specified) in|"
    r"referring to|per)\s[^,\d]{0,60},|"
    r"(?:in summary|to summarize|to summarise|to sum up|in short|overall|in conclusion),|"
    r"(?:the\s+)?(?:provided\s+|available\s+|cited\s+)?(?:documents?|sources?|context|"
    r"evidence|policy|contract|minutes|paragraph|text|rules?|regulations?)\s+"
    r"(?:states?|says?|indicates?|shows?|notes?|specif(?:y|ies)|mentions?|provides?)"
    r"(?:\s+that)?|"
    r"[^、。\d]{0,30}?(?:によると|によれば|に基づくと|に基づけば|に基づき|に基づいて|を踏まえると)、?|"
    r"(?:まとめると|要約すると|結論として)、?)\s*",
)
_META = re.compile(
    r"^(?:here (?:is|are)|below (?:is|are)|the following|summary:|let me|i hope|hope this|"
    r"feel free|please (?:let|note|see|refer|contact)|if you have|i can|i'll|i will|"
    r"great question|sure\b|certainly\b|of course\b|i'd be happy|i am happy|"
    r"以下に(?:要約|まとめ|示し|説明|整理)|以下のとおり|以下の通り|次のとおり|次の通り|"
    r"ご不明|ご質問|お問い合わせ|ご参考|参考まで|お気軽に)"
    r"|(?:要約します|まとめます|整理します|ご確認ください)[。.]?$"
)
_OPINION = re.compile(
    r"\b(?:i think|i believe|i feel|in my (?:view|opinion)|it (?:may|might|could|would) be "
    r"(?:worth|wise|advisable|helpful|prudent|useful|good|better)|you (?:may|might|could) "
    r"(?:want|wish) to|(?:we|i) (?:would )?(?:suggest|recommend)|it seems|it appears|perhaps|"
    r"possibly|probably|presumably|arguably)\b|^consider\b"
    r"|と思われ|と思い|と思う|と考えられ|と考えます|かもしれ|でしょう|だろう|ようです|と推測|"
    r"検討する価値|検討してはいかが|おすすめ|お勧め|望ましいと思"
)


def classify_claim(claim: str) -> tuple[ClaimKind, str]:
    """The claim's kind and the statement to check (a meta-preamble stripped off)."""
    text = normalise(claim).strip()
    stripped = _PREAMBLE.sub("", text, count=1).strip()
    if _META.search(stripped):
        return "meta", stripped
    if _OPINION.search(stripped):
        return "opinion", stripped
    if not content_terms(stripped) and not extract_numbers(stripped):
        return "meta", stripped
    return "factual", stripped


# --- reversal cues ----------------------------------------------------------------------

# Antonym groups: (name, words meaning "yes", words meaning "the opposite"). A side word
# combined with a negation flips: "not required" == "optional", "許可されない" == "禁止".
_GROUPS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    (
        "requirement",
        (
            "required",
            "require",
            "requirement",
            "mandatory",
            "must",
            "need",
            "necessary",
            "compulsory",
            "obligatory",
            "必要",
            "必須",
            "義務",
            "要する",
        ),
        ("optional", "voluntary", "unnecessary", "discretionary", "不要", "任意", "不必要"),
    ),
    (
        "permission",
        (
            "allowed",
            "allow",
            "permitted",
            "permit",
            "may",
            "can",
            "authorised",
            "authorized",
            "許可",
            "可能",
            "認める",
            "出来る",
            "可",
        ),
        (
            "prohibited",
            "prohibit",
            "forbidden",
            "forbid",
            "banned",
            "ban",
            "disallowed",
            "禁止",
            "不可",
            "不可能",
            "不許可",
            "禁ずる",
        ),
    ),
    (
        "approval",
        (
            "approve",
            "approved",
            "approval",
            "accept",
            "accepted",
            "grant",
            "granted",
            "承認",
            "承諾",
            "可決",
            "採用",
            "受理",
            "認可",
        ),
        (
            "reject",
            "rejected",
            "rejection",
            "deny",
            "denied",
            "decline",
            "declined",
            "refuse",
            "却下",
            "否決",
            "否認",
            "不承認",
            "拒否",
            "不採用",
            "拒絶",
        ),
    ),
    (
        "change",
        (
            "increase",
            "increased",
            "rise",
            "raise",
            "grow",
            "growth",
            "higher",
            "more",
            "gain",
            "増加",
            "増額",
            "上昇",
            "増える",
            "増やす",
            "拡大",
            "引き上げる",
            "高い",
            "多い",
        ),
        (
            "decrease",
            "decreased",
            "reduce",
            "reduced",
            "reduction",
            "fall",
            "decline",
            "cut",
            "lower",
            "less",
            "fewer",
            "loss",
            "減少",
            "減額",
            "低下",
            "減る",
            "減らす",
            "縮小",
            "引き下げる",
            "低い",
            "少ない",
        ),
    ),
    (
        "time",
        (
            "before",
            "prior to",
            "in advance",
            "beforehand",
            "earlier",
            "事前",
            "前",
            "以前",
            "予め",
            "あらかじめ",
        ),
        (
            "after",
            "afterwards",
            "following",
            "later",
            "retroactively",
            "事後",
            "後",
            "以降",
            "以後",
        ),
    ),
    (
        "bound",
        (
            "at least",
            "more than",
            "above",
            "exceed",
            "exceeds",
            "exceeding",
            "or more",
            "minimum of",
            "以上",
            "超",
            "越える",
            "超過",
        ),
        ("at most", "less than", "below", "up to", "or less", "maximum of", "以下", "未満", "以内"),
    ),
    (
        "limit",
        ("maximum", "max", "upper limit", "cap", "ceiling", "上限", "最大", "最高"),
        ("minimum", "min", "lower limit", "floor", "下限", "最小", "最低"),
    ),
    (
        "scope",
        ("include", "included", "including", "含む", "含める", "対象"),
        ("exclude", "excluded", "excluding", "except", "除く", "除外", "対象外"),
    ),
    (
        "validity",
        ("valid", "effective", "eligible", "有効", "適用"),
        ("invalid", "void", "ineligible", "無効", "適用外"),
    ),
    ("charge", ("charged", "fee", "有料"), ("free", "free of charge", "無料")),
    ("locus", ("internal", "内部", "社内"), ("external", "外部", "社外")),
    ("duration", ("permanent", "indefinite", "無期"), ("temporary", "fixed-term", "有期", "一時")),
]
# Phrases whose "no"/"not" is not a negation of the statement.
_NEUTRAL_PHRASES = [
    # Prohibitions said with a negation mean "prohibited", not "not required".
    (re.compile(r"\b(?:must|shall|may) not\b|\bmustn't\b"), "prohibited"),
    (re.compile(r"(?:て|で)も?(?:よい|良い|いい|構わない|かまわない)"), "ことを許可"),
    (re.compile(r"(?:て|で)は(?:ならない|ならず|いけない|いけません|なりません)"), "ことを禁止"),
    (re.compile(r"\bno later than\b|\bnot later than\b"), "by"),
    (re.compile(r"\bno earlier than\b|\bnot earlier than\b"), "from"),
    (re.compile(r"\b(?:no|not) more than\b|\bnot exceeding\b|\bnot to exceed\b"), "at most"),
    (re.compile(r"\b(?:no|not) (?:less|fewer) than\b"), "at least"),
    (re.compile(r"\bnot only\b|\bwhether or not\b|\bno one else\b"), ""),
]
# Cheap pre-check: most clauses hold none of the neutral phrases above.
_NEUTRAL_HINT = re.compile(r"\b(?:no|not|must|shall|may|whether)\b|[てで]")
_EN_NEGATIONS = frozenset(
    {"not", "no", "never", "without", "none", "cannot", "neither", "nor", "non"}
)
_JA_NEGATION_AUX = frozenset({"ない", "ず", "ぬ", "ん"})
_JA_NEGATION_PREFIX = frozenset({"不", "非", "無", "未"})


# Parties whose roles a claim can swap (who pays, who approves).
def _word_list(words: str) -> list[str]:
    return words.split()


_EN_PARTIES = _word_list(
    "buyer seller supplier customer client contractor subcontractor vendor purchaser "
    "employee employer licensor licensee landlord tenant lessor lessee lender borrower "
    "manager director board committee applicant requester approver auditor company "
    "consultant agent principal provider recipient member chair ceo cfo head team department"
)
_JA_PARTIES = frozenset(
    _word_list(
        "甲 乙 丙 丁 買主 売主 発注者 受注者 委託者 受託者 貸主 借主 申請者 承認者 従業員 社員 "
        "会社 当社 部長 課長 社長 取締役会 委員会 顧客 供給者 購入者 販売者 本部長 委員長 "
        "買手 売手 賃貸人 賃借人 派遣元 派遣先"
    )
)


def _first_stem(word: str) -> str:
    terms = tokenize(word)
    return terms[0] if terms else word


_PARTY_STEMS = {_first_stem(p): p for p in _EN_PARTIES}
_AGENT_MARKERS = frozenset({"by", "from"})
_NOT_AGENT_MARKERS = frozenset({"of", "to", "for", "with", "on", "against"})


@dataclass(frozen=True)
class _CueSet:
    phrases: list[tuple[str, re.Pattern[str]]]  # multi-word English cues
    stems: dict[str, str]  # single English word stem -> display word
    japanese: dict[str, str]  # Japanese normalised form -> display word


def _cue_set(words: tuple[str, ...]) -> _CueSet:
    phrases: list[tuple[str, re.Pattern[str]]] = []
    stems: dict[str, str] = {}
    japanese: dict[str, str] = {}
    for word in words:
        if not word.isascii():
            japanese[word] = word
        elif " " in word or "-" in word:
            phrases.append((word, re.compile(rf"\b{re.escape(word)}\b")))
        else:
            stems.setdefault(_first_stem(word), word)
    return _CueSet(phrases, stems, japanese)


_GROUP_CUES = [(name, _cue_set(yes), _cue_set(no)) for name, yes, no in _GROUPS]


@dataclass(frozen=True)
class _Clause:
    """What one clause says, as far as reversal and coverage care."""

    terms: frozenset[str]
    negations: tuple[str, ...]
    words: frozenset[str]  # unstemmed English words, for un-/non- prefixes
    sides: dict[str, tuple[int, str]]  # group -> (0 yes / 1 opposite, the word used)
    parties: tuple[str, ...]
    agent: str | None


_CLAUSE_BREAK = re.compile(
    r";|:|,?\s*\b(?:and|but|whereas|while|unless|except|provided that)\b"
    # A comma after a verb's continuative form (承認し、却下した) joins two statements;
    # 対し、 (towards) does not.
    r"|ただし、?|但し、?|が、|けれども、?|一方、?|なお、?|(?<!対)し、|(?<=[てで])、"
)
_EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def _clauses(text: str) -> list[str]:
    out: list[str] = []
    # Sentences are split before folding: the splitter reads capitals after a period.
    for sentence in split_sentences(text):
        out.extend(c.strip() for c in _CLAUSE_BREAK.split(normalise(sentence)) if c.strip())
    return out


@lru_cache(maxsize=32768)
def _clause(text: str) -> _Clause:
    if _NEUTRAL_HINT.search(text):
        for pattern, replacement in _NEUTRAL_PHRASES:
            text = pattern.sub(replacement, text)
    words = _EN_WORD.findall(text)
    stems = tokenize(text)
    stem_set = frozenset(stems)
    morphemes = japanese_morphemes(text) if not text.isascii() else ()
    ja_forms = frozenset(m.normalized for m in morphemes) | frozenset(m.surface for m in morphemes)

    negations = [w for w in words if w in _EN_NEGATIONS or w.endswith("n't")]
    for m in morphemes:
        if _is_japanese_negation(m):
            negations.append(m.surface)

    sides: dict[str, tuple[int, str]] = {}
    for name, yes, no in _GROUP_CUES:
        found = [
            (side, word)
            for side, cues in ((0, yes), (1, no))
            if (word := _cue(cues, text, stem_set, ja_forms))
        ]
        if len(found) == 1:  # both sides named: the clause contrasts them, no direction
            sides[name] = found[0]

    parties, agent = _parties(words, morphemes)
    return _Clause(
        terms=frozenset(content_terms(text)),
        negations=tuple(negations),
        words=frozenset(words),
        sides=sides,
        parties=parties,
        agent=agent,
    )


def _is_japanese_negation(m: Morpheme) -> bool:
    return (
        (m.pos == "助動詞" and m.normalized in _JA_NEGATION_AUX)
        or (m.pos == "形容詞" and m.normalized == "無い")
        or (m.pos == "接頭辞" and m.surface in _JA_NEGATION_PREFIX)
    )


def _cue(cues: _CueSet, text: str, stems: frozenset[str], ja_forms: frozenset[str]) -> str:
    for word, pattern in cues.phrases:
        if pattern.search(text):
            return word
    for stem, word in cues.stems.items():
        if stem in stems:
            return word
    for form, word in cues.japanese.items():
        if form in ja_forms:
            return word
    return ""


@lru_cache(maxsize=4096)
def _party_of(word: str) -> str | None:
    return _PARTY_STEMS.get(_first_stem(word.removesuffix("'s")))


def _parties(
    words: list[str], morphemes: tuple[Morpheme, ...]
) -> tuple[tuple[str, ...], str | None]:
    """Parties in order of mention, and the one acting (named by "by"/から, else subject)."""
    parties: list[str] = []
    agent: str | None = None
    subject: str | None = None
    for i, word in enumerate(words):
        party = _party_of(word)
        if party is None:
            continue
        if party not in parties:
            parties.append(party)
        before = [w for w in words[max(0, i - 3) : i] if w not in ("the", "a", "an", "its")]
        if before and before[-1] in _AGENT_MARKERS:
            agent = agent or party
        elif word.endswith("'s") or (before and before[-1] in _NOT_AGENT_MARKERS):
            continue  # "the employee's request", "to the seller": not the one acting
        elif subject is None:
            subject = party
    for i, m in enumerate(morphemes):
        if m.normalized not in _JA_PARTIES:
            continue
        if m.normalized not in parties:
            parties.append(m.normalized)
        following = [n.normalized for n in morphemes[i + 1 : i + 3]]
        if following[:1] == ["から"] or following == ["に", "よる"]:
            agent = agent or m.normalized
        elif following[:1] in (["が"], ["は"]) and subject is None:
            subject = m.normalized
    return tuple(parties), agent or subject


# --- the check --------------------------------------------------------------------------


@lru_cache(maxsize=16384)
def _paragraph(paragraph: str) -> tuple[tuple[Quantity, ...], frozenset[str], tuple[_Clause, ...]]:
    clauses = tuple(_clause(c) for c in _clauses(paragraph))
    return tuple(extract_numbers(paragraph)), frozenset(content_terms(paragraph)), clauses


def check_claim(claim: str, paragraph: str, *, similarity: float | None = None) -> Grounding:
    """Whether the paragraph supports the claim: numbers found, no reversal, terms covered."""
    kind, statement = classify_claim(claim)
    if kind == "meta":
        return Grounding(
            True,
            ["not a factual claim (meta-comment): needs no evidence"],
            kind,
            similarity=similarity,
        )
    paragraph_numbers, paragraph_terms, paragraph_clauses = _paragraph(paragraph)
    claim_numbers = extract_numbers(statement)
    numbers_ok, missing = numbers_match(claim_numbers, paragraph_numbers)
    reasons = [_missing_reason(q, paragraph_numbers) for q in missing]
    if kind == "opinion":
        # A hedge or opinion needs no evidence, but a number it states still must be right.
        reasons.insert(0, "not a factual claim (opinion or hedge): needs no evidence")
        return Grounding(numbers_ok, reasons, kind, numbers_ok, missing, similarity=similarity)

    reversal_words: list[tuple[str, str]] = []
    claim_terms: set[str] = set()
    for text in _clauses(statement):
        clause = _clause(text)
        claim_terms |= clause.terms
        best = _best_match(clause, paragraph_clauses)
        if best is not None:
            reversal_words.extend(_reversals(clause, best))
    reasons.extend(_reversal_reason(c, p) for c, p in reversal_words)

    key_terms = {t for t in claim_terms if not t[0].isdigit()}
    covered = key_terms & paragraph_terms
    coverage = len(covered) / len(key_terms) if key_terms else 1.0
    threshold = COVERAGE_MIN
    if similarity is not None and similarity >= SIMILARITY_RESCUE:
        threshold -= COVERAGE_RESCUE
    if coverage < threshold:
        absent = ", ".join(sorted(key_terms - covered)[:6])
        reasons.append(
            f"the cited paragraph never says this: only {coverage:.0%} of the claim's key "
            f"terms appear in it (missing: {absent})"
        )
    supported = numbers_ok and not reversal_words and coverage >= threshold
    if supported:
        reasons.append(f"supported: numbers match, no reversal, {coverage:.0%} of key terms found")
    return Grounding(
        supported,
        reasons,
        kind,
        numbers_ok,
        missing,
        coverage,
        bool(reversal_words),
        reversal_words,
        similarity,
    )


def _best_match(claim: _Clause, clauses: tuple[_Clause, ...]) -> _Clause | None:
    best, best_overlap = None, 0
    for clause in clauses:
        overlap = len(claim.terms & clause.terms) + len(set(claim.parties) & set(clause.parties))
        if overlap > best_overlap:
            best, best_overlap = clause, overlap
    return best


def _reversals(claim: _Clause, para: _Clause) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    claim_neg = len(claim.negations) + _prefix_negations(claim, para)
    para_neg = len(para.negations) + _prefix_negations(para, claim)
    shared = sorted(claim.sides.keys() & para.sides.keys())
    disagree, compensated = [], False
    for group in shared:
        (c_side, c_word), (p_side, p_word) = claim.sides[group], para.sides[group]
        if (c_side + claim_neg) % 2 != (p_side + para_neg) % 2:
            disagree.append((_phrase(c_word, claim_neg), _phrase(p_word, para_neg)))
        elif c_side != p_side:
            compensated = True
    # An antonym plus a negation that agree ("may not" == "prohibited") mark a deliberate
    # paraphrase; the negation then belongs to that predicate, not to the other groups.
    if disagree and not (compensated and claim_neg % 2 != para_neg % 2):
        found.append(disagree[0])
    if not shared and claim_neg % 2 != para_neg % 2:
        found.append((_negation_words(claim), _negation_words(para)))
    if claim.agent and para.agent and claim.agent != para.agent:
        found.append((f"{claim.agent} acts", f"{para.agent} acts"))
    elif claim.parties and para.parties and not set(claim.parties) & set(para.parties):
        found.append((f"party is {claim.parties[0]}", f"party is {para.parties[0]}"))
    return found


def _prefix_negations(clause: _Clause, other: _Clause) -> int:
    # "unpaid" against "paid", "non-refundable" against "refundable".
    return sum(
        1
        for w in clause.words
        for prefix in ("un", "non", "in", "dis")
        if w.startswith(prefix) and w[len(prefix) :] in other.words and len(w) > len(prefix) + 2
    )


def _phrase(word: str, negations: int) -> str:
    return f"not {word}" if negations % 2 else word


def _negation_words(clause: _Clause) -> str:
    return " ".join(clause.negations) if clause.negations else "no negation"


def _reversal_reason(claim_says: str, paragraph_says: str) -> str:
    if claim_says.startswith("party is "):
        claimed, stated = (
            claim_says.removeprefix("party is "),
            paragraph_says.removeprefix("party is "),
        )
        return f"wrong party: the claim names the {claimed}, the paragraph the {stated}"
    if claim_says.endswith(" acts"):
        return (
            f"roles swapped: in the claim the {claim_says}, in the cited paragraph the "
            f"{paragraph_says}"
        )
    return f"reversed: claim says '{claim_says}', paragraph says '{paragraph_says}'"


def _missing_reason(quantity: Quantity, paragraph_numbers: tuple[Quantity, ...]) -> str:
    alike = [p for p in paragraph_numbers if p.kind == quantity.kind] or list(paragraph_numbers)
    says = ", ".join(dict.fromkeys(str(p) for p in alike[:4]))
    tail = f" (it says {says})" if says else " (it states no number)"
    return f"number {quantity} not found in the cited paragraph{tail}"


def claims_without_numbers_share(claims: list[str]) -> float:
    """Share of factual claims that carry no number: |factual without numbers| / |factual|."""
    factual = [s for kind, s in map(classify_claim, claims) if kind == "factual"]
    if not factual:
        return 0.0
    return sum(1 for s in factual if not extract_numbers(s)) / len(factual)


__all__ = [
    "COVERAGE_MIN",
    "Grounding",
    "check_claim",
    "claims_without_numbers_share",
    "classify_claim",
    "same_quantity",
]
