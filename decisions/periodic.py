"""Periodic review of flagged answers: the gate released them with weak evidence, so a sample
(the zone policy's `periodic_review_rate`, drawn in `decisions.services._route` with
`PeriodicReview.sampled`) waits for a reviewer of the zone to look back and say whether the
answer was right.

Reads first (the items a reviewer may see, scoped like the queue: their reviewer and zone
admin roles, on the zone or above it), then the three acts: claim, release and close with a
verdict and a note. Each act is one transaction that locks the item's row, checks who may
act, writes the trail event on the decision's lane (`decisions.events`) and logs after
commit, as `decisions.services` does for decisions.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from coordinates.coordinate import Coordinate
from coordinates.models import Role
from coordinates.selectors import AnyUser, beneath, coordinate_from, has_role, role_scopes, within
from decisions import events
from decisions.models import PeriodicReview, State

# The transaction of one change in a zone and the after-commit log are decisions' own, so an
# item's acts write the decision's lane exactly as the decision's acts do.
from decisions.services import (
    CLAIM_MINUTES,
    REASON_LIMIT,
    REVIEW_ROLES,
    _log_after_commit,
    _zone_change,
)
from maria.errors import ApplicationError, Conflict, Forbidden, NotFound

STATES = ("open", "closed")
VERDICTS = tuple(PeriodicReview.Verdict.values)
NOTE_LIMIT = REASON_LIMIT  # the one limit of a reviewer's text (decisions.services)
# An answer that reached its agent: a "wrong" verdict on it came too late to stop it.
RELEASED_STATES = (State.EXECUTED, State.COMPLETED)


# --- reads ---------------------------------------------------------------------------------


def _scopes(user: AnyUser) -> list[Coordinate] | None:
    """Where the user reviews; None means everywhere (a superuser)."""
    if getattr(user, "is_superuser", False):
        return None
    return role_scopes(user, REVIEW_ROLES)


def periodic_reviews_for(
    user: AnyUser, *, zone: str = "", state: str = "open", verdict: str = ""
) -> QuerySet[PeriodicReview]:
    """The periodic reviews of the zones the user reviews (or `zone` and beneath it, within
    those): open ones oldest first, the order they should be worked through; closed ones
    newest verdict first. A bad filter is a 400 that names it."""
    if state not in STATES:
        raise ApplicationError(
            _("state must be one of %(states)s") % {"states": ", ".join(STATES)}, field="state"
        )
    if verdict and verdict not in VERDICTS:
        raise ApplicationError(
            _("verdict must be one of %(verdicts)s") % {"verdicts": ", ".join(VERDICTS)},
            field="verdict",
        )
    rows = PeriodicReview.objects.select_related("decision", "claimed_by", "reviewed_by").filter(
        within(_scopes(user))
    )
    if zone:
        rows = rows.filter(beneath(coordinate_from(zone, field="zone")))
    if state == "open":
        return rows.filter(verdict__isnull=True).order_by("created_at", "pk")
    rows = rows.filter(verdict__isnull=False)
    if verdict:
        rows = rows.filter(verdict=verdict)
    return rows.order_by("-reviewed_at", "-pk")


def periodic_review_next(
    user: AnyUser, *, zone: str = "", after: int | None = None
) -> PeriodicReview | None:
    """The open item the user should take next: the oldest that nobody else holds (their
    own claim first), other than `after`, the one they just closed."""
    rows = periodic_reviews_for(user, zone=zone, state="open")
    if after is not None:
        rows = rows.exclude(pk=after)
    mine = rows.filter(PeriodicReview.held_at(timezone.now()), claimed_by_id=user.pk).first()
    return mine or rows.exclude(PeriodicReview.held_at(timezone.now())).first()


def periodic_review_for(user: AnyUser, review_id: int) -> PeriodicReview:
    """One item, if the user reviews its zone; a 404 otherwise, so other zones' ids stay
    private."""
    review = (
        PeriodicReview.objects.select_related("decision", "claimed_by", "reviewed_by")
        .filter(pk=review_id)
        .first()
    )
    if review is None or not _may_review(user, review.zone):
        raise NotFound(_("no periodic review %(id)s") % {"id": review_id}, field="id")
    return review


def _may_review(user: AnyUser, zone: str) -> bool:
    return has_role(user, REVIEW_ROLES, Coordinate.parse(zone))


# --- the acts ------------------------------------------------------------------------------


def _zone_of(review_id: int) -> str:
    """An item's zone never changes, so it is read before the transaction begins."""
    zone = PeriodicReview.objects.filter(pk=review_id).values_list("zone", flat=True).first()
    if zone is None:
        raise NotFound(_("no periodic review %(id)s") % {"id": review_id}, field="id")
    return zone


def _locked_for(review_id: int, user: User) -> PeriodicReview:
    # Only the item's row is locked (of=self), not its decision's: a decision's own acts
    # lock that row, and the flagged answer is final anyway.
    review = (
        PeriodicReview.objects.select_for_update(of=("self",))
        .select_related("decision", "claimed_by")
        .filter(pk=review_id)
        .first()
    )
    if review is None or not _may_review(user, review.zone):
        # The same answer as for a missing item: other zones' ids stay private.
        raise NotFound(_("no periodic review %(id)s") % {"id": review_id}, field="id")
    return review


