"""The knowledge graph's services (nodes and edges in, out and stale, fed by the decision
pipeline, by document extraction and by hand) and the per-process cached CSR index.

Every change is also one `GraphChange` row at the next generation of `GraphState`, written in
the same transaction. A process keeps one `GraphIndex` and replays the changes since its
generation (an incremental CSR update); a rollback it had seen, or a gap, means a full reload.
Lock order everywhere: trail chain head, then the decision or document row, then GraphState.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext
from numpy.typing import NDArray

from coordinates.coordinate import Coordinate, CoordinateError
from coordinates.selectors import within
from evidence import services as evidence_services
from evidence.models import Document, DocumentVersion
from graph import events, extract, extract_nlp
from graph.core.matrix import EdgeArrays, GraphIndex
from graph.core.types import EdgeType, NodeType, edge_code
from graph.models import (
    EdgeOrigin,
    GraphChange,
    GraphEdge,
    GraphNode,
    GraphState,
)
from graph.signals import risk_scan_wanted
from maria.errors import ApplicationError, Forbidden, NotFound
from trail import ledger

STALE_FACTOR = 0.5  # a stale edge keeps half its weight: history, not current support
EXTRACTED_CONFIDENCE = 0.8
APPROVER_CONFIDENCE = 0.7  # a name found after "approved by" is a guess more often
CHANGE_LOG_KEEP = 20_000  # generations of changes kept for processes that fell behind
REPLAY_LIMIT = 5_000  # further behind than this, a full reload is cheaper than a replay
SYSTEM_PERSON = "person:system"


def _not_found(message: str) -> ApplicationError:
    return NotFound(message)


def _risk_scan_later(zone: str) -> None:
    """Have `zone` scanned once the current transaction commits, by a task of its own: a
    change to the zone's edges can make a node cross its threshold (or fall below it), and a
    failing scan must neither undo nor retry the graph change that prompted it."""
    transaction.on_commit(
        lambda: risk_scan_wanted.send(sender=GraphState, zone=zone, debounced=False)
    )


# --- the change log ------------------------------------------------------------------------


def _record(op: str, data: Mapping[str, Any]) -> int:
    """Bump the generation (row lock until commit) and log the change under it."""
    return record_changes([(op, data)])


def record_changes(changes: Sequence[tuple[str, Mapping[str, Any]]]) -> int:
    """Log changes at the next generations, one each, in one step (the generation row stays
    locked until commit); the last generation. The changes share one token: a process that
    caught up to any of them saw the whole batch commit."""
    if not changes:
        return _state()[0]
    token, n = uuid.uuid4().hex, len(changes)
    if not GraphState.objects.filter(pk=1).update(generation=F("generation") + n, token=token):
        GraphState.objects.bulk_create([GraphState(pk=1)], ignore_conflicts=True)
        GraphState.objects.filter(pk=1).update(generation=F("generation") + n, token=token)
    last = GraphState.objects.filter(pk=1).values_list("generation", flat=True).get()
    first = last - n + 1
    GraphChange.objects.bulk_create(
        GraphChange(generation=first + i, token=token, op=op, data=dict(data))
        for i, (op, data) in enumerate(changes)
    )
    if first // 1000 != last // 1000 or last % 1000 == 0:  # crossed a thousand: prune
        GraphChange.objects.filter(generation__lt=last - CHANGE_LOG_KEEP).delete()
    return last


def _timestamp(moment: datetime | None) -> float:
    return moment.timestamp() if moment is not None else 0.0


def _node_data(node: GraphNode) -> dict[str, Any]:
    return {
        "id": node.pk,
        "key": node.key,
        "type": node.node_type,
        "label": node.label,
        "zone": node.zone,
    }


def _edge_data(edge: GraphEdge) -> dict[str, Any]:
    return {
        "s": edge.source_id,
        "t": edge.target_id,
        "type": edge.edge_type,
        "w": edge.weight,
        "c": edge.confidence,
        "stale": edge.stale,
        "time": _timestamp(edge.occurred_at),
    }


# --- nodes and edges -----------------------------------------------------------------------


def _check_type(value: str, choices: type[NodeType] | type[EdgeType], field: str) -> str:
    try:
        return str(choices(value))
    except ValueError:
        allowed = ", ".join(str(c) for c in choices)
        raise ApplicationError(
            gettext("unknown %(field)s %(value)s; one of %(allowed)s")
            % {"field": field, "value": repr(value), "allowed": allowed},
            field=field,
        ) from None


def _check_unit(value: float, field: str, *, positive: bool = False) -> float:
    number = float(value)
    if not (0.0 < number <= 1.0 if positive else 0.0 <= number <= 1.0):
        span = "(0, 1]" if positive else "[0, 1]"
        raise ApplicationError(
            gettext("%(field)s must lie in %(span)s, got %(value)s")
            % {"field": field, "span": span, "value": value},
            field=field,
        )
    return number


def node_ensure(
    *,
    key: str,
    node_type: str,
    label: str,
    zone: str = "",
    attributes: Mapping[str, Any] | None = None,
) -> GraphNode:
    """The node named `key` in `zone` ("" for a shared one), created or brought up to date
    (type, label, attributes). Keys are unique per zone: another zone's node of the same key
    is another node, never this one."""
    node_type = _check_type(node_type, NodeType, "type")
    key, label = key.strip()[:200], (label.strip() or key)[:300]
    if not key:
        raise ApplicationError(gettext("a node needs a key"), field="key")
    node, created = GraphNode.objects.get_or_create(
        zone=zone,
        key=key,
        defaults={"node_type": node_type, "label": label, "attributes": dict(attributes or {})},
    )
    if not created:
        merged = {**node.attributes, **(attributes or {})}
        if (node.node_type, node.label, node.attributes) == (node_type, label, merged):
            return node
        node.node_type, node.label, node.attributes = node_type, label, merged
        node.save(update_fields=["node_type", "label", "attributes", "updated_at"])
    _record("node", _node_data(node))
    return node


def edge_upsert(
    *,
    source: GraphNode,
    target: GraphNode,
    edge_type: str,
    zone: str,
    origin: str,
    weight: float = 1.0,
    confidence: float = 1.0,
    occurred_at: datetime | None = None,
    document: Document | None = None,
    document_version: int | None = None,
) -> GraphEdge:
    """Add the typed edge or refresh it (new strength and time; no longer stale)."""
    edge_type = _check_type(edge_type, EdgeType, "type")
    if source.pk == target.pk:
        raise ApplicationError(gettext("an edge must join two different nodes"), field="target")
    values = {
        "weight": _check_unit(weight, "weight", positive=True),
        "confidence": _check_unit(confidence, "confidence"),
        "occurred_at": occurred_at or timezone.now(),
        "stale": False,
        "zone": zone,
        "origin": origin,
        "document": document,
        "document_version": document_version,
    }
    edge, created = GraphEdge.objects.get_or_create(
        source=source, target=target, edge_type=edge_type, defaults=values
    )
    if not created:
        for name, value in values.items():
            setattr(edge, name, value)
        edge.save()
    _record("edge", _edge_data(edge))
    return edge


def _mark_stale(edges: Iterable[GraphEdge]) -> int:
    count = 0
    for edge in edges:
        if not edge.stale:
            edge.stale = True
            edge.save(update_fields=["stale", "updated_at"])
            _record("edge", _edge_data(edge))
            count += 1
    return count


def _trail_zone(zone: str, fallback: Coordinate | None) -> Coordinate:
    try:
        return Coordinate.parse(zone)
    except CoordinateError:
        if fallback is None:
            raise ApplicationError(
                gettext("this node belongs to no zone: name the zone you act for"), field="zone"
            ) from None
        return fallback


def node_delete(
    *, node: GraphNode, actor: AbstractBaseUser, reason: str = "", zone: Coordinate | None = None
) -> None:
    """Delete a node and its edges, with a trail event; every index drops its row."""
    chain_zone = _trail_zone(node.zone, zone)
    with transaction.atomic():
        ledger.lock(ledger.chain_for(chain_zone))
        locked = GraphNode.objects.select_for_update().filter(pk=node.pk).first()
        if locked is None:
            raise _not_found(gettext("no graph node %(id)s") % {"id": node.pk})
        edges = (
            GraphEdge.objects.filter(source=locked).count()
            + GraphEdge.objects.filter(target=locked).count()
        )
        events.graph_node_deleted(
            zone=chain_zone, key=locked.key, node_type=locked.node_type, edges=edges,
            actor=actor, reason=reason,
        )  # fmt: skip
        _record("node_delete", {"id": locked.pk})
        locked.delete()
        _risk_scan_later(str(chain_zone))


def edge_delete(*, edge: GraphEdge, actor: AbstractBaseUser, reason: str = "") -> None:
    """Delete one edge outright (a retraction), with a trail event."""
    chain_zone = _trail_zone(edge.zone, None)
    with transaction.atomic():
        ledger.lock(ledger.chain_for(chain_zone))
        locked = GraphEdge.objects.select_for_update().select_related("source", "target")
        found = locked.filter(pk=edge.pk).first()
        if found is None:
            raise _not_found(gettext("no graph edge %(id)s") % {"id": edge.pk})
        events.graph_edge_deleted(
            zone=chain_zone,
            source=found.source.key,
            target=found.target.key,
            edge_type=found.edge_type,
            actor=actor,
            reason=reason,
        )
        _record(
            "edge_delete", {"s": found.source_id, "t": found.target_id, "type": found.edge_type}
        )
        found.delete()
        _risk_scan_later(str(chain_zone))


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """A node named in an explicit edge: its key, and type and label when it may be new."""

    key: str
    node_type: str | None = None
    label: str = ""


def shared_seen(scopes: list[Coordinate] | None) -> Q:
    """The shared nodes (zone "") a reader with `scopes` sees (None: every one). A shared
    person is seen only where they act, an edge in the reader's zones: a reviewer of one
    galaxy does not learn another galaxy's people, by listing them or by writing their key."""
    shared = Q(zone="")
    if scopes is None:
        return shared
    theirs = GraphEdge.objects.filter(within(scopes))
    acting = Q(pk__in=theirs.values("source_id")) | Q(pk__in=theirs.values("target_id"))
    return shared & (~Q(node_type=NodeType.PERSON) | acting)


