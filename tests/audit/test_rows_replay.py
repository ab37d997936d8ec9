"""audit.rows.replay: what each governance row's columns must be after its events (pure:
event bodies in, expected columns out; no database)."""

from __future__ import annotations

import hashlib
from typing import Any

from audit.integrity import EventRef
from audit.rows import replay
from decisions.events import keys_hash


def _events(*bodies: dict[str, Any]) -> list[tuple[EventRef, dict[str, Any]]]:
    return [(EventRef("G1.U1.P1.Z1/1", seq), body) for seq, body in enumerate(bodies, 1)]


def _decision(
    kind: str, actor: str = "system", decision: int = 7, **payload: Any
) -> dict[str, Any]:
    return {"kind": kind, "decision": decision, "actor": actor, "reason": "", "payload": payload}


def test_a_decision_s_columns_are_those_of_its_last_event_that_carries_each() -> None:
    expected = replay(
        _events(
            _decision("decision.proposed", state="proposed", question="q" * 64, answer="a" * 64),
            _decision(
                "decision.validated",
                state="validated",
                gate="blocked",
                sufficiency=0.2,
                policy="p@3",
            ),
            _decision("decision.failed", state="failed", gate="blocked"),
            _decision("decision.commented", actor="ann", state="failed", comment=4),
        )
    ).decisions[7]
    values = {column: value for column, (value, _) in expected.items()}
    assert values == {
        "state": "failed",
        "question": "q" * 64,
        "answer": "a" * 64,
        "gate": "blocked",
        "sufficiency": 0.2,
        "policy_label": "p@3",
    }
    assert expected["gate"][1].seq == 3  # named by the event that set it last


def test_graph_evidence_is_checked_where_its_proposed_event_sealed_it_and_only_there() -> None:
    sealed = keys_hash(["decision:12", "document:3"])
    expected = replay(
        _events(
            _decision("decision.proposed", decision=1, state="proposed", graph_evidence=sealed),
            _decision("decision.proposed", decision=2, state="proposed", graph_evidence=None),
            # Written before the graph evidence was sealed: nothing to compare, as before.
            _decision("decision.proposed", decision=3, state="proposed", question="q" * 64),
        )
    ).decisions
    assert expected[1]["graph_evidence"][0] == sealed
    assert expected[2]["graph_evidence"][0] is None
    assert "graph_evidence" not in expected[3]


def test_graph_evidence_is_sealed_as_the_sha256_of_its_compact_json() -> None:
    # What an auditor recomputes by hand: printf '%s' '["decision:12",...]' | sha256sum
    assert keys_hash(["decision:12", "document:3"]) == (
        hashlib.sha256(b'["decision:12","document:3"]').hexdigest()
    )
    assert keys_hash(["document:3", "decision:12"]) != keys_hash(["decision:12", "document:3"])
    assert keys_hash([]) != keys_hash(None) is None


def test_a_reviewer_s_later_act_replaces_their_verdict_and_keeps_other_reviewers() -> None:
    first = {"index": 0, "supported": True, "note": ""}
    expected = replay(
        _events(
            _decision(
                "decision.approval_recorded", actor="ann", state="approval_required", claims=[first]
            ),
            _decision(
                "decision.approval_recorded", actor="ben", state="approval_required", claims=[first]
            ),
            _decision(
                "decision.failed",
                actor="ann",
                state="failed",
                claims=[{"index": 0, "supported": False, "note": "wrong"}],
            ),
        )
    ).verdicts
    assert expected[(7, "ann", 0)][0] == {"action": "reject", "supported": False, "note": "wrong"}
    assert expected[(7, "ben", 0)][0] == {"action": "approve", "supported": True, "note": ""}


def _zone(kind: str, **payload: Any) -> dict[str, Any]:
    return {"kind": kind, "decision": None, "actor": "zed", "reason": "", "payload": payload}


def test_adopting_a_calibration_retires_the_one_before_and_a_revoked_role_is_gone() -> None:
    zone = "G1.U1.P1.Z1"
    expected = replay(
        _events(
            _zone("zone.created", zone=zone),
            _zone("calibration.proposed", zone=zone, version=1, params={"a": 1}),
            _zone("calibration.adopted", zone=zone, version=1, retired_version=None),
            _zone("calibration.proposed", zone=zone, version=2, params={"a": 2}),
            _zone("calibration.adopted", zone=zone, version=2, retired_version=1),
            _zone("role.granted", user="ann", role="auditor", scope=zone),
            _zone("role.granted", user="ben", role="reviewer", scope=zone),
            _zone("role.revoked", user="ann", role="auditor", scope=zone),
        )
    )
    status = {key: columns["status"][0] for key, columns in expected.calibrations.items()}
    assert status == {(zone, 1): "retired", (zone, 2): "adopted"}
    assert set(expected.roles) == {("ben", "reviewer", zone)}
    assert expected.zones == {zone}
