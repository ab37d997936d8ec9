"""The engine's reasons: sentence templates with named parts.

A report is written by a worker, in nobody's language, and read for years by people in
theirs; the REST API and the webhooks give it in English. So a reason is stored as the
English sentence `say(TEMPLATE, ...)` makes, and a page puts it into its reader's language
when it shows it: `localise` finds the template the sentence was made from, translates the
template and puts the parts back (translating those too where a reason quotes another).
A sentence made from no template here (an LLM judge's words, a reviewer's note) is shown as
it is.

Pure: the translation function is the caller's (Django's gettext on a page).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache


def gettext_noop(message: str) -> str:
    """Marks a template for the catalogue (makemessages reads this name), as Django's does."""
    return message


# --- the claim against its paragraph (evidence.grounding) ---
META = gettext_noop("not a factual claim (meta-comment): needs no evidence")
OPINION = gettext_noop("not a factual claim (opinion or hedge): needs no evidence")
NEVER_SAYS = gettext_noop(
    "the cited paragraph never says this: only %(coverage)s of the claim's key terms appear "
    "in it (missing: %(missing)s)"
)
ADDS_CONDITION = gettext_noop(
    "adds a condition the cited paragraph does not state: '%(span)s' (missing: %(missing)s)"
)
SUPPORTED = gettext_noop("supported: numbers match, no reversal, %(coverage)s of key terms found")
WRONG_PARTY = gettext_noop(
    "wrong party: the claim names the %(claimed)s, the paragraph the %(stated)s"
)
ANOTHER_ACTOR = gettext_noop(
    "another actor: the cited paragraph says %(stated)s (%(verb)s); the claim says %(claimed)s"
)
ROLES_SWAPPED = gettext_noop(
    "roles swapped: in the claim the %(claimed)s acts, in the cited paragraph the %(stated)s acts"
)
BOUND_CHANGED = gettext_noop(
    "bound changed: claim says '%(claimed)s', paragraph says '%(stated)s' (whether the number "
    "itself is included)"
)
REVERSED = gettext_noop("reversed: claim says '%(claimed)s', paragraph says '%(stated)s'")
NUMBER_MISSING = gettext_noop(
    "number %(number)s not found in the cited paragraph (it says %(says)s)"
)
NUMBER_NONE = gettext_noop(
    "number %(number)s not found in the cited paragraph (it states no number)"
)
NUMBER_CONTRADICTED = gettext_noop("number %(number)s contradicted: the cited text says %(says)s")
VERIFIED = gettext_noop(
    "verified: every number and word of the claim is in the cited text, nothing added"
)
NOT_VERIFIED = gettext_noop(
    "not verified: the cited text's closest sentence does not say %(missing)s; a person decides"
)
# An item of NOT_VERIFIED's list: every word is in a span of two sentences, none in one.
WORDS_OF_TWO_SENTENCES = gettext_noop("all of it in one sentence (its words come from two)")
NOT_CLOSEST = gettext_noop(
    "other paragraphs of the cited sources say more of this claim: it was checked there"
)
JUDGE_VERIFIED = gettext_noop(
    "verified by the judge %(model)s (confidence %(confidence)s), as this zone allows"
)
JUDGE_REFUTED = gettext_noop(
    "refuted by the judge %(model)s (confidence %(confidence)s), as this zone allows"
)
POLARITY_DIFFERS = gettext_noop("the same words with another polarity (a negation)")
LIMIT_LEFT_OUT = gettext_noop("it without its limit (%(limit)s)")
MODIFIER_LEFT_OUT = gettext_noop('it without its qualifier ("%(modifier)s %(noun)s")')
ORDER_DIFFERS = gettext_noop('"%(first)s" before "%(second)s": it says them the other way round')
SAID_AGAIN = gettext_noop('"%(word)s" as often as the claim does')
NO_ALIGNED_SPAN = gettext_noop("no sentence of the cited text shares the claim's words")

