"""Typed entities and relations in a policy text (seed 002 §2.1-2.3): who approves, reports to
or is responsible for what, which step precedes which, what is due when, which documents are
cited. spaCy (rules over tokens; Japanese on SudachiPy, or GiNZA when it is installed) when
the `nlp` extra is installed; the regular expressions of graph/extract.py otherwise. Pure: text
in, dataclasses out; nothing is downloaded.

English has no official spaCy pipeline in the package registry (only re-uploads without clear
provenance), so English runs on `spacy.blank("en")`: the tokenizer, a sentencizer, an
EntityRuler for the five entity kinds and a token Matcher for the relation cues; a relation
joins the nearest entity of the right kind on each side of its cue. Japanese: runs of nouns
are typed by their last word (経理部長: a role; 支払申請: an obligation), relations by the cue
word and the case particle each entity carries (は/が: the actor; を: the work; に: the one
reported to). No dependency parse is used: the rules read parts of speech and particles.

Coreference within a document, one documented rule: a pronoun or a bare definite noun
(he/she/they, "the department", 同部, 同人, 同規程) stands for the last entity of its kind
mentioned before it in the same document.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from graph import extract as regex_extract

ROLE, DEPARTMENT, DOCUMENT, OBLIGATION, DEADLINE = (
    "role",
    "department",
    "document",
    "obligation",
    "deadline",
)
ENTITY_KINDS = (ROLE, DEPARTMENT, DOCUMENT, OBLIGATION, DEADLINE)
THIS_DOCUMENT = "this"  # the document being read, whatever its title

ACTORS = frozenset({ROLE, DEPARTMENT})
WORK = frozenset({OBLIGATION, DOCUMENT})
# Which kinds each relation may join (source kinds, target kinds): the validation pass.
SIGNATURES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "approves": (ACTORS, WORK),
    "reports_to": (ACTORS, ACTORS),
    "responsible_for": (ACTORS, WORK),
    "references": (frozenset({DOCUMENT}), frozenset({DOCUMENT})),
    "deadline": (WORK, frozenset({DEADLINE})),
    "precedes": (frozenset({OBLIGATION}), frozenset({OBLIGATION})),
}
RELATIONS = tuple(SIGNATURES)
# A relation that cannot hold both ways: A reports to B and B reports to A is a conflict.
_ANTISYMMETRIC = frozenset({"reports_to", "precedes", "approves"})
# A piece of work has one deadline in one document; two differing ones are a conflict.
_FUNCTIONAL = frozenset({"deadline"})


@dataclass(frozen=True, slots=True)
class Entity:
    kind: str
    name: str  # normalised: case-folded, leading article dropped

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"


@dataclass(frozen=True, slots=True)
class Relation:
    source: Entity
    relation: str
    target: Entity
    sentence: str = field(default="", compare=False)

    def key(self) -> tuple[str, str, str]:
        return (str(self.source), self.relation, str(self.target))


@dataclass(frozen=True, slots=True)
class Conflict:
    first: Relation
    second: Relation
    reason: str


@dataclass(frozen=True)
class Relations:
    """Typed edges of one document, after validation, and the conflicts among them."""

    engine: str  # "nlp" or "regex"
    edges: list[Relation] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)

    def entities(self) -> list[Entity]:
        found = [e for r in self.edges for e in (r.source, r.target)]
        return list(dict.fromkeys(found))


def validate(candidates: Iterable[Relation]) -> tuple[list[Relation], list[Conflict]]:
    """Drop edges whose ends are not of the relation's kinds, self-loops and duplicates (first
    kept); flag pairs that cannot both hold (both directions of an antisymmetric relation, two
    deadlines of one piece of work). Flagged edges stay: the reader decides which is right."""
    kept: dict[tuple[str, str, str], Relation] = {}
    for edge in candidates:
        signature = SIGNATURES.get(edge.relation)
        if signature is None:
            continue
        sources, targets = signature
        if edge.source.kind not in sources or edge.target.kind not in targets:
            continue
        if edge.source == edge.target or not edge.source.name or not edge.target.name:
            continue
        kept.setdefault(edge.key(), edge)
    edges = list(kept.values())
    conflicts: list[Conflict] = []
    for i, first in enumerate(edges):
        for second in edges[i + 1 :]:
            if first.relation != second.relation:
                continue
            if (
                first.relation in _ANTISYMMETRIC
                and first.source == second.target
                and first.target == second.source
            ):
                conflicts.append(Conflict(first, second, f"{first.relation} both ways"))
            elif first.relation in _FUNCTIONAL and first.source == second.source:
                conflicts.append(Conflict(first, second, f"two {first.relation}s"))
    return edges, conflicts


def _normalise(text: str) -> str:
    words = text.casefold().replace("’", "'").split()
    while words and words[0] in {"the", "a", "an", "all", "each", "any", "every", "its", "their"}:
        words = words[1:]
    return " ".join(words).strip(" ,.;:「」『』")


# --- the regular-expression fallback ---------------------------------------------------------


def regex_relations(text: str, *, known_documents: Mapping[str, str] | None = None) -> Relations:
    """What graph/extract.py finds, as typed edges: approvers approve this document, its
    deadlines are this document's, references to known documents."""
    known = known_documents or {}
    found = regex_extract.extract(text, known_documents=known)
    this = Entity(DOCUMENT, THIS_DOCUMENT)
    edges = [Relation(Entity(ROLE, _normalise(name)), "approves", this) for name in found.approvers]
    edges += [Relation(this, "deadline", Entity(DEADLINE, d.date)) for d in found.deadlines]
    edges += [
        Relation(this, "references", Entity(DOCUMENT, _normalise(known[key])))
        for key in found.references
    ]
    kept, conflicts = validate(edges)
    return Relations("regex", kept, conflicts)


