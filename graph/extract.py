"""Graph entities in a document's text: amounts with currency, deadlines, coordinates, named
approvers and references to other known documents. Pure: text in, dataclasses out."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from evidence.numbers import Quantity, extract_numbers

# A sentence that says when something is due turns its dates into deadlines.
_DEADLINE_CUE = re.compile(
    r"\b(deadline|due|no later than|not later than|expires?|expiry|until|by|submit\w*|"
    r"renew\w*|before)\b|期限|締切|締め切り|までに|提出",
    re.IGNORECASE,
)
# A full stop ends a sentence only before white space, so 1.2 million stays one number.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_COORDINATE = re.compile(r"(?<![\w.])G\d+(?:\.U\d+(?:\.P\d+(?:\.Z\d+(?:\.A\d+)?)?)?)?(?![\w.]*\d)")
_ROLE_WORDS = r"(?:head|manager|director|officer|board|committee|controller|lead|chair|ceo|cfo)"
_APPROVER_EN = re.compile(
    r"\b(?:approved|approval|signed off|sign-off|authori[sz]ed|authori[sz]ation)\s+by\s+"
    r"(?:the\s+)?"
    r"((?:[A-Z][\w'-]+)(?:\s+[A-Z][\w'-]+){0,3}"  # a name: Jane Smith
    r"|(?:[a-z][\w-]*\s+){0,2}" + _ROLE_WORDS + r")\b"  # a role: division head
)
_APPROVER_JA = re.compile(
    r"承認者[:：]\s*([^\s。、,，]{1,20})|([^\s。、,，はがの]{1,12})(?:が|の)承認"
)


@dataclass(frozen=True, slots=True)
class Amount:
    value: str  # normalised: "500,000 JPY"
    currency: str
    sentence: str


@dataclass(frozen=True, slots=True)
class Deadline:
    date: str  # ISO, "?" for a missing part: "2025-03-31"
    sentence: str


@dataclass(frozen=True, slots=True)
class Extraction:
    """Everything the graph takes from one version of a document."""

    amounts: list[Amount] = field(default_factory=list)
    deadlines: list[Deadline] = field(default_factory=list)
    coordinates: list[str] = field(default_factory=list)
    approvers: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)  # keys of other known documents


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _approvers(sentence: str) -> list[str]:
    found = [m.group(1).strip() for m in _APPROVER_EN.finditer(sentence)]
    for match in _APPROVER_JA.finditer(sentence):
        found.append((match.group(1) or match.group(2)).strip())
    return [name for name in found if name]


def _mentions(text: str, known: Mapping[str, str]) -> list[str]:
    """Keys of known documents whose title (or key) the text names, as whole words."""
    folded = text.casefold()
    hits: list[str] = []
    for key, title in known.items():
        for name in (title, key):
            name = name.strip().casefold()
            if len(name) < 4:
                continue  # too short to be a reference rather than a word
            if re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", folded):
                hits.append(key)
                break
    return hits


def extract(text: str, *, known_documents: Mapping[str, str] | None = None) -> Extraction:
    """Amounts (with currency), deadlines (dates in a sentence that says something is due),
    G.U.P.Z.A coordinates, named approvers, and references to `known_documents` ({key: title},
    the document's own entry left out by the caller)."""
    amounts: dict[str, Amount] = {}
    deadlines: dict[str, Deadline] = {}
    approvers: list[str] = []
    for sentence in _sentences(text):
        quantities: list[Quantity] = extract_numbers(sentence)
        due = bool(_DEADLINE_CUE.search(sentence))
        for quantity in quantities:
            if quantity.kind == "currency" and quantity.unit:
                amounts.setdefault(str(quantity), Amount(str(quantity), quantity.unit, sentence))
            elif quantity.kind == "date" and due:
                deadlines.setdefault(str(quantity), Deadline(str(quantity), sentence))
        approvers.extend(_approvers(sentence))
    return Extraction(
        amounts=list(amounts.values()),
        deadlines=list(deadlines.values()),
        coordinates=_unique(_COORDINATE.findall(text)),
        approvers=_unique(approvers),
        references=_mentions(text, known_documents or {}),
    )
