"""When the text behind past answers changes, those answers are looked at again.

A new version that supersedes a document, or a knowledge-base conflict resolved against one
side, opens a re-review for every decision of the last `rereview_days` days (a zone policy
field) whose report rested on a changed paragraph: the old text and the new side by side in
the zone's re-review list, `rereview.opened` on the decision's trail, and the agent's webhook
`decision.superseded`. A reviewer of the zone closes it: still correct, or wrong now.

Only paragraphs whose text changed count: a new version that leaves a cited paragraph word
for word as it was changes nothing for the answers that cited it.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from coordinates.coordinate import Coordinate
from coordinates.models import Role
from coordinates.selectors import (
    beneath,
    can_see,
    effective_policy,
    has_role,
    role_scopes,
    within,
)
from decisions import events
from decisions.models import Decision, ReReview, State
from decisions.outbox import outbox_webhook, webhook_token

# One change in the decision's zone, as the decision's own acts are (decisions.periodic too).
from decisions.services import (
    RELEASED_STATES,
    _zone_change,
    decision_correct,
    decision_evidence_changed,
)
from decisions.webhooks import superseded_message
from evidence.models import DocumentVersion, KnowledgeConflict, Paragraph
from evidence.text import content_terms
from maria.errors import ApplicationError, Conflict, Forbidden, NotFound

logger = logging.getLogger(__name__)

NOTE_LIMIT = 2000
# The new paragraph "in the old one's place": the most key terms in common, at least this
# share of the smaller set; below it the new version has nothing on that subject.
SAME_PLACE = 0.3
REVIEW_ROLES = (Role.REVIEWER, Role.ZONE_ADMIN)


def _counterpart(old: Paragraph, candidates: list[Paragraph]) -> Paragraph | None:
    terms = set(content_terms(old.text))
    best, best_share = None, 0.0
    for paragraph in candidates:
        theirs = set(content_terms(paragraph.text))
        if not terms or not theirs:
            continue
        share = len(terms & theirs) / min(len(terms), len(theirs))
        if share > best_share:
            best, best_share = paragraph, share
    return best if best_share >= SAME_PLACE else None


def _citing(
    zone: str, since: Any, cited: dict[tuple[int, int, int], Paragraph]
) -> dict[int, list[Paragraph]]:
    """Decisions of `zone` and beneath, proposed since `since` and not failed, whose report
    rested on one of `cited` ((document, version, paragraph number) -> paragraph): by
    decision id, the paragraphs. The report says which version each citation resolved to."""
    rows = (
        Decision.objects.filter(beneath(zone), created_at__gte=since, report__isnull=False)
        .exclude(state=State.FAILED)
        .values_list("pk", "report__body")
    )
    found: dict[int, list[Paragraph]] = defaultdict(list)
    for pk, body in rows.iterator(chunk_size=200):
        for claim in (body or {}).get("claims", ()):
            for item in claim.get("evidence", ()):
                key = (item.get("document"), item.get("version"), item.get("paragraph"))
                paragraph = cited.get(key)  # type: ignore[arg-type]
                if paragraph is not None and paragraph not in found[pk]:
                    found[pk].append(paragraph)
    return found


def _open(
    decision_id: int,
    pairs: Iterable[tuple[Paragraph, Paragraph | None]],
    *,
    cause: str,
    conflict: KnowledgeConflict | None = None,
) -> int:
    """One transaction per decision: its re-reviews, their trail events and one webhook."""
    with transaction.atomic():
        decision = Decision.objects.select_for_update().get(pk=decision_id)
        opened = []
        for old, new in pairs:
            review, created = ReReview.objects.get_or_create(
                decision=decision,
                old_paragraph=old,
                cause=cause,
                defaults={"zone": decision.zone, "new_paragraph": new, "conflict": conflict},
            )
            if created:
                events.rereview_opened(review)
                opened.append(review)
        if opened:
            outbox_webhook(
                decision,
                webhook_token(decision.proposed_by_id),
                superseded_message(decision, [change_json(r) for r in opened]),
            )
    return len(opened)


def change_json(review: ReReview) -> dict[str, Any]:
    """A re-review's old and new text, as the webhook and the API give it."""
    old, new = review.old_paragraph, review.new_paragraph
    return {
        "rereview": review.pk,
        "cause": review.cause,
        "document": old.version.document_id,
        "title": old.version.title,
        "cited": {"version": old.version.version, "paragraph": old.number, "text": old.text},
        "now": (
            {"version": new.version.version, "paragraph": new.number, "text": new.text}
            if new is not None
            else None
        ),
        "conflict": review.conflict_id,
    }