def _nameable(keys: Iterable[str], zone: str, scopes: list[Coordinate] | None) -> Any:
    """The rows a writer acting for `zone` with reader `scopes` may name by these keys: the
    zone's own, and the shared ones the writer sees. Another zone's node of the same key, or
    a shared person the writer does not see, is not there for them: the write answers as for
    a free key, so what the writer is told never depends on what they cannot read."""
    return GraphNode.objects.filter(key__in=list(keys)).filter(Q(zone=zone) | shared_seen(scopes))


def named_ids(keys: Iterable[str], zone: str, scopes: list[Coordinate] | None) -> dict[str, int]:
    """The ids of the nodes a writer acting for `zone` names by these keys (`_nameable`):
    the zone's own node, else the shared one."""
    rows = _nameable(keys, zone, scopes)
    found: dict[str, int] = {}
    for key, pk, node_zone in rows.values_list("key", "pk", "zone"):
        if node_zone or key not in found:  # the zone's own before a shared one
            found[key] = pk
    return found


def _named(
    key: str, zone: str, scopes: list[Coordinate] | None, *, lock: bool = False
) -> GraphNode | None:
    """`named_ids` for one key, as a row (locked until commit when asked)."""
    rows = _nameable([key], zone, scopes)
    if lock:
        rows = rows.select_for_update()
    found = {node.zone: node for node in rows}
    return found.get(zone) or found.get("")


