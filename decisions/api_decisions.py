"""REST views for decisions: agents submit and poll; reviewers claim, approve, reject,
release; zone admins with the permission override blocked answers. Thin: services decide."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from coordinates.coordinate import Level
from coordinates.fields import CoordinateField, coordinate_parameter
from coordinates.models import ApiToken
from coordinates.selectors import agent_of, beneath, coordinate_from
from decisions import services
from decisions.ask import Refusal, ask
from decisions.models import Decision, Gate, State
from decisions.representation import decision_detail, decision_row, override_progress
from decisions.selectors import visible_decisions
from evidence.provenance import retrieval_stamp, retrieved_too_late
from maria.errors import ApplicationError, Forbidden, NotAuthenticated, NotFound, TooLarge
from maria.openapi import DATABASE_INT_MAX, error_responses, one_of, or_empty, path_id
from maria.strict import StrictSerializer

MAX_BODY_BYTES = 1024 * 1024
MAX_CLAIMS = services.MAX_CLAIMS
MAX_CITATIONS = 20
MAX_SOURCES = 50  # as many as one search returns at most
IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,200}")  # printable ASCII, no spaces
PAGE_SIZE = 50


def _row_fields() -> dict[str, serializers.Field]:
    """decisions.representation.decision_row, field by field."""
    return {
        "id": serializers.IntegerField(),
        "state": serializers.ChoiceField(choices=State.choices),
        "gate": serializers.ChoiceField(choices=Gate.choices, allow_null=True),
        "mode": serializers.CharField(allow_null=True),
        "zone": serializers.CharField(),
        "agent": serializers.CharField(),
        "question": serializers.CharField(),
        "sufficiency": serializers.FloatField(allow_null=True),
        "policy_version": serializers.CharField(allow_null=True),
        "due_at": serializers.DateTimeField(allow_null=True),
        "escalated_to": serializers.CharField(allow_null=True),
        "claimed_by": serializers.CharField(allow_null=True),
        "claimed_until": serializers.DateTimeField(allow_null=True),
        "created_at": serializers.DateTimeField(),
        "updated_at": serializers.DateTimeField(),
    }


# A class, not inline_serializer's instance: the page's results reuse it (many=True).
DecisionRowSerializer = type("DecisionRowSerializer", (serializers.Serializer,), _row_fields())
DecisionRow = DecisionRowSerializer()
# Where a blocked answer's override stands (decisions.representation.override_progress).
OverrideProgress = inline_serializer(
    "OverrideProgress",
    {
        "given": serializers.IntegerField(),
        "needed": serializers.IntegerField(),
        "approvals": inline_serializer(
            "OverrideApproval",
            {
                "reviewer": serializers.CharField(),
                "reason": serializers.CharField(),
                "at": serializers.DateTimeField(),
            },
            many=True,
        ),
        "text": serializers.CharField(help_text='e.g. "1 of 2 override approvals, by zed: ..."'),
    },
    allow_null=True,
)
DecisionOut = inline_serializer(
    "Decision",
    {
        **_row_fields(),
        "answer": serializers.CharField(
            help_text="the answer as the agent submitted it, kept for audit; what the asker "
            "receives is `delivered`"
        ),
        "completeness": serializers.FloatField(allow_null=True),
        "cohesion": serializers.FloatField(allow_null=True),
        "policy": serializers.DictField(allow_null=True),
        "claims": serializers.ListField(child=serializers.DictField()),
        "contradictions": serializers.ListField(child=serializers.DictField()),
        "numberless_claim_share": serializers.FloatField(allow_null=True),
        "answer_check": serializers.DictField(
            allow_null=True,
            help_text="the answer text's claims, each with the report claim that checked it "
            "(`claims`: text, start, end, covered: claim | claims | sources, claim), and the "
            "submitted claims the answer does not say (`not_in_answer`)",
        ),
        "addressing": serializers.DictField(
            allow_null=True,
            help_text="whether the answer addresses the question: probability, mode (full, "
            "partial, off_topic), parts (asks, kind, answered, by, probability), missing, "
            "reason",
        ),
        "held_at_least": serializers.DictField(
            allow_null=True,
            help_text="the gate the report's findings beyond its scores ask for (gate) and "
            "why (reasons): an answer to another question, a superseded or unapproved source",
        ),
        "delivered": inline_serializer(
            "DeliveredAnswer",
            {
                "answer": serializers.CharField(
                    allow_null=True,
                    help_text="the text the asker receives, or will once released: `answer` "
                    "as its mode allows (full: as is; hedged: after a hedge sentence; partial: "
                    "its supported claims and a 'Not answered' line; refusal: null) or a "
                    "reviewer's replacement; null before validation and for a failed decision",
                ),
                "mode": serializers.CharField(allow_blank=True),
                "not_answered": serializers.ListField(
                    child=serializers.CharField(),
                    help_text="the parts of the question a partial answer leaves unanswered",
                ),
                "replaced": serializers.BooleanField(
                    help_text="a reviewer wrote the delivered answer (decision.answer_replaced)"
                ),
            },
        ),
        "refusal": serializers.DictField(allow_null=True),
        "outcome_reason": serializers.CharField(allow_null=True),
        "bundle_hash": serializers.CharField(),
        "report_hash": serializers.CharField(allow_null=True),
        "approvals": inline_serializer(
            "DecisionApproval",
            {
                "reviewer": serializers.CharField(),
                "at": serializers.DateTimeField(),
                "reason": serializers.CharField(allow_blank=True),
                "replacement": serializers.CharField(
                    allow_null=True, help_text="the answer this reviewer wrote in its place"
                ),
            },
            many=True,
        ),
        "override": OverrideProgress,
        "events": inline_serializer(
            "DecisionEvent",
            {
                "kind": serializers.CharField(),
                "actor": serializers.CharField(),
                "reason": serializers.CharField(allow_blank=True),
                "at": serializers.DateTimeField(),
                "chain": serializers.CharField(),
                "seq": serializers.IntegerField(),
                "hash": serializers.CharField(),
            },
            many=True,
        ),
    },
)
DecisionPage = inline_serializer(
    "DecisionPage",
    {
        "results": DecisionRowSerializer(many=True),
        "next_offset": serializers.IntegerField(allow_null=True),
    },
)


def _too_large(message: str, field: str | None = None) -> ApplicationError:
    return TooLarge(message, field=field)


class CitationIn(StrictSerializer):
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
    retrieved_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="when the agent retrieved the source (ISO 8601; default: the submission "
        "time); the sealed bundle records it with the version cited",
    )

    def validate_retrieved_at(self, value: datetime | None) -> datetime | None:
        if value is not None and retrieved_too_late(value, timezone.now()):
            raise serializers.ValidationError(
                gettext("retrieved_at %(value)s is in the future") % {"value": value.isoformat()}
            )
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("start"), attrs.get("end")
        if start is not None and end is not None and end <= start:
            raise serializers.ValidationError({"end": gettext("end must be greater than start")})
        return attrs


class ClaimIn(StrictSerializer):
    text = serializers.CharField(max_length=4000)
    # More than MAX_CITATIONS is refused with 413 (_check_sizes), before validation.
    citations: serializers.ListSerializer[Any] = serializers.ListSerializer(
        child=CitationIn(), max_length=MAX_CITATIONS
    )


class _Submission(StrictSerializer):
    """What both shapes of a submission share."""

    question = serializers.CharField(max_length=10_000)
    answer = serializers.CharField(max_length=50_000)
    zone = CoordinateField(shortest=4, longest=4, help_text="the agent's zone (G.U.P.Z)")
    agent = CoordinateField(shortest=5, longest=5, help_text="the agent (G.U.P.Z.A)")
    graph_evidence = serializers.ListField(
        child=serializers.CharField(max_length=300),
        required=False,
        max_length=64,
        help_text="keys of the zone's graph nodes the answer drew on (`decision:12`, "
        "`document:3`); the graph gate judges their cohesion beside the answer gate",
    )

    def validate_zone(self, value: str) -> str:
        # Existence is not checked here: a zone other than the token's own is a 403 either
        # way, and a 404 would tell a stranger which zones exist.
        return str(coordinate_from(value, field="zone", level=Level.ZONE))

    def validate_agent(self, value: str) -> str:
        return str(coordinate_from(value, field="agent", level=Level.AGENT))


class DecisionIn(_Submission):
    """An answer with its claims and their citations, as the agent split and cited it."""

    # More than MAX_CLAIMS is refused with 413 (_check_sizes), before validation.
    claims: serializers.ListSerializer[Any] = serializers.ListSerializer(
        child=ClaimIn(), allow_empty=False, max_length=MAX_CLAIMS
    )

    def validate_claims(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen: set[str] = set()
        for index, claim in enumerate(value):
            text = " ".join(claim["text"].split()).casefold()
            if text in seen:
                raise serializers.ValidationError(
                    {str(index): {"text": gettext("duplicate claim")}}
                )
            seen.add(text)
        return value


class PlainAnswerIn(_Submission):
    """A plain answer and the sources it drew on: the engine splits the answer into claims,
    cites the sources its `[n]` markers name (1-based) and aligns the unmarked claims to
    the best span among them (evidence.passages.answer_claims)."""

    # More than MAX_SOURCES is refused with 413 (_check_sizes), before validation.
    sources: serializers.ListSerializer[Any] = serializers.ListSerializer(
        child=CitationIn(),
        allow_empty=False,
        max_length=MAX_SOURCES,
        help_text="what the answer drew on (a search passage as it came, or document, "
        "version (default: the current one) and paragraph); [n] in the answer names the "
        "n-th",
    )


class _ClaimsExcludeSources(OpenApiSerializerExtension):
    """The two shapes exclude each other (one carries `claims`, the other `sources`): each
    says so, so that a body with both is valid under neither, as the view refuses it."""

    target_class = "decisions.api_decisions.DecisionIn"
    other = "sources"

    def map_serializer(self, auto_schema: Any, direction: Any) -> Any:
        schema = auto_schema._map_basic_serializer(self.target, direction)
        if direction == "request":
            schema["not"] = {"required": [self.other]}
        return schema


class _SourcesExcludeClaims(_ClaimsExcludeSources):
    target_class = "decisions.api_decisions.PlainAnswerIn"
    other = "claims"


SubmissionIn = PolymorphicProxySerializer(
    component_name="DecisionSubmission",
    serializers=[DecisionIn, PlainAnswerIn],
    resource_type_field_name=None,
)


def _check_sizes(request: Request) -> None:
    length = int(request.META.get("CONTENT_LENGTH") or 0)
    if length > MAX_BODY_BYTES:
        raise _too_large(
            gettext("the body is %(length)s bytes; a decision may be at most %(max)s")
            % {"length": length, "max": MAX_BODY_BYTES}
        )
    data = request.data
    sources = data.get("sources") if isinstance(data, dict) else None
    if isinstance(sources, list) and len(sources) > MAX_SOURCES:
        raise _too_large(
            gettext("%(count)s sources; at most %(max)s")
            % {"count": len(sources), "max": MAX_SOURCES},
            "sources",
        )
    if isinstance(data, dict) and isinstance(data.get("claims"), list):
        claims = data["claims"]
        if len(claims) > MAX_CLAIMS:
            raise _too_large(
                gettext("%(count)s claims; at most %(max)s")
                % {"count": len(claims), "max": MAX_CLAIMS},
                "claims",
            )
        for index, claim in enumerate(claims):
            citations = claim.get("citations") if isinstance(claim, dict) else None
            if isinstance(citations, list) and len(citations) > MAX_CITATIONS:
                raise _too_large(
                    gettext("%(count)s citations; at most %(max)s per claim")
                    % {"count": len(citations), "max": MAX_CITATIONS},
                    f"claims.{index}.citations",
                )


def _incoming(data: Any) -> DecisionIn | PlainAnswerIn:
    """The shape the body is in: claims, or a plain answer with its sources; never both."""
    if isinstance(data, dict) and "sources" in data:
        if "claims" in data:
            raise ApplicationError(
                gettext(
                    "send claims (the answer split and cited) or sources (a plain answer "
                    "the engine splits and aligns), not both"
                ),
                field="sources",
            )
        return PlainAnswerIn(data=data)
    return DecisionIn(data=data)


def _clean_citation(citation: Mapping[str, Any]) -> dict[str, Any]:
    """A citation without its None fields, its retrieval time as the bundle stores it."""
    clean = {k: v for k, v in citation.items() if v is not None}
    if "retrieved_at" in clean:
        clean["retrieved_at"] = retrieval_stamp(clean["retrieved_at"])
    return clean


def _clean(payload: dict[str, Any]) -> dict[str, Any]:
    """The submitted body in a canonical form (None fields dropped) for hashing and storage."""
    if not payload.get("graph_evidence"):
        # no graph evidence hashes as a body without the field, as before it existed
        payload = {k: v for k, v in payload.items() if k != "graph_evidence"}
    if "sources" in payload:
        return {**payload, "sources": [_clean_citation(s) for s in payload["sources"]]}
    claims = [
        {
            "text": claim["text"],
            "citations": [_clean_citation(citation) for citation in claim["citations"]],
        }
        for claim in payload["claims"]
    ]
    return {**payload, "claims": claims}


def _user(request: Request) -> User:
    if not isinstance(request.user, User):
        raise NotAuthenticated(gettext("sign in first"))
    if agent_of(request.auth) is not None:
        raise Forbidden(gettext("agents cannot review decisions"))
    return request.user


def _still_proposed(decision_id: int) -> bool:
    """Not validated yet (with eager Celery, or a quick worker, it may be already)."""
    return Decision.objects.filter(pk=decision_id, state=State.PROPOSED).exists()


def _checked_idempotency_key(request: Request) -> str:
    key = request.headers.get("Idempotency-Key", "")
    if key and not IDEMPOTENCY_KEY.fullmatch(key):
        raise ApplicationError(
            gettext("Idempotency-Key must be 1 to 200 printable ASCII characters"),
            field="Idempotency-Key",
        )
    return key


def _idempotency_key() -> OpenApiParameter:
    return OpenApiParameter(
        "Idempotency-Key",
        # Empty is no key at all, as if the header were left out.
        {"type": "string", "pattern": f"^({IDEMPOTENCY_KEY.pattern})?$"},
        OpenApiParameter.HEADER,
        description="the same key and body again answer with the decision the first one made",
    )


def _replayed() -> OpenApiParameter:
    return OpenApiParameter(
        "Idempotent-Replayed",
        {"type": "string", "enum": ["true"]},
        OpenApiParameter.HEADER,
        description="set when the answer is the decision of an earlier request with the key",
        response=[200],
    )


class DecisionListView(APIView):
    @extend_schema(
        summary="Decisions you can see, newest first",
        operation_id="decisions_list",
        responses={200: DecisionPage, **error_responses(400)},
        parameters=[
            OpenApiParameter("state", or_empty(one_of(State.values))),
            OpenApiParameter("gate", or_empty(one_of(Gate.values))),
            coordinate_parameter("zone", longest=5, description="this coordinate and beneath"),
            OpenApiParameter(
                "since",
                or_empty({"type": "string", "format": "date-time"}),
                description="ISO 8601, with a time zone",
            ),
            OpenApiParameter(
                "offset",
                {"type": "integer", "maximum": DATABASE_INT_MAX},
                description=f"rows to skip, {PAGE_SIZE} a page (a negative offset counts as 0)",
            ),
        ],
    )
    def get(self, request: Request) -> Response:
        decisions = visible_decisions(request.user, request.auth)
        params = request.query_params
        if state := params.get("state"):
            if state not in State.values:
                raise ApplicationError(
                    gettext("unknown state %(state)s") % {"state": repr(state)}, field="state"
                )
            decisions = decisions.filter(state=state)
        if gate := params.get("gate"):
            if gate not in Gate.values:
                raise ApplicationError(
                    gettext("unknown gate %(gate)s") % {"gate": repr(gate)}, field="gate"
                )
            decisions = decisions.filter(gate=gate)
        if zone := params.get("zone"):
            prefix = str(coordinate_from(zone, field="zone"))
            decisions = decisions.filter(beneath(prefix))
        if since := params.get("since"):
            try:
                moment: datetime | None = parse_datetime(since)
            except ValueError:  # well formed but impossible, e.g. 2025-02-30: no 500
                moment = None
            if moment is None or moment.tzinfo is None:
                raise ApplicationError(
                    gettext("since must be an ISO 8601 date-time with a time zone"), field="since"
                )
            decisions = decisions.filter(created_at__gte=moment)
        try:
            offset = max(int(params.get("offset", 0)), 0)
        except ValueError:
            raise ApplicationError(
                gettext("offset must be a whole number"), field="offset"
            ) from None
        if offset > DATABASE_INT_MAX:
            raise ApplicationError(
                gettext("offset must be at most %(max)s") % {"max": DATABASE_INT_MAX},
                field="offset",
            )
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
        description=(
            "Two shapes: `claims` with their citations, or a plain answer with `sources` (the "
            "engine splits it into claims, honours `[n]` markers into `sources` and aligns "
            "unmarked claims; the bundle keeps each claim's offsets in the answer and, per "
            "citation, its `source`, `via` (marker or alignment) and `alignment` span)."
        ),
        request=SubmissionIn,
        parameters=[_idempotency_key(), _replayed()],
        responses={
            201: DecisionOut,
            200: OpenApiResponse(
                DecisionOut, description="the decision an earlier request with this key made"
            ),
            # 404: a `graph_evidence` key the zone's graph does not hold
            **error_responses(400, 403, 404, 409, 413, 422),
        },
    )
    def post(self, request: Request) -> Response:
        token = request.auth
        if not isinstance(token, ApiToken) or not token.is_agent:
            raise Forbidden(
                gettext("decisions are submitted with an agent token"),
            )
        key = _checked_idempotency_key(request)
        _check_sizes(request)
        incoming = _incoming(request.data)
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
        parameters=[path_id()],
        responses={200: DecisionOut, **error_responses(404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        decision = visible_decisions(request.user, request.auth).filter(pk=pk).first()
        if decision is None:
            raise NotFound(gettext("no decision %(id)s") % {"id": pk})
        return Response(decision_detail(decision))


class ClaimVerdictIn(serializers.Serializer):
    """A reviewer's verdict on one claim of the decision."""

    # Documentation only: the service reads the body as sent (services.claim_verdicts_read).

    index = serializers.IntegerField(
        min_value=0, max_value=MAX_CLAIMS - 1, help_text="the claim's place in the bundle, from 0"
    )
    supported = serializers.BooleanField(help_text="whether the cited evidence supports it")
    note = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,  # read as "" (services._verdict_read)
        max_length=services.REASON_LIMIT,
        help_text="what the reviewer saw, for the trail and the calibration (null: none)",
    )


