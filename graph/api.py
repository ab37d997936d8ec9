"""REST views of the knowledge graph (thin: graph_query and graph_store do the work)."""

from __future__ import annotations

import csv
import hashlib
import io
from types import SimpleNamespace
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q
from django.utils.translation import gettext
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser
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
    in_scopes,
    unknown_zone,
    within,
    zone_get,
)
from decisions.models import Decision
from evidence.selectors import reader_scopes
from graph import queries, services, store
from graph.core.types import EdgeType, NodeType
from graph.models import GraphEdge, GraphNode, GraphRiskFlag, RiskFlagStatus
from maria.errors import ApplicationError, Forbidden, NotFound, TooLarge
from maria.openapi import NOT_BLANK, error_responses, one_of, or_empty, path_id
from maria.parsers import (
    StrictJSONParser,
    SyntaxRefused,
    check_text,
    read_body,
    strict_loads,
)
from maria.strict import StrictSerializer

MAX_IMPORT_ROWS = 200_000
GraphOut = inline_serializer("GraphResult", {"zone": serializers.CharField(required=False)})


class GraphNodeSerializer(serializers.Serializer):
    """A node as node_json writes it."""

    id = serializers.IntegerField()
    key = serializers.CharField()
    type = serializers.CharField(help_text="a node type (as NodeIn.type)")
    label = serializers.CharField()  # type: ignore[assignment]
    zone = serializers.CharField(allow_null=True, help_text="null: shared by every zone")
    attributes = serializers.DictField()


class GraphEdgeSerializer(serializers.Serializer):
    """An edge as edge_json writes it."""

    id = serializers.IntegerField()
    source = serializers.CharField(help_text="the key of the source node")  # type: ignore[assignment]
    target = serializers.CharField(help_text="the key of the target node")
    type = serializers.CharField(help_text="an edge type (as EdgeIn.type)")
    weight = serializers.FloatField()
    confidence = serializers.FloatField()
    occurred_at = serializers.DateTimeField()
    stale = serializers.BooleanField()
    zone = serializers.CharField()
    origin = serializers.CharField()


class GraphNodeDetailSerializer(GraphNodeSerializer):
    edges = GraphEdgeSerializer(many=True, help_text="its edges in the zones you read")


class GraphRiskFlagSerializer(serializers.Serializer):
    """A risk flag as flag_json writes it."""

    id = serializers.IntegerField()
    zone = serializers.CharField()
    node = serializers.CharField(help_text="the key of the flagged node")
    node_zone = serializers.CharField(
        allow_null=True, help_text="the flagged node's own zone; null: shared by every zone"
    )
    node_id = serializers.IntegerField(allow_null=True)
    type = serializers.CharField(allow_null=True)
    label = serializers.CharField(allow_null=True)  # type: ignore[assignment]
    share = serializers.FloatField()
    threshold = serializers.FloatField()
    review_by = serializers.CharField()
    flagged_at = serializers.DateTimeField()
    flag_event = serializers.CharField()
    above_threshold = serializers.BooleanField()
    ended_at = serializers.DateTimeField(allow_null=True)
    status = serializers.CharField(help_text="open, acknowledged or dismissed")
    resolved_by = serializers.CharField(allow_null=True)
    resolved_at = serializers.DateTimeField(allow_null=True)
    note = serializers.CharField(allow_blank=True)
    resolution_event = serializers.CharField(allow_null=True)
    may_resolve = serializers.BooleanField()


# `zone` in a query string: a zone-tree node (G to G.U.P.Z) that exists.
_ZONE = coordinate_parameter("zone", required=True)
_NONEMPTY = {"type": "string", "minLength": 1}


def _forbidden(message: str) -> ApplicationError:
    return Forbidden(message)


def _not_found(message: str) -> ApplicationError:
    return NotFound(message)