# --- availability ----------------------------------------------------------------------------


@cache
def nlp_available(language: str = "en") -> bool:
    """Whether the `nlp` extra is installed for this language (spaCy; ja-ginza for "ja")."""
    try:
        import spacy  # noqa: F401

        if language == "ja":
            import sudachipy  # noqa: F401  (spaCy's Japanese tokenizer)
    except ImportError:
        return False
    return True


_JA_SCRIPT = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def language_of(text: str) -> str:
    """ "ja" when a fifth or more of the letters are kana or kanji, else "en"."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "en"
    japanese = sum(1 for c in letters if _JA_SCRIPT.match(c))
    return "ja" if japanese * 5 >= len(letters) else "en"


def extract_relations(
    text: str,
    *,
    known_documents: Mapping[str, str] | None = None,
    language: str | None = None,
    engine: str = "auto",
) -> Relations:
    """Typed, validated edges of one document. engine "auto" uses the NLP pipeline when it is
    installed for the text's language and the regular expressions otherwise."""
    language = language or language_of(text)
    if engine == "regex" or (engine == "auto" and not nlp_available(language)):
        return regex_relations(text, known_documents=known_documents)
    candidates = _japanese(text) if language == "ja" else _english(text)
    kept, conflicts = validate(candidates)
    return Relations("nlp", kept, conflicts)


# --- coreference -----------------------------------------------------------------------------


class _Mentions:
    """The last entity of each kind seen so far in the document: what an anaphor stands for."""

    def __init__(self) -> None:
        self.last: dict[str, Entity] = {}

    def see(self, entity: Entity) -> Entity:
        if entity.name != THIS_DOCUMENT:
            self.last[entity.kind] = entity
        return entity

    def resolve(self, kind: str) -> Entity | None:
        return self.last.get(kind)


# --- English: spaCy rules over tokens --------------------------------------------------------

