"""The organisational knowledge graph as rows: typed nodes, typed weighted directed edges, and
the change log that lets every process bring its in-memory CSR index up to date incrementally.

The tables were created by the evidence app and keep their names (db_table).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from graph.core.types import EdgeType, NodeType


class NodeKind(models.TextChoices):
    PERSON = NodeType.PERSON.value, "Person"
    DECISION = NodeType.DECISION.value, "Decision"
    AMOUNT = NodeType.AMOUNT.value, "Amount"
    DEADLINE = NodeType.DEADLINE.value, "Deadline"
    DOCUMENT = NodeType.DOCUMENT.value, "Document"
    POLICY = NodeType.POLICY.value, "Policy"
    RISK = NodeType.RISK.value, "Risk"
    DEPARTMENT = NodeType.DEPARTMENT.value, "Department"
    OBLIGATION = NodeType.OBLIGATION.value, "Obligation"


class EdgeKind(models.TextChoices):
    APPROVED_BY = EdgeType.APPROVED_BY.value, "approved by"
    PROPOSED_BY = EdgeType.PROPOSED_BY.value, "proposed by"
    DEPENDS_ON = EdgeType.DEPENDS_ON.value, "depends on"
    CONSTRAINED_BY = EdgeType.CONSTRAINED_BY.value, "constrained by"
    ALLOCATED_FROM = EdgeType.ALLOCATED_FROM.value, "allocated from"
    DEADLINE_FOR = EdgeType.DEADLINE_FOR.value, "deadline for"
    ESCALATED_TO = EdgeType.ESCALATED_TO.value, "escalated to"
    REFERENCES = EdgeType.REFERENCES.value, "references"
    MITIGATES = EdgeType.MITIGATES.value, "mitigates"
    CAUSED_BY = EdgeType.CAUSED_BY.value, "caused by"


class EdgeOrigin(models.TextChoices):
    PIPELINE = "pipeline", "Decision pipeline"
    EXTRACTION = "extraction", "Extracted from a document"
    MANUAL = "manual", "Entered over the API"
    IMPORT = "import", "Bulk import"


class GraphNode(models.Model):
    """An entity: a person or agent, a decision, an amount, a deadline, a document, a policy
    or a risk. `key` names it stably within its zone ("decision:12", "agent:G1.U1.P1.Z1.A2").

    Keys are unique per zone, not across the graph: two zones may each hold "risk:fraud", so
    a zone admin's write never learns that another zone holds a key (a global key answered
    409 for another zone's node and 201 for a free one). Shared nodes (zone "") are one
    namespace of their own."""

    key = models.CharField(max_length=200, db_index=True)
    node_type = models.CharField(max_length=16, choices=NodeKind.choices)
    label = models.CharField(max_length=300)
    # The zone it belongs to; blank for people and policies shared across zones.
    zone = models.CharField(max_length=64, blank=True, db_index=True)
    attributes = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "evidence_graphnode"  # created under evidence; the name stays
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["zone", "key"], name="graph_node_unique_zone_key")
        ]

    def __str__(self) -> str:
        return self.key


class GraphEdge(models.Model):
    """source --edge_type--> target with weight * confidence as its strength at `occurred_at`.

    Stale edges (no current document supports them any more) are kept for history and only
    down-weighted by the index; deleting an edge is an explicit act with a trail event.
    """

    source = models.ForeignKey(GraphNode, on_delete=models.CASCADE, related_name="out_edges")
    target = models.ForeignKey(GraphNode, on_delete=models.CASCADE, related_name="in_edges")
    edge_type = models.CharField(max_length=16, choices=EdgeKind.choices)
    weight = models.FloatField(default=1.0)
    confidence = models.FloatField(default=1.0)
    occurred_at = models.DateTimeField()
    stale = models.BooleanField(default=False)
    zone = models.CharField(max_length=64, db_index=True)  # whose edge it is (scoping, trail)
    origin = models.CharField(max_length=16, choices=EdgeOrigin.choices)
    # The document whose versions assert an extracted edge, and the newest version that did.
    document = models.ForeignKey(
        "evidence.Document", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    document_version = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "evidence_graphedge"  # created under evidence; the name stays
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "target", "edge_type"], name="graph_edge_unique_typed_pair"
            ),
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0.0, confidence__lte=1.0),
                name="graph_edge_confidence_unit",
            ),
            models.CheckConstraint(
                condition=models.Q(weight__gt=0.0, weight__lte=1.0),
                name="graph_edge_weight_unit",
            ),
            models.CheckConstraint(
                condition=~models.Q(source=models.F("target")), name="graph_edge_no_self_loop"
            ),
        ]
        indexes = [models.Index(fields=["document", "origin"], name="graph_edge_document")]

    def __str__(self) -> str:
        return f"{self.source_id} -{self.edge_type}-> {self.target_id}"


class GraphState(models.Model):
    """One row: the graph's generation and the random token of its latest change. Writers
    bump it under a row lock, so changes commit in generation order with no gaps."""

    generation = models.BigIntegerField(default=0)
    token = models.CharField(max_length=32, default="")
    # How far the graph has followed each trail chain: {chain: seq of the last decision
    # event applied} (graph.feed). Kept in this row because every graph writer
    # locks it anyway.
    fed = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "evidence_graphstate"  # created under evidence; the name stays

    def __str__(self) -> str:
        return f"graph generation {self.generation}"


class GraphChange(models.Model):
    """One change of one generation, in the form an in-memory index applies it.

    op is node | node_delete | edge | edge_delete | reload; `data` holds the values. A process
    whose index is at generation g replays g+1.. in order; any doubt (a missing row, another
    token at g after a rollback) means a full reload instead.
    """

    generation = models.BigIntegerField(unique=True)
    token = models.CharField(max_length=32)
    op = models.CharField(max_length=16)
    data = models.JSONField(default=dict)

    class Meta:
        db_table = "evidence_graphchange"  # created under evidence; the name stays
        ordering = ["generation"]

    def __str__(self) -> str:
        return f"graph change {self.generation} {self.op}"


class RiskFlagStatus(models.TextChoices):
    OPEN = "open", "Open"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    DISMISSED = "dismissed", "Dismissed"


class GraphRiskFlag(models.Model):
    """One threshold crossing of one node of a zone: the node carries at least the zone's
    risk_threshold of its causal paths, so the parent level's authority (`review_by`) must
    look at it. It is its graph.risk_flagged trail event (`event`) as a review item.

    A flag is *live* while its crossing lasts (`ended_at` empty): at most one live flag per
    (zone, node), which makes two concurrent scans write one event. The node is named by its
    own zone and key: a scan of a level reads the zones beneath it, and keys are unique per
    zone only, so two zones' "risk:fraud" are two nodes, two flags. When the node falls
    below the threshold, or the threshold itself moves, the crossing ends; the next crossing
    is a new flag and a new event. Ending a crossing does not review it: the flag stays open
    until someone at `review_by` or above acknowledges or dismisses it with a note
    (graph.risk_resolved), so nothing a scan raised leaves the queue without a person.
    """

    zone = models.CharField(max_length=64)
    key = models.CharField(max_length=200)  # the node's key: the trail outlives the node
    node_zone = models.CharField(max_length=64, blank=True)  # the node's own zone; "" shared
    threshold = models.FloatField()
    share = models.FloatField()  # the node's share of paths when it crossed
    review_by = models.CharField(max_length=64)
    event = models.CharField(max_length=80)  # "chain#seq" of the graph.risk_flagged event
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)  # when the crossing ended
    status = models.CharField(
        max_length=16, choices=RiskFlagStatus.choices, default=RiskFlagStatus.OPEN
    )
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,  # the name stays on the trail event
        related_name="+",
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True)
    resolution_event = models.CharField(max_length=80, blank=True)  # graph.risk_resolved

    class Meta:
        db_table = "evidence_graphriskflag"  # created under evidence; the name stays
        ordering = ["zone", "key", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["zone", "node_zone", "key"],
                condition=models.Q(ended_at__isnull=True),
                name="graph_risk_flag_one_live_per_node",
            ),
            # A review is a person's act with a reason: no resolved flag without its moment
            # and note, and no open flag that claims to be resolved.
            models.CheckConstraint(
                condition=(
                    models.Q(status=RiskFlagStatus.OPEN, resolved_at__isnull=True, note="")
                    | (
                        ~models.Q(status=RiskFlagStatus.OPEN)
                        & models.Q(resolved_at__isnull=False)
                        & ~models.Q(note="")
                    )
                ),
                name="graph_risk_flag_resolution_complete",
            ),
        ]
        indexes = [
            # The reviewer queue: open flags by the authority that reviews them.
            models.Index(
                fields=["review_by"],
                condition=models.Q(status=RiskFlagStatus.OPEN),
                name="graph_risk_flag_open",
            )
        ]

    def __str__(self) -> str:
        return f"risk flag {self.key} in {self.zone} ({self.status})"
