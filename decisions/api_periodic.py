"""REST views of the periodic review of flagged answers: reviewers list the items of their
zones, claim, release and close them with a verdict. Thin: `decisions.periodic` decides."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from coordinates.fields import coordinate_parameter
from coordinates.selectors import agent_of
from decisions import periodic
from decisions.models import PeriodicReview
from maria.errors import ApplicationError, Forbidden, NotAuthenticated
from maria.openapi import DATABASE_INT_MAX, NOT_BLANK, error_responses, one_of, or_empty, path_id

PAGE_SIZE = 50


def periodic_review_row(review: PeriodicReview) -> dict[str, Any]:
    """One item as the API and its pages read it: the answer it judges, why it was flagged,
    who holds it now (a claim that ran out holds nothing) and, once closed, the verdict."""
    decision = review.decision
    held = review.held()
    return {
        "id": review.pk,
        "decision": decision.pk,
        "zone": review.zone,
        "state": "open" if review.is_open else "closed",
        "reason": review.reason,
        "flagged_at": review.created_at.isoformat(),
        "question": decision.question,
        "answer": decision.answer,
        "gate": decision.gate,
        "sufficiency": decision.sufficiency,
        "decision_state": decision.state,
        "claimed_by": review.claimed_by.get_username() if held and review.claimed_by else None,
        "claimed_until": review.claimed_until.isoformat()
        if held and review.claimed_until
        else None,
        "verdict": review.verdict,
        "note": review.note,
        "reviewed_by": review.reviewed_by.get_username() if review.reviewed_by else None,
        "reviewed_at": review.reviewed_at.isoformat() if review.reviewed_at else None,
    }


def _row_fields() -> dict[str, serializers.Field]:
    """periodic_review_row, field by field."""
    return {
        "id": serializers.IntegerField(),
        "decision": serializers.IntegerField(),
        "zone": serializers.CharField(),
        "state": serializers.CharField(help_text="open or closed"),
        "reason": serializers.CharField(help_text="why the gate flagged the answer"),
        "flagged_at": serializers.DateTimeField(),
        "question": serializers.CharField(),
        "answer": serializers.CharField(),
        "gate": serializers.CharField(),
        "sufficiency": serializers.FloatField(allow_null=True),
        "decision_state": serializers.CharField(help_text="the decision's state now"),
        "claimed_by": serializers.CharField(allow_null=True, help_text="null: nobody holds it"),
        "claimed_until": serializers.DateTimeField(allow_null=True),
        "verdict": serializers.ChoiceField(
            choices=PeriodicReview.Verdict.choices, allow_null=True, help_text="null while open"
        ),
        "note": serializers.CharField(allow_blank=True),
        "reviewed_by": serializers.CharField(allow_null=True),
        "reviewed_at": serializers.DateTimeField(allow_null=True),
    }


PeriodicReviewRowSerializer = type(
    "PeriodicReviewRowSerializer", (serializers.Serializer,), _row_fields()
)
PeriodicReviewRow = PeriodicReviewRowSerializer()
PeriodicReviewPage = inline_serializer(
    "PeriodicReviewPage",
    {
        "results": PeriodicReviewRowSerializer(many=True),
        "next_offset": serializers.IntegerField(allow_null=True),
    },
)

# A raw schema: a "wrong" verdict needs a note that is more than blanks, an "ok" one may
# have none (decisions.periodic._checked_note).
_NOTE = {"type": "string", "maxLength": periodic.NOTE_LIMIT}
PeriodicReviewClose = {
    "application/json": {
        "oneOf": [
            {
                "type": "object",
                "properties": {"verdict": {"type": "string", "enum": ["ok"]}, "note": _NOTE},
                "required": ["verdict"],
            },
            {
                "type": "object",
                "properties": {
                    "verdict": {"type": "string", "enum": ["wrong"]},
                    "note": {**_NOTE, "pattern": NOT_BLANK, "description": "what was wrong"},
                },
                "required": ["verdict", "note"],
            },
        ]
    }
}


def _reviewer(request: Request) -> User:
    if not isinstance(request.user, User):
        raise NotAuthenticated(gettext("sign in first"))
    if agent_of(request.auth) is not None:
        raise Forbidden(gettext("agents cannot review decisions"))
    return request.user


def _offset(raw: str | None) -> int:
    try:
        offset = max(int(raw or 0), 0)
    except ValueError:
        raise ApplicationError(gettext("offset must be a whole number"), field="offset") from None
    if offset > DATABASE_INT_MAX:
        raise ApplicationError(
            gettext("offset must be at most %(max)s") % {"max": DATABASE_INT_MAX}, field="offset"
        )
    return offset


class PeriodicReviewListView(APIView):
    @extend_schema(
        summary="Flagged answers sampled for periodic review in your zones",
        description=(
            "Open items oldest first (the order to work through them), closed ones newest "
            "verdict first; reviewers and zone admins see the zones they hold and beneath."
        ),
        operation_id="periodic_reviews_list",
        parameters=[
            coordinate_parameter("zone", description="this zone-tree node and beneath"),
            OpenApiParameter(
                "state", or_empty(one_of(list(periodic.STATES))), description="default open"
            ),
            OpenApiParameter(
                "verdict",
                or_empty(one_of(list(periodic.VERDICTS))),
                description="closed items with this verdict",
            ),
            OpenApiParameter(
                "offset",
                {"type": "integer", "maximum": DATABASE_INT_MAX},
                description=f"rows to skip, {PAGE_SIZE} a page (a negative offset counts as 0)",
            ),
        ],
        responses={200: PeriodicReviewPage, **error_responses(400, 403)},
    )
    def get(self, request: Request) -> Response:
        user = _reviewer(request)
        params = request.query_params
        rows = periodic.periodic_reviews_for(
            user,
            zone=params.get("zone", ""),
            state=params.get("state") or "open",
            verdict=params.get("verdict", ""),
        )
        offset = _offset(params.get("offset"))
        page = list(rows[offset : offset + PAGE_SIZE + 1])
        more = len(page) > PAGE_SIZE
        return Response(
            {
                "results": [periodic_review_row(r) for r in page[:PAGE_SIZE]],
                "next_offset": offset + PAGE_SIZE if more else None,
            }
        )


SUMMARIES = {
    "claim": "Claim a periodic review so no other reviewer works on it",
    "release": "Give a claimed periodic review back (its holder or a zone admin)",
    "close": 'Close a periodic review with a verdict, "ok" or "wrong" (which needs a note)',
}


def _action_schema(action: str) -> Any:
    return extend_schema(
        summary=SUMMARIES[action],
        operation_id=f"periodic_reviews_{action}_create",
        parameters=[path_id()],
        request=PeriodicReviewClose if action == "close" else None,
        responses={
            200: PeriodicReviewRow,
            **error_responses(*((400,) if action == "close" else ()), 403, 404, 409),
        },
    )


def _answer(user: User, review: PeriodicReview) -> Response:
    return Response(periodic_review_row(periodic.periodic_review_for(user, review.pk)))


class PeriodicReviewClaimView(APIView):
    @_action_schema("claim")
    def post(self, request: Request, pk: int) -> Response:
        user = _reviewer(request)
        return _answer(user, periodic.periodic_review_claim(review_id=pk, user=user))


class PeriodicReviewReleaseView(APIView):
    @_action_schema("release")
    def post(self, request: Request, pk: int) -> Response:
        user = _reviewer(request)
        return _answer(user, periodic.periodic_review_release(review_id=pk, user=user))


class PeriodicReviewCloseView(APIView):
    @_action_schema("close")
    def post(self, request: Request, pk: int) -> Response:
        user = _reviewer(request)
        body = request.data
        if not isinstance(body, dict):
            raise ApplicationError(gettext("the body must be a JSON object"), field=None)
        review = periodic.periodic_review_close(
            review_id=pk, user=user, verdict=body.get("verdict"), note=body.get("note", "")
        )
        return _answer(user, review)


ACTION_VIEWS: dict[str, type[APIView]] = {
    "claim": PeriodicReviewClaimView,
    "release": PeriodicReviewReleaseView,
    "close": PeriodicReviewCloseView,
}