_EN_ROLE_HEADS = [
    "manager", "managers", "director", "directors", "officer", "officers", "controller",
    "board", "committee", "chair", "ceo", "cfo", "coo", "employee", "employees", "staff",
    "approver", "approvers", "holder", "holders", "supervisor", "supervisors", "auditor",
    "auditors", "treasurer", "secretary", "clerk", "requester", "requesters", "owner",
    "owners", "custodian", "lead", "administrator",
]  # fmt: skip
_EN_DEPARTMENT_HEADS = ["department", "division", "team", "unit", "office", "function"]
_EN_DOCUMENT_HEADS = [
    "Policy", "Procedure", "Procedures", "Standard", "Manual", "Regulations", "Rules",
    "Guidelines", "Schedule", "Handbook", "Act", "Code",
]  # fmt: skip
_EN_OBLIGATION_HEADS = [
    "claim", "claims", "request", "requests", "order", "orders", "invoice", "invoices",
    "receipt", "receipts", "record", "records", "report", "contract", "contracts",
    "payment", "payments", "requisition", "requisitions", "quotation", "quotations", "quote",
    "quotes", "tender", "tenders", "form", "forms", "reimbursement", "reimbursements",
    "expenditure", "expenditures", "purchase", "purchases", "transaction", "transactions",
    "expenses", "advance", "advances", "statement", "statements", "documents", "files",
    "register", "reconciliation", "reconciliations", "disposal", "destruction", "review",
]  # fmt: skip
# Verbs that must not be swallowed as the first word of a noun phrase.
_EN_VERBS = [
    "approve", "approves", "approved", "authorise", "authorises", "authorised", "authorize",
    "authorizes", "authorized", "review", "reviews", "reviewed", "submit", "submits",
    "submitted", "issue", "issues", "issued", "retain", "retains", "retained", "keep", "keeps",
    "kept", "maintain", "maintains", "maintained", "sign", "signs", "signed", "reports",
    "reported", "receive", "receives", "received", "check", "checks", "verify", "verifies",
    "prepare", "prepares", "pay", "pays", "paid", "store", "stores", "destroy", "destroys",
    "archive", "archives", "raise", "raises", "raised", "send", "sends", "forward", "forwards",
    "escalate", "escalates", "owns", "oversees", "manages", "records", "must", "shall", "may",
    "within", "before", "after", "prior", "following", "responsible", "accountable",
]  # fmt: skip
# Case-sensitive: "records" is a verb, "Records Officer" a role.
_MOD = {"IS_ALPHA": True, "IS_STOP": False, "TEXT": {"NOT_IN": _EN_VERBS}, "OP": "{,3}"}
_NUMBER = {"LIKE_NUM": True}
_UNITS = ["day", "days", "week", "weeks", "month", "months", "year", "years", "hours"]
_MONTHS = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
]  # fmt: skip

