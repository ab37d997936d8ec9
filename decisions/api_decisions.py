"""REST views for decisions: agents submit and poll; reviewers claim, approve, reject,
release; zone admins with the permission override blocked answers. Thin: services decide."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from coordinates.coordinate import Level
from coordinates.models import ApiToken
from coordinates.selectors import agent_of, beneath, coordinate_from
from decisions import services
from decisions.ask import Refusal, ask
from decisions.models import Decision, Gate, State
from decisions.representation import decision_detail, decision_row
from decisions.selectors import visible_decisions
from maria.errors import ApplicationError, Forbidden, NotAuthenticated, NotFound, TooLarge

MAX_BODY_BYTES = 1024 * 1024
MAX_CLAIMS = 50
MAX_CITATIONS = 20
IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,200}")  # printable ASCII, no spaces
PAGE_SIZE = 50

DecisionOut = inline_serializer(
    "Decision",
    {
        "id": serializers.IntegerField(),
        "state": serializers.ChoiceField(choices=State.choices),
        "gate": serializers.ChoiceField(choices=Gate.choices, allow_null=True),
        "mode": serializers.CharField(allow_null=True),
        "zone": serializers.CharField(),
        "sufficiency": serializers.FloatField(allow_null=True),
        "policy_version": serializers.CharField(allow_null=True),
        "claims": serializers.ListField(child=serializers.DictField()),
        "contradictions": serializers.ListField(child=serializers.DictField()),
        "events": serializers.ListField(child=serializers.DictField()),
    },
)
DecisionPage = inline_serializer(
    "DecisionPage",
    {
        "results": serializers.ListField(child=serializers.DictField()),
        "next_offset": serializers.IntegerField(allow_null=True),
    },
)

DATABASE_INT_MAX = 2**63 - 1  # PostgreSQL bigint: the widest integer a row holds


def _too_large(message: str, field: str | None = None) -> ApplicationError:
    return TooLarge(message, field=field)


class CitationIn(serializers.Serializer):
    # Ids and offsets the database can hold (a bigint): a larger one is a 400 naming the
    # field, never a citation that fails validation and then every graph-feed run.
    document = serializers.IntegerField(min_value=1, max_value=DATABASE_INT_MAX)
    version = serializers.IntegerField(
        min_value=1, max_value=DATABASE_INT_MAX, required=False, allow_null=True
    )
    paragraph = serializers.IntegerField(min_value=1, max_value=DATABASE_INT_MAX)
    start = serializers.IntegerField(
        min_value=0, max_value=DATABASE_INT_MAX, required=False, allow_null=True
    )
    end = serializers.IntegerField(
        min_value=1, max_value=DATABASE_INT_MAX, required=False, allow_null=True
    )
    confidence = serializers.FloatField(
        min_value=0.0, max_value=1.0, required=False, allow_null=True
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("start"), attrs.get("end")
        if start is not None and end is not None and end <= start:
            raise serializers.ValidationError({"end": "end must be greater than start"})
        return attrs


class ClaimIn(serializers.Serializer):
    text = serializers.CharField(max_length=4000)
    citations = CitationIn(many=True, allow_empty=True)


class DecisionIn(serializers.Serializer):
    question = serializers.CharField(max_length=10_000)
    answer = serializers.CharField(max_length=50_000)
    zone = serializers.CharField(max_length=64)
    agent = serializers.CharField(max_length=64)
    claims = ClaimIn(many=True, allow_empty=False)

    def validate_zone(self, value: str) -> str:
        # Existence is not checked here: a zone other than the token's own is a 403 either
        # way, and a 404 would tell a stranger which zones exist.
        return str(coordinate_from(value, field="zone", level=Level.ZONE))

    def validate_agent(self, value: str) -> str:
        return str(coordinate_from(value, field="agent", level=Level.AGENT))

    def validate_claims(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen: set[str] = set()
        for index, claim in enumerate(value):
            text = " ".join(claim["text"].split()).casefold()
            if text in seen:
                raise serializers.ValidationError({str(index): {"text": "duplicate claim"}})
            seen.add(text)
        return value


def _check_sizes(request: Request) -> None:
    length = int(request.META.get("CONTENT_LENGTH") or 0)
    if length > MAX_BODY_BYTES:
        raise _too_large(f"the body is {length} bytes; a decision may be at most {MAX_BODY_BYTES}")
    data = request.data
    if isinstance(data, dict) and isinstance(data.get("claims"), list):
        claims = data["claims"]
        if len(claims) > MAX_CLAIMS:
            raise _too_large(f"{len(claims)} claims; at most {MAX_CLAIMS}", "claims")
        for index, claim in enumerate(claims):
            citations = claim.get("citations") if isinstance(claim, dict) else None
            if isinstance(citations, list) and len(citations) > MAX_CITATIONS:
                raise _too_large(
                    f"{len(citations)} citations; at most {MAX_CITATIONS} per claim",
                    f"claims.{index}.citations",
                )


def _clean(payload: dict[str, Any]) -> dict[str, Any]:
    """The submitted body in a canonical form (None fields dropped) for hashing and storage."""
    claims = [
        {
            "text": claim["text"],
            "citations": [
                {k: v for k, v in citation.items() if v is not None}
                for citation in claim["citations"]
            ],
        }
        for claim in payload["claims"]
    ]
    return {**payload, "claims": claims}


def _user(request: Request) -> User:
    if not isinstance(request.user, User):
        raise NotAuthenticated("sign in first")
    if agent_of(request.auth) is not None:
        raise Forbidden("agents cannot review decisions")
    return request.user


def _still_proposed(decision_id: int) -> bool:
    """Not validated yet (with eager Celery, or a quick worker, it may be already)."""
    return Decision.objects.filter(pk=decision_id, state=State.PROPOSED).exists()


class DecisionListView(APIView):
    @extend_schema(
        summary="Decisions you can see, newest first",
        operation_id="decisions_list",
        responses=DecisionPage,
        parameters=[
            OpenApiParameter("state", str, enum=State.values),
            OpenApiParameter("gate", str, enum=Gate.values),
            OpenApiParameter("zone", str, description="coordinate prefix"),
            OpenApiParameter("since", str, description="ISO 8601 date-time"),
            OpenApiParameter("offset", int),
        ],
    )
    def get(self, request: Request) -> Response:
        decisions = visible_decisions(request.user, request.auth)
        params = request.query_params
        if state := params.get("state"):
            if state not in State.values:
                raise ApplicationError(f"unknown state {state!r}", field="state")
            decisions = decisions.filter(state=state)
        if gate := params.get("gate"):
            if gate not in Gate.values:
                raise ApplicationError(f"unknown gate {gate!r}", field="gate")
            decisions = decisions.filter(gate=gate)
        if zone := params.get("zone"):
            prefix = str(coordinate_from(zone, field="zone"))
            decisions = decisions.filter(beneath(prefix))
        if since := params.get("since"):
            moment: datetime | None = parse_datetime(since)
            if moment is None or moment.tzinfo is None:
                raise ApplicationError(
                    "since must be an ISO 8601 date-time with a time zone", field="since"
                )
            decisions = decisions.filter(created_at__gte=moment)
        try:
            offset = max(int(params.get("offset", 0)), 0)
        except ValueError:
            raise ApplicationError("offset must be a whole number", field="offset") from None
        if offset > DATABASE_INT_MAX:
            raise ApplicationError(f"offset must be at most {DATABASE_INT_MAX}", field="offset")
        page = list(decisions.order_by("-created_at", "-pk")[offset : offset + PAGE_SIZE + 1])
        more = len(page) > PAGE_SIZE
        return Response(
            {
                "results": [decision_row(d) for d in page[:PAGE_SIZE]],
                "next_offset": offset + PAGE_SIZE if more else None,
            }
        )

    @extend_schema(
        summary="Submit an answer with its evidence bundle (agents)",
        request=DecisionIn,
        parameters=[OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER)],
        responses={201: DecisionOut, 200: DecisionOut},
    )
    def post(self, request: Request) -> Response:
        token = request.auth
        if not isinstance(token, ApiToken) or not token.is_agent:
            raise Forbidden(
                "decisions are submitted with an agent token",
            )
        key = request.headers.get("Idempotency-Key", "")
        if key and not IDEMPOTENCY_KEY.fullmatch(key):
            raise ApplicationError(
                "Idempotency-Key must be 1 to 200 printable ASCII characters",
                field="Idempotency-Key",
            )
        _check_sizes(request)
        incoming = DecisionIn(data=request.data)
        incoming.is_valid(raise_exception=True)
        submitted = services.decision_submit(
            token=token, payload=_clean(dict(incoming.validated_data)), idempotency_key=key
        )
        made = submitted.decision
        if submitted.proposed is not None and _still_proposed(made.pk):
            # As it was made: nothing but its validation changes a proposed decision, so the
            # objects in hand are the stored ones (one light query instead of three).
            return Response(
                decision_detail(made, events=[submitted.proposed]), status=status.HTTP_201_CREATED
            )
        decision = Decision.objects.select_related("bundle", "report", "claimed_by").get(pk=made.pk)
        if submitted.replayed:
            return Response(
                decision_detail(decision), status=200, headers={"Idempotent-Replayed": "true"}
            )
        return Response(decision_detail(decision), status=status.HTTP_201_CREATED)


class DecisionDetailView(APIView):
    @extend_schema(
        summary="A decision with its full validation report and trail",
        operation_id="decisions_retrieve",
        responses=DecisionOut,
    )
    def get(self, request: Request, pk: int) -> Response:
        decision = visible_decisions(request.user, request.auth).filter(pk=pk).first()
        if decision is None:
            raise NotFound(f"no decision {pk}")
        return Response(decision_detail(decision))


ReasonIn = inline_serializer("Reason", {"reason": serializers.CharField(required=False)})


class DecisionActionView(APIView):
    action = ""

    @extend_schema(
        request=ReasonIn,
        responses=DecisionOut,
        summary="claim | release | approve | reject | override",
    )
    def post(self, request: Request, pk: int) -> Response:
        user = _user(request)
        body = request.data if isinstance(request.data, dict) else {}
        reason = body.get("reason", "")
        if not isinstance(reason, str):
            raise ApplicationError("reason must be a string", field="reason")
        if self.action == "claim":
            decision = services.decision_claim(decision_id=pk, user=user)
        elif self.action == "release":
            decision = services.decision_release(decision_id=pk, user=user)
        elif self.action == "approve":
            decision = services.decision_approve(decision_id=pk, user=user, reason=reason)
        elif self.action == "reject":
            decision = services.decision_reject(decision_id=pk, user=user, reason=reason)
        else:
            decision = services.decision_override(decision_id=pk, user=user, reason=reason)
        return Response(decision_row(Decision.objects.get(pk=decision.pk)))


class AskIn(serializers.Serializer):
    question = serializers.CharField(max_length=2000)
    zone = serializers.CharField(max_length=64)


class AskView(APIView):
    @extend_schema(
        summary="Answer from the zone's own documents, evidence first, or refuse with context",
        request=AskIn,
        responses={
            201: DecisionOut,
            200: inline_serializer("AskRefused", {"refusal": serializers.DictField()}),
        },
    )
    def post(self, request: Request) -> Response:
        token = request.auth
        if not isinstance(token, ApiToken) or not token.is_agent:
            raise Forbidden(
                "ask with an agent token: the answer is submitted as that agent",
            )
        incoming = AskIn(data=request.data)
        incoming.is_valid(raise_exception=True)
        zone = coordinate_from(incoming.validated_data["zone"], field="zone", level=Level.ZONE)
        agent = token.agent_coordinate
        if agent is None or agent.zone() != zone:
            raise Forbidden(
                f"agent {agent} may ask only in its zone",
            )
        result = ask(
            token=token,
            question=incoming.validated_data["question"],
            zone=zone,
            idempotency_key=request.headers.get("Idempotency-Key", ""),
        )
        if isinstance(result, Refusal):
            return Response({"decision": None, "refusal": result.context}, status=200)
        decision = Decision.objects.get(pk=result.decision.pk)
        return Response(
            decision_detail(decision), status=200 if result.replayed else status.HTTP_201_CREATED
        )
