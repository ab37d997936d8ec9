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

# --- a claim's citations and its bundle (evidence.validation) ---
UNRESOLVED = gettext_noop("unresolved")
NOT_IN_ZONE = gettext_noop(
    "fabricated citation or one outside the zone: document %(document)s does not exist in %(zone)s"
)
VERSION_NOT_IN_ZONE = gettext_noop(
    "fabricated citation or one outside the zone: document %(document)s version %(version)s "
    "does not exist in %(zone)s"
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

# --- paragraphs of the knowledge base against each other (evidence.conflicts) ---
VALUES_DISAGREE = gettext_noop("the values disagree: one says %(one)s, the other %(other)s")
OPPOSITE = gettext_noop("they say the opposite: %(said)s")
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
    return value


__all__ = ["TEMPLATES", "gettext_noop", "localise", "say"]
