"""An auditor's export carries the evidence its events name and nothing of another zone: a
bundle that cites another zone's document does not bring that document's paragraphs along."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from audit import selectors
from coordinates.coordinate import parse
from coordinates.models import Role
from evidence.models import Paragraph
from tests.decisions.conftest import ZONE, cite, policy_doc, submit

__all__ = ["policy_doc", "submit"]  # the decision tests' fixtures, used here
pytestmark = pytest.mark.django_db
OTHER = "G1.U1.P2.Z1"  # a zone of another planet
OTHERS = "Quokkafund claims above 700,000 yen require prior approval by the director."


@pytest.fixture
def cited_across(
    ingest: Callable[..., Any], submit: Callable[..., Any], policy_doc: Paragraph
) -> tuple[int, Paragraph]:
    """A decision of ZONE citing its own policy and a paragraph of OTHER's document."""
    ingest(f"Quokkafund rules\n\n{OTHERS}\n", title="Quokkafund rules", zone=OTHER)
    foreign = Paragraph.objects.get(text=OTHERS)
    claims = [
        {
            "text": "Expenses above 500,000 yen need the division head.",
            "citations": [cite(policy_doc)],
        },
        {"text": "Claims above 700,000 yen need the director.", "citations": [cite(foreign)]},
    ]
    decision = submit(claims)
    assert decision.status_code == 201
    return int(decision.json()["id"]), foreign


def test_the_evidence_export_leaves_out_another_zones_cited_paragraphs(
    cited_across: tuple[int, Paragraph],
    policy_doc: Paragraph,
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    # given an auditor of ZONE, whose decision cited OTHER's paragraph
    decision_id, foreign = cited_across
    auditor = client_for(person("aude", Role.AUDITOR, ZONE))
    # when they export their zone's trail with its evidence
    response = auditor.get(f"/api/v1/trail/?zone={ZONE}&include=evidence")
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    # then their decision's bundle and their own cited policy are there, OTHER's text is not
    assert response.status_code == 200
    assert any(r.get("type") == "evidence.bundle" and r["decision"] == decision_id for r in lines)
    versions = {r["document_id"] for r in lines if r.get("type") == "evidence.version"}
    texts = [r["text"] for r in lines if r.get("type") == "evidence.paragraph"]
    assert versions == {policy_doc.version.document_id}
    assert policy_doc.text in texts
    assert foreign.text not in texts


def test_the_shown_range_still_verifies_without_the_foreign_evidence(
    cited_across: tuple[int, Paragraph],
) -> None:
    report = selectors.trail_verify([parse(ZONE)], None)
    assert report.intact, report.problems
    assert report.evidence_checked