# fmt: off
_EN_ENTITY_PATTERNS: list[dict[str, Any]] = [
    {"label": ROLE, "pattern": [_MOD, {"LOWER": {"IN": _EN_ROLE_HEADS}}]},
    {"label": ROLE, "pattern": [{"LOWER": "head"}, {"LOWER": "of"}, {"IS_TITLE": True}]},
    {"label": DEPARTMENT, "pattern": [
        _MOD | {"OP": "{1,3}"}, {"LOWER": {"IN": _EN_DEPARTMENT_HEADS}},
    ]},
    {"label": DOCUMENT, "pattern": [
        {"IS_TITLE": True, "OP": "{1,4}"}, {"TEXT": {"IN": _EN_DOCUMENT_HEADS}},
    ]},
    {"label": OBLIGATION, "pattern": [_MOD, {"LOWER": {"IN": _EN_OBLIGATION_HEADS}}]},
    {"label": DEADLINE, "pattern": [
        {"LOWER": {"IN": ["within", "for"]}}, _NUMBER,
        {"LOWER": {"IN": ["working", "business", "calendar"]}, "OP": "?"},
        {"LOWER": {"IN": _UNITS}},
    ]},
    {"label": DEADLINE, "pattern": [
        {"LOWER": {"IN": ["by", "before"]}}, {"LOWER": "the"}, {"LOWER": "end"}, {"LOWER": "of"},
        {"LOWER": {"IN": ["the", "each"]}}, {"LOWER": {"IN": ["financial", "fiscal"]}, "OP": "?"},
        {"LOWER": {"IN": ["month", "quarter", "year"]}},
    ]},
    {"label": DEADLINE, "pattern": [
        {"LOWER": {"IN": ["by", "before"]}}, _NUMBER, {"LOWER": {"IN": _MONTHS}},
    ]},
    # anaphors: resolved to the last entity of the kind after the label's colon
    {"label": "ref:" + DEPARTMENT, "pattern": [
        {"LOWER": {"IN": ["the", "that", "this"]}}, {"LOWER": {"IN": _EN_DEPARTMENT_HEADS}},
    ]},
    {"label": "ref:" + ROLE, "pattern": [{"LOWER": {"IN": ["he", "she", "they"]}}]},
    {"label": "ref:" + OBLIGATION, "pattern": [{"LOWER": {"IN": ["it"]}}]},
    {"label": "this:" + DOCUMENT, "pattern": [
        {"LOWER": "this"}, {"LOWER": {"IN": ["policy", "procedure", "standard", "manual"]}},
    ]},
]
_EN_CUES: dict[str, list[list[dict[str, Any]]]] = {
    "approves": [[{"LOWER": {"IN": ["approves", "approve", "authorises", "authorizes"]}}],
                 [{"LOWER": {"IN": ["signs", "sign"]}}, {"LOWER": "off"}]],
    "approves<": [[{"LOWER": {"IN": ["approved", "authorised", "authorized"]}}, {"LOWER": "by"}],
                  [{"LOWER": "signed"}, {"LOWER": "off"}, {"LOWER": "by"}]],
    "reports_to": [[{"LOWER": {"IN": ["reports", "report", "reporting"]}}, {"LOWER": "to"}]],
    "responsible_for": [[{"LOWER": {"IN": ["responsible", "accountable"]}}, {"LOWER": "for"}],
                        [{"LOWER": {"IN": ["owns", "maintains", "keeps", "retains", "manages",
                                           "oversees"]}}]],
    "precedes": [[{"LOWER": "before"}], [{"LOWER": "prior"}, {"LOWER": "to"}]],
    "precedes<": [[{"LOWER": {"IN": ["after", "following"]}}]],
}
# fmt: on

_pipeline_lock = threading.Lock()


@cache
def _english_pipeline() -> tuple[Any, Any]:
    import spacy
    from spacy.matcher import Matcher

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    ruler: Any = nlp.add_pipe("entity_ruler", config={"phrase_matcher_attr": "LOWER"})
    ruler.add_patterns(_EN_ENTITY_PATTERNS)
    cues = Matcher(nlp.vocab)
    for name, patterns in _EN_CUES.items():
        cues.add(name, patterns)
    return nlp, cues


def _english(text: str) -> list[Relation]:
    with _pipeline_lock:  # one build of the pipeline per process
        nlp, cues = _english_pipeline()
    doc = nlp(text)
    mentions = _Mentions()
    this = Entity(DOCUMENT, THIS_DOCUMENT)
    out: list[Relation] = []
    for sentence in doc.sents:
        spans: list[tuple[int, int, Entity]] = []
        for ent in sentence.ents:
            label = ent.label_
            entity: Entity | None
            if label.startswith("ref:"):
                entity = mentions.resolve(label[4:])
            elif label.startswith("this:"):
                entity = this
            else:
                entity = mentions.see(Entity(label, _normalise(ent.text)))
            if entity is not None:
                spans.append((ent.start, ent.end, entity))
        said = sentence.text.strip()
        inside = {i for start, end, _ in spans for i in range(start, end)}
        for match_id, start, end in cues(sentence.as_doc()):
            start, end = start + sentence.start, end + sentence.start
            if start in inside:
                continue  # "before the end of the month" is a deadline, not an order of steps
            cue = nlp.vocab.strings[match_id]
            relation = cue.rstrip("<")
            sources, targets = SIGNATURES[relation]
            left = [e for s, t, e in reversed(spans) if t <= start]
            right = [e for s, t, e in spans if s >= end]
            if cue.endswith("<"):  # passive, or "after": the source is on the right
                left, right = right, left
            first = next((e for e in left if e.kind in sources), None)
            second = next((e for e in right if e.kind in targets), None)
            if first is None or second is None:
                continue
            out.append(Relation(first, relation, second, said))
        out.extend(_deadlines_and_references(spans, this, said))
    return out


