"""The periodic review pages: the flagged answers sampled in the reviewer's zones, one item
with its answer and why it was flagged, and claim, release and close with a verdict; after a
close the next open item. Thin: `decisions.periodic` reads, decides and checks who may act.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from decisions import periodic
from decisions.models import PeriodicReview
from gates import presenters, selectors
from gates.views import role_required
from maria.errors import ApplicationError, NotFound

LIST_LIMIT = 200  # rows on one page, oldest first; the zone filter narrows the rest
VERDICTS = [
    (PeriodicReview.Verdict.OK, gettext_lazy("OK: the answer was right")),
    (PeriodicReview.Verdict.WRONG, gettext_lazy("Wrong: the answer should not have gone out")),
]
VERDICT_NAMES = {
    PeriodicReview.Verdict.OK: gettext_lazy("ok"),
    PeriodicReview.Verdict.WRONG: gettext_lazy("wrong"),
}


def _filters(query: Any) -> dict[str, str]:
    """The list's filters as the page understands them: an unknown value is no filter."""
    state = str(query.get("state", "")).strip()
    verdict = str(query.get("verdict", "")).strip()
    return {
        "zone": str(query.get("zone", "")).strip()[:64],
        "state": state if state in periodic.STATES else "open",
        "verdict": verdict if verdict in periodic.VERDICTS and state == "closed" else "",
    }


def _query(filters: dict[str, str]) -> str:
    return urlencode({k: v for k, v in filters.items() if v and not (k == "state" and v == "open")})


@require_GET
@role_required(selectors.REVIEW_ROLES)
def periodic_list(request: HttpRequest) -> HttpResponse:
    filters = _filters(request.GET)
    problem = None
    try:
        rows = list(periodic.periodic_reviews_for(request.user, **filters)[: LIST_LIMIT + 1])
    except ApplicationError as error:  # a zone that is no coordinate: say so, list nothing
        problem, rows = error.message, []
    now = timezone.now()
    nxt = periodic.periodic_review_next(request.user) if filters["state"] == "open" else None
    return render(
        request,
        "queue/periodic.html",
        {
            "filters": filters,
            "rows": [_row(review, request.user.pk, now) for review in rows[:LIST_LIMIT]],
            "more": len(rows) > LIST_LIMIT,
            "zones": selectors.queue_zones(request.user),
            "verdicts": list(VERDICT_NAMES.items()),
            "verdict_names": VERDICT_NAMES,
            "limit": LIST_LIMIT,
            "next": nxt,
            "problem": problem,
            "query": _query(filters),
        },
    )


def _row(review: PeriodicReview, viewer_id: int | None, now: Any) -> dict[str, Any]:
    held = review.held(now)
    return {
        "review": review,
        "decision": review.decision,
        "held_by": review.claimed_by.get_username() if held and review.claimed_by else None,
        "mine": held and review.claimed_by_id == viewer_id,
    }


@require_GET
@role_required(selectors.REVIEW_ROLES)
def periodic_item(request: HttpRequest, pk: int) -> HttpResponse:
    return _item_page(request, pk)


def _item_page(
    request: HttpRequest, pk: int, *, refused: ApplicationError | None = None
) -> HttpResponse:
    """One item's page; after a refused close, with the reviewer's verdict and note kept and
    the problem said beside the field it names (a 400)."""
    review = periodic.periodic_review_for(request.user, pk)
    row = _row(review, request.user.pk, timezone.now())
    context: dict[str, Any] = {
        "item": row,
        # What the answer rested on: each claim with the paragraphs it cites, their text
        # and a link to each in its document, not only the question and answer.
        "claims": presenters.decision_claims(
            review.decision,
            selectors.cited_paragraphs(review.decision),
            selectors.cited_titles(review.decision),
        ),
        "note_limit": periodic.NOTE_LIMIT,
        "verdicts": VERDICTS,
        "verdict_names": VERDICT_NAMES,
    }
    if refused is not None:
        context.update(
            chosen=request.POST.get("verdict", ""),
            note=request.POST.get("note", ""),
            refused=refused.message,
            refused_field=refused.field,
        )
    return render(request, "queue/periodic.html", context, status=400 if refused else 200)


ACTIONS = ("claim", "release", "close")


@require_POST
@role_required(selectors.REVIEW_ROLES)
def periodic_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    if action not in ACTIONS:
        raise NotFound(_("no such action"))
    user = request.user
    try:
        if action == "claim":
            periodic.periodic_review_claim(review_id=pk, user=user)  # type: ignore[arg-type]
        elif action == "release":
            periodic.periodic_review_release(review_id=pk, user=user)  # type: ignore[arg-type]
        else:
            review = periodic.periodic_review_close(
                review_id=pk,
                user=user,  # type: ignore[arg-type]  # role_required: logged in
                verdict=request.POST.get("verdict", ""),
                note=request.POST.get("note", ""),
            )
    except NotFound:
        raise  # Django's 404 page: other zones' items stay private
    except ApplicationError as error:
        if action == "close":
            # The page again with the choice and the note as sent: a "wrong" sent without
            # its note once came back with the verdict dropped and the note field unnamed.
            return _item_page(request, pk, refused=error)
        messages.error(request, error.message)
        return redirect("periodic-review", pk=pk)
    if action == "claim":
        messages.success(request, _("You hold periodic review %(id)s.") % {"id": pk})
        return redirect("periodic-review", pk=pk)
    if action == "release":
        messages.success(request, _("Periodic review %(id)s is open to others again.") % {"id": pk})
        return redirect("periodic-review", pk=pk)
    shown = VERDICT_NAMES[PeriodicReview.Verdict(str(review.verdict))]
    messages.success(
        request,
        _("Periodic review %(id)s closed: %(verdict)s.") % {"id": pk, "verdict": shown},
    )
    # The next item: what a reviewer working through the list wants after each verdict.
    nxt = periodic.periodic_review_next(user, after=pk)
    if nxt is None:
        messages.info(request, _("No open periodic review is left for you."))
        return redirect(reverse("periodic-reviews-page"))
    return redirect("periodic-review", pk=nxt.pk)
