"""Who said it: a speech verb in a claim about a line of dialogue carries no claim of its own.

A summary of a chat or a meeting reports each line as an act of its speaker: "Maggie suggests
he restarts his computer" for the line "Maggie: did you restart your computer?", "Gail says it
is still cloudy" for "Gail: still cloudy here". The line itself never holds "suggests" or
"says": the speaker's name before the colon is what says who spoke. So where the aligned span
is a line of dialogue and the claim's speech verb follows that line's own speaker (the
claim's subject), the verb is read as the colon: it is not asked of the span. Everything
else the claim says still is.

Why only there: a speech verb after another name ("Tom suggests ..." for Maggie's line) is
a claim about who spoke, the entity swap summary edits make, and a verb that is not a speech
act ("refuses", "agrees", "promises") says what the speaker decided, which the line must
show. Measured on SummEdits' fitting split (not the held-out part): speech verbs were the
only word missing from about 2% of consistent summary sentences on dialogue sources.
"""

from __future__ import annotations

import re

from evidence.text import content_terms, normalise

# Verbs that report that someone spoke, and no more (not what they decided or did): the
# reading of a dialogue line's "Name:". Plain English verbs of saying, chosen by hand; their
# inflections are read through the stemmer (evidence.text.content_terms).
SPEECH_VERBS = (
    "say", "says", "said", "tell", "tells", "told", "ask", "asks", "asked",
    "suggest", "suggests", "suggested", "mention", "mentions", "mentioned",
    "inform", "informs", "informed", "remind", "reminds", "reminded",
    "explain", "explains", "explained", "add", "adds", "added", "reply", "replies",
    "replied", "answer", "answers", "answered", "note", "notes", "noted",
    "state", "states", "stated", "wonder", "wonders", "wondered",
    "recommend", "recommends", "recommended", "propose", "proposes", "proposed",
    "express", "expresses", "expressed",
)  # fmt: skip
_SPEECH_TERMS = frozenset(t for verb in SPEECH_VERBS for t in content_terms(verb))

# A line of dialogue: a speaker's name of one to three capitalised words, then a colon.
_SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){0,2})\s*:(?!\d)")
# Words that may stand between the speaker and the verb ("Maggie also asks").
_BETWEEN = r"(?:\s+(?:also|then|later|again|now|first|finally))?"


def speaker(span: str) -> str | None:
    """The speaker of a line of dialogue ("Maggie" of "Maggie: did you restart it?"), or
    None when the span is not one."""
    found = _SPEAKER.match(span)
    return found.group(1) if found else None


def spoken_by_speaker(absent: set[str], statement: str, span: str) -> set[str]:
    """Of the claim's terms the span lacks, the speech verbs the claim says of the span's own
    speaker ("Maggie suggests ..." of Maggie's line): the line's colon says them. Empty when
    the span is no line of dialogue or the verb follows another name."""
    name = speaker(span)
    candidates = absent & (_SPEECH_TERMS | _WHETHER)
    if name is None or not candidates:
        return set()
    said = normalise(statement)
    who = r"\s+".join(re.escape(part) for part in normalise(name).split())
    told: set[str] = set()
    for verb in re.finditer(rf"(?<![\w-])(?:the\s+)?{who}{_BETWEEN}\s+([a-z]+)\b", said):
        told.update(t for t in content_terms(verb.group(1)) if t in candidates)
    if span.rstrip().endswith("?"):
        # A question asserts nothing: "Nora says the shop opens" is not "Nora: does the shop
        # open?". "Nora asks whether the shop opens" is, the question mark its "whether";
        # so is "Maggie suggests a restart" for "Maggie: did you restart it?".
        return told & _ASKING | (absent & _WHETHER) if told & _ASKING else set()
    return told


# What a question may be reported as: asked, wondered, or suggested ("Did you restart it?"
# proposes restarting it).
_ASKING = frozenset(content_terms("asks wonders suggests recommends proposes"))
_WHETHER = frozenset(content_terms("whether"))
