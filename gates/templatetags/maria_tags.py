"""Small formatting filters for the pages (numbers, bar widths, ages)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template
from django.utils import timezone
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, gettext_lazy

from evidence.reasons import localise, phrases
from evidence.text import format_characters
from maria.wording import in_language

register = template.Library()

BAR_WIDTH = 240


@register.filter
def bar_px(value: Any, width: int = BAR_WIDTH) -> int:
    """A value in [0, 1] as pixels of a bar `width` wide (clipped)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0
    return round(max(0.0, min(1.0, number)) * int(width))


@register.filter
def reason(text: Any) -> str:
    """An engine's reason, stored in English, in the reader's language (evidence.reasons);
    a person's own words as they wrote them."""
    return localise(str(text), gettext) if text else ""


@register.filter
def asked(text: Any) -> str:
    """What a part of a question asks for (evidence.questions.describe_part), its kind words
    in the reader's language; the question's own words as they are."""
    return phrases(str(text), gettext) if text else ""


@register.filter
def visible_format(text: Any) -> SafeString:
    """The text escaped, each invisible format (Cf) character in it - a zero-width space, a
    soft hyphen, a bidi override - shown as a marker naming it, so a reviewer sees what the
    checks removed (evidence.text.check_form)."""
    if text is None:
        return SafeString("")
    # str() and escape() so that text already marked safe is escaped all the same.
    text = str(text)
    pieces: list[str] = []
    at = 0
    for offset, char, name in format_characters(text):
        code = f"U+{ord(char):04X}"
        pieces.append(escape(text[at:offset]))
        pieces.append(
            format_html(
                '<span class="format-char" title="{}">\u27e8{}\u27e9</span>', f"{code} {name}", code
            )
        )
        at = offset + 1
    pieces.append(escape(text[at:]))
    return mark_safe("".join(pieces))  # noqa: S308 - every piece is escaped above


@register.filter
def num(value: Any, places: int = 2) -> str:
    try:
        return f"{float(value):.{int(places)}f}"
    except (TypeError, ValueError):
        return "–"


@register.filter
def age(moment: datetime | None) -> str:
    """How long ago, compactly: 3d 4h, 2h 5m, 40s."""
    if moment is None:
        return "–"
    return span((timezone.now() - moment).total_seconds())


def span(seconds: float) -> str:
    sign = "-" if seconds < 0 else ""
    s = int(abs(seconds))
    days, s = divmod(s, 86400)
    hours, s = divmod(s, 3600)
    minutes, s = divmod(s, 60)
    if days:
        return f"{sign}{days}d {hours}h"
    if hours:
        return f"{sign}{hours}h {minutes}m"
    if minutes:
        return f"{sign}{minutes}m {s}s"
    return f"{sign}{s}s"


@register.filter
def until(moment: datetime | None) -> str:
    if moment is None:
        return "–"
    return span((moment - timezone.now()).total_seconds())


@register.filter
def get(mapping: Any, key: str) -> Any:
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.simple_tag
def nav_pages(user: Any) -> dict[str, bool]:
    """Which pages of the header the user may open (each page checks again): the queue for
    reviewers and zone admins, the zone tree for zone admins, the audit for auditors, the
    graph for anyone holding a role."""
    from coordinates.models import Role, RoleAssignment

    if not getattr(user, "is_authenticated", False):
        return {"queue": False, "zones": False, "audit": False, "graph": False}
    if getattr(user, "is_superuser", False):
        return {"queue": True, "zones": True, "audit": True, "graph": True}
    roles = set(RoleAssignment.objects.filter(user_id=user.pk).values_list("role", flat=True))
    return {
        "queue": bool(roles & {Role.REVIEWER, Role.ZONE_ADMIN}),
        "zones": Role.ZONE_ADMIN in roles,
        "audit": Role.AUDITOR in roles,
        "graph": bool(roles),
    }