class _ClaimVerdictClosed(OpenApiSerializerExtension):
    """The service refuses a field it does not know (a typo'd `notes` would lose the note):
    the schema says so."""

    target_class = "decisions.api_decisions.ClaimVerdictIn"

    def map_serializer(self, auto_schema: Any, direction: Any) -> Any:
        schema = auto_schema._map_basic_serializer(self.target, direction)
        schema["additionalProperties"] = False
        return schema


def _verdicts(*, required: bool, help_text: str) -> serializers.ListSerializer[Any]:
    # null reads as no verdicts (services.claim_verdicts_read), as leaving the field out does.
    return serializers.ListSerializer(
        child=ClaimVerdictIn(),
        required=required,
        allow_null=True,
        max_length=MAX_CLAIMS,
        help_text=f"{help_text} (null: none)",
    )


# What each action reads from the body: claim and release nothing, approve an optional
# reason, reject and override a reason that is more than blanks (services._require_reason);
# approve and reject the reviewer's verdicts per claim, each claim named at most once, and
# a reject at least one claim with supported false (when the decision has claims).
_REASON_REQUIRED = serializers.CharField(help_text="why, for the trail")
ACTION_BODIES: dict[str, Any] = {
    "claim": None,
    "release": None,
    "approve": inline_serializer(
        "Approve",
        {
            "reason": serializers.CharField(required=False, allow_blank=True),
            "claims": _verdicts(
                required=False,
                help_text="your verdict on the claims you name (only those are recorded)",
            ),
            "replacement": serializers.CharField(
                required=False,
                allow_null=True,
                allow_blank=True,
                max_length=services.MAX_REPLACEMENT,
                help_text="an answer you write to deliver in place of the agent's (on the "
                "trail as decision.answer_replaced); required to approve a refusal",
            ),
        },
    ),
    "reject": inline_serializer(
        "Reject",
        {
            "reason": _REASON_REQUIRED,
            "claims": _verdicts(
                required=True,
                help_text="your verdict per claim: at least one with supported false",
            ),
        },
    ),
    "override": inline_serializer("Override", {"reason": _REASON_REQUIRED}),
    "send-back": inline_serializer(
        "SendBack",
        {"reason": serializers.CharField(help_text="what evidence to bring, for the agent")},
    ),
}
ACTION_SUMMARIES = {
    "claim": "Claim a decision awaiting review (reviewers of its zone)",
    "release": "Give a claimed decision back to the queue",
    "approve": "Approve a decision awaiting review; enough approvals release the answer",
    "reject": "Reject a decision awaiting review, with a reason",
    "override": (
        "Ask to release a blocked answer anyway, or complete a colleague's request: two "
        "different zone admins with override_blocked, each with a reason"
    ),
    "send-back": (
        "Send an escalated decision back for more evidence (the authority it was escalated "
        "to): it fails as `more evidence needed`, the agent is told why"
    ),
}
DecisionOverrideRow = inline_serializer(
    "DecisionOverrideRow", {**_row_fields(), "override": OverrideProgress}
)