def node_write(
    *,
    key: str,
    node_type: str,
    label: str,
    zone: Coordinate,
    attributes: Mapping[str, Any],
    actor: AbstractBaseUser,
    scopes: list[Coordinate] | None,
) -> GraphNode:
    """A person's node write (zone admins, reading `scopes`): created in their zone, or
    brought up to date when the zone holds it; a shared node they see is a 403, never a
    move. Another zone's node of the same key, or a shared person they do not see, is
    another node: the write answers as for a free key. A write that creates or
    changes the node is a graph.node_written event on the zone's chain; one that changes
    nothing writes no event."""
    clean = key.strip()[:200]
    with transaction.atomic():
        ledger.lock(ledger.chain_for(zone))
        existing = _named(clean, str(zone), scopes, lock=True)
        before = None
        if existing is not None:
            if not existing.zone:
                raise Forbidden(
                    gettext("graph node %(key)s is shared by every zone: it is the system's")
                    % {"key": repr(existing.key)},
                    field="key",
                )
            before = (existing.node_type, existing.label, existing.attributes)
        node = node_ensure(
            key=key, node_type=node_type, label=label, zone=str(zone), attributes=attributes
        )
        if (node.node_type, node.label, node.attributes) != before:
            events.graph_node_written(
                zone=zone, key=node.key, node_type=node.node_type, label=node.label,
                attributes=node.attributes, created=existing is None, actor=actor,
            )  # fmt: skip
    return node