# The gates' own short words, as the badges show them (the values stay in classes and data).
GATE_WORDS = {
    "auto": gettext_lazy("auto"),
    "flagged": gettext_lazy("flagged"),
    "required": gettext_lazy("required"),
    "blocked": gettext_lazy("blocked"),
    # Not a gate: the dashboard's count of decisions not graded (yet, or ever).
    "ungraded": gettext_lazy("ungraded"),
}

# The knowledge graph's node types, as the explorer's legend names them (graph.models.NodeKind).
NODE_WORDS = {
    "person": gettext_lazy("person"),
    "decision": gettext_lazy("decision"),
    "amount": gettext_lazy("amount"),
    "deadline": gettext_lazy("deadline"),
    "document": gettext_lazy("document"),
    "policy": gettext_lazy("policy"),
    "risk": gettext_lazy("risk"),
}


@register.filter
def gate_word(gate: Any) -> str:
    """A gate as its badge says it, in the page's language; "–" for none."""
    return str(GATE_WORDS.get(str(gate or ""), gate or "–"))


@register.filter
def node_word(node_type: Any) -> str:
    """A graph node's type in the page's language; "–" for none."""
    return str(NODE_WORDS.get(str(node_type or ""), node_type or "–"))


# The trail's event kinds as a person reads them; the kind itself stays the English name
# (and the page's data-kind), so an English page shows it as the API and the export name it.
EVENT_WORDS = {
    "decision.proposed": gettext_lazy("decision.proposed"),
    "decision.validated": gettext_lazy("decision.validated"),
    "decision.queued": gettext_lazy("decision.queued"),
    "decision.claimed": gettext_lazy("decision.claimed"),
    "decision.released": gettext_lazy("decision.released"),
    "decision.approval_recorded": gettext_lazy("decision.approval_recorded"),
    "decision.approved": gettext_lazy("decision.approved"),
    "decision.overridden": gettext_lazy("decision.overridden"),
    "decision.executed": gettext_lazy("decision.executed"),
    "decision.completed": gettext_lazy("decision.completed"),
    "decision.failed": gettext_lazy("decision.failed"),
    "decision.escalated": gettext_lazy("decision.escalated"),
    "decision.override_requested": gettext_lazy("decision.override_requested"),
    "decision.escalation_topped": gettext_lazy("decision.escalation_topped"),
    "decision.commented": gettext_lazy("decision.commented"),
    "decision.assigned": gettext_lazy("decision.assigned"),
    "decision.corrected": gettext_lazy("decision.corrected"),
    "ask.refused": gettext_lazy("ask.refused"),
    "periodic_review.opened": gettext_lazy("periodic_review.opened"),
    "periodic_review.claimed": gettext_lazy("periodic_review.claimed"),
    "periodic_review.released": gettext_lazy("periodic_review.released"),
    "periodic_review.closed": gettext_lazy("periodic_review.closed"),
    "calibration.proposed": gettext_lazy("calibration.proposed"),
    "calibration.adopted": gettext_lazy("calibration.adopted"),
    "rereview.opened": gettext_lazy("rereview.opened"),
    "rereview.closed": gettext_lazy("rereview.closed"),
}


@register.filter
def event_word(kind: Any) -> str:
    """A trail event's kind in the page's language (its English name where none is known)."""
    return str(EVENT_WORDS.get(str(kind or ""), kind or "–"))


@register.filter
def said_here(text: Any) -> str:
    """Text the engine made in English (maria.wording.said: a policy's problems, the trail
    verification report) in the page's language; any other text as it is."""
    return in_language(text, gettext) if text is not None else ""


@register.filter
def rereview_verdict(value: Any) -> str:
    """A re-review's verdict as the trail stores it (`still_correct`, `wrong`) by its label
    in the page's language; an unknown value as it is."""
    from decisions.models import ReReview

    try:
        return str(ReReview.Verdict(value).label)
    except ValueError:
        return str(value)


@register.simple_tag
def state_labels() -> SafeString:
    """Each decision state's label as a data attribute (data-state-approved="..."), for the
    script that shows a state it learns from the socket in the page's language."""
    from decisions.models import State

    return format_html_join(" ", 'data-state-{}="{}"', ((v, label) for v, label in State.choices))