class DecisionActionSchema(AutoSchema):
    """One view serves the five actions (`DecisionActionView.action`): each documents its
    own body; all answer with the decision's row (decisions.representation.decision_row)."""

    def _action(self) -> str:
        return str(getattr(self.view, "action", ""))

    def get_summary(self) -> str | None:
        return ACTION_SUMMARIES.get(self._action())

    def get_request_serializer(self) -> Any:
        return ACTION_BODIES.get(self._action())

    def get_response_serializers(self) -> Any:
        row = DecisionOverrideRow if self._action() == "override" else DecisionRow
        return {200: row, **error_responses(400, 403, 404, 409)}

    def get_override_parameters(self) -> list[Any]:
        return [*super().get_override_parameters(), path_id()]


class DecisionActionView(APIView):
    action = ""
    schema = DecisionActionSchema()

    def post(self, request: Request, pk: int) -> Response:
        user = _user(request)
        body = request.data
        if not isinstance(body, dict):
            # A list or a number is not "no reason": it is not the body this action reads.
            raise ApplicationError(gettext("the body must be a JSON object"), field=None)
        reason = body.get("reason", "")
        if not isinstance(reason, str):
            raise ApplicationError(gettext("reason must be a string"), field="reason")
        if self.action == "claim":
            decision = services.decision_claim(decision_id=pk, user=user)
        elif self.action == "release":
            decision = services.decision_release(decision_id=pk, user=user)
        elif self.action == "approve":
            decision = services.decision_approve(
                decision_id=pk,
                user=user,
                reason=reason,
                claims=body.get("claims"),
                replacement=body.get("replacement"),
            )
        elif self.action == "reject":
            decision = services.decision_reject(
                decision_id=pk, user=user, reason=reason, claims=body.get("claims")
            )
        elif self.action == "send-back":
            decision = services.decision_send_back(decision_id=pk, user=user, reason=reason)
        else:
            decision = services.decision_override(decision_id=pk, user=user, reason=reason)
            stored = Decision.objects.get(pk=decision.pk)
            return Response({**decision_row(stored), "override": override_progress(stored)})
        return Response(decision_row(Decision.objects.get(pk=decision.pk)))