def _resolve(spec: NodeSpec, zone: str, scopes: list[Coordinate] | None, field: str) -> GraphNode:
    node = _named(spec.key, zone, scopes)
    if node is not None and not node.zone:
        return node  # shared: named as it is, never changed by a person
    if spec.node_type:
        return node_ensure(key=spec.key, node_type=spec.node_type, label=spec.label, zone=zone)
    if node is None:
        raise NotFound(
            gettext("no graph node %(key)s; give its type to create it") % {"key": repr(spec.key)},
            field=field,
        )
    return node


def edge_create(
    *,
    source: NodeSpec,
    target: NodeSpec,
    edge_type: str,
    zone: Coordinate,
    actor: AbstractBaseUser,
    scopes: list[Coordinate] | None,
    weight: float = 1.0,
    confidence: float = 1.0,
    occurred_at: datetime | None = None,
) -> GraphEdge:
    """An explicit edge entered by someone (zone admins, reading `scopes`: their end nodes
    are named as `named_ids` names them), with a trail event."""
    with transaction.atomic():
        ledger.lock(ledger.chain_for(zone))
        edge = edge_upsert(
            source=_resolve(source, str(zone), scopes, "source"),
            target=_resolve(target, str(zone), scopes, "target"),
            edge_type=edge_type,
            zone=str(zone),
            origin=EdgeOrigin.MANUAL,
            weight=weight,
            confidence=confidence,
            occurred_at=occurred_at,
        )
        events.graph_edge_added(
            zone=zone,
            source=edge.source.key,
            target=edge.target.key,
            edge_type=edge.edge_type,
            actor=actor,
        )
        _risk_scan_later(str(zone))
    return edge


@dataclass(frozen=True, slots=True)
class ImportRow:
    source: NodeSpec
    target: NodeSpec
    edge_type: str
    weight: float = 1.0
    confidence: float = 1.0
    occurred_at: datetime | None = None


def edges_import(
    *,
    rows: Sequence[ImportRow],
    zone: Coordinate,
    actor: AbstractBaseUser,
    scopes: list[Coordinate] | None,
    digest: str,
) -> dict[str, int]:
    """Bulk import in one transaction (a zone admin reading `scopes`: nodes are named as
    `named_ids` names them): nodes created as needed, edges upserted, one trail event with
    the count and the content hash; every index reloads once."""
    now = timezone.now()
    with transaction.atomic():
        ledger.lock(ledger.chain_for(zone))
        specs: dict[str, NodeSpec] = {}
        for row in rows:
            for spec in (row.source, row.target):
                if spec.node_type:
                    _check_type(spec.node_type, NodeType, "type")
                    specs[spec.key] = spec
                else:
                    specs.setdefault(spec.key, spec)
        existing = named_ids(specs, str(zone), scopes)
        missing = [s for k, s in specs.items() if k not in existing]
        untyped = [s.key for s in missing if not s.node_type]
        if untyped:
            raise ApplicationError(
                gettext("unknown node %(node)s without a type") % {"node": repr(untyped[0])},
                field="source",
                code="not_found",
            )
        GraphNode.objects.bulk_create(
            [
                GraphNode(
                    key=s.key[:200],
                    node_type=str(s.node_type),
                    label=(s.label or s.key)[:300],
                    zone=str(zone),
                )
                for s in missing
            ],
            ignore_conflicts=True,
            batch_size=2000,
        )
        ids = named_ids(specs, str(zone), scopes)
        edges = []
        for number, row in enumerate(rows, start=1):
            if row.source.key == row.target.key:
                raise ApplicationError(
                    gettext("row %(number)s: an edge joins two different nodes")
                    % {"number": number}
                )
            edges.append(
                GraphEdge(
                    source_id=ids[row.source.key],
                    target_id=ids[row.target.key],
                    edge_type=_check_type(row.edge_type, EdgeType, "type"),
                    weight=_check_unit(row.weight, "weight", positive=True),
                    confidence=_check_unit(row.confidence, "confidence"),
                    occurred_at=row.occurred_at or now,
                    stale=False,
                    zone=str(zone),
                    origin=EdgeOrigin.IMPORT,
                )
            )
        GraphEdge.objects.bulk_create(
            edges,
            update_conflicts=True,
            unique_fields=["source", "target", "edge_type"],
            update_fields=["weight", "confidence", "occurred_at", "stale", "zone", "origin"],
            batch_size=2000,
        )
        events.graph_imported(
            zone=zone, edges=len(edges), nodes=len(missing), digest=digest, actor=actor
        )
        _record("reload", {})
        _risk_scan_later(str(zone))
    return {"edges": len(edges), "nodes_created": len(missing)}


