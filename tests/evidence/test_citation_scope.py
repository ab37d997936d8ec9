"""A citation of another zone's document counts for nothing, and its report says no more
than it would of a document that does not exist: not the other zone, not that it exists."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from coordinates.coordinate import parse
from coordinates.selectors import effective_policy
from evidence.models import Paragraph
from evidence.services import bundle_create
from evidence.validation import validate_bundle
from tests.samples import POLICY_EN

pytestmark = pytest.mark.django_db
ZONE = "G1.U1.P1.Z1"
OTHER = "G1.U1.P2.Z1"  # a zone of another planet
CLAIM = "Expenses above 500,000 yen require prior approval by the division head."


def reasons(document: int, paragraph: int) -> list[str]:
    bundle = bundle_create(
        zone=parse(ZONE),
        claims=[{"text": CLAIM, "citations": [{"document": document, "paragraph": paragraph}]}],
    )
    report = validate_bundle(bundle, effective_policy(parse(ZONE)))
    item = report.body["claims"][0]["evidence"][0]
    assert item["fabricated"] is True
    return [item["dropped"], *item["reasons"]]


def test_another_zones_document_reads_as_one_that_does_not_exist(
    org: Any, ingest: Callable[..., Any]
) -> None:
    # given a document of another planet's zone, and an id no document holds
    ingest(POLICY_EN, title="Legal travel", key="legal-travel", zone=OTHER)
    foreign = Paragraph.objects.get(text__contains="500,000 yen require", zone=OTHER)
    document = foreign.version.document_id
    missing = document + 1000
    # when a bundle of ZONE cites each
    theirs, nowhere = reasons(document, foreign.number), reasons(missing, foreign.number)
    # then the reasons are the same but for the id, and never name the other zone
    assert [re.sub(rf"\b{document}\b", "N", r) for r in theirs] == [
        re.sub(rf"\b{missing}\b", "N", r) for r in nowhere
    ]
    assert all(OTHER not in r and "G1.U1.P2" not in r for r in theirs)
    assert "outside the zone" in theirs[0]
