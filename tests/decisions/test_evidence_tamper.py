"""The tamper matrix: with the triggers bypassed (as an attacker with database rights would),
an edit to any row an auditor relies on is found at that exact row, by `verify_trail` on the
database and by `verify_trail --file` on an `?include=evidence` export."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from audit import integrity
from audit.selectors import trail_export, trail_verify
from decisions.models import Decision
from evidence.models import DocumentVersion, EvidenceBundle, Paragraph, ValidationReport
from tests.decisions.conftest import GOOD, cite
from tests.trail_support import triggers_bypassed
from trail import export

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(submit: Callable[..., Any], policy_doc: Paragraph) -> Decision:
    submit([{"text": GOOD, "citations": [cite(policy_doc)]}])
    decision = Decision.objects.select_related("bundle", "report").get()
    assert decision.report is not None
    return decision


def _verify_database() -> list[str]:
    problems, checked = integrity.verify_evidence_database()
    assert checked > 0
    return problems


def _verify_export() -> list[str]:
    # The export as an auditor downloads it, verified with nothing but the file.
    lines = list(trail_export(None, None))
    assert any('"type":"evidence.paragraph"' in line for line in lines)
    return export.verify_export(
        lines, source="test", appendix_check=integrity.verify_evidence_records
    ).problems


def _first(problems: list[str]) -> str:
    assert problems, "the tampering went unseen"
    return problems[0]


def test_an_untouched_trail_and_its_evidence_verify_both_ways(judged: Decision) -> None:
    assert _verify_database() == []
    assert _verify_export() == []
    assert trail_verify(None, None).intact


def _edit_bundle(decision: Decision) -> str:
    claims = json.loads(json.dumps(decision.bundle.claims))
    claims[0]["text"] = claims[0]["text"].replace("500,000", "600,000")
    EvidenceBundle.objects.filter(pk=decision.bundle_id).update(claims=claims)
    return f"evidence_evidencebundle id {decision.bundle_id} "


def _edit_report_gate(decision: Decision) -> str:
    assert decision.report_id is not None
    ValidationReport.objects.filter(pk=decision.report_id).update(gate="blocked")
    return f"evidence_validationreport id {decision.report_id} "


def _edit_report_body(decision: Decision) -> str:
    report = decision.report
    assert report is not None
    body = json.loads(json.dumps(report.body))
    body["claims"][0]["supported"] = not body["claims"][0]["supported"]
    ValidationReport.objects.filter(pk=report.pk).update(body=body)
    return f"evidence_validationreport id {report.pk} "


def _edit_version_text(decision: Decision) -> str:
    version = Paragraph.objects.get(text__contains="500,000 yen require").version
    DocumentVersion.objects.filter(pk=version.pk).update(
        text=version.text.replace("500,000", "900,000")
    )
    return f"evidence_documentversion id {version.pk} "


def _edit_paragraph_text(decision: Decision) -> str:
    paragraph = Paragraph.objects.get(text__contains="500,000 yen require")
    Paragraph.objects.filter(pk=paragraph.pk).update(
        text=paragraph.text.replace("500,000", "900,000")
    )
    return f"evidence_paragraph id {paragraph.pk}"


def _edit_paragraph_and_its_hash(decision: Decision) -> str:
    # A careful attacker fixes the paragraph's own hash too: its version's seal still differs.
    import hashlib

    paragraph = Paragraph.objects.get(text__contains="500,000 yen require")
    text = paragraph.text.replace("500,000", "900,000")
    Paragraph.objects.filter(pk=paragraph.pk).update(
        text=text, text_hash=hashlib.sha256(text.encode()).hexdigest()
    )
    return f"evidence_documentversion id {paragraph.version_id} "


EDITS = {
    "bundle claims": _edit_bundle,
    "report gate": _edit_report_gate,
    "report body": _edit_report_body,
    "version text": _edit_version_text,
    "paragraph text": _edit_paragraph_text,
    "paragraph text and hash": _edit_paragraph_and_its_hash,
}
# The export carries a version's hash and paragraph places, not its whole text: a version's
# text is re-hashed from the database; offline, its cited paragraphs are.
OFFLINE_SEES = {
    "version text": None,
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_an_edit_that_bypassed_the_triggers_is_found_at_its_row(
    judged: Decision, edit: str
) -> None:
    with triggers_bypassed():
        where = EDITS[edit](judged)
    assert where in _first(_verify_database())
    if edit in OFFLINE_SEES:
        return
    assert where in _first(_verify_export())
    assert not trail_verify(None, None).intact


def test_verify_trail_exits_1_naming_the_row(judged: Decision) -> None:
    with triggers_bypassed():
        where = _edit_report_gate(judged)
    out = io.StringIO()
    with pytest.raises(CommandError) as failed:
        call_command("verify_trail", stdout=out)
    assert failed.value.returncode == 1
    assert where in out.getvalue()


def test_verify_trail_file_re_hashes_the_exports_evidence(judged: Decision, tmp_path: Any) -> None:
    path = tmp_path / "trail.jsonl"
    path.write_text("".join(trail_export(None, None)))
    out = io.StringIO()
    call_command("verify_trail", file=str(path), stdout=out)
    assert "evidence rows re-hashed" in out.getvalue()
    # a byte flipped in the file's copy of the report is found offline
    lines = path.read_text().splitlines(keepends=True)
    doctored = [
        line.replace('"gate":"', '"gate":"x', 1) if '"type":"evidence.report"' in line else line
        for line in lines
    ]
    path.write_text("".join(doctored))
    with pytest.raises(CommandError):
        call_command("verify_trail", file=str(path), stdout=io.StringIO())


def test_a_decision_pointed_at_another_report_is_found(
    submit: Callable[..., Any], policy_doc: Paragraph
) -> None:
    # Decisions change state, so their table is not append-only: but the report an auditor
    # sees on a decision must be the one its trail names.
    submit([{"text": GOOD, "citations": [cite(policy_doc)]}])
    submit([{"text": GOOD.replace("500,000", "300,000"), "citations": [cite(policy_doc)]}])
    first, second = Decision.objects.order_by("pk")
    assert _verify_database() == []
    Decision.objects.filter(pk=first.pk).update(report=second.report_id)
    assert f"decisions_decision id {first.pk}: it shows report {second.report_id}" in _first(
        _verify_database()
    )