# --- the text itself (evidence.text.format_characters) ---
# `characters`: evidence.text.name_format_characters, "ZERO WIDTH SPACE at 14, SOFT HYPHEN at 20".
HIDDEN_CHARACTERS = gettext_noop(
    "the text holds invisible characters that change how it reads (%(characters)s); they "
    "were removed for the check"
)

# --- a claim's citations and its bundle (evidence.validation) ---
UNRESOLVED = gettext_noop("unresolved")
NOT_IN_ZONE = gettext_noop(
    "fabricated citation or one outside the zone: document %(document)s does not exist in %(zone)s"
)
VERSION_NOT_IN_ZONE = gettext_noop(
    "fabricated citation or one outside the zone: document %(document)s version %(version)s "
    "does not exist in %(zone)s"
)
OVERRIDDEN = gettext_noop(
    "document %(document)s is overridden in zone %(zone)s by its own document %(overriding)s "
    "'%(title)s'"
)
OVERRIDDEN_BY_LEVEL = gettext_noop(
    "document %(document)s is overridden in zone %(zone)s by document %(overriding)s "
    "'%(title)s' of %(node)s"
)
NO_PARAGRAPH = gettext_noop(
    "fabricated citation: document %(document)s version %(version)s has no paragraph "
    "%(paragraph)s (it has %(count)s)"
)
OFFSETS_OUTSIDE = gettext_noop(
    "fabricated citation: offsets %(start)s..%(end)s lie outside paragraph %(paragraph)s "
    "(0..%(length)s)"
)
SUPERSEDED = gettext_noop("cites version %(version)s, which has been superseded")
CALIBRATED = gettext_noop(
    "reviewers in this zone reject claims like this: calibrated probability %(p)s "
    "(calibration v%(version)s)"
)
OPEN_CONFLICT = gettext_noop(
    "the knowledge base disagrees with itself here: %(reason)s (open %(kind)s conflict "
    "%(conflict)s, for the zone's admins to settle)"
)
BELOW_FLOOR = gettext_noop("confidence %(confidence)s is below the floor %(floor)s")
NOT_FACTUAL = gettext_noop("not a factual claim (%(kind)s): held to no evidence")
NO_CITATION = gettext_noop("no citation: an unsupported claim")
CITATIONS_DISAGREE = gettext_noop("cited paragraphs on the same subject disagree about this claim")
FEW_SOURCES = gettext_noop(
    "the evidence comes from %(found)s document(s); this zone asks its answers to rest on at "
    "least %(needed)s independent documents"
)

