"""Who does what: the acts a text asserts and who performs each (who pays, who approves).

Pure. A claim that names a different actor for an act the evidence states ("Finance must
approve requests" where the line manager approves them; 会社が負担 where the excess is
自己負担) overlaps the evidence word for word, so coverage cannot see it. The actor is read
from the sentence's grammar, not from a list of known parties:

- English: the agent of a passive ("requests must be approved by the line manager") or of an
  act named by its noun ("prior approval by the division head"), or the
  subject of a verb after a modal ("the line manager must approve"), or of a present-tense
  verb that takes an object ("the department head approves each report").
- Japanese (SudachiPy morphemes): the noun compounded with a verbal noun (自己負担: 自己
  bears it), else the noun marked by が before it (会社が負担する). は marks the topic,
  which is often what is acted on (超過分は自己負担), so it never names the actor.

Acts are compared by stem (approve, approves, approved) or by the verbal noun's dictionary
form; actors by their content words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from evidence.text import (
    Morpheme,
    content_terms,
    english_stem,
    has_japanese,
    japanese_morphemes,
    normalise,
)


@dataclass(frozen=True, slots=True)
class Act:
    """An act (its stem) and who performs it (as written, and as content terms)."""

    act: str
    actor: str
    actor_terms: frozenset[str]
    verb: str = ""  # the act as written, for the reviewer's reason


_PHRASE = r"[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?"
_DETERMINER = r"(?:(?:the|a|an|its|their|his|her|our|your|each|every|any)\s+)?"
_ADVERB = r"(?:[a-z]+ly\s+)?"
# "... be approved by the line manager", "... are paid by the buyer"
_PASSIVE = re.compile(
    rf"\b(?:is|are|was|were|be|been|being)\s+{_ADVERB}([a-z]+(?:ed|en)|paid|made|held|sent|"
    rf"sold|kept|given|taken|written|borne)\s+(?:[a-z]+\s+){{0,3}}?by\s+{_DETERMINER}"
    rf"({_PHRASE})(?=\s*(?:[,.;:)]|$)|\s+(?:in|on|at|before|after|within|for|and|or|if|when|"
    rf"who|which|that|unless|until|no|not|only|under|with|from|to|of)\b)"
)
# "... require prior approval by the division head": the act named by its noun
_NOMINAL = re.compile(
    rf"\b([a-z]+(?:al|ment|tion|sion|ance|ence))\s+by\s+{_DETERMINER}"
    rf"({_PHRASE})(?=\s*(?:[,.;:)]|$)|\s+(?:in|on|at|before|after|within|for|and|or|if|when|"
    rf"who|which|that|unless|until|no|not|only|under|with|from|to|of|is|are|was|were|must|"
    rf"shall|may|will|should|can)\b)"
)
# "the line manager must approve ...", "employees may request ..."
_MODAL = re.compile(
    rf"(?:^|[.!?,;:]\s*|\b(?:that|if|when|where|unless)\s+){_DETERMINER}({_PHRASE})\s+"
    rf"(?:must|shall|will|should|may|can|has\s+to|have\s+to|(?:is|are)\s+required\s+to)\s+"
    rf"(?:not\s+)?{_ADVERB}([a-z]+)\b"
)
# "the department head approves each report"
_PRESENT = re.compile(
    rf"(?:^|[.!?,;:]\s*){_DETERMINER}({_PHRASE})\s+([a-z]+s)\s+"
    rf"(?:the|a|an|each|every|all|any|it|them|this|these|those|its|their)\b"
)
# Words that open a phrase but are not an actor: "it may", "this policy shall".
_NOT_ACTORS = frozenset(
    {"it", "this", "that", "there", "which", "who", "they", "these", "those", "such", "all"}
)
# Helpers a modal takes that are not the act itself ("must be", "may not have").
_NOT_ACTS = frozenset({"be", "have", "not", "also", "only", "always", "never", "still"})


def _english(text: str) -> list[Act]:
    folded = normalise(text).lower()
    acts: list[Act] = []
    for pattern in (_PASSIVE, _NOMINAL):
        for verb, actor in ((m.group(1), m.group(2)) for m in pattern.finditer(folded)):
            acts.append(_act(verb, actor))
    for pattern in (_MODAL, _PRESENT):
        for m in pattern.finditer(folded):
            actor, verb = m.group(1), m.group(2)
            if verb in _NOT_ACTS or actor.split()[0] in _NOT_ACTORS:
                continue
            acts.append(_act(verb, actor))
    return [a for a in acts if a.actor_terms]


def _act(verb: str, actor: str) -> Act:
    return Act(english_stem(verb), actor.strip(), frozenset(content_terms(actor)), verb)


def _japanese(text: str) -> list[Act]:
    morphemes = japanese_morphemes(normalise(text))
    acts: list[Act] = []
    for i, m in enumerate(morphemes):
        if not (m.verbal or (m.pos == "動詞" and m.pos_detail == "一般")):
            continue
        before = morphemes[i - 1] if i else None
        if m.verbal and before is not None and before.pos == "名詞" and not before.verbal:
            # a compound: 自己|負担, 会社|負担 (the actor written into the act)
            acts.append(
                Act(m.normalized, before.surface, frozenset({before.normalized}), m.surface)
            )
            continue
        if _passive(morphemes, i):
            continue  # 肉が盛られている: が marks what is acted on, not who acts
        actor = _marked_actor(morphemes, i)
        if actor is not None:
            at = max(k for k in range(i) if morphemes[k] is actor)
            terms = frozenset({actor.normalized}) | _coordinated(morphemes, at)
            acts.append(Act(m.normalized, actor.surface, terms, m.surface))
    return acts


_PASSIVE_AUX = frozenset({"れる", "られる"})


def _passive(morphemes: tuple[Morpheme, ...], i: int) -> bool:
    """Whether the verb at i is passive: れる / られる after it (盛られる), or after the する
    of a verbal noun (承認される)."""
    following = morphemes[i + 1 : i + 3]
    if following and following[0].normalized == "為る":
        following = following[1:]
    return (
        bool(following) and following[0].pos == "助動詞" and following[0].normalized in _PASSIVE_AUX
    )


def _coordinated(morphemes: tuple[Morpheme, ...], k: int) -> frozenset[str]:
    """The nouns joined to the actor at k by と / や (野菜と肉が: both act)."""
    found = set()
    while k >= 2 and morphemes[k - 1].surface in ("と", "や") and morphemes[k - 2].pos == "名詞":
        k -= 2
        found.add(morphemes[k].normalized)
    return frozenset(found)


def _marked_actor(morphemes: tuple[Morpheme, ...], i: int) -> Morpheme | None:
    """The noun marked by が (部長が承認する), or by の before a verbal noun (部長の承認),
    within the few morphemes before position i and in the same clause."""
    for j in range(i - 1, max(0, i - 6), -1):
        marker, noun = morphemes[j], morphemes[j - 1]
        if marker.surface in ("、", "。", "は", "を", "に"):
            return None
        if noun.pos == "名詞" and (
            marker.surface == "が"
            or (marker.surface == "の" and j == i - 1 and morphemes[i].verbal)
        ):
            return noun
    return None


@lru_cache(maxsize=16384)
def acts(text: str) -> tuple[Act, ...]:
    """The acts a text asserts and their actors, in order."""
    return tuple(_japanese(text) if has_japanese(text) else _english(text))


def actor_conflicts(claim: str, evidence: str) -> list[tuple[Act, Act]]:
    """(what the claim says, what the evidence says) for each act the claim gives an actor
    that the evidence gives only to someone else."""
    stated = acts(evidence)
    conflicts = []
    for claimed in acts(claim):
        same_act = [a for a in stated if a.act == claimed.act]
        if not same_act or any(a.actor_terms & claimed.actor_terms for a in same_act):
            continue  # the evidence does not say who, or says the same actor somewhere
        conflicts.append((claimed, same_act[0]))
    return conflicts
