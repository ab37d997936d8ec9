"""REST views of the document store (thin: services and selectors do the work)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from coordinates.coordinate import Coordinate, Level
from coordinates.fields import CoordinateField, coordinate_parameter
from coordinates.models import Role
from coordinates.selectors import (
    agent_of,
    can_see,
    coordinate_from,
    has_role,
    unknown_zone,
    zone_get,
)
from evidence.models import Document, DocumentKind, DocumentStatus, DocumentVersion
from evidence.passages import passages_search
from evidence.retrieval import DEFAULT_K
from evidence.selectors import document_readable, documents_visible, reader_scopes
from evidence.services import document_ingest
from maria.errors import ApplicationError, Forbidden, NotFound
from maria.openapi import (
    DATABASE_INT_MAX,
    NOT_BLANK,
    error_responses,
    id_schema,
    one_of,
    or_empty,
    path_id,
)
from maria.strict import StrictSerializer


class DocumentIn(StrictSerializer):
    title = serializers.CharField(
        max_length=300,
        required=False,
        allow_blank=True,
        help_text=(
            "left out or blank: the text's first heading, else its opening words (at most 80 "
            "characters)"
        ),
    )
    key = serializers.CharField(max_length=200, required=False, allow_blank=True)
    kind = serializers.ChoiceField(choices=DocumentKind.choices)
    status = serializers.ChoiceField(choices=DocumentStatus.choices)
    zone = CoordinateField(
        shortest=1,
        longest=4,
        help_text=(
            "the level the document belongs to: a galaxy, universe, planet or zone (G to "
            "G.U.P.Z); every zone beneath it reads and cites it"
        ),
    )
    effective_date = serializers.DateField(required=False, allow_null=True)
    supersedes = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=DATABASE_INT_MAX
    )
    format = serializers.ChoiceField(
        choices=["text", "markdown", "html"], required=False, allow_null=True
    )
    # Blank is let through to the parser, whose 400 says what a document lacks; the schema
    # says what it must have. The body limit (413) bounds its length.
    text = serializers.CharField(trim_whitespace=False, allow_blank=True, min_length=1)


DocumentOut = inline_serializer(
    "DocumentIngested",
    {
        "id": serializers.IntegerField(),
        "key": serializers.CharField(),
        "version": serializers.IntegerField(),
        "paragraphs": serializers.IntegerField(),
        "content_hash": serializers.CharField(),
        "created": serializers.BooleanField(),
    },
)


def _forbidden(message: str) -> ApplicationError:
    return Forbidden(message, field="zone")


def version_summary(version: DocumentVersion) -> dict[str, Any]:
    return {
        "version": version.version,
        "title": version.title,
        "kind": version.kind,
        "status": version.status,
        "effective_date": version.effective_date.isoformat() if version.effective_date else None,
        "content_hash": version.content_hash,
        "superseded": version.is_superseded,
        "created_at": version.created_at.isoformat(),
    }


class DocumentListView(APIView):
    @extend_schema(
        summary="Documents you can read",
        operation_id="documents_list",
        parameters=[coordinate_parameter("zone", longest=5, description="this coordinate only")],
        responses={
            200: inline_serializer(
                "DocumentList",
                {
                    "documents": inline_serializer(
                        "DocumentRow",
                        {
                            "id": serializers.IntegerField(),
                            "key": serializers.CharField(),
                            "title": serializers.CharField(),
                            "zone": serializers.CharField(),
                        },
                        many=True,
                    )
                },
            ),
            **error_responses(400),
        },
    )
    def get(self, request: Request) -> Response:
        documents = documents_visible(request.user, request.auth)
        zone = request.query_params.get("zone")
        if zone:
            documents = documents.filter(zone__coordinate=str(coordinate_from(zone, field="zone")))
        return Response(
            {
                "documents": [
                    {"id": d.pk, "key": d.key, "title": d.title, "zone": d.zone.coordinate}
                    for d in documents[:500]
                ]
            }
        )

    @extend_schema(
        summary=(
            "Ingest a document version at any level (agents into their zone, zone admins "
            "into the levels they administer)"
        ),
        request=DocumentIn,
        responses={
            201: DocumentOut,
            200: OpenApiResponse(DocumentOut, description="the same content was there already"),
            **error_responses(400, 403, 404, 413),
        },
    )
    def post(self, request: Request) -> Response:
        incoming = DocumentIn(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        coordinate = coordinate_from(data["zone"], field="zone")
        if coordinate.level == Level.AGENT:
            raise ApplicationError(
                "documents belong to a level of the tree (G to G.U.P.Z), not an agent",
                field="zone",
            )
        if not can_see(request.user, coordinate, token=request.auth):
            # Answered as a zone that does not exist: a refusal would say that it does.
            raise unknown_zone(coordinate, field="zone")
        zone = zone_get(coordinate, field="zone")
        agent = agent_of(request.auth)
        if agent is not None:
            # An agent writes into its own zone only: never above it, where every zone
            # beneath would read what it wrote. A level above a zone is no place an agent
            # token writes at all (400); another zone is not this agent's (403).
            if coordinate.level != Level.ZONE:
                raise ApplicationError(
                    f"an agent adds documents to its zone ({agent.zone()}), not to a "
                    f"{coordinate.level}; a zone admin of {coordinate} may",
                    field="zone",
                )
            if agent.zone() != coordinate:
                raise _forbidden(f"agent {agent} may add documents only to its zone {agent.zone()}")
        elif not has_role(request.user, [Role.ZONE_ADMIN], coordinate):
            raise _forbidden(
                f"only zone admins of the {coordinate.level} {coordinate} (a role on it or "
                "above it) and, for a zone, its agents may add documents there"
            )
        supersedes = None
        if data.get("supersedes"):
            # Another zone's document is answered as one that does not exist: the caller's
            # own may still be refused for leaving its zone (document_ingest).
            readable = documents_visible(request.user, request.auth)
            supersedes = readable.filter(pk=data["supersedes"]).first()
            if supersedes is None:
                raise NotFound(
                    f"no document {data['supersedes']}",
                    field="supersedes",
                )
        ingested = document_ingest(
            zone=zone,
            raw=data["text"],
            kind=data["kind"],
            status=data["status"],
            title=data.get("title") or None,
            key=data.get("key") or None,
            effective_date=data.get("effective_date"),
            format=data.get("format"),
            supersedes=supersedes,
            actor=request.user if isinstance(request.user, User) else None,
        )
        body = {
            "id": ingested.document.pk,
            "key": ingested.document.key,
            "version": ingested.version.version,
            "paragraphs": ingested.version.paragraphs.count(),
            "content_hash": ingested.version.content_hash,
            "created": ingested.created,
        }
        return Response(body, status=status.HTTP_201_CREATED if ingested.created else 200)


class DocumentDetailView(APIView):
    @extend_schema(
        summary="A document, its versions and the paragraphs of one version",
        operation_id="documents_retrieve",
        parameters=[
            path_id(),
            OpenApiParameter(
                "version", id_schema(), description="the version to show (default: the latest)"
            ),
        ],
        responses={
            200: inline_serializer(
                "DocumentDetail",
                {
                    "id": serializers.IntegerField(),
                    "key": serializers.CharField(),
                    "title": serializers.CharField(),
                    "zone": serializers.CharField(),
                    "versions": inline_serializer(
                        "DocumentVersionSummary",
                        {
                            "version": serializers.IntegerField(),
                            "title": serializers.CharField(),
                            "kind": serializers.CharField(),
                            "status": serializers.CharField(),
                            "effective_date": serializers.DateField(allow_null=True),
                            "content_hash": serializers.CharField(),
                            "superseded": serializers.BooleanField(),
                            "created_at": serializers.DateTimeField(),
                        },
                        many=True,
                    ),
                    "shown_version": serializers.IntegerField(),
                    "paragraphs": inline_serializer(
                        "DocumentParagraph",
                        {
                            "number": serializers.IntegerField(),
                            "section": serializers.CharField(allow_blank=True),
                            "start": serializers.IntegerField(),
                            "end": serializers.IntegerField(),
                            "text": serializers.CharField(),
                        },
                        many=True,
                    ),
                },
            ),
            **error_responses(404),
        },
    )
    def get(self, request: Request, pk: int) -> Response:
        document = Document.objects.select_related("zone").filter(pk=pk).first()
        scopes = reader_scopes(request.user, request.auth)
        if document is None or not document_readable(document.zone.coordinate, scopes):
            # The same answer for "missing" and "not yours": ids of other zones stay private.
            raise NotFound(f"no document {pk}")
        versions = list(document.versions.order_by("-version"))
        wanted = request.query_params.get("version")
        shown = versions[0]
        if wanted is not None:
            shown = next((v for v in versions if str(v.version) == wanted), None)  # type: ignore[assignment]
            if shown is None:
                raise NotFound(
                    f"document {pk} has no version {wanted!r}",
                    field="version",
                )
        return Response(
            {
                "id": document.pk,
                "key": document.key,
                "title": document.title,
                "zone": document.zone.coordinate,
                "versions": [version_summary(v) for v in versions],
                "shown_version": shown.version,
                "paragraphs": [
                    {
                        "number": p.number,
                        "section": p.section,
                        "start": p.start,
                        "end": p.end,
                        "text": p.text,
                    }
                    for p in shown.paragraphs.order_by("number")
                ],
            }
        )


# --- retrieval for agents -------------------------------------------------------------------

MAX_QUERY = 2000  # characters of `q`, as `ask` takes a question
MAX_K = 50
YES, NO = ("1", "true"), ("0", "false")


class PassageSerializer(serializers.Serializer):
    """evidence.passages.Passage, field by field."""

    document = serializers.IntegerField()
    version = serializers.IntegerField()
    paragraph = serializers.IntegerField()
    start = serializers.IntegerField(help_text="0: a citation of the whole paragraph")
    end = serializers.IntegerField(help_text="the paragraph's length")
    text = serializers.CharField()
    section = serializers.CharField(allow_blank=True)
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=DocumentKind.choices)
    status = serializers.ChoiceField(choices=DocumentStatus.choices)
    effective_date = serializers.DateField(allow_null=True)
    zone = serializers.CharField()
    superseded = serializers.BooleanField(help_text="a newer version replaced this one")
    score = serializers.FloatField(help_text="the hybrid score, dense 0.7 + BM25 0.3")
    retrieved_at = serializers.DateTimeField(
        help_text="when the engine retrieved it; a citation passes it on as its retrieved_at"
    )


def _search_scopes(request: Request, zone_text: str) -> list[Coordinate] | None:
    """The caller's reading scopes (an agent: its zone; a person: their roles' scopes),
    narrowed to `zone` when one is asked for. A zone outside them is refused exactly as
    one that does not exist, so nobody learns which zones exist elsewhere."""
    scopes = reader_scopes(request.user, request.auth)
    if not zone_text:
        return scopes
    coordinate = coordinate_from(zone_text, field="zone")
    if coordinate.depth > 4:
        raise ApplicationError("a zone is G.U.P.Z at most, not an agent", field="zone")
    if scopes is not None:
        # Beneath a scope: that zone; above scopes: the scopes it holds.
        scopes = [
            coordinate if s.covers(coordinate) else s for s in scopes if s.related(coordinate)
        ]
        if not scopes:
            raise NotFound(f"unknown zone {coordinate}", code="unknown_zone", field="zone")
    zone_get(coordinate, field="zone")
    return [coordinate] if scopes is None else scopes


def _k(raw: str | None) -> int:
    if not raw:
        return DEFAULT_K
    # Digits only: int() would also take " 5", "+5" and "1_0", which the schema does not.
    if not raw.isascii() or not raw.isdigit():
        raise ApplicationError("k must be a whole number", field="k")
    k = int(raw) if len(raw) <= 6 else MAX_K + 1  # (int() refuses 4,300 digits and more)
    if not 1 <= k <= MAX_K:
        raise ApplicationError(f"k must be 1 to {MAX_K}", field="k")
    return k


def _flag(raw: str | None, name: str) -> bool:
    if not raw:
        return False
    if raw not in (*YES, *NO):
        raise ApplicationError(f"{name} must be 1, 0, true or false", field=name)
    return raw in YES


class SearchView(APIView):
    @extend_schema(
        summary="Passages for a question, ready to cite (hybrid retrieval, as ask uses it)",
        description=(
            "Agents search their zone, people the zones their roles cover; each scope also "
            "reads the documents of the levels above it, where a nearer level's document of "
            "the same title overrides an ancestor's. A passage's "
            "`document`, `version`, `paragraph`, `start` and `end` are a citation of exactly "
            "its `text`: send it as it came in `claims[].citations` or in `sources` of "
            "`POST /api/v1/decisions/`. Superseded versions only with `include_superseded=1`, "
            "marked `superseded`."
        ),
        operation_id="search_retrieve",
        parameters=[
            OpenApiParameter(
                "q",
                {"type": "string", "minLength": 1, "maxLength": MAX_QUERY, "pattern": NOT_BLANK},
                required=True,
                description="the question",
            ),
            coordinate_parameter(
                "zone",
                description=(
                    "this zone-tree node: the documents beneath it and those it inherits from "
                    "the levels above (less those a nearer level's same-title document "
                    "overrides)"
                ),
            ),
            OpenApiParameter(
                "k",
                or_empty({"type": "integer", "minimum": 1, "maximum": MAX_K}),
                description=f"how many passages (default {DEFAULT_K})",
            ),
            OpenApiParameter(
                "include_superseded",
                or_empty(one_of([*YES, *NO])),
                description="1: superseded versions too, marked (default 0)",
            ),
        ],
        responses={
            200: inline_serializer(
                "SearchResult",
                {
                    "query": serializers.CharField(),
                    "zone": serializers.CharField(allow_null=True),
                    "k": serializers.IntegerField(),
                    "passages": PassageSerializer(many=True),
                },
            ),
            **error_responses(400, 404),
        },
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        query = params.get("q", "")
        if "\x00" in query:
            raise ApplicationError("q contains a NUL character", field="q")
        if not query.strip():
            raise ApplicationError("q (the question) is required", field="q")
        if len(query) > MAX_QUERY:
            raise ApplicationError(f"q is longer than {MAX_QUERY} characters", field="q")
        k = _k(params.get("k"))
        include_superseded = _flag(params.get("include_superseded"), "include_superseded")
        zone = params.get("zone", "")
        scopes = _search_scopes(request, zone)
        passages = passages_search(
            query.strip(), scopes=scopes, k=k, include_superseded=include_superseded
        )
        return Response({"query": query, "zone": zone or None, "k": k, "passages": passages})
