"""An answer that cites a side of an open hard conflict of the knowledge base goes at least to
`required`, with the conflict named (issue 18.2); once the zone's admins settle it, the
next answer on the same text is graded on its evidence again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coordinates.models import Role
from evidence.models import KnowledgeConflict, Paragraph
from tests.decisions.conftest import ZONE, cite

POLICY = "# Remote work\n\nEmployees may request to work remotely up to 3 days per week."
MEMO = "# Memo\n\nRemote work: employees may work remotely up to 2 days per week."
CLAIM = "Employees may request to work remotely up to 3 days per week."
QUESTION = "How many days per week may employees work remotely?"


def test_an_answer_on_a_disputed_paragraph_waits_for_a_person_until_the_conflict_is_settled(
    ingest: Callable[..., Any],
    submit: Callable[..., Any],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    from evidence.knowledge import conflict_resolve

    ingest(POLICY, title="Remote work policy", key="remote")
    paragraph = Paragraph.objects.get(text=CLAIM)
    before = submit([{"text": CLAIM, "citations": [cite(paragraph)]}], question=QUESTION).json()
    assert before["gate"] == "auto"  # the control: undisputed, the same answer is released

    ingest(MEMO, title="Memo", key="memo", kind="memo")
    (conflict,) = KnowledgeConflict.objects.all()
    held = submit(
        [{"text": CLAIM, "citations": [cite(paragraph)]}], key="again", question=QUESTION
    ).json()
    assert held["gate"] == "required"
    assert held["state"] == "approval_required"
    from decisions.models import Decision

    report = Decision.objects.get(pk=held["id"]).report
    (disputed,) = report.body["contradictions"]
    assert (disputed["conflict"], disputed["kind"]) == (conflict.pk, "hard")
    assert "the knowledge base disagrees with itself here" in disputed["reason"]
    assert report.body["claims"][0]["contradicted"] is True

    with django_capture_on_commit_callbacks(execute=True):
        conflict_resolve(
            conflict_id=conflict.pk,
            user=person("ada", Role.ZONE_ADMIN, ZONE),
            resolution="first" if conflict.first_id == paragraph.pk else "second",
            reason="the policy governs",
        )
    after = submit(
        [{"text": CLAIM, "citations": [cite(paragraph)]}], key="settled", question=QUESTION
    ).json()
    assert after["gate"] == "auto"


def test_paragraphs_a_validation_finds_disagreeing_become_one_knowledge_conflict(
    ingest: Callable[..., Any], submit: Callable[..., Any], settings: Any
) -> None:
    """Seed 000 §9.6 (issue 30 point 3): what validation finds is work for the zone's admins
    too, not only a flag on one answer; stored once, whichever finds the pair first."""
    from evidence.knowledge import conflicts_scan_zone

    settings.MARIA_CONFLICT_SCAN_SECONDS = 0  # the ingest scans find nothing: no time
    ingest(POLICY, title="Remote work policy", key="remote")
    ingest(MEMO, title="Memo", key="memo", kind="memo")
    assert not KnowledgeConflict.objects.exists()
    policy = Paragraph.objects.get(text=CLAIM)
    memo = Paragraph.objects.get(text__startswith="Remote work: employees")
    both = submit(
        [{"text": CLAIM, "citations": [cite(policy), cite(memo)]}], question=QUESTION
    ).json()
    assert both["gate"] == "required"
    (conflict,) = KnowledgeConflict.objects.all()
    assert {conflict.first_id, conflict.second_id} == {policy.pk, memo.pk}
    assert (conflict.kind, conflict.found_by, conflict.zone) == ("hard", "validation", ZONE)
    assert conflict.resolved_at is None
    # the next answer on either side waits for a person until the admins settle it
    one = submit([{"text": CLAIM, "citations": [cite(policy)]}], key="one", question=QUESTION)
    assert one.json()["gate"] == "required"
    # and neither the nightly scan nor the same answer again stores the pair twice
    settings.MARIA_CONFLICT_SCAN_SECONDS = 120
    conflicts_scan_zone(zone=ZONE)
    submit(
        [{"text": CLAIM, "citations": [cite(policy), cite(memo)]}], key="again", question=QUESTION
    )
    assert KnowledgeConflict.objects.filter(first__in=[policy, memo]).count() == 1