def _zone(text: Any) -> Coordinate:
    if not text:
        raise ApplicationError(gettext("zone is required"), field="zone")
    coordinate = coordinate_from(text, field="zone")
    if coordinate.depth > 4:
        raise ApplicationError(gettext("a zone is G.U.P.Z at most, not an agent"), field="zone")
    zone_get(coordinate, field="zone")
    return coordinate


def _readable_zone(request: Request, text: Any) -> Coordinate:
    """`_zone`, when the caller reads on, above or beneath it; otherwise the 404 of a zone
    that does not exist, so that another zone's coordinate says nothing about it."""
    zone = _zone(text)
    scopes = reader_scopes(request.user, request.auth)
    if not in_scopes(str(zone), scopes) and not (scopes and any(zone.covers(s) for s in scopes)):
        raise unknown_zone(zone, field="zone")
    return zone


def _text(request: Request, name: str) -> str:
    """A text query parameter, "" when left out. A NUL in it is a 400: PostgreSQL holds no
    NUL in text, and these reach it (a label filter, a question on the trail, a reason)."""
    value = request.query_params.get(name, "")
    if "\x00" in value:
        raise ApplicationError(
            gettext("%(name)s contains a NUL character") % {"name": name}, field=name
        )
    return value


def _int(request: Request, name: str, low: int, high: int) -> int | None:
    raw = request.query_params.get(name)
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ApplicationError(
            gettext("%(name)s must be a whole number") % {"name": name}, field=name
        ) from None
    if not low <= value <= high:
        raise ApplicationError(
            gettext("%(name)s must be %(low)s to %(high)s")
            % {"name": name, "low": low, "high": high},
            field=name,
        )
    return value


def _may_write(request: Request, zone: Coordinate) -> None:
    if not can_see(request.user, zone, token=request.auth):
        raise unknown_zone(zone, field="zone")  # as for a zone that does not exist
    if not has_role(request.user, [Role.ZONE_ADMIN], zone):
        raise _forbidden(
            gettext("only zone admins of %(zone)s may change its graph") % {"zone": zone}
        )


def _user(request: Request) -> User:
    if not isinstance(request.user, User):
        raise _forbidden(gettext("only people may change the graph"))
    return request.user


def _actor(request: Request) -> Any:
    return request.user if request.user.is_authenticated else None


def node_json(node: GraphNode) -> dict[str, Any]:
    return {
        "id": node.pk,
        "key": node.key,
        "type": node.node_type,
        "label": node.label,
        "zone": node.zone or None,
        "attributes": node.attributes,
    }


def edge_json(edge: GraphEdge) -> dict[str, Any]:
    return {
        "id": edge.pk,
        "source": edge.source.key,
        "target": edge.target.key,
        "type": edge.edge_type,
        "weight": edge.weight,
        "confidence": edge.confidence,
        "occurred_at": edge.occurred_at.isoformat(),
        "stale": edge.stale,
        "zone": edge.zone,
        "origin": edge.origin,
    }


class GraphQueryView(APIView):
    @extend_schema(
        summary="Answer a question from the graph, gated by the cohesion of its evidence",
        parameters=[
            OpenApiParameter(
                "q", {"type": "string", "maxLength": 2000, "pattern": NOT_BLANK}, required=True
            ),
            _ZONE,
            OpenApiParameter(
                "method",
                or_empty(one_of(["hop", "ppr", "auto"])),
                description="default hop; auto: by query type (cohesion of the h-hop evidence)",
            ),
            OpenApiParameter(
                "h",
                or_empty({"type": "integer", "minimum": 0, "maximum": 10}),
                description="hops (default: h* from the spectral gap)",
            ),
            OpenApiParameter(
                "k",
                or_empty({"type": "integer", "minimum": 1, "maximum": 50}),
                description=f"evidence nodes (default {queries.DEFAULT_K})",
            ),
        ],
        responses={200: GraphOut, **error_responses(400, 403, 404)},
    )
    def get(self, request: Request) -> Response:
        question = _text(request, "q").strip()
        if not question:
            raise ApplicationError(gettext("q (the question) is required"), field="q")
        if len(question) > 2000:
            raise ApplicationError(gettext("q is longer than 2000 characters"), field="q")
        zone = _zone(request.query_params.get("zone"))
        method = request.query_params.get("method") or "hop"
        if method not in ("hop", "ppr", "auto"):
            raise ApplicationError(gettext("method must be hop, ppr or auto"), field="method")
        body = queries.graph_answer(
            question=question,
            zone=zone,
            scopes=reader_scopes(request.user, request.auth),
            method=method,  # type: ignore[arg-type]
            hops=_int(request, "h", 0, 10),
            k=_int(request, "k", 1, 50) or queries.DEFAULT_K,
            actor=_actor(request),
            agent=agent_of(request.auth),
        )
        return Response(body)