def _since(zone: str) -> Any:
    days = effective_policy(Coordinate.parse(zone)).values.rereview_days
    return timezone.now() - timedelta(days=days)


def rereview_superseded(*, version_id: int) -> int:
    """After a new version is stored: re-reviews for the answers that rested on a paragraph
    of the version it superseded whose text it changed. Returns how many were opened."""
    version = DocumentVersion.objects.select_related("document__zone").get(pk=version_id)
    if version.supersedes_id is None:
        return 0
    new = list(Paragraph.objects.filter(version=version).select_related("version"))
    kept = {p.text_hash for p in new}
    old = Paragraph.objects.filter(version_id=version.supersedes_id).select_related("version")
    changed = {(p.version.document_id, p.version.version, p.number): p for p in old}
    changed = {k: p for k, p in changed.items() if p.text_hash not in kept}
    if not changed:
        return 0
    fresh = [p for p in new if p.text_hash not in {o.text_hash for o in old}]
    zone = version.document.zone.coordinate
    opened = 0
    for decision_id, paragraphs in _citing(zone, _since(zone), changed).items():
        pairs = [(p, _counterpart(p, fresh)) for p in paragraphs]
        opened += _open(decision_id, pairs, cause=ReReview.Cause.SUPERSEDED)
    if opened:
        logger.info("re-reviews opened", extra={"version": version_id, "opened": opened})
    return opened


def rereview_conflict(*, conflict_id: int) -> int:
    """After a knowledge-base conflict is resolved: re-reviews for the answers that rested on
    the side that does not govern. 'A new version resolves it' waits for that version (its
    ingest opens them), and 'not a conflict' opens none."""
    conflict = KnowledgeConflict.objects.select_related("first__version", "second__version").get(
        pk=conflict_id
    )
    sides = {
        KnowledgeConflict.Resolution.FIRST: (conflict.second, conflict.first),
        KnowledgeConflict.Resolution.SECOND: (conflict.first, conflict.second),
    }
    if conflict.resolution not in sides:
        return 0
    losing, governing = sides[KnowledgeConflict.Resolution(conflict.resolution)]
    key = (losing.version.document_id, losing.version.version, losing.number)
    opened = 0
    for decision_id in _citing(conflict.zone, _since(conflict.zone), {key: losing}):
        opened += _open(
            decision_id, [(losing, governing)], cause=ReReview.Cause.CONFLICT, conflict=conflict
        )
    return opened


# --- the reviewers' list ---------------------------------------------------------------------


def rereviews_for(user: AbstractBaseUser, *, state: str = "open") -> QuerySet[ReReview]:
    """The re-reviews of the zones where the user reviews, oldest first."""
    if state not in ("open", "closed"):
        raise ApplicationError(gettext("state must be open or closed"), field="state")
    rows = ReReview.objects.filter(within(_scopes(user)), closed_at__isnull=state == "open")
    return rows.select_related(
        "decision", "old_paragraph__version", "new_paragraph__version", "closed_by"
    ).order_by("created_at" if state == "open" else "-closed_at")


def rereviews_open_counts(user: AbstractBaseUser) -> tuple[int, int]:
    """(open re-reviews of answers already given, of answers still waiting for a person):
    the queue says them apart, since a waiting answer is not out in the world yet (its page
    warns of the change) and a failed one needs no second look."""
    rows = ReReview.objects.filter(within(_scopes(user)), closed_at__isnull=True)
    given = rows.filter(decision__state__in=RELEASED_STATES).count()
    waiting = rows.filter(decision__state__in=WAITING_STATES).count()
    return given, waiting


