"""The re-review page: past answers whose evidence changed, the text each cited beside the
text now (the changed words marked), closed by a reviewer of the zone with a verdict. Thin:
`decisions.rereview` reads, decides and checks who may act."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from decisions import rereview
from decisions.models import Decision, ReReview, State
from decisions.services import EVIDENCE_CHANGED
from gates import selectors
from gates.views import role_required
from maria.errors import ApplicationError, Forbidden, NotFound

LIST_LIMIT = 100

Pieces = list[tuple[str, bool]]  # text in pieces, True where it changed


def changed_words(old: str, new: str) -> tuple[Pieces, Pieces]:
    """Both texts cut into runs of words, marked where the other text differs (difflib's
    longest matching blocks over the words)."""
    a, b = old.split(" "), new.split(" ")
    left: Pieces = []
    right: Pieces = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if i2 > i1:
            left.append((" ".join(a[i1:i2]) + " ", tag != "equal"))
        if j2 > j1:
            right.append((" ".join(b[j1:j2]) + " ", tag != "equal"))
    return left, right


@dataclass(frozen=True, slots=True)
class Row:
    review: ReReview
    old: Pieces
    new: Pieces | None


def _row(review: ReReview) -> Row:
    old = review.old_paragraph.text
    if review.new_paragraph is None:
        return Row(review, [(old, False)], None)
    left, right = changed_words(old, review.new_paragraph.text)
    return Row(review, left, right)


@require_GET
@role_required(selectors.REVIEW_ROLES)
def rereview_list(request: HttpRequest) -> HttpResponse:
    state = request.GET.get("state") if request.GET.get("state") == "closed" else "open"
    rows = rereview.rereviews_for(request.user, state=state)  # type: ignore[arg-type]  # role_required
    return render(
        request,
        "queue/rereview.html",
        {
            "state": state,
            "rows": [_row(r) for r in rows[:LIST_LIMIT]],
            "verdicts": ReReview.Verdict.choices,
        },
    )


@require_POST
@role_required(selectors.REVIEW_ROLES)
def rereview_close(request: HttpRequest, pk: int) -> HttpResponse:
    verdict = request.POST.get("verdict", "")
    try:
        if not verdict:
            # Nothing is preset (one click once closed a decision whose figure is now wrong):
            # a form sent without a choice says so.
            raise ApplicationError(
                _("Choose a verdict: still correct, or wrong now."), field="verdict"
            )
        review = rereview.rereview_close(
            rereview_id=pk,
            user=request.user,  # type: ignore[arg-type]  # role_required
            verdict=verdict,
            note=request.POST.get("note", ""),
        )
    except (Forbidden, NotFound):
        raise  # another zone's item: the page answers 403 or 404
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _closed_message(review))
    return redirect("rereviews-page")


def _closed_message(review: ReReview) -> str:
    """What the verdict did to the decision, read after it took effect: still holds, failed
    as "evidence changed", or a correction sent."""
    decision_id = review.decision_id
    if review.verdict == ReReview.Verdict.STILL_CORRECT:
        return _("Re-review closed: decision %(id)s still holds.") % {"id": decision_id}
    state, why = Decision.objects.values_list("state", "outcome_reason").get(pk=decision_id)
    if state == State.FAILED and not why.startswith(EVIDENCE_CHANGED):
        return _("Re-review closed: decision %(id)s had failed already.") % {"id": decision_id}
    if state == State.FAILED:
        return _(
            "Re-review closed: decision %(id)s failed as evidence changed and left the queue; "
            "its agent is told."
        ) % {"id": decision_id}
    return _(
        "Re-review closed: a correction of decision %(id)s went onto its trail and to its agent."
    ) % {"id": decision_id}