def _check_open(review: PeriodicReview) -> None:
    if not review.is_open:
        raise Conflict(
            _("periodic review %(id)s is closed already (%(verdict)s)")
            % {"id": review.pk, "verdict": review.verdict}
        )


def _held_by_other(review: PeriodicReview, user: User) -> bool:
    return review.held() and review.claimed_by_id != user.pk


def _check_not_held(review: PeriodicReview, user: User) -> None:
    if _held_by_other(review, user):
        raise Conflict(
            _("periodic review %(id)s is claimed by %(user)s")
            % {"id": review.pk, "user": review.claimed_by}
        )


def _check_not_proposer(review: PeriodicReview, user: User) -> None:
    if review.decision.proposed_by_id == user.pk:
        raise Forbidden(_("nobody reviews a decision they proposed"))


def periodic_review_claim(*, review_id: int, user: User) -> PeriodicReview:
    """Hold an open item for CLAIM_MINUTES so no other reviewer works on it (again: extend)."""
    with _zone_change(_zone_of(review_id)):
        review = _locked_for(review_id, user)
        _check_open(review)
        _check_not_held(review, user)
        _check_not_proposer(review, user)
        review.claimed_by = user
        review.claimed_until = timezone.now() + timedelta(minutes=CLAIM_MINUTES)
        review.save(update_fields=["claimed_by", "claimed_until"])
        events.periodic_review_claimed(review, actor=user)
        _log_after_commit("periodic review claimed", review_id=review_id, user=user.get_username())
    return review


def periodic_review_release(*, review_id: int, user: User) -> PeriodicReview:
    """Give a claimed item back: its holder, or a zone admin of its zone."""
    with _zone_change(_zone_of(review_id)):
        review = _locked_for(review_id, user)
        _check_open(review)
        if review.claimed_by_id is None:
            raise Conflict(_("periodic review %(id)s is not claimed") % {"id": review_id})
        if review.claimed_by_id != user.pk and not has_role(
            user, [Role.ZONE_ADMIN], Coordinate.parse(review.zone)
        ):
            raise Forbidden(
                _("periodic review %(id)s is claimed by %(user)s")
                % {"id": review_id, "user": review.claimed_by}
            )
        review.claimed_by = None
        review.claimed_until = None
        review.save(update_fields=["claimed_by", "claimed_until"])
        events.periodic_review_released(review, actor=user)
        _log_after_commit("periodic review released", review_id=review_id, user=user.get_username())
    return review


def _checked_verdict(verdict: Any) -> str:
    if not isinstance(verdict, str) or verdict not in VERDICTS:
        raise ApplicationError(
            _("verdict must be one of %(verdicts)s") % {"verdicts": ", ".join(VERDICTS)},
            field="verdict",
        )
    return verdict


def _checked_note(note: Any, verdict: str) -> str:
    if not isinstance(note, str):
        raise ApplicationError(_("note must be a string"), field="note")
    note = note.strip()
    if len(note) > NOTE_LIMIT:
        raise ApplicationError(
            _("a note has at most %(limit)s characters; this one has %(length)s")
            % {"limit": NOTE_LIMIT, "length": len(note)},
            field="note",
        )
    if verdict == PeriodicReview.Verdict.WRONG and not note:
        raise ApplicationError(_("a note is required when the verdict is wrong"), field="note")
    return note


def periodic_review_close(
    *, review_id: int, user: User, verdict: Any, note: Any = ""
) -> PeriodicReview:
    """Close an open item with a verdict, "ok" or "wrong", and a note (required for
    "wrong"). It need not be claimed first, but nobody closes an item another holds.

    A "wrong" verdict on an answer already released to its agent is serious: the trail
    event says so (`serious`), with the reviewer and the note, it is logged as a warning,
    and the zone's figures count it (`gates.kpis`, periodic_reviews_wrong). The agent is
    not told by webhook: the webhooks announce a decision's outcome, and this changes none.
    """
    verdict = _checked_verdict(verdict)
    note = _checked_note(note, verdict)
    with _zone_change(_zone_of(review_id)):
        review = _locked_for(review_id, user)
        _check_open(review)
        _check_not_held(review, user)
        _check_not_proposer(review, user)
        review.verdict = verdict
        review.note = note
        review.reviewed_by = user
        review.reviewed_at = timezone.now()
        review.claimed_by = None
        review.claimed_until = None
        review.save(
            update_fields=[
                "verdict", "note", "reviewed_by", "reviewed_at", "claimed_by", "claimed_until",
            ]
        )  # fmt: skip
        released = review.decision.state in RELEASED_STATES
        events.periodic_review_closed(review, actor=user, released=released)
        serious = released and verdict == PeriodicReview.Verdict.WRONG
        _log_after_commit(
            "released answer reviewed wrong" if serious else "periodic review closed",
            level=logging.WARNING if serious else logging.INFO,
            review_id=review_id,
            decision_id=review.decision_id,
            zone=review.zone,
            verdict=verdict,
            user=user.get_username(),
        )
    return review