def _deadlines_and_references(
    spans: list[tuple[int, int, Entity]], this: Entity, said: str
) -> list[Relation]:
    """A deadline is the nearest piece of work before it (the subject of "must be submitted
    within 30 days"), else this document; every document named is referenced by this one."""
    out: list[Relation] = []
    for position, (_, _, entity) in enumerate(spans):
        if entity.kind == DEADLINE:
            work = [e for _, _, e in spans[:position] if e.kind == OBLIGATION]
            out.append(Relation(work[-1] if work else this, "deadline", entity, said))
        elif entity.kind == DOCUMENT and entity != this:
            out.append(Relation(this, "references", entity, said))
    return out


# --- Japanese: parts of speech and particles (SudachiPy, or GiNZA) ----------------------------

_JA_SUFFIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (DOCUMENT, ("規程", "規則", "方針", "要領", "細則", "マニュアル", "基準", "規定", "手順書")),
    (OBLIGATION, (
        "申請", "申請書", "請求", "請求書", "報告書", "書類", "記録", "契約", "契約書", "発注",
        "伝票", "領収書", "見積", "見積書", "支払", "支払い", "購入", "稟議", "稟議書", "文書",
        "帳簿", "精算", "注文書", "検収", "廃棄", "保存", "届", "届出",
    )),
    (ROLE, ("長", "者", "役", "担当", "取締役会", "委員会", "社長", "従業員", "社員", "役員")),
    (DEPARTMENT, ("部", "課", "室", "局", "部門", "チーム", "センター")),
)  # fmt: skip
_JA_ANAPHORS = {"同部": DEPARTMENT, "当部": DEPARTMENT, "同課": DEPARTMENT, "同室": DEPARTMENT,
                "同人": ROLE, "同氏": ROLE, "同者": ROLE, "同書": OBLIGATION}  # fmt: skip
_JA_THIS = ("本規程", "本規則", "本方針", "本要領", "この規程")
_JA_DEADLINE = re.compile(
    r"(?:[0-9０-９]+|[一二三四五六七八九十]+)(?:営業日|日|週間|か月|ヶ月|カ月|年間|年)(?:以内|まで)?"
    r"|(?:毎月|翌月|毎年|各四半期)(?:末|[0-9０-９]+日)(?:まで)?|(?:月末|期末|年度末)まで"
)
_JA_CUES = {"承認": "approves", "決裁": "approves", "報告": "reports_to", "担当": "responsible_for",
            "管理": "responsible_for", "責任": "responsible_for", "所管": "responsible_for",
            "保管": "responsible_for"}  # fmt: skip
_JA_BEFORE = ("前", "先立ち", "先立っ", "事前")
_JA_AFTER = ("後", "経", "受け")


@cache
def _japanese_pipeline() -> Any:
    """ja-ginza when it is installed, else spaCy's Japanese tokenizer on the project's own
    SudachiPy and dictionary with a sentencizer. The rules read only parts of speech, lemmas
    and particles, which both give. ja-ginza pins SudachiPy < 0.7, older than evidence/text.py
    needs, so the `nlp` extra does not bring it."""
    import spacy

    try:
        return spacy.load("ja_ginza")
    except (ImportError, OSError):
        nlp = spacy.blank("ja")
        nlp.add_pipe("sentencizer", config={"punct_chars": ["。", "！", "？", "!", "?"]})
        return nlp