# --- the answer the user reads and the question it answers (evidence.answers, .questions) ---
CLAIM_REFUTED = gettext_noop("refuted: the cited evidence says otherwise: %(claim)s")
CLAIM_UNVERIFIED = gettext_noop(
    "not verified: the cited evidence does not say this in so many words, a person decides: "
    "%(claim)s"
)
ANSWER_UNSUPPORTED = gettext_noop("the answer says %(said)s; no cited evidence says so")
ANSWER_NEEDS_MORE = gettext_noop(
    "a sentence of the answer no claim states needs %(needed)s of its key terms in a cited "
    "paragraph; this one holds %(coverage)s"
)
NOT_IN_ANSWER = gettext_noop(
    "not part of the answer: the answer text does not say this, so it does not count toward "
    "the answer's score"
)
ANSWERS_QUESTION = gettext_noop("the answer addresses the question: %(given)s")
OFF_TOPIC = gettext_noop("the question asks for %(asked)s; the answer gives %(given)s")
PART_MISSING = gettext_noop("the answer gives %(given)s but not %(missing)s")
NO_ANSWER_TO = gettext_noop("the question asks for %(asked)s; there is no answer")
ANSWERED_ELSEWHERE = gettext_noop(
    "the cited evidence answers %(asked)s in a sentence the answer leaves out: %(sentence)s"
)
# What a part of a question asks for (evidence.questions.describe_part), and the words that
# say what a claim gives: they stand inside the parts `asked`, `given` and `missing` of the
# sentences above, and are translated wherever they stand there.
ASKED_KINDS = {
    "person": gettext_noop("a person or role"),
    "number": gettext_noop("a number"),
    "amount": gettext_noop("an amount of money"),
    "date": gettext_noop("a date or time"),
    "period": gettext_noop("a period of time"),
    "place": gettext_noop("a place"),
    "reason": gettext_noop("a reason"),
    "choice": gettext_noop("a choice among options"),
    "yes_no": gettext_noop("a yes or no"),
    "open": gettext_noop("a description"),
    "summary": gettext_noop("a summary of the source"),
}
PHRASES = (
    *ASKED_KINDS.values(),
    gettext_noop("a number of"),
    gettext_noop("an amount in"),
    gettext_noop("something about"),
    gettext_noop("nothing new"),
    gettext_noop("by claim"),
    gettext_noop("about"),
)
_PHRASE_PARTS = frozenset({"asked", "given", "missing"})
# What each side of ONE_SAYS quotes: the words it says, or, for roles swapped
# (evidence.grounding._roles_swapped), "<actor> acts", whose "acts" is the engine's word. In a
# dict, so that TEMPLATES (the module's upper-case strings) does not take it for a reason.
_SIDES = {
    "acts": (re.compile(r"^'(?P<actor>.+) acts'$", re.DOTALL), gettext_noop("%(actor)s acts"))
}
_SIDE_PARTS = frozenset({"one", "other"})

# --- a cited version against its document's current version (evidence.currency) ---
CURRENT_CONTRADICTS = gettext_noop(
    "version %(current)s of %(title)s, in force from %(effective)s, says otherwise: '%(span)s'"
)
CURRENT_CONTRADICTS_UNDATED = gettext_noop(
    "the current version %(current)s of %(title)s says otherwise: '%(span)s'"
)
CURRENT_AGREES = gettext_noop("the current version %(current)s of %(title)s says the same")
CURRENT_SILENT = gettext_noop("the current version %(current)s of %(title)s no longer says this")
# Which kinds and statuses of source may carry an answer out without a person (the zone's
# release_kinds and release_statuses); `kind` is a document kind, one of WORDS below.
APPROVED_MAY_NOT_RELEASE = gettext_noop(
    "%(title)s is an approved %(kind)s: in this zone an answer resting on it is not released "
    "without a person"
)
DRAFT_MAY_NOT_RELEASE = gettext_noop(
    "%(title)s is a draft %(kind)s: in this zone an answer resting on it is not released "
    "without a person"
)
ARCHIVED_MAY_NOT_RELEASE = gettext_noop(
    "%(title)s is an archived %(kind)s: in this zone an answer resting on it is not released "
    "without a person"
)
SOURCE_MAY_NOT_RELEASE = gettext_noop(
    "%(title)s is a %(kind)s of status %(status)s: in this zone an answer resting on it is not "
    "released without a person"
)

# --- paragraphs of the knowledge base against each other (evidence.conflicts) ---
VALUES_DISAGREE = gettext_noop("the values disagree: one says %(one)s, the other %(other)s")
OPPOSITE = gettext_noop("they say the opposite: %(reason)s")
ONE_SAYS = gettext_noop("one says %(one)s, the other %(other)s")
FORCE_OR_SCOPE = gettext_noop("the same subject with another force or scope: %(differs)s")
VERSION_CHANGES = gettext_noop("version %(newer)s changes what version %(older)s said: %(reason)s")