# --- feeding (a): the decision pipeline ------------------------------------------------------


def _agent_node(coordinate: str) -> GraphNode:
    zone = str(Coordinate.parse(coordinate).zone())
    return node_ensure(
        key=f"agent:{coordinate}", node_type=NodeType.PERSON, label=f"agent {coordinate}", zone=zone
    )


def _document_node(document: Document) -> GraphNode:
    return node_ensure(
        key=f"document:{document.pk}",
        node_type=NodeType.DOCUMENT,
        label=document.title,
        zone=document.zone.coordinate,
        attributes={"document": document.pk},
    )


# --- feeding (b): extraction from document versions ------------------------------------------


def _effective_time(version: DocumentVersion) -> datetime:
    if version.effective_date is not None:
        return datetime.combine(
            version.effective_date, time.min, tzinfo=timezone.get_current_timezone()
        )
    return version.created_at


def _deadline_time(iso: str) -> datetime | None:
    try:
        return datetime.combine(
            date.fromisoformat(iso), time.min, tzinfo=timezone.get_current_timezone()
        )
    except ValueError:
        return None


# How each typed relation of graph/extract_nlp.py lands on the graph's edge types, as
# (edge type, whether the edge runs from the relation's target to its source).
_RELATION_EDGES: dict[str, tuple[EdgeType, bool]] = {
    "approves": (EdgeType.APPROVED_BY, True),  # the work is approved by the actor
    "reports_to": (EdgeType.ESCALATED_TO, False),  # the reporting line is the escalation path
    "responsible_for": (EdgeType.DEPENDS_ON, True),  # the work depends on its owner
    "precedes": (EdgeType.DEPENDS_ON, True),  # the later step depends on the earlier
    "deadline": (EdgeType.DEADLINE_FOR, True),
    "references": (EdgeType.REFERENCES, False),
}
CONFLICTED_CONFIDENCE = 0.4  # one of two relations that cannot both hold: kept, doubted


def _assert_relations(
    relations: extract_nlp.Relations,
    *,
    doc_node: GraphNode,
    zone: str,
    assert_edge: Callable[[GraphNode, GraphNode, EdgeType, float], None],
) -> None:
    """Typed edges of the NLP extractor on the graph, every node in the document's zone (its
    key carries the zone): roles as people, departments, obligations (process steps),
    relative deadlines; other documents only when they are known in the zone."""
    doubted = {c.first.key() for c in relations.conflicts}
    doubted |= {c.second.key() for c in relations.conflicts}
    known = {
        d.title.casefold(): d
        for d in Document.objects.filter(zone__coordinate=zone).select_related("zone")[:5000]
    }

    def node_of(entity: extract_nlp.Entity) -> GraphNode | None:
        if entity.kind == extract_nlp.DOCUMENT:
            if entity.name == extract_nlp.THIS_DOCUMENT:
                return doc_node
            other = known.get(entity.name)
            return _document_node(other) if other is not None else None
        node_type, prefix = {
            extract_nlp.ROLE: (NodeType.PERSON, "person"),
            extract_nlp.DEPARTMENT: (NodeType.DEPARTMENT, "department"),
            extract_nlp.OBLIGATION: (NodeType.OBLIGATION, "obligation"),
            extract_nlp.DEADLINE: (NodeType.DEADLINE, "deadline"),
        }[entity.kind]
        return node_ensure(
            key=f"{prefix}:{zone}:{entity.name}"[:200], node_type=node_type,
            label=entity.name, zone=zone, attributes={"kind": entity.kind},
        )  # fmt: skip

    for relation in relations.edges:
        source, target = node_of(relation.source), node_of(relation.target)
        if source is None or target is None or source.pk == target.pk:
            continue
        edge_type, reverse = _RELATION_EDGES[relation.relation]
        if reverse:
            source, target = target, source
        confidence = CONFLICTED_CONFIDENCE if relation.key() in doubted else EXTRACTED_CONFIDENCE
        assert_edge(source, target, edge_type, confidence)