def rereviews_open_of(decision: Decision) -> list[ReReview]:
    """A decision's open re-reviews, oldest first: what its page warns of (the text it cites
    changed since it was given)."""
    rows = ReReview.objects.filter(decision=decision, closed_at__isnull=True)
    return list(
        rows.select_related("old_paragraph__version", "new_paragraph__version").order_by(
            "created_at", "pk"
        )
    )


# An answer not yet released nor ended: the reviewer still decides it.
WAITING_STATES = (State.PROPOSED, State.VALIDATED, State.APPROVAL_REQUIRED, State.APPROVED)


def _scopes(user: AbstractBaseUser) -> list[Coordinate] | None:
    if getattr(user, "is_superuser", False):
        return None
    return role_scopes(user, REVIEW_ROLES)


def rereview_close(
    *, rereview_id: int, user: AbstractBaseUser, verdict: str, note: str = ""
) -> ReReview:
    """A reviewer's verdict on an answer whose evidence changed; a note is required when the
    answer is wrong now (it says what is wrong, for the agent's owners and the auditors).

    "Wrong now" takes effect in the same transaction: an answer not yet released fails with
    "evidence changed" and leaves the queue (`decision_evidence_changed`); a released one is
    corrected (`decision_correct`: `decision.corrected` to its agent and on its trail)."""
    if verdict not in ReReview.Verdict.values:
        raise ApplicationError(
            gettext("verdict must be one of %(verdicts)s")
            % {"verdicts": ", ".join(ReReview.Verdict.values)},
            field="verdict",
        )
    note = (note or "").strip()
    if verdict == ReReview.Verdict.WRONG and not note:
        raise ApplicationError(gettext("say what is wrong now: a note is required"), field="note")
    if len(note) > NOTE_LIMIT:
        raise ApplicationError(
            gettext("at most %(limit)s characters") % {"limit": NOTE_LIMIT}, field="note"
        )
    zone = ReReview.objects.filter(pk=rereview_id).values_list("zone", flat=True).first()
    if zone is None:
        raise NotFound(gettext("no re-review %(id)s") % {"id": rereview_id})
    with _zone_change(zone):
        try:
            review = (
                ReReview.objects.select_for_update().select_related("decision").get(pk=rereview_id)
            )
        except ReReview.DoesNotExist as missing:
            raise NotFound(gettext("no re-review %(id)s") % {"id": rereview_id}) from missing
        where = Coordinate.parse(review.zone)
        if not can_see(user, where):  # another zone's item: as if there were none
            raise NotFound(gettext("no re-review %(id)s") % {"id": rereview_id})
        if not has_role(user, REVIEW_ROLES, where):
            raise Forbidden(gettext("closing a re-review needs the reviewer role in its zone"))
        if review.closed_at is not None:
            raise Conflict(gettext("re-review %(id)s is closed already") % {"id": rereview_id})
        review.verdict, review.note = verdict, note
        review.closed_by = user  # type: ignore[assignment]
        review.closed_at = timezone.now()
        review.save(update_fields=["verdict", "note", "closed_by", "closed_at"])
        events.rereview_closed(review, actor=user)
        if verdict == ReReview.Verdict.WRONG:
            _wrong_now(review, user)
    return review


def _wrong_now(review: ReReview, user: AbstractBaseUser) -> None:
    """The verdict's effect on the decision, inside the closing's transaction."""
    # Its state read under its lock: an approval that commits first has released it, and a
    # released answer is corrected, never failed.
    decision = Decision.objects.select_for_update().get(pk=review.decision_id)
    changes = [change_json(review)]
    if decision.state in RELEASED_STATES:
        decision_correct(
            decision_id=decision.pk,
            user=user,  # type: ignore[arg-type]
            verdict=review.verdict,
            note=review.note,
            rereview=review.pk,
            changes=changes,
        )
    else:
        decision_evidence_changed(
            decision_id=decision.pk,
            user=user,  # type: ignore[arg-type]
            note=review.note,
            changes=changes,
        )
