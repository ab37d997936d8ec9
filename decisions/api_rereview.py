"""REST views of re-reviews (decisions.rereview): past answers whose evidence changed, with
the text cited and the text now; reviewers of the zone close them with a verdict."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from decisions import rereview
from decisions.models import ReReview
from maria.openapi import NOT_BLANK, error_responses, path_id
from maria.strict import StrictSerializer

PAGE_SIZE = 100


def rereview_row(review: ReReview) -> dict[str, Any]:
    decision = review.decision
    return {
        "id": review.pk,
        "decision": decision.pk,
        "zone": review.zone,
        "question": decision.question,
        "answer": decision.answer,
        "decision_state": decision.state,
        "opened_at": review.created_at.isoformat(),
        **rereview.change_json(review),
        "verdict": review.verdict or None,
        "note": review.note or None,
        "closed_by": review.closed_by.get_username() if review.closed_by else None,
        "closed_at": review.closed_at.isoformat() if review.closed_at else None,
    }


class ReReviewListView(APIView):
    @extend_schema(
        summary="Past answers whose evidence changed, to review again (reviewers of the zone)",
        parameters=[OpenApiParameter("state", OpenApiTypes.STR, enum=["open", "closed"])],
        responses={200: OpenApiTypes.OBJECT, **error_responses(400)},
    )
    def get(self, request: Request) -> Response:
        user: Any = request.user  # authenticated by the API's settings
        rows = rereview.rereviews_for(user, state=request.query_params.get("state") or "open")
        return Response({"rereviews": [rereview_row(r) for r in rows[:PAGE_SIZE]]})


class CloseIn(StrictSerializer):
    verdict = serializers.ChoiceField(choices=ReReview.Verdict.choices)
    note = serializers.CharField(max_length=rereview.NOTE_LIMIT, required=False, allow_blank=True)


class _CloseInNoteWhenWrong(OpenApiSerializerExtension):
    """A re-review closed as `wrong` needs a note that is more than blanks (it says what is
    wrong now; rereview.rereview_close refuses it without): the schema says so, so that it
    refuses what the server refuses. The verdict's enum stays the one component clients
    know; the rule is written with `not`, which drf-spectacular's enum hook leaves alone."""

    target_class = "decisions.api_rereview.CloseIn"

    def map_serializer(self, auto_schema: Any, direction: Any) -> Any:
        schema = auto_schema._map_basic_serializer(self.target, direction)
        if direction == "request":
            note = schema["properties"]["note"]
            schema["anyOf"] = [
                {"properties": {"verdict": {"not": {"enum": [ReReview.Verdict.WRONG.value]}}}},
                {
                    "properties": {"note": {**note, "minLength": 1, "pattern": NOT_BLANK}},
                    "required": ["note"],
                },
            ]
        return schema


class ReReviewCloseView(APIView):
    @extend_schema(
        summary="Say whether a past answer still holds now that its evidence changed",
        description=(
            "`wrong` (a note required) takes effect: an answer still waiting for review fails"
            ' with "evidence changed: <note>" and its agent gets `decision.failed` (`outcome`'
            " `evidence_changed`); a released answer stays as given and its agent gets"
            " `decision.corrected` with the verdict and the note. `still_correct` changes"
            " nothing but the re-review."
        ),
        parameters=[path_id(description="the re-review")],
        request=CloseIn,
        responses={
            200: inline_serializer(
                "ReReviewClosed",
                {"id": serializers.IntegerField(), "verdict": serializers.CharField()},
            ),
            **error_responses(400, 403, 404, 409),
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        body = CloseIn(data=request.data)
        body.is_valid(raise_exception=True)
        review = rereview.rereview_close(
            rereview_id=pk,
            user=request.user,  # type: ignore[arg-type]  # authenticated by the API's settings
            verdict=body.validated_data["verdict"],
            note=body.validated_data.get("note", ""),
        )
        return Response({"id": review.pk, "verdict": review.verdict})