class AskIn(StrictSerializer):
    question = serializers.CharField(max_length=2000)
    zone = CoordinateField(shortest=4, longest=4, help_text="the agent's zone (G.U.P.Z)")


AskRefused = inline_serializer(
    "AskRefused",
    {
        "decision": serializers.JSONField(allow_null=True, help_text="null: nothing was decided"),
        "refusal": serializers.DictField(help_text="what was found, and why it is not enough"),
    },
)


class AskView(APIView):
    @extend_schema(
        summary="Answer from the zone's own documents, evidence first, or refuse with context",
        request=AskIn,
        parameters=[_idempotency_key()],
        responses={
            201: DecisionOut,
            200: OpenApiResponse(
                PolymorphicProxySerializer(
                    component_name="AskAnswer",
                    serializers=[DecisionOut, AskRefused],
                    resource_type_field_name=None,
                ),
                description="a refusal with context, or the decision of an earlier request "
                "with this Idempotency-Key",
            ),
            **error_responses(400, 403, 404, 409, 422),
        },
    )
    def post(self, request: Request) -> Response:
        token = request.auth
        if not isinstance(token, ApiToken) or not token.is_agent:
            raise Forbidden(
                gettext("ask with an agent token: the answer is submitted as that agent"),
            )
        key = _checked_idempotency_key(request)
        incoming = AskIn(data=request.data)
        incoming.is_valid(raise_exception=True)
        zone = coordinate_from(incoming.validated_data["zone"], field="zone", level=Level.ZONE)
        agent = token.agent_coordinate
        if agent is None or agent.zone() != zone:
            raise Forbidden(
                gettext("agent %(agent)s may ask only in its zone") % {"agent": agent},
            )
        result = ask(
            token=token,
            question=incoming.validated_data["question"],
            zone=zone,
            idempotency_key=key,
        )
        if isinstance(result, Refusal):
            return Response({"decision": None, "refusal": result.context}, status=200)
        decision = Decision.objects.get(pk=result.decision.pk)
        return Response(
            decision_detail(decision), status=200 if result.replayed else status.HTTP_201_CREATED
        )
