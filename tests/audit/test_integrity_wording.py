"""Every problem the evidence re-hashing (audit.integrity) and the row replay (audit.rows)
can report reads in Japanese on a Japanese page, and stays the same English for the
command line (issue 29: a broken trail's Verify report was English f-strings).

The checks take rows as the dicts an auditor reads, so each problem is made by the real
check from a row that differs from what its event says.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from audit import integrity
from audit.integrity import EventRef
from audit.rows import RowProblem
from evidence.events import paragraph_digest
from evidence.parsing import content_hash
from evidence.services import bundle_hash
from tests.trail.test_verify_wording import assert_japanese, in_japanese
from trail.chain import canonical_json

REF = EventRef("G1.U1.P1.Z1/0", 3, 41)
ZONE = "G1.U1.P1.Z1"
CLAIMS = [{"text": "Travel above 500,000 yen needs the division head's approval."}]


def _bundles() -> list[str | None]:
    row = {"id": 7, "zone": ZONE, "claims": CLAIMS, "content_hash": "a" * 64}
    good = bundle_hash(ZONE, CLAIMS)
    return [
        integrity.bundle_problem(row, good, REF),
        integrity.bundle_problem({**row, "content_hash": "b" * 64}, "b" * 64, REF),
    ]


def _reports() -> list[str | None]:
    body = {"gate": "required", "policy": "G1@v2"}
    payload: dict[str, Any] = {
        "report": hashlib.sha256(canonical_json(body)).hexdigest(),
        "gate": "required",
        "mode": "answer",
        "sufficiency": 0.8,
        "completeness": 1.0,
        "cohesion": 1.0,
        "policy": "G1@v2",
    }
    row = {
        "id": 9,
        "body": body,
        "gate": "required",
        "mode": "answer",
        "sufficiency": 0.8,
        "completeness": 1.0,
        "cohesion": 1.0,
        "policy_label": "G1@v2",
        "policy": "G1@v2",
        "bundle_hash": "c" * 64,
    }
    assert integrity.report_problem(row, payload, "c" * 64, REF) is None
    return [
        integrity.report_problem({**row, "body": {"gate": "auto"}}, payload, None, REF),
        integrity.report_problem({**row, "gate": "auto"}, payload, None, REF),
        integrity.report_problem(row, payload, "d" * 64, REF),
        integrity.report_problem({**row, "policy": "G1@v1"}, payload, None, REF),
    ]


def _versions() -> list[str | None]:
    text = "# Travel\n\nAbove 500,000 yen the division head approves."
    places = [(1, 0, 8, "e" * 64)]
    payload = {
        "content_hash": content_hash(text),
        "status": "active",
        "paragraph_digest": paragraph_digest(places),
    }
    row = {
        "id": 5,
        "content_hash": content_hash(text),
        "text": text,
        "status": "active",
        "paragraphs": places,
    }
    assert integrity.version_problem(row, payload, REF) is None
    paragraph = {"id": 11, "start": 0, "end": 8, "text": "# Travel", "text_hash": "0" * 64}
    return [
        integrity.version_problem({**row, "content_hash": "f" * 64}, payload, REF),
        integrity.version_problem({**row, "text": text + "!"}, payload, REF),
        integrity.version_problem({**row, "status": "superseded"}, payload, REF),
        integrity.version_problem({**row, "paragraphs": [(1, 0, 9, "e" * 64)]}, payload, REF),
        integrity.paragraph_problem({**paragraph, "text": "# Travels"}, text),
        integrity.paragraph_problem(paragraph, text),
    ]


def _export_records() -> list[str]:
    bodies = [
        {
            "chain": "G1.U1.P1.Z1/0",
            "seq": 1,
            "kind": "decision.proposed",
            "decision": 3,
            "payload": {"bundle": "a" * 64},
        },
        {
            "chain": "G1.U1.P1.Z1/0",
            "seq": 2,
            "kind": "decision.validated",
            "decision": 3,
            "payload": {"report": "b" * 64},
        },
    ]
    stray = {
        "type": "evidence.paragraph",
        "id": 11,
        "version_id": 99,
        "number": 1,
        "start": 0,
        "end": 2,
        "text": "ok",
        "text_hash": hashlib.sha256(b"ok").hexdigest(),
    }
    problems, _ = integrity.verify_evidence_records(bodies, [stray])
    return problems


def _rows() -> list[str]:
    from audit.rows import _missing

    return [
        str(RowProblem("decisions_decision", 3, "state", "approved", "failed", REF)),
        str(RowProblem("decisions_decision", 3, "gate", "required", "auto")),
        str(RowProblem("decisions_rereview", 2, "verdict", None, "still_correct")),
        str(_missing("decisions_comment", 4, REF)),
    ]


CASES: dict[str, Callable[[], list[str | None]] | Callable[[], list[str]]] = {
    "a bundle": _bundles,
    "a report": _reports,
    "a document version and its paragraphs": _versions,
    "an export's evidence records": _export_records,
    "a governance row": _rows,
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_problem_of_the_evidence_and_rows_reads_in_japanese(case: str) -> None:
    made = CASES[case]()
    problems = [problem for problem in made if problem is not None]
    assert len(problems) == len(made), "a row that differs passed its check"
    assert_japanese(problems)


def test_a_report_column_problem_reads_as_before_in_english_and_names_the_row_in_japanese() -> None:
    problem = _reports()[1]
    assert problem is not None
    assert problem == (
        "evidence_validationreport id 9 (event G1.U1.P1.Z1/0 seq 3 (id 41)): the 'gate' column "
        "says 'auto', the trail says 'required'"
    )
    assert in_japanese(problem) == (
        "evidence_validationreport ID 9（イベント G1.U1.P1.Z1/0 連番 3（ID 41））: 'gate' 列は "
        "'auto' ですが、証跡では 'required' です"
    )
