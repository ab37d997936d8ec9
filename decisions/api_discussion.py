"""REST views of the reviewers' discussion and hand-offs: comments on a decision, assignment
to a reviewer of its zone, and the queue's bulk release and assign. Thin: the services in
`decisions.services` decide and check who may act."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from decisions import services
from decisions.models import Comment, Decision
from maria.errors import NotFound
from maria.openapi import DATABASE_INT_MAX, error_responses, path_id
from maria.strict import StrictSerializer


class CommentOut(serializers.Serializer):  # the schema of comment_row
    id = serializers.IntegerField()
    author = serializers.CharField()
    text = serializers.CharField()
    created_at = serializers.DateTimeField()


def comment_row(comment: Comment) -> dict[str, Any]:
    return {
        "id": comment.pk,
        "author": comment.author.get_username(),
        "text": comment.text,
        "created_at": comment.created_at.isoformat(),
    }


class CommentIn(StrictSerializer):
    text = serializers.CharField(max_length=services.COMMENT_LIMIT)


def _user(request: Request) -> User:
    return request.user  # type: ignore[return-value]  # authenticated by the API's settings


class DecisionCommentsView(APIView):
    @extend_schema(
        summary="The comments on a decision, oldest first (reviewers, zone admins, auditors)",
        parameters=[path_id(description="the decision")],
        responses={200: CommentOut(many=True), **error_responses(404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        decision = Decision.objects.filter(pk=pk).first()
        if decision is None or not services.may_read(_user(request), decision):
            raise NotFound(gettext("no decision %(id)s") % {"id": pk})
        return Response([comment_row(c) for c in decision.comments.select_related("author")])

    @extend_schema(
        summary="Comment on a decision (on its trail)",
        parameters=[path_id(description="the decision")],
        request=CommentIn,
        responses={201: CommentOut, **error_responses(400, 404)},
    )
    def post(self, request: Request, pk: int) -> Response:
        body = CommentIn(data=request.data)
        body.is_valid(raise_exception=True)
        comment = services.decision_comment(
            decision_id=pk, user=_user(request), text=body.validated_data["text"]
        )
        return Response(comment_row(comment), status=201)


class AssignIn(StrictSerializer):
    assignee = serializers.CharField(
        max_length=150, allow_null=True, allow_blank=True, help_text="a username; null unassigns"
    )


class DecisionAssignView(APIView):
    @extend_schema(
        summary="Assign a decision awaiting review to a reviewer of its zone",
        parameters=[path_id(description="the decision")],
        request=AssignIn,
        responses={
            200: inline_serializer(
                "Assigned",
                {
                    "id": serializers.IntegerField(),
                    "assigned_to": serializers.CharField(allow_null=True),
                },
            ),
            **error_responses(400, 404, 409),
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        body = AssignIn(data=request.data)
        body.is_valid(raise_exception=True)
        decision = services.decision_assign(
            decision_id=pk, user=_user(request), assignee=body.validated_data["assignee"]
        )
        assigned = decision.assigned_to.get_username() if decision.assigned_to else None
        return Response({"id": decision.pk, "assigned_to": assigned})


class BulkIn(StrictSerializer):
    action = serializers.ChoiceField(choices=["release", "assign"])
    decisions = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=DATABASE_INT_MAX),
        min_length=1,
        max_length=200,
    )
    assignee = serializers.CharField(
        max_length=150, required=False, allow_null=True, allow_blank=True
    )


class DecisionsBulkView(APIView):
    @extend_schema(
        summary="Release or assign several decisions at once; each succeeds or says why not",
        request=BulkIn,
        responses={
            200: inline_serializer(
                "BulkOutcome", {"outcome": serializers.DictField(child=serializers.CharField())}
            ),
            **error_responses(400),
        },
    )
    def post(self, request: Request) -> Response:
        body = BulkIn(data=request.data)
        body.is_valid(raise_exception=True)
        outcome = services.decisions_bulk(
            decision_ids=body.validated_data["decisions"],
            user=_user(request),
            action=body.validated_data["action"],
            assignee=body.validated_data.get("assignee"),
        )
        return Response({"outcome": {str(k): v for k, v in outcome.items()}})
