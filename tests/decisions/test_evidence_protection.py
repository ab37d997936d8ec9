"""What a report judged cannot be edited: bundles and reports never change, a version and its
paragraphs keep their text and hashes (evidence.models, "database protection"), through the
ORM and raw SQL alike, on both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from decisions.models import Decision
from evidence.models import Document, DocumentVersion, EvidenceBundle, Paragraph, ValidationReport
from tests.decisions.conftest import GOOD, cite

pytestmark = pytest.mark.django_db

REFUSED = r"append-only|Cannot (update or )?(update|delete)"


def _refused(action: Callable[[], object]) -> None:
    # A savepoint per attempt: on PostgreSQL a failed statement spoils the transaction.
    with pytest.raises(DatabaseError, match=REFUSED), transaction.atomic():
        action()


def _sql(statement: str, *params: Any) -> Callable[[], object]:
    def run() -> None:
        with connection.cursor() as cursor:
            cursor.execute(statement, params)

    return run


@pytest.fixture
def judged(submit: Callable[..., Any], policy_doc: Paragraph) -> Decision:
    submit([{"text": GOOD, "citations": [cite(policy_doc)]}])
    decision = Decision.objects.get()
    assert decision.report is not None
    return decision


def test_a_bundle_cannot_be_rewritten_or_deleted(judged: Decision) -> None:
    bundle = judged.bundle
    _refused(lambda: EvidenceBundle.objects.filter(pk=bundle.pk).update(claims=[]))
    _refused(_sql("UPDATE evidence_evidencebundle SET zone = 'G9' WHERE id = %s", bundle.pk))
    _refused(_sql("DELETE FROM evidence_evidencebundle WHERE id = %s", bundle.pk))
    assert EvidenceBundle.objects.get(pk=bundle.pk).claims == bundle.claims


def test_a_report_cannot_be_rewritten_or_deleted(judged: Decision) -> None:
    report = judged.report
    assert report is not None
    _refused(lambda: ValidationReport.objects.filter(pk=report.pk).update(gate="auto"))
    _refused(_sql("UPDATE evidence_validationreport SET body = '{}' WHERE id = %s", report.pk))
    _refused(_sql("DELETE FROM evidence_validationreport WHERE id = %s", report.pk))
    assert ValidationReport.objects.get(pk=report.pk).gate == report.gate


def test_a_version_keeps_its_text_and_is_superseded_only_once(policy_doc: Paragraph) -> None:
    version = policy_doc.version
    _refused(lambda: DocumentVersion.objects.filter(pk=version.pk).update(text="rewritten"))
    _refused(
        _sql("UPDATE evidence_documentversion SET content_hash = 'x' WHERE id = %s", version.pk)
    )
    _refused(_sql("UPDATE evidence_documentversion SET status = 'draft' WHERE id = %s", version.pk))
    _refused(_sql("DELETE FROM evidence_documentversion WHERE id = %s", version.pk))
    # what the store does to a version stays allowed: embedded, then superseded once
    DocumentVersion.objects.filter(pk=version.pk).update(embedded_at=timezone.now())
    DocumentVersion.objects.filter(pk=version.pk).update(superseded_at=timezone.now())
    _refused(lambda: DocumentVersion.objects.filter(pk=version.pk).update(superseded_at=None))
    assert DocumentVersion.objects.get(pk=version.pk).text == version.text


def test_a_paragraph_keeps_its_text_and_stops_being_current_only_once(
    policy_doc: Paragraph,
) -> None:
    pk = policy_doc.pk
    _refused(lambda: Paragraph.objects.filter(pk=pk).update(text="rewritten"))
    _refused(_sql("UPDATE evidence_paragraph SET zone = 'G9' WHERE id = %s", pk))
    _refused(_sql('UPDATE evidence_paragraph SET "end" = "end" + 1 WHERE id = %s', pk))
    _refused(_sql("DELETE FROM evidence_paragraph WHERE id = %s", pk))
    Paragraph.objects.filter(pk=pk).update(embedder="other-model")
    Paragraph.objects.filter(pk=pk).update(current=False)
    _refused(lambda: Paragraph.objects.filter(pk=pk).update(current=True))
    assert Paragraph.objects.get(pk=pk).text == policy_doc.text


def test_a_document_keeps_its_zone_and_key(policy_doc: Paragraph) -> None:
    document = policy_doc.version.document
    _refused(lambda: Document.objects.filter(pk=document.pk).update(key="elsewhere"))
    _refused(_sql("UPDATE evidence_document SET zone_id = zone_id + 1 WHERE id = %s", document.pk))
    _refused(_sql("DELETE FROM evidence_document WHERE id = %s", document.pk))
    Document.objects.filter(pk=document.pk).update(title="Renamed by a new version")