# --- how a decision ended (decisions) ---
WEAK_EVIDENCE = gettext_noop("sufficiency passed but some evidence is weak (below 3x the floor)")
RELEASED_BY_GATE = gettext_noop("gate %(gate)s")
BLOCKED = gettext_noop("blocked: the evidence does not support the answer")
REVIEW_LATE = gettext_noop("the review was not done within the zone's review SLA")
MORE_EVIDENCE = gettext_noop("more evidence needed: %(reason)s")
VALIDATION_GAVE_UP = gettext_noop("validation failed after %(attempts)s attempts: %(error)s")
WEBHOOK_FAILED = gettext_noop("webhook: %(error)s")

# The one-word parts some templates carry (a conflict's kind, a claim's kind, a gate), in
# the catalogue so that they are translated with the sentence around them.
WORDS = (
    gettext_noop("hard"),
    gettext_noop("soft"),
    gettext_noop("temporal"),
    gettext_noop("meta"),
    gettext_noop("opinion"),
    # document kinds (evidence.models.DocumentKind), for the *_MAY_NOT_RELEASE templates
    gettext_noop("policy"),
    gettext_noop("contract"),
    gettext_noop("report"),
    gettext_noop("minutes"),
    gettext_noop("memo"),
    gettext_noop("email"),
)
_WORD_PARTS = frozenset({"kind", "gate"})

TEMPLATES: tuple[str, ...] = tuple(
    value for name, value in list(globals().items()) if name.isupper() and isinstance(value, str)
)

_PART = re.compile(r"%\((\w+)\)s")


def say(template: str, **parts: object) -> str:
    """The stored sentence: the template with its parts, in English."""
    return template % parts


@lru_cache(maxsize=1)
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Each template as a pattern whose groups are its parts; the longest literal text first,
    so that a template that is another's prefix ("... document 3 ...") never takes the
    sentence of the longer one ("... document 3 version 2 ...")."""
    compiled = []
    for template in TEMPLATES:
        pieces = _PART.split(template)  # literal, name, literal, name, ..., literal
        regex = "".join(
            re.escape(piece) if i % 2 == 0 else f"(?P<{piece}>.+?)"
            for i, piece in enumerate(pieces)
        )
        literal = sum(len(piece) for piece in pieces[::2])
        compiled.append((literal, re.compile(f"^{regex}$", re.DOTALL), template))
    compiled.sort(key=lambda entry: -entry[0])
    return tuple((pattern, template) for _, pattern, template in compiled)


def localise(text: str, translate: Callable[[str], str]) -> str:
    """`text` in the reader's language, when it was made from one of the templates; the parts
    named `reason` are reasons themselves and are put into it too. Any other text as it is."""
    for pattern, template in _patterns():
        found = pattern.match(text)
        if found is None:
            continue
        parts = {name: _part(name, value, translate) for name, value in found.groupdict().items()}
        try:
            return translate(template) % parts
        except (KeyError, ValueError, TypeError):
            return text  # a translation whose parts do not match its template: shown as stored
    return text


def _part(name: str, value: str, translate: Callable[[str], str]) -> str:
    if name == "reason":
        return localise(value, translate)
    if name in _WORD_PARTS:
        return translate(value)
    if name in _PHRASE_PARTS:
        return phrases(value, translate)
    if name in _SIDE_PARTS:
        for pattern, template in _SIDES.values():
            found = pattern.match(value)
            if found is not None:
                return "'" + translate(template) % found.groupdict() + "'"
    return value


@lru_cache(maxsize=1)
def _phrase_pattern() -> re.Pattern[str]:
    longest_first = sorted(PHRASES, key=len, reverse=True)
    return re.compile(r"(?<!\w)(" + "|".join(map(re.escape, longest_first)) + r")(?!\w)")


def phrases(text: str, translate: Callable[[str], str]) -> str:
    """`text` with the words of PHRASES in it translated (what a question asks for, what a
    claim gives); the rest, the question's and the claim's own words, as it is."""
    return _phrase_pattern().sub(lambda found: translate(found.group(1)), text)


__all__ = ["ASKED_KINDS", "PHRASES", "TEMPLATES", "gettext_noop", "localise", "phrases", "say"]
