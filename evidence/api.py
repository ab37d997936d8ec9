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

from coordinates.coordinate import Level
from coordinates.fields import CoordinateField, coordinate_parameter
from coordinates.models import Role
from coordinates.selectors import agent_of, coordinate_from, has_role, in_scopes, zone_get
from evidence.models import Document, DocumentKind, DocumentStatus, DocumentVersion
from evidence.selectors import documents_visible, reader_scopes
from evidence.services import document_ingest
from maria.errors import ApplicationError, Forbidden, NotFound
from maria.openapi import DATABASE_INT_MAX, error_responses, id_schema, path_id
from maria.strict import StrictSerializer


class DocumentIn(StrictSerializer):
    title = serializers.CharField(max_length=300, required=False, allow_blank=True)
    key = serializers.CharField(max_length=200, required=False, allow_blank=True)
    kind = serializers.ChoiceField(choices=DocumentKind.choices)
    status = serializers.ChoiceField(choices=DocumentStatus.choices)
    zone = CoordinateField(shortest=4, longest=4, help_text="the zone (G.U.P.Z)")
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
    return Forbidden(message)


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
        summary="Ingest a document version (agents into their zone, zone admins into theirs)",
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
        if coordinate.level != Level.ZONE:
            raise ApplicationError(
                f"documents belong to a zone (G.U.P.Z), not a {coordinate.level}", field="zone"
            )
        zone = zone_get(coordinate, field="zone")
        agent = agent_of(request.auth)
        if agent is not None:
            if agent.zone() != coordinate:
                raise _forbidden(f"agent {agent} may add documents only to {agent.zone()}")
        elif not has_role(request.user, [Role.ZONE_ADMIN], coordinate):
            raise _forbidden(f"only agents of {coordinate} and its zone admins may add documents")
        supersedes = None
        if data.get("supersedes"):
            supersedes = Document.objects.filter(pk=data["supersedes"]).first()
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
        if document is None or not in_scopes(document.zone.coordinate, scopes):
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