def _ja_kind(word: str) -> str | None:
    for kind, suffixes in _JA_SUFFIXES:
        if word.endswith(suffixes):
            return kind
    return None


def _japanese(text: str) -> list[Relation]:
    with _pipeline_lock:
        nlp = _japanese_pipeline()
    mentions = _Mentions()
    this = Entity(DOCUMENT, THIS_DOCUMENT)
    out: list[Relation] = []
    for sentence in nlp(text).sents:
        said = sentence.text.strip()
        # (first token, last token, entity, the particle after it)
        spans: list[tuple[int, int, Entity, str]] = []
        tokens = list(sentence)
        i = 0
        while i < len(tokens):
            j = i
            while j < len(tokens) and tokens[j].pos_ in {"NOUN", "PROPN"}:
                j += 1
            if j == i:
                i += 1
                continue
            word = "".join(t.text for t in tokens[i:j])
            particle = tokens[j].text if j < len(tokens) and tokens[j].pos_ == "ADP" else ""
            entity: Entity | None
            if word in _JA_THIS:
                entity = this
            elif word in _JA_ANAPHORS:
                entity = mentions.resolve(_JA_ANAPHORS[word])
            else:
                kind = _ja_kind(word)
                entity = mentions.see(Entity(kind, word.strip("「」"))) if kind else None
                if kind == ROLE and _ja_kind(word[:-1]) == DEPARTMENT:
                    mentions.see(Entity(DEPARTMENT, word[:-1]))  # 経理部長: 同部 is 経理部
            if entity is not None:
                spans.append((tokens[i].i, tokens[j - 1].i, entity, particle))
            i = j
        for match in _JA_DEADLINE.finditer(said):
            at = sentence.start_char + match.start()
            token = next((t.i for t in sentence if t.idx >= at), sentence.end)
            spans.append((token, token, Entity(DEADLINE, match.group()), ""))
        spans.sort(key=lambda span: span[0])
        out.extend(_ja_relations(tokens, spans, said))
        out.extend(_deadlines_and_references([(s, t, e) for s, t, e, _ in spans], this, said))
    return out


def _ja_relations(
    tokens: list[Any], spans: list[tuple[int, int, Entity, str]], said: str
) -> list[Relation]:
    """Cue words, with each side chosen by kind and particle: the actor carries は/が/の (は/が/
    から for reports), the target を/は/の, the one reported to に/へ."""
    out: list[Relation] = []
    for token in tokens:
        relation = _JA_CUES.get(token.lemma_) or _JA_CUES.get(token.text)
        if relation is not None:
            before = [(e, p) for s, _, e, p in spans if s < token.i]
            sources, targets = SIGNATURES[relation]
            actors = [e for e, p in before if e.kind in sources and p in {"は", "が", "の", "から"}]
            if relation == "reports_to":
                works = [e for e, p in before if e.kind in targets and p in {"に", "へ"}]
            else:
                works = [
                    e for e, p in before if e.kind in targets and p in {"を", "は", "の", "が"}
                ]
            if actors and works:
                out.append(Relation(actors[0], relation, works[-1], said))
        if token.text in _JA_BEFORE or token.text in _JA_AFTER:
            before_work = [e for s, _, e, _ in spans if s < token.i and e.kind == OBLIGATION]
            after_work = [e for s, _, e, _ in spans if s > token.i and e.kind == OBLIGATION]
            if before_work and after_work:
                first, second = before_work[-1], after_work[0]
                if token.text in _JA_BEFORE:  # Aの前にB: B comes first
                    first, second = second, first
                out.append(Relation(first, "precedes", second, said))
    return out
