"""Typed edges from policy text: the validation pass, the regex fallback when the NLP extra is
absent, English and Japanese extraction with coreference, and the edges a stored document
puts on the graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph import extract_nlp
from graph.extract_nlp import ENTITY_KINDS, RELATIONS, Entity, Relation, validate

DIRECTOR = Entity("role", "finance director")
CLAIMS = Entity("obligation", "expense claims")
TEAM = Entity("department", "procurement team")


def keys(text: str, **kwargs: Any) -> set[tuple[str, str, str]]:
    return {edge.key() for edge in extract_nlp.extract_relations(text, **kwargs).edges}


# --- validation (pure) -----------------------------------------------------------------------


def test_validation_drops_wrong_kinds_self_loops_and_duplicates() -> None:
    edges, conflicts = validate(
        [
            Relation(DIRECTOR, "approves", CLAIMS),
            Relation(DIRECTOR, "approves", CLAIMS),  # said twice
            Relation(CLAIMS, "approves", DIRECTOR),  # work does not approve people
            Relation(DIRECTOR, "reports_to", DIRECTOR),  # a self-loop
            Relation(DIRECTOR, "deadline", CLAIMS),  # a deadline must be a deadline
        ]
    )
    assert [e.key() for e in edges] == [Relation(DIRECTOR, "approves", CLAIMS).key()]
    assert conflicts == []


def test_validation_flags_a_reporting_line_both_ways_and_two_deadlines_but_keeps_them() -> None:
    edges, conflicts = validate(
        [
            Relation(TEAM, "reports_to", DIRECTOR),
            Relation(DIRECTOR, "reports_to", TEAM),
            Relation(CLAIMS, "deadline", Entity("deadline", "within 30 days")),
            Relation(CLAIMS, "deadline", Entity("deadline", "within 60 days")),
        ]
    )
    assert len(edges) == 4
    assert sorted(c.reason for c in conflicts) == ["reports_to both ways", "two deadlines"]


entities = st.builds(Entity, st.sampled_from(ENTITY_KINDS), st.sampled_from(["a", "b", "c"]))
relations = st.builds(Relation, entities, st.sampled_from(RELATIONS), entities)


@given(st.lists(relations, max_size=30))
def test_validated_edges_are_typed_loop_free_unique_and_stable(
    candidates: list[Relation],
) -> None:
    edges, _ = validate(candidates)
    assert len({e.key() for e in edges}) == len(edges)
    for edge in edges:
        sources, targets = extract_nlp.SIGNATURES[edge.relation]
        assert edge.source.kind in sources
        assert edge.target.kind in targets
        assert edge.source != edge.target
    assert validate(edges)[0] == edges  # a second pass changes nothing


# --- the fallback ----------------------------------------------------------------------------


def test_without_the_nlp_extra_the_regular_expressions_give_the_edges(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(extract_nlp, "nlp_available", lambda language="en": False)
    found = extract_nlp.extract_relations(
        "The spending plan was approved by the finance director. Follow the Travel Policy.",
        known_documents={"travel": "Travel Policy"},
    )
    assert found.engine == "regex"
    assert {e.key() for e in found.edges} == {
        ("role:finance director", "approves", "document:this"),
        ("document:this", "references", "document:travel policy"),
    }


def test_the_language_is_told_by_its_script() -> None:
    assert extract_nlp.language_of("経理部長は支払申請を承認する。") == "ja"
    assert extract_nlp.language_of("The Board approves contracts (契約).") == "en"


# --- English and Japanese with the NLP extra ----------------------------------------------------


def test_english_roles_approve_report_and_own_work_and_the_department_is_resolved() -> None:
    pytest.importorskip("spacy")
    text = (
        "The Procurement Team reports to the Chief Financial Officer. "
        "The department is responsible for supplier contracts. "
        "Purchase requests must be approved by the budget holder before purchase orders "
        "are issued. Expense claims must be submitted within 30 days."
    )
    assert keys(text) == {
        ("department:procurement team", "reports_to", "role:chief financial officer"),
        ("department:procurement team", "responsible_for", "obligation:supplier contracts"),
        ("role:budget holder", "approves", "obligation:purchase requests"),
        ("obligation:purchase requests", "precedes", "obligation:purchase orders"),
        ("obligation:expense claims", "deadline", "deadline:within 30 days"),
    }


def test_a_pronoun_stands_for_the_last_role_named() -> None:
    pytest.importorskip("spacy")
    text = "The Records Officer keeps the disposal log. He reports to the Head of Legal."
    assert ("role:records officer", "reports_to", "role:head of legal") in keys(text)


def test_japanese_approval_reporting_and_dobu_resolved_to_the_department() -> None:
    pytest.importorskip("spacy")
    text = "経理部長は支払申請を承認する。同部は四半期ごとに財務部長に報告する。"
    assert keys(text) == {
        ("role:経理部長", "approves", "obligation:支払申請"),
        ("department:経理部", "reports_to", "role:財務部長"),
    }


# --- on the graph --------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_stored_policy_puts_its_typed_relations_on_the_graph_in_its_zone(
    ingest: Callable[..., Any],
) -> None:
    pytest.importorskip("spacy")
    from graph.models import GraphEdge
    from tests.graph.conftest import ZONE

    ingest(
        "Expense policy\n\nThe Finance Director approves expense claims. "
        "The Accounts Team reports to the Finance Director.\n",
        title="Expense policy",
        key="expense",
    )
    edges = {
        (e.source.key, e.edge_type, e.target.key)
        for e in GraphEdge.objects.select_related("source", "target")
    }
    assert (
        f"obligation:{ZONE}:expense claims",
        "approved_by",
        f"person:{ZONE}:finance director",
    ) in edges
    assert (
        f"department:{ZONE}:accounts team",
        "escalated_to",
        f"person:{ZONE}:finance director",
    ) in edges


@pytest.mark.django_db
def test_without_the_nlp_extra_a_stored_policy_gets_only_the_regex_edges(
    ingest: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from graph.models import GraphEdge, GraphNode
    from tests.graph.conftest import ZONE

    monkeypatch.setattr(extract_nlp, "nlp_available", lambda language="en": False)
    ingest(
        "Expense policy\n\nExpense claims are approved by the finance director. "
        "The Accounts Team reports to the Finance Director.\n",
        title="Expense policy",
        key="expense",
    )
    assert not GraphNode.objects.filter(key__startswith="obligation:").exists()
    assert not GraphEdge.objects.filter(edge_type="escalated_to").exists()
    approver = GraphEdge.objects.get(edge_type="approved_by")
    assert approver.target.key == f"person:{ZONE}:finance director"


@pytest.mark.django_db
def test_the_same_role_named_in_two_zones_is_two_nodes_each_in_its_own_zone(
    ingest: Callable[..., Any],
) -> None:
    pytest.importorskip("spacy")
    from graph.models import GraphEdge
    from tests.graph.conftest import ZONE

    other = "G1.U1.P2.Z1"
    text = "Expense policy\n\nThe Finance Director approves expense claims.\n"
    ingest(text, title="Expense policy", key="expense")
    ingest(text, title="Expense policy", key="expense", zone=other)
    approvals = GraphEdge.objects.filter(edge_type="approved_by").select_related("source", "target")
    assert {(e.zone, e.source.zone, e.target.key) for e in approvals} == {
        (ZONE, ZONE, f"person:{ZONE}:finance director"),
        (other, other, f"person:{other}:finance director"),
    }


@pytest.mark.django_db
def test_a_stored_japanese_rule_puts_its_reporting_line_on_the_graph(
    ingest: Callable[..., Any],
) -> None:
    pytest.importorskip("spacy")
    from graph.models import GraphEdge
    from tests.graph.conftest import ZONE

    ingest(
        "経費規程\n\n経理部長は支払申請を承認する。同部は財務部長に報告する。\n",
        title="経費規程",
        key="keihi",
    )
    line = GraphEdge.objects.select_related("source", "target").get(edge_type="escalated_to")
    assert (line.source.key, line.target.key) == (
        f"department:{ZONE}:経理部",
        f"person:{ZONE}:財務部長",
    )
