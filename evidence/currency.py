"""Currency and authority of evidence (DESIGN section 5): does the current version of a cited
document still say what a claim says, and may a source of this kind and status carry an
answer out without a person.

Pure but for `current_of`, which reads the current versions from the database (Django is
imported there only, so the rest runs without it).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Protocol

from evidence import reasons as why
from evidence.claims import align
from evidence.grounding import Grounding, check_claim
from evidence.numbers import extract_numbers

if TYPE_CHECKING:
    from evidence.models import DocumentVersion, Paragraph

# The current version speaks to a claim when a span of it holds at least this share of the
# claim's key terms (evidence.grounding's coverage): below it, a differing number or a "not"
# in the span is about something else, not a contradiction.
SPEAKS_COVERAGE = 0.5


class ReleasePolicy(Protocol):
    """What may_release reads from a zone policy (coordinates.policy.PolicyValues fits)."""

    @property
    def release_kinds(self) -> Collection[str]: ...
    @property
    def release_statuses(self) -> Collection[str]: ...


def may_release(kind: str, status: str, values: ReleasePolicy) -> bool:
    """Whether a source of this kind and status may carry an answer out without a person:
    kind in release_kinds and status in release_statuses."""
    return kind in values.release_kinds and status in values.release_statuses


_RELEASE_TEMPLATES = {
    "approved": why.APPROVED_MAY_NOT_RELEASE,
    "draft": why.DRAFT_MAY_NOT_RELEASE,
    "archived": why.ARCHIVED_MAY_NOT_RELEASE,
}


def release_reason(kind: str, status: str, title: str, values: ReleasePolicy) -> str | None:
    """The reason an answer resting on this source goes to a person; None when it may go out
    without one."""
    if may_release(kind, status, values):
        return None
    template = _RELEASE_TEMPLATES.get(status)
    if template is None:
        return why.say(why.SOURCE_MAY_NOT_RELEASE, title=title, kind=kind, status=status)
    return why.say(template, title=title, kind=kind)


@dataclass(frozen=True, slots=True)
class CurrentCheck:
    """A claim against the current version of the document it cited.

    `agrees`: True when a span of the current version supports the claim, False when the
    current version speaks to it (a span holds SPEAKS_COVERAGE of its key terms) without
    supporting it, None when it no longer speaks to it at all. `contradicts`: the span that
    speaks states another number for the same kind of quantity, or reverses the claim.
    `paragraph` is an index into the paragraphs checked; `span == paragraphs[paragraph]
    [start:end]`; all three None and `span` empty when `agrees` is None. `reasons` are the
    grounding verdict's on that span.
    """

    agrees: bool | None
    contradicts: bool
    paragraph: int | None = None
    span: str = ""
    start: int | None = None
    end: int | None = None
    reasons: tuple[str, ...] = ()


SILENT = CurrentCheck(agrees=None, contradicts=False)


def _number_differs(verdict: Grounding, span: str) -> bool:
    """A number of the claim is missing from the span and the span states one of the same
    kind and unit in its place (a span that states no such number is silent, not opposed)."""
    if verdict.numbers_ok:
        return False
    stated = extract_numbers(span)
    return any(
        q.kind == p.kind and q.unit == p.unit for q in verdict.missing_numbers for p in stated
    )


def check_current(statement: str, paragraphs: Sequence[str]) -> CurrentCheck:
    """Whether the current version's `paragraphs` still say what `statement` says.

    The spans evidence.claims.align finds for the statement are judged by
    evidence.grounding.check_claim, best aligned first. Any span that speaks to the claim and
    supports it: it agrees (the current version still says it). Otherwise the first speaking
    span that contradicts it (a differing number, a reversal) decides; otherwise the best
    speaking span, agreeing neither way. No speaking span: SILENT.
    """
    speaking: list[tuple[int, int, int, str, Grounding]] = []
    for found in align(statement, paragraphs):
        verdict = check_claim(statement, found.text)
        if verdict.coverage >= SPEAKS_COVERAGE:
            speaking.append((found.paragraph, found.start, found.end, found.text, verdict))
    if not speaking:
        return SILENT

    def result(entry: tuple[int, int, int, str, Grounding], contradicts: bool) -> CurrentCheck:
        paragraph, start, end, span, verdict = entry
        return CurrentCheck(
            agrees=verdict.supported,
            contradicts=contradicts,
            paragraph=paragraph,
            span=span,
            start=start,
            end=end,
            reasons=tuple(verdict.reasons),
        )

    for entry in speaking:
        if entry[4].supported:
            return result(entry, contradicts=False)
    for entry in speaking:
        verdict = entry[4]
        if verdict.reversal or _number_differs(verdict, entry[3]):
            return result(entry, contradicts=True)
    return result(speaking[0], contradicts=False)


def current_reason(check: CurrentCheck, *, current: int, title: str, effective: date | None) -> str:
    """The sentence a report stores for the check: CURRENT_CONTRADICTS (or _UNDATED without
    an effective date), CURRENT_AGREES, or CURRENT_SILENT when it no longer speaks to it or
    speaks without agreeing."""
    if check.contradicts:
        if effective is None:
            return why.say(
                why.CURRENT_CONTRADICTS_UNDATED, current=current, title=title, span=check.span
            )
        return why.say(
            why.CURRENT_CONTRADICTS,
            current=current,
            title=title,
            effective=effective.isoformat(),
            span=check.span,
        )
    if check.agrees:
        return why.say(why.CURRENT_AGREES, current=current, title=title)
    return why.say(why.CURRENT_SILENT, current=current, title=title)


def current_of(
    versions: Iterable[DocumentVersion],
) -> dict[int, tuple[DocumentVersion, list[Paragraph]]]:
    """For each document of a superseded version among `versions`, its current version and
    that version's paragraphs in reading order: document_id -> (version, paragraphs).

    Two queries whatever the number of documents: the current versions, then all their
    paragraphs (vectors left in the database). A version that is itself current is skipped.
    """
    from evidence.models import DocumentVersion, Paragraph

    documents = {v.document_id for v in versions if v.is_superseded}
    if not documents:
        return {}
    current = {
        v.document_id: v
        for v in DocumentVersion.objects.filter(
            document_id__in=documents, superseded_at__isnull=True
        )
    }
    paragraphs: dict[int, list[Paragraph]] = {pk: [] for pk in (v.pk for v in current.values())}
    rows = (
        Paragraph.objects.filter(version__in=list(current.values()))
        .defer("embedding")
        .order_by("version_id", "number")
    )
    for row in rows:
        paragraphs[row.version_id].append(row)
    return {document: (v, paragraphs[v.pk]) for document, v in current.items()}


__all__ = [
    "SILENT",
    "SPEAKS_COVERAGE",
    "CurrentCheck",
    "ReleasePolicy",
    "check_current",
    "current_of",
    "current_reason",
    "may_release",
    "release_reason",
]