class GraphPathsView(APIView):
    @extend_schema(
        summary="The strongest path between two nodes under an edge-type pattern",
        parameters=[
            OpenApiParameter("source", _NONEMPTY, required=True, description="node key or id"),
            OpenApiParameter("target", _NONEMPTY, required=True, description="node key or id"),
            OpenApiParameter(
                "pattern",
                str,
                description=(
                    "edge types in sequence, with * + ? after one, | between branches, ( ) "
                    "around a group and . for any type, e.g. 'caused_by* approved_by'"
                ),
            ),
            OpenApiParameter(
                "max_length", or_empty({"type": "integer", "minimum": 1, "maximum": 50})
            ),
            OpenApiParameter(
                "time_order",
                or_empty(one_of(["any", "non_decreasing", "non_increasing"])),
                description="default any",
            ),
        ],
        responses={200: GraphOut, **error_responses(400, 403, 404)},
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        source, target = params.get("source"), params.get("target")
        if not source:
            raise ApplicationError(gettext("source is required"), field="source")
        if not target:
            raise ApplicationError(gettext("target is required"), field="target")
        order = params.get("time_order") or "any"
        if order not in ("any", "non_decreasing", "non_increasing"):
            raise ApplicationError(
                gettext("time_order must be any, non_decreasing or non_increasing"),
                field="time_order",
            )
        return Response(
            queries.best_path(
                source=source,
                target=target,
                scopes=reader_scopes(request.user, request.auth),
                pattern=params.get("pattern") or None,
                max_length=_int(request, "max_length", 1, 50),
                time_order=order,  # type: ignore[arg-type]
            )
        )


class GraphRiskView(APIView):
    @extend_schema(
        summary="Risk concentration: the share of causal paths through each node of a zone",
        description=(
            "Hotspots (share >= the zone's risk_threshold) are flagged for review by the "
            "parent level's authority; a reader who sees the whole zone raises the flags of "
            "new crossings, and each hotspot names its flag."
        ),
        parameters=[_ZONE],
        responses={200: GraphOut, **error_responses(400, 403, 404)},
    )
    def get(self, request: Request) -> Response:
        zone = _zone(request.query_params.get("zone"))
        reading, scan = services.graph_risk_scan(
            zone=zone, scopes=reader_scopes(request.user, request.auth), actor=_actor(request)
        )
        body = dict(reading.body)
        if scan is not None:
            body["hotspots"] = [
                {**spot, "flag": _flag_ref(scan.live.get(services.node_name(spot)))}
                for spot in reading.hotspots
            ]
        return Response(body)


def _flag_ref(flag: GraphRiskFlag | None) -> dict[str, Any] | None:
    return None if flag is None else {"id": flag.pk, "status": flag.status}


def flag_json(
    flag: GraphRiskFlag, nodes: dict[int, tuple[int, str, str]], may_resolve: bool
) -> dict[str, Any]:
    node = nodes.get(flag.pk)
    return {
        "id": flag.pk,
        "zone": flag.zone,
        "node": flag.key,
        "node_zone": flag.node_zone or None,
        "node_id": node[0] if node else None,  # None once the node was deleted
        "type": node[1] if node else None,
        "label": node[2] if node else None,
        "share": flag.share,
        "threshold": flag.threshold,
        "review_by": flag.review_by,
        "flagged_at": flag.created_at.isoformat(),
        "flag_event": flag.event,
        "above_threshold": flag.ended_at is None,
        "ended_at": flag.ended_at.isoformat() if flag.ended_at else None,
        "status": flag.status,
        "resolved_by": flag.resolved_by.get_username() if flag.resolved_by else None,
        "resolved_at": flag.resolved_at.isoformat() if flag.resolved_at else None,
        "note": flag.note,
        "resolution_event": flag.resolution_event or None,
        "may_resolve": may_resolve,
    }


class GraphRiskFlagsView(APIView):
    @extend_schema(
        summary="Risk flags awaiting or past review, in the zones you read",
        parameters=[
            coordinate_parameter("zone", description="this zone and beneath"),
            OpenApiParameter("status", or_empty(one_of(RiskFlagStatus.values))),
        ],
        responses={
            200: inline_serializer(
                "GraphRiskFlagList", {"flags": GraphRiskFlagSerializer(many=True)}
            ),
            **error_responses(400, 403, 404),
        },
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        wanted = params.get("status") or None
        if wanted is not None and wanted not in RiskFlagStatus.values:
            raise ApplicationError(
                gettext("status must be one of %(statuses)s")
                % {"statuses": ", ".join(RiskFlagStatus.values)},
                field="status",
            )
        zone = _zone(params.get("zone")) if params.get("zone") else None
        flags = queries.risk_flags(
            scopes=reader_scopes(request.user, request.auth), zone=zone, status=wanted
        )
        nodes = queries.node_labels(flags)
        return Response(
            {"flags": [flag_json(f, nodes, services.may_resolve(request.user, f)) for f in flags]}
        )


class RiskResolveIn(StrictSerializer):
    action = serializers.CharField(max_length=16)
    note = serializers.CharField(required=False, allow_blank=True, max_length=4000, default="")


class GraphRiskFlagResolveView(APIView):
    @extend_schema(
        summary="Acknowledge or dismiss a risk flag, with a note (the parent level's authority)",
        parameters=[path_id()],
        request=inline_serializer(
            "RiskResolve",
            {
                "action": serializers.ChoiceField(choices=list(services.RESOLVE_ACTIONS)),
                "note": serializers.CharField(max_length=services.NOTE_LIMIT),
            },
        ),
        responses={200: GraphRiskFlagSerializer, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request: Request, pk: int) -> Response:
        incoming = RiskResolveIn(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        flag = services.graph_risk_resolve(
            flag_id=pk, user=_user(request), action=data["action"], note=data["note"]
        )
        nodes = queries.node_labels([flag])
        return Response(flag_json(flag, nodes, may_resolve=False))


class ResponsibilityView(APIView):
    @extend_schema(
        summary="The responsibility chain of a decision as a drawable subgraph",
        parameters=[path_id()],
        responses={200: GraphOut, **error_responses(404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        zone = Decision.objects.filter(pk=pk).values_list("zone", flat=True).first()
        scopes = reader_scopes(request.user, request.auth)
        if zone is None or not in_scopes(zone, scopes):
            raise _not_found(gettext("no decision %(id)s") % {"id": pk})
        return Response(queries.responsibility(key=f"decision:{pk}", zone=zone, scopes=scopes))


# --- nodes and edges -------------------------------------------------------------------------


class NodeIn(StrictSerializer):
    key = serializers.CharField(max_length=200)
    type = serializers.ChoiceField(choices=[str(t) for t in NodeType])
    label = serializers.CharField(max_length=300, required=False, allow_blank=True)  # type: ignore[assignment]
    zone = CoordinateField(longest=4, help_text="a zone-tree node, G to G.U.P.Z")
    attributes = serializers.DictField(required=False)


class NodeRef(StrictSerializer):
    key = serializers.CharField(max_length=200)
    type = serializers.ChoiceField(choices=[str(t) for t in NodeType], required=False)
    label = serializers.CharField(max_length=300, required=False, allow_blank=True)  # type: ignore[assignment]


_NODE_KEY = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": NOT_BLANK}


@extend_schema_field(
    {
        "oneOf": [
            {**_NODE_KEY, "description": "the key of an existing node"},
            {
                "type": "object",
                "properties": {
                    "key": _NODE_KEY,
                    "type": {"type": "string", "enum": [str(t) for t in NodeType]},
                    "label": {"type": "string", "maxLength": 300},
                },
                "required": ["key"],
            },
        ]
    }
)
class NodeRefField(serializers.Field):
    """A node named by its key, or an object {key, type, label} that may create it."""

    def to_internal_value(self, data: Any) -> store.NodeSpec:
        if isinstance(data, str):
            return store.NodeSpec(key=data)
        ref = NodeRef(data=data)
        ref.is_valid(raise_exception=True)
        value = ref.validated_data
        return store.NodeSpec(
            key=value["key"], node_type=value.get("type"), label=value.get("label", "")
        )

    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field(
    {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1, "default": 1.0}
)
class WeightField(serializers.FloatField):
    """An edge's weight: (0, 1], as graph.store.edge_upsert checks it."""


class EdgeIn(StrictSerializer):
    source = NodeRefField()  # type: ignore[assignment]
    target = NodeRefField()
    type = serializers.ChoiceField(choices=[str(t) for t in EdgeType])
    zone = CoordinateField(longest=4, help_text="a zone-tree node, G to G.U.P.Z")
    weight = WeightField(required=False, default=1.0)
    # [0, 1], as graph.store.edge_upsert checks it
    confidence = serializers.FloatField(required=False, default=1.0, min_value=0, max_value=1)
    occurred_at = serializers.DateTimeField(required=False, allow_null=True)


def _visible_nodes(request: Request) -> Any:
    scopes = reader_scopes(request.user, request.auth)
    nodes = GraphNode.objects.all()
    if scopes is not None:
        visible = [z for z in nodes.values_list("zone", flat=True).distinct() if z]
        allowed = [z for z in visible if in_scopes(z, scopes)]
        # Shared people only where they act (store.shared_seen).
        nodes = nodes.filter(Q(zone__in=allowed) | store.shared_seen(scopes))
    return nodes


class NodeListView(APIView):
    @extend_schema(
        summary="Graph nodes you can read",
        operation_id="graph_nodes_list",
        parameters=[
            coordinate_parameter("zone", description="this zone and beneath"),
            OpenApiParameter("type", str, description="only nodes of this type"),
            OpenApiParameter("q", str, description="in the label, any case"),
        ],
        responses={
            200: inline_serializer("GraphNodeList", {"nodes": GraphNodeSerializer(many=True)}),
            **error_responses(400, 404),
        },
    )
    def get(self, request: Request) -> Response:
        nodes = _visible_nodes(request)
        params = request.query_params
        if params.get("zone"):
            zone = _readable_zone(request, params.get("zone"))
            nodes = nodes.filter(zone__startswith=str(zone))
        if node_type := _text(request, "type"):
            nodes = nodes.filter(node_type=node_type)
        if text := _text(request, "q"):
            nodes = nodes.filter(label__icontains=text)
        return Response({"nodes": [node_json(n) for n in nodes.order_by("pk")[:500]]})

    @extend_schema(
        summary="Add or update a node (zone admins)",
        request=NodeIn,
        # No 409: keys are unique per zone (graph/0003), so another zone's key is a free one.
        responses={201: GraphNodeSerializer, **error_responses(400, 403, 404)},
    )
    def post(self, request: Request) -> Response:
        incoming = NodeIn(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        zone = _zone(data["zone"])
        _may_write(request, zone)
        node = store.node_write(
            key=data["key"],
            node_type=data["type"],
            label=data.get("label", ""),
            zone=zone,
            attributes=data.get("attributes") or {},
            actor=_user(request),
            scopes=reader_scopes(request.user, request.auth),
        )
        return Response(node_json(node), status=status.HTTP_201_CREATED)


class NodeDetailView(APIView):
    def _get(self, request: Request, pk: int) -> GraphNode:
        node = _visible_nodes(request).filter(pk=pk).first()
        if node is None:
            raise _not_found(gettext("no graph node %(id)s") % {"id": pk})
        return node

    @extend_schema(
        summary="A node and its edges",
        parameters=[path_id()],
        responses={200: GraphNodeDetailSerializer, **error_responses(404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        node = self._get(request, pk)
        edges = GraphEdge.objects.filter(source=node) | GraphEdge.objects.filter(target=node)
        # A shared node (a person, a policy) links many zones: the reader sees the edges of
        # their own zones only, never another zone's decisions.
        scopes = reader_scopes(request.user, request.auth)
        if scopes is not None:
            edges = edges.filter(within(scopes))
        return Response(
            {
                **node_json(node),
                "edges": [edge_json(e) for e in edges.select_related("source", "target")[:500]],
            }
        )

    @extend_schema(
        summary="Delete a node and its edges (zone admins; a trail event)",
        parameters=[path_id(), OpenApiParameter("reason", str)],
        responses={204: None, **error_responses(400, 403, 404)},  # 400: a NUL in reason
    )
    def delete(self, request: Request, pk: int) -> Response:
        node = self._get(request, pk)
        if not node.zone:
            raise _forbidden(
                gettext("graph node %(key)s is shared by every zone: it is the system's")
                % {"key": repr(node.key)}
            )
        zone = Coordinate.parse(node.zone)
        _may_write(request, zone)
        store.node_delete(
            node=node, actor=_user(request), reason=_text(request, "reason"),
            zone=zone,
        )  # fmt: skip
        return Response(status=status.HTTP_204_NO_CONTENT)


class EdgeListView(APIView):
    @extend_schema(
        summary="Graph edges of a zone",
        operation_id="graph_edges_list",
        parameters=[_ZONE],
        responses={
            200: inline_serializer("GraphEdgeList", {"edges": GraphEdgeSerializer(many=True)}),
            **error_responses(400, 403, 404),
        },
    )
    def get(self, request: Request) -> Response:
        zone = _readable_zone(request, request.query_params.get("zone"))
        scopes = reader_scopes(request.user, request.auth)
        edges = GraphEdge.objects.filter(zone__startswith=str(zone)).select_related(
            "source", "target"
        )
        if scopes is not None:
            edges = edges.filter(
                zone__in=[z for z in {e.zone for e in edges} if in_scopes(z, scopes)]
            )
        return Response({"edges": [edge_json(e) for e in edges.order_by("pk")[:1000]]})

    @extend_schema(
        summary="Assert an edge (zone admins; a trail event)",
        request=EdgeIn,
        # No 409: an edge is upserted, and its end nodes are named within the writer's zone.
        responses={201: GraphEdgeSerializer, **error_responses(400, 403, 404)},
    )
    def post(self, request: Request) -> Response:
        incoming = EdgeIn(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        zone = _zone(data["zone"])
        _may_write(request, zone)
        edge = store.edge_create(
            source=data["source"],
            target=data["target"],
            edge_type=data["type"],
            zone=zone,
            actor=_user(request),
            scopes=reader_scopes(request.user, request.auth),
            weight=data["weight"],
            confidence=data["confidence"],
            occurred_at=data.get("occurred_at"),
        )
        return Response(edge_json(edge), status=status.HTTP_201_CREATED)


class EdgeDetailView(APIView):
    @extend_schema(
        summary="Delete an edge (zone admins; a trail event)",
        parameters=[path_id(), OpenApiParameter("reason", str)],
        responses={204: None, **error_responses(400, 403, 404)},  # 400: a NUL in reason
    )
    def delete(self, request: Request, pk: int) -> Response:
        edge = GraphEdge.objects.select_related("source", "target").filter(pk=pk).first()
        scopes = reader_scopes(request.user, request.auth)
        if edge is None or not in_scopes(edge.zone, scopes):
            raise _not_found(gettext("no graph edge %(id)s") % {"id": pk})
        _may_write(request, Coordinate.parse(edge.zone))
        store.edge_delete(edge=edge, actor=_user(request), reason=_text(request, "reason"))
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- bulk import -----------------------------------------------------------------------------


class TextParser(BaseParser):
    """JSON Lines or CSV bodies, handed to the view as text."""

    media_type = "*/*"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = read_body(stream)
        try:
            return str(raw.decode("utf-8-sig"))
        except UnicodeDecodeError as error:
            raise ApplicationError(
                gettext("the import must be UTF-8 text"), field="body"
            ) from error


_COLUMNS = ("source", "target", "type")
# GraphNode.key's length: a longer key would be cut when stored and then not found again.
MAX_KEY_CHARS = 200


def _string(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(gettext("%(name)s must be a string") % {"name": name})
    return value


def _number(record: dict[str, Any], name: str) -> float:
    value = record.get(name)
    if value is None or value == "":
        return 1.0
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(gettext("%(name)s must be a number") % {"name": name})
    try:
        return float(value)
    except ValueError:
        raise ValueError(gettext("%(name)s must be a number") % {"name": name}) from None


def _spec(record: dict[str, Any], end: str) -> store.NodeSpec:
    key = _string(record, end).strip()
    if not key:
        raise ValueError(gettext("%(end)s is missing") % {"end": end})
    if len(key) > MAX_KEY_CHARS:
        raise ValueError(
            gettext("%(end)s is longer than %(max)s characters")
            % {"end": end, "max": MAX_KEY_CHARS}
        )
    return store.NodeSpec(
        key=key,
        node_type=_string(record, f"{end}_type").strip() or None,
        label=_string(record, f"{end}_label"),
    )


def _row(number: int, record: dict[str, Any]) -> store.ImportRow:
    try:
        check_text(record)
        when = _string(record, "occurred_at")
        occurred = serializers.DateTimeField().to_internal_value(when) if when else None
        return store.ImportRow(
            source=_spec(record, "source"),
            target=_spec(record, "target"),
            edge_type=_string(record, "type"),
            weight=_number(record, "weight"),
            confidence=_number(record, "confidence"),
            occurred_at=occurred,
        )
    except (ValueError, ParseError, serializers.ValidationError) as error:
        raise ApplicationError(
            gettext("row %(number)s: %(error)s") % {"number": number, "error": _reason(error)},
            field=f"rows.{number}",
        ) from error


def _reason(error: Exception) -> str:
    """The words of a refusal, without Python's list and ErrorDetail reprs around them."""
    if isinstance(error, ParseError | serializers.ValidationError):
        detail = error.detail
        while isinstance(detail, list | dict) and detail:
            detail = detail[0] if isinstance(detail, list) else next(iter(detail.values()))
        return str(detail)
    return str(error)


def _csv_records(text: str) -> list[dict[str, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    try:
        missing = [c for c in _COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ApplicationError(
                gettext("the CSV header lacks %(columns)s") % {"columns": ", ".join(missing)},
                field="body",
            )
        return [dict(r) for r in reader]
    except csv.Error as error:
        # A field over csv.field_size_limit() (131,072 characters), among others.
        raise ApplicationError(
            gettext("line %(number)s: %(error)s")
            % {"number": reader.reader.line_num, "error": error},
            field="body",
        ) from None


def _json_lines_records(text: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            # As strict as a JSON body: no duplicate keys, NaN, NUL or lone surrogates, and
            # no line nested deeper than a body may be (one 5,000 deep overflowed the stack).
            record = strict_loads(line)
        except SyntaxRefused as error:
            raise ApplicationError(
                gettext("line %(number)s is not JSON: %(error)s")
                % {"number": number, "error": error.reason},
                field="body",
            ) from None
        except ParseError as error:
            raise ApplicationError(
                gettext("line %(number)s: %(error)s") % {"number": number, "error": _reason(error)},
                field="body",
            ) from None
        if not isinstance(record, dict):
            raise ApplicationError(
                gettext("line %(number)s is not a JSON object") % {"number": number},
                field="body",
            )
        records.append(record)
    return records


def parse_import(text: str, fmt: str) -> list[store.ImportRow]:
    """JSON Lines ({source, target, type, weight?, confidence?, occurred_at?, source_type?,
    source_label?, target_type?, target_label?} per line) or CSV with those columns."""
    records = _csv_records(text) if fmt == "csv" else _json_lines_records(text)
    if len(records) > MAX_IMPORT_ROWS:
        raise TooLarge(
            gettext("at most %(max)s rows per import") % {"max": MAX_IMPORT_ROWS}, field="body",
        )  # fmt: skip
    if not records:
        raise ApplicationError(gettext("the import has no rows"), field="body")
    return [_row(n, r) for n, r in enumerate(records, start=1)]


class ImportNegotiation(DefaultContentNegotiation):
    """The response by the Accept header alone: `?format=` names the import's format here
    (jsonl or csv), and DRF would read it as the response's and answer 404 for both."""

    settings = SimpleNamespace(URL_FORMAT_OVERRIDE=None)  # type: ignore[assignment]


class GraphImportView(APIView):
    parser_classes = [StrictJSONParser, TextParser]
    content_negotiation_class = ImportNegotiation

    @extend_schema(
        summary="Bulk import edges from JSON Lines or CSV (zone admins; one trail event)",
        parameters=[
            coordinate_parameter("zone", shortest=4, longest=4, required=True),
            OpenApiParameter(
                "format",
                or_empty(one_of(["jsonl", "csv"])),
                description="default: csv for a text/csv body, jsonl otherwise",
            ),
        ],
        # Rows are lines: a body of blanks holds none (refused), and one is required.
        request={
            "application/x-ndjson": {"type": "string", "minLength": 1, "pattern": NOT_BLANK},
            "text/csv": {"type": "string", "minLength": 1, "pattern": NOT_BLANK},
        },
        responses={
            201: inline_serializer("GraphImported", {"content_hash": serializers.CharField()}),
            **error_responses(400, 403, 404, 413),  # no 409: edges are upserted
        },
    )
    def post(self, request: Request) -> Response:
        zone = _zone(request.query_params.get("zone"))
        if zone.level != Level.ZONE:
            raise ApplicationError(gettext("imports go into one zone (G.U.P.Z)"), field="zone")
        _may_write(request, zone)
        fmt = request.query_params.get("format") or (
            "csv" if "csv" in (request.content_type or "") else "jsonl"
        )
        if fmt not in ("jsonl", "csv"):
            raise ApplicationError(gettext("format must be jsonl or csv"), field="format")
        text = request.data if isinstance(request.data, str) else ""
        if not text:
            raise ApplicationError(gettext("send the rows as the request body"), field="body")
        rows = parse_import(text, fmt)
        digest = hashlib.sha256(text.encode()).hexdigest()
        result = store.edges_import(
            rows=rows,
            zone=zone,
            actor=_user(request),
            scopes=reader_scopes(request.user, request.auth),
            digest=digest,
        )
        return Response({**result, "content_hash": digest}, status=status.HTTP_201_CREATED)