def version_extract(*, version_id: int) -> int:
    """Extract the graph of one document version; returns how many edges it asserted.

    Only the current version speaks for its document: its edges are refreshed, and edges an
    earlier version asserted that this one no longer does are marked stale (kept, down-
    weighted). Idempotent: running it twice asserts the same edges again.
    """
    version = DocumentVersion.objects.select_related("document__zone").get(pk=version_id)
    document = version.document
    zone = document.zone.coordinate
    with transaction.atomic():
        Document.objects.select_for_update().filter(pk=document.pk).first()
        newest = document.versions.order_by("-version").values_list("version", flat=True).first()
        if newest != version.version:
            return 0  # a newer version has spoken since; it is extracted on its own
        known = dict(
            Document.objects.filter(zone=document.zone)
            .exclude(pk=document.pk)
            .values_list("key", "title")[:5000]
        )
        found = extract.extract(version.text, known_documents=known)
        doc_node = node_ensure(
            key=f"document:{document.pk}",
            node_type=NodeType.DOCUMENT,
            label=version.title,
            zone=zone,
            attributes={"document": document.pk, "version": version.version, "kind": version.kind},
        )
        when = _effective_time(version)
        asserted: set[int] = set()

        def assert_edge(
            source: GraphNode, target: GraphNode, edge_type: EdgeType, confidence: float,
            occurred_at: datetime | None = None,
        ) -> None:  # fmt: skip
            edge = edge_upsert(
                source=source, target=target, edge_type=edge_type, zone=zone,
                origin=EdgeOrigin.EXTRACTION, confidence=confidence,
                occurred_at=occurred_at or when, document=document,
                document_version=version.version,
            )  # fmt: skip
            asserted.add(edge.pk)

        for amount in found.amounts:
            node = node_ensure(
                key=f"amount:{zone}:{amount.value}", node_type=NodeType.AMOUNT,
                label=amount.value, zone=zone, attributes={"currency": amount.currency},
            )  # fmt: skip
            assert_edge(doc_node, node, EdgeType.REFERENCES, EXTRACTED_CONFIDENCE)
        for deadline in found.deadlines:
            node = node_ensure(
                key=f"deadline:{zone}:{deadline.date}", node_type=NodeType.DEADLINE,
                label=f"deadline {deadline.date}", zone=zone,
            )  # fmt: skip
            assert_edge(
                node, doc_node, EdgeType.DEADLINE_FOR, EXTRACTED_CONFIDENCE,
                _deadline_time(deadline.date),
            )  # fmt: skip
        for coordinate in found.coordinates:
            if coordinate.count(".") == 4:  # an agent: a person node; zones are not nodes
                assert_edge(doc_node, _agent_node(coordinate), EdgeType.REFERENCES, 1.0)
        for name in found.approvers:
            person = node_ensure(
                key=f"person:{zone}:{name}"[:200], node_type=NodeType.PERSON, label=name,
                zone=zone,
            )  # fmt: skip
            assert_edge(doc_node, person, EdgeType.APPROVED_BY, APPROVER_CONFIDENCE)
        others = Document.objects.filter(zone=document.zone, key__in=found.references)
        for other in others.select_related("zone"):
            assert_edge(doc_node, _document_node(other), EdgeType.REFERENCES, EXTRACTED_CONFIDENCE)
        relations = extract_nlp.extract_relations(version.text, known_documents=known)
        if relations.engine == "nlp":  # the regex engine's edges are the ones asserted above
            _assert_relations(relations, doc_node=doc_node, zone=zone, assert_edge=assert_edge)
        earlier = GraphEdge.objects.filter(document=document, origin=EdgeOrigin.EXTRACTION)
        _mark_stale(earlier.exclude(pk__in=asserted))
    return len(asserted)


# --- the cached index ------------------------------------------------------------------------


@dataclass
class LoadedGraph:
    """One process's index of the graph at one generation, with node facts by row."""

    generation: int
    token: str
    index: GraphIndex
    keys: list[str | None] = field(default_factory=list)
    types: list[str | None] = field(default_factory=list)
    labels: list[str | None] = field(default_factory=list)
    zones: list[str | None] = field(default_factory=list)
    vectors: NDArray[np.float32] | None = None  # label embeddings by row, filled on demand
    dirty: set[int] = field(default_factory=set)  # rows whose label changed since embedding
    replayed: int = 0  # changes applied incrementally since the last full load

    def sync_rows(self) -> None:
        missing = self.index.n_rows - len(self.keys)
        for column in (self.keys, self.types, self.labels, self.zones):
            column.extend([None] * missing)

    def put_node(self, data: Mapping[str, Any]) -> None:
        row = self.index.add_node(int(data["id"]))
        self.sync_rows()
        # The embedded text is "type label" (_label_text): a change to either makes it stale.
        if (self.types[row], self.labels[row]) != (data["type"], data["label"]):
            self.dirty.add(row)
        self.keys[row], self.types[row] = data["key"], data["type"]
        self.labels[row], self.zones[row] = data["label"], data["zone"]

    def apply(self, op: str, data: Mapping[str, Any]) -> None:
        index = self.index
        if op == "node":
            self.put_node(data)
        elif op == "node_delete":
            pk = int(data["id"])
            if pk in index:
                row = index.row_of(pk)
                index.remove_node(pk)
                self.keys[row] = self.types[row] = self.labels[row] = self.zones[row] = None
        elif op == "edge":
            s, t, kind = int(data["s"]), int(data["t"]), data["type"]
            index.add_edge(
                s, t, kind, base_weight=float(data["w"]), confidence=float(data["c"]),
                time=float(data["time"]),
            )  # fmt: skip
            if data.get("stale"):
                index.mark_stale(s, t, kind)
            self.sync_rows()
        elif op == "edge_delete":
            index.remove_edge(int(data["s"]), int(data["t"]), data["type"])


