"""Issue 28 point 1, the tamper matrix: every governance row is append-only or on the chain.
Each statement an attacker with straight SQL ran against main is either refused by the
database (trigger) or accepted and then named at its row by `verify_trail` (audit.rows);
a refused one, run again with the triggers bypassed, is named too where its row's columns
are on a chain. Runs on SQLite and, with DATABASE_URL, on PostgreSQL."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from audit import rows
from coordinates.coordinate import parse
from coordinates.models import Role, ZonePolicyVersion
from coordinates.selectors import zone_get
from coordinates.services import zone_add
from decisions import events
from decisions.models import ClaimVerdict, Decision, PeriodicReview, ReReview
from decisions.periodic import periodic_review_close
from decisions.rereview import rereview_close
from decisions.services import decision_approve, decision_claim, decision_comment
from evidence.models import Document, KnowledgeConflict, ZoneCalibration
from tests.decisions.conftest import GOOD, UNVERIFIABLE, WRONG_NUMBER, ZONE, cite
from tests.decisions.test_graph_gate_on_answers import CHAIN, CHAIN_KEYS, graph_of  # noqa: F401
from tests.samples import POLICY_EN
from tests.trail_support import triggers_bypassed

pytestmark = pytest.mark.django_db

PLANET = "G1.U1.P1"
FLAGGING = {
    "tau": 0.2,
    "refusal_floor": 0.1,
    "floor": 0.33,
}  # as tests/decisions/test_periodic_review
PAYER = "# Hotels\n\nAny excess hotel cost is paid by the employee."
PAYER_SWAPPED = "# Hotel memo\n\nThe company pays any excess hotel cost."
NEW_ZONE = "G1.U1.P1.Z3"
# SQLite's RAISE(ABORT) and PostgreSQL's pgtrigger Protect / truncate guard.
REFUSED = "append-only|pgtrigger: Cannot"


@pytest.fixture
def governed(
    submit: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    ingest: Callable[..., Any],
    person: Callable[..., Any],
    graph_of: Callable[..., None],  # noqa: F811
) -> dict[str, Any]:
    """One row of every governance table, each made through its service."""
    ann = person("ann", Role.REVIEWER, PLANET)
    person("zed", Role.ZONE_ADMIN, PLANET)
    graph_of(CHAIN)
    completed = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    # Blocked on its own, whatever its graph evidence says: the gate never loosens.
    failed = submit(
        [{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}], graph_evidence=CHAIN_KEYS
    ).json()
    queued = submit([{"text": UNVERIFIABLE, "citations": [cite(policy_doc)]}]).json()
    assert (completed["state"], failed["state"], queued["state"]) == (
        "completed",
        "failed",
        "approval_required",
    )
    decision_claim(decision_id=queued["id"], user=ann)
    decision_approve(
        decision_id=queued["id"],
        user=ann,
        reason="fine",
        claims=[{"index": 0, "supported": True, "note": "said in the policy"}],
        replacement=GOOD,  # unverified, it is a refusal: the approver writes the answer
    )
    comment = decision_comment(decision_id=queued["id"], user=ann, text="checked the policy")
    set_policy(**FLAGGING)
    flagged = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    review = PeriodicReview.objects.get(decision_id=flagged["id"])
    periodic_review_close(review_id=review.pk, user=ann, verdict="ok", note="fine")
    # A new version changes the paragraph the released answers cite: they are re-reviewed.
    ingest(POLICY_EN.replace("500,000", "600,000"), title="Travel policy", key="travel")
    rereview = ReReview.objects.filter(decision_id=completed["id"]).get()
    rereview_close(rereview_id=rereview.pk, user=ann, verdict="still_correct")
    ingest(PAYER, title="Hotels", key="hotels", zone="G1.U1.P1.Z2")
    ingest(PAYER_SWAPPED, title="Hotel memo", key="hotel-memo", zone="G1.U1.P1.Z2")
    with transaction.atomic():
        # As decisions.calibration.calibration_propose stores a fit: the row and its event.
        now = timezone.now()
        calibration = ZoneCalibration.objects.create(
            zone=zone_get(parse(ZONE)),
            version=1,
            method="platt",
            params={"a": 1.0, "b": 0.0},
            verdicts=40,
            window_from=now - timedelta(days=7),
            window_until=now,
            fitted_by="test",
            reliability_before={},
            reliability_after={},
        )
        events.calibration_proposed(calibration, actor=None)
    zone_add(coordinate=parse(NEW_ZONE))  # a zone whose whole history is on the trail
    return {
        "completed": completed["id"],
        "failed": failed["id"],
        "queued": queued["id"],
        "verdict": ClaimVerdict.objects.get(decision_id=queued["id"]).pk,
        "approval": Decision.objects.get(pk=queued["id"]).approvals.get().pk,
        "comment": comment.pk,
        "review": review.pk,
        "rereview": rereview.pk,
        "calibration": calibration.pk,
        "conflict": KnowledgeConflict.objects.filter(zone="G1.U1.P1.Z2").get().pk,
        "policy": ZonePolicyVersion.objects.filter(zone__coordinate=ZONE).latest("version").pk,
        "document": Document.objects.get(key="travel").pk,
        "auditor": person("mallory").pk,
    }


@dataclass(frozen=True)
class Tampering:
    sql: str
    params: Callable[[dict[str, Any]], list[Any]]
    where: Callable[[dict[str, Any]], str]  # the start of the problem that names the row
    refused: bool  # by a trigger; else accepted and named
    named_when_bypassed: bool = True


MATRIX = {
    "failed decision set to completed/auto": Tampering(
        "UPDATE decisions_decision SET state = 'completed', gate = 'auto' WHERE id = %s",
        lambda g: [g["failed"]],
        lambda g: f"decisions_decision id {g['failed']} ",
        refused=False,
    ),
    "completed decision's answer rewritten": Tampering(
        "UPDATE decisions_decision SET answer = 'Anyone may approve.' WHERE id = %s",
        lambda g: [g["completed"]],
        lambda g: f"decisions_decision id {g['completed']} ",
        refused=True,
    ),
    "decision's graph evidence dropped": Tampering(
        # Before validation the answer would skip the graph gate (services._graph_gated).
        "UPDATE decisions_decision SET graph_evidence = NULL WHERE id = %s",
        lambda g: [g["failed"]],
        lambda g: f"decisions_decision id {g['failed']} ",
        refused=True,
    ),
    "reviewer's claim verdict flipped": Tampering(
        "UPDATE decisions_claimverdict SET supported = NOT supported WHERE id = %s",
        lambda g: [g["verdict"]],
        lambda g: f"decisions_claimverdict id {g['verdict']} ",
        refused=False,
    ),
    "reviewer's claim verdict deleted": Tampering(
        "DELETE FROM decisions_claimverdict WHERE id = %s",
        lambda g: [g["verdict"]],
        lambda g: f"decisions_claimverdict id of decision {g['queued']} by ann on claim 0",
        refused=True,
    ),
    "calibration's parameters changed": Tampering(
        "UPDATE evidence_zonecalibration SET params = %s WHERE id = %s",
        lambda g: [json.dumps({"a": 9.0, "b": 0.0}), g["calibration"]],
        lambda g: f"evidence_zonecalibration id {g['calibration']} ",
        refused=True,
    ),
    "calibration set adopted": Tampering(
        "UPDATE evidence_zonecalibration SET status = 'adopted' WHERE id = %s",
        lambda g: [g["calibration"]],
        lambda g: f"evidence_zonecalibration id {g['calibration']} ",
        refused=False,
    ),
    "calibration deleted": Tampering(
        "DELETE FROM evidence_zonecalibration WHERE id = %s",
        lambda g: [g["calibration"]],
        lambda g: f"evidence_zonecalibration id {ZONE}@1 ",
        refused=True,
    ),
    "knowledge conflict resolved": Tampering(
        "UPDATE evidence_knowledgeconflict SET resolution = 'first', resolved_at = created_at"
        " WHERE id = %s",
        lambda g: [g["conflict"]],
        lambda g: f"evidence_knowledgeconflict id {g['conflict']}:",
        refused=False,
    ),
    "knowledge conflict deleted": Tampering(
        "DELETE FROM evidence_knowledgeconflict WHERE id = %s",
        lambda g: [g["conflict"]],
        lambda g: "",
        refused=True,
        named_when_bypassed=False,  # an open conflict has no event yet; the trigger stands
    ),
    "policy version's tau set to 0.01": Tampering(
        "UPDATE coordinates_zonepolicyversion SET overrides = %s WHERE id = %s",
        lambda g: [json.dumps({**FLAGGING, "tau": 0.01}), g["policy"]],
        lambda g: f"coordinates_zonepolicyversion id {g['policy']} ",
        refused=True,
    ),
    "auditor role inserted": Tampering(
        "INSERT INTO coordinates_roleassignment (user_id, role, scope, granted_at)"
        " VALUES (%s, 'auditor', %s, CURRENT_TIMESTAMP)",
        lambda g: [g["auditor"], NEW_ZONE],
        lambda g: "coordinates_roleassignment id ",
        refused=False,
    ),
    "approval changed": Tampering(
        "UPDATE decisions_approval SET reason = 'no reason' WHERE id = %s",
        lambda g: [g["approval"]],
        lambda g: "",
        refused=True,
        named_when_bypassed=False,
    ),
    "approval deleted": Tampering(
        "DELETE FROM decisions_approval WHERE id = %s",
        lambda g: [g["approval"]],
        lambda g: "",
        refused=True,
        named_when_bypassed=False,
    ),
    "periodic review's verdict changed": Tampering(
        "UPDATE decisions_periodicreview SET verdict = 'wrong', note = 'bad' WHERE id = %s",
        lambda g: [g["review"]],
        lambda g: f"decisions_periodicreview id {g['review']} ",
        refused=True,
    ),
    "periodic review deleted": Tampering(
        "DELETE FROM decisions_periodicreview WHERE id = %s",
        lambda g: [g["review"]],
        lambda g: f"decisions_periodicreview id {g['review']} ",
        refused=True,
    ),
    "re-review's verdict changed": Tampering(
        "UPDATE decisions_rereview SET verdict = 'wrong', note = 'bad' WHERE id = %s",
        lambda g: [g["rereview"]],
        lambda g: f"decisions_rereview id {g['rereview']} ",
        refused=True,
    ),
    "re-review deleted": Tampering(
        "DELETE FROM decisions_rereview WHERE id = %s",
        lambda g: [g["rereview"]],
        lambda g: f"decisions_rereview id {g['rereview']} ",
        refused=True,
    ),
    "comment changed": Tampering(
        "UPDATE decisions_comment SET text = 'nothing checked' WHERE id = %s",
        lambda g: [g["comment"]],
        lambda g: f"decisions_comment id {g['comment']} ",
        refused=True,
    ),
    "comment deleted": Tampering(
        "DELETE FROM decisions_comment WHERE id = %s",
        lambda g: [g["comment"]],
        lambda g: f"decisions_comment id {g['comment']} ",
        refused=True,
    ),
    "document title changed": Tampering(
        "UPDATE evidence_document SET title = 'Expenses: anyone approves' WHERE id = %s",
        lambda g: [g["document"]],
        lambda g: f"evidence_document id {g['document']}:",
        refused=False,
    ),
}


def _run(sql: str, params: list[Any]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _verify_trail() -> str:
    """verify_trail's output; it must fail (exit 1)."""
    out = io.StringIO()
    with pytest.raises(CommandError) as failed:
        call_command("verify_trail", stdout=out)
    assert failed.value.returncode == 1
    return out.getvalue()


