"""Node and edge vocabularies of the organisational knowledge graph (docs/math.md §12)."""

from __future__ import annotations

from enum import StrEnum


class NodeType(StrEnum):
    PERSON = "person"
    DECISION = "decision"
    AMOUNT = "amount"
    DEADLINE = "deadline"
    DOCUMENT = "document"
    POLICY = "policy"
    RISK = "risk"
    DEPARTMENT = "department"  # an organisational unit named in a document
    OBLIGATION = "obligation"  # a piece of work or process step a document prescribes


class EdgeType(StrEnum):
    APPROVED_BY = "approved_by"
    PROPOSED_BY = "proposed_by"
    DEPENDS_ON = "depends_on"
    CONSTRAINED_BY = "constrained_by"
    ALLOCATED_FROM = "allocated_from"
    DEADLINE_FOR = "deadline_for"
    ESCALATED_TO = "escalated_to"
    REFERENCES = "references"
    MITIGATES = "mitigates"
    CAUSED_BY = "caused_by"


# Edge types are stored as small integer codes in the numpy edge arrays; the code of a type
# is its position here, so it must only ever be appended to.
EDGE_TYPES: tuple[EdgeType, ...] = tuple(EdgeType)
EDGE_CODE: dict[EdgeType, int] = {edge_type: code for code, edge_type in enumerate(EDGE_TYPES)}

# Chains a traversal may follow (docs/math.md §12): causal, authority and evidence chains.
CAUSAL_EDGES: frozenset[EdgeType] = frozenset({EdgeType.CAUSED_BY, EdgeType.DEPENDS_ON})
AUTHORITY_EDGES: frozenset[EdgeType] = frozenset({EdgeType.APPROVED_BY, EdgeType.ESCALATED_TO})
EVIDENCE_EDGES: frozenset[EdgeType] = frozenset({EdgeType.REFERENCES, EdgeType.MITIGATES})


def edge_code(edge_type: EdgeType | str | int) -> int:
    """Integer code of an edge type given as enum, name or code."""
    if isinstance(edge_type, int) and not isinstance(edge_type, EdgeType):
        if not 0 <= edge_type < len(EDGE_TYPES):
            raise ValueError(f"unknown edge type code {edge_type}")
        return edge_type
    return EDGE_CODE[EdgeType(edge_type)]