@dataclass(frozen=True)
class GraphSnapshot:
    """What one query reads: immutable arrays of the graph at one generation."""

    generation: int
    adjacency: Any  # scipy.sparse.csr_array, A_ij = sum of effective weights of i->j
    edges: EdgeArrays
    node_ids: list[Hashable | None]
    keys: list[str | None]
    types: list[str | None]
    labels: list[str | None]
    zones: list[str | None]
    vectors: NDArray[np.float32] | None

    @property
    def n_rows(self) -> int:
        return len(self.node_ids)

    def rows_of_key(self, key: str) -> list[int]:
        """The rows of every node named `key`: one per zone that holds it (keys are unique
        per zone), so a caller picks among those its reader sees."""
        return [row for row, named in enumerate(self.keys) if named == key]


_lock = threading.Lock()
_cached: LoadedGraph | None = None


def _state() -> tuple[int, str]:
    row = GraphState.objects.filter(pk=1).values_list("generation", "token").first()
    return (int(row[0]), str(row[1])) if row else (0, "")


def graph_state() -> tuple[int, str]:
    """The graph's (generation, token) now: equal pairs mean the very same graph."""
    return _state()


# The edge columns the index needs, with the time as epoch seconds computed by the database:
# turning a million timestamps into aware datetimes and back costs more than the CSR build.
_EPOCH = {
    "postgresql": "EXTRACT(EPOCH FROM occurred_at)::float8",
    "sqlite": "(julianday(occurred_at) - 2440587.5) * 86400.0",
}


def _edge_rows() -> list[tuple[Any, ...]]:
    epoch = _EPOCH.get(connection.vendor)
    if epoch is None:
        return [
            (*r[:6], _timestamp(r[6]))
            for r in GraphEdge.objects.values_list(
                "source_id",
                "target_id",
                "edge_type",
                "weight",
                "confidence",
                "stale",
                "occurred_at",
            )
        ]
    table = GraphEdge._meta.db_table
    with connection.cursor() as cursor:
        # Only the fixed expression above and the model's own table name are interpolated.
        cursor.execute(
            f"SELECT source_id, target_id, edge_type, weight, confidence, stale, {epoch} "  # noqa: S608
            f"FROM {table}"
        )
        return cursor.fetchall()


def graph_load(generation: int, token: str) -> LoadedGraph:
    """Full build from the database: nodes, then every edge into one vectorised CSR build.

    Read after the state, so the tables may hold changes newer than `generation`; replaying
    those again later is harmless (every change is idempotent).
    """
    nodes = list(
        GraphNode.objects.order_by("pk").values_list("pk", "key", "node_type", "label", "zone")
    )
    rows = _edge_rows()
    m = len(rows)
    codes = {str(t): edge_code(t) for t in EdgeType}
    index = GraphIndex.from_edges(
        np.fromiter((r[0] for r in rows), np.int64, m),
        np.fromiter((r[1] for r in rows), np.int64, m),
        np.fromiter((r[3] for r in rows), np.float64, m),
        confidence=np.fromiter((r[4] for r in rows), np.float64, m),
        edge_type=np.fromiter((codes[r[2]] for r in rows), np.int64, m),
        stale=np.fromiter((r[5] for r in rows), bool, m),
        time=np.fromiter((r[6] or 0.0 for r in rows), np.float64, m),
        node_ids=[n[0] for n in nodes],
        stale_factor=STALE_FACTOR,
    )
    return LoadedGraph(
        generation=generation,
        token=token,
        index=index,
        keys=[n[1] for n in nodes],
        types=[n[2] for n in nodes],
        labels=[n[3] for n in nodes],
        zones=[n[4] for n in nodes],
    )