def test_the_untouched_rows_verify(governed: dict[str, Any]) -> None:
    problems, checked = rows.verify_rows_database()
    assert problems == []
    assert checked >= 10
    call_command("verify_trail", stdout=io.StringIO())


@pytest.mark.parametrize("name", MATRIX, ids=list(MATRIX))
def test_each_tampering_is_refused_or_named_at_its_row(governed: dict[str, Any], name: str) -> None:
    tampering = MATRIX[name]
    sql, params = tampering.sql, tampering.params(governed)
    if tampering.refused:
        with pytest.raises(DatabaseError, match=REFUSED), transaction.atomic():
            _run(sql, params)
        assert rows.verify_rows_database()[0] == []
        if not tampering.named_when_bypassed:
            return
        with triggers_bypassed():
            _run(sql, params)
    else:
        _run(sql, params)
    problems, _ = rows.verify_rows_database()
    assert problems, f"{name}: went unseen"
    assert problems[0].startswith(tampering.where(governed)), problems[0]
    assert tampering.where(governed) in _verify_trail()


@pytest.mark.postgres
@pytest.mark.parametrize(
    "table",
    [
        "evidence_evidencebundle",
        "evidence_validationreport",
        "evidence_documentversion",
        "evidence_paragraph",
        "evidence_document",
        "evidence_zonecalibration",
        "evidence_knowledgeconflict",
        "decisions_decision",
        "decisions_approval",
        "decisions_claimverdict",
        "decisions_comment",
        "decisions_periodicreview",
        "decisions_rereview",
        "coordinates_zonepolicyversion",
    ],
)
def test_truncating_a_governance_table_with_rows_is_refused(
    governed: dict[str, Any], table: str
) -> None:
    # The test's own foreign-key checks are deferred to its end; TRUNCATE waits for none.
    _run("SET CONSTRAINTS ALL IMMEDIATE", [])
    with pytest.raises(DatabaseError, match=REFUSED), transaction.atomic():
        _run(f"TRUNCATE {table} CASCADE", [])


@pytest.mark.postgres
def test_every_governance_trigger_is_installed_as_compiled() -> None:
    # A frozen column added beside the models (decisions.models._DECISION_FIXED) needs its
    # migration: pgtrigger reads a trigger whose installed hash is not the compiled one's as
    # OUTDATED. The trail's are left out: trail 0002 renamed them and kept the old names'
    # hashes, so pgtrigger reads them as OUTDATED though they refuse the same.
    import pgtrigger

    status = {
        f"{model._meta.db_table}.{trigger.name}": trigger.get_installation_status(model)
        for model, trigger in pgtrigger.registered()
        if model._meta.app_label != "trail"
    }
    assert "decisions_decision.decision_fixed" in status
    assert {name: s for name, s in status.items() if s != ("INSTALLED", True)} == {}