def _catch_up(cached: LoadedGraph, generation: int, token: str) -> bool:
    """Replay the changes after the cached generation; False when only a reload will do."""
    if generation < cached.generation or generation - cached.generation > REPLAY_LIMIT:
        return False
    changes = list(
        GraphChange.objects.filter(generation__gte=cached.generation, generation__lte=generation)
        .order_by("generation")
        .values_list("generation", "token", "op", "data")
    )
    if cached.generation > 0:
        # The change the cache stopped at must still be there, the same one: a rollback the
        # cache had seen leaves another token (or nothing) at that generation.
        if not changes or changes[0][:2] != (cached.generation, cached.token):
            return False
        changes = changes[1:]
    expected = list(range(cached.generation + 1, generation + 1))
    if [c[0] for c in changes] != expected or (changes and changes[-1][1] != token):
        return False
    if any(op == "reload" for _, _, op, _ in changes):
        return False
    for _, _, op, data in changes:
        cached.apply(op, data)
    cached.generation, cached.token = generation, token
    cached.replayed += len(changes)
    return True


def loaded_graph() -> LoadedGraph:
    """This process's graph, brought up to date incrementally (or reloaded when it must be)."""
    global _cached
    generation, token = _state()
    with _lock:
        cached = _cached
        if cached is not None and (cached.generation, cached.token) == (generation, token):
            return cached
        if cached is None or not _catch_up(cached, generation, token):
            fresh = graph_load(generation, token)
            _carry_vectors(cached, fresh)
            cached = _cached = fresh
        return cached


def _carry_vectors(old: LoadedGraph | None, new: LoadedGraph) -> None:
    """Keep the label embeddings a full reload would throw away (an import ends in one): a
    node whose type and label are unchanged keeps its vector, only the rest are embedded
    again on the next query. Embedding every label costs seconds per 10^4 nodes."""
    if old is None or old.vectors is None:
        return
    embedded = old.vectors.shape[0]
    before = {
        pk: row
        for row, pk in enumerate(old.index.node_ids[:embedded])
        if pk is not None and row not in old.dirty
    }
    kept_new: list[int] = []
    kept_old: list[int] = []
    for row, pk in enumerate(new.index.node_ids):
        was = before.get(pk)
        if was is not None and (old.types[was], old.labels[was]) == (
            new.types[row],
            new.labels[row],
        ):
            kept_new.append(row)
            kept_old.append(was)
    n = new.index.n_rows
    vectors = np.zeros((n, old.vectors.shape[1]), dtype=np.float32)
    vectors[kept_new] = old.vectors[kept_old]
    new.vectors = vectors
    new.dirty = set(range(n)) - set(kept_new)


def snapshot(*, embed: bool = False) -> GraphSnapshot:
    """An immutable view for one query; with `embed`, label embeddings for every live row."""
    loaded = loaded_graph()
    with _lock:
        index = loaded.index
        vectors = None
        if embed:
            vectors = _label_vectors(loaded)
        return GraphSnapshot(
            generation=loaded.generation,
            adjacency=index.adjacency,
            edges=index.typed_edges(),
            node_ids=index.node_ids,
            keys=list(loaded.keys),
            types=list(loaded.types),
            labels=list(loaded.labels),
            zones=list(loaded.zones),
            vectors=vectors,
        )


def _label_text(node_type: str | None, label: str | None) -> str:
    return f"{node_type or ''} {label or ''}".strip()


def _label_vectors(loaded: LoadedGraph) -> NDArray[np.float32]:
    model = evidence_services.embedder()
    n = loaded.index.n_rows
    done = 0 if loaded.vectors is None else loaded.vectors.shape[0]
    vectors = np.zeros((n, model.dim), dtype=np.float32)
    if loaded.vectors is not None:
        vectors[:done] = loaded.vectors[: min(done, n)]
    todo = sorted(set(range(done, n)) | {r for r in loaded.dirty if r < n})
    for start in range(0, len(todo), 4096):
        chunk = todo[start : start + 4096]
        texts = [_label_text(loaded.types[r], loaded.labels[r]) for r in chunk]
        vectors[chunk] = model.embed(texts)
    loaded.vectors = vectors
    loaded.dirty.clear()
    return vectors


def index_forget() -> None:
    """Drop this process's cached index (tests and the bench measure a cold build)."""
    global _cached
    with _lock:
        _cached = None
