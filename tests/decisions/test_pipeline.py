"""An answer's whole path: submitted, validated, graded, and carried to an outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from coordinates.models import Role
from decisions.models import Decision, Outbox, PeriodicReview
from tests.decisions.conftest import AGENT, GOOD, WRONG_NUMBER, ZONE, answer_body, cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db


def kinds(decision_id: int) -> list[str]:
    return list(
        TrailEvent.objects.filter(decision_id=decision_id)
        .order_by("pk")
        .values_list("kind", flat=True)
    )


def test_a_well_supported_answer_in_a_lenient_zone_is_carried_to_completed(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    response = submit([{"text": GOOD, "citations": [cite(policy_doc)]}])
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["gate"] == "auto"
    assert body["state"] == "completed"
    assert body["policy_version"]
    assert body["claims"][0]["supported"] is True
    assert [e["kind"] for e in body["events"]] == kinds(body["id"])
    assert kinds(body["id"]) == [
        "decision.proposed",
        "decision.validated",
        "decision.approved",
        "decision.executed",
        "decision.completed",
    ]


def test_the_201_answer_is_the_decision_as_stored_until_it_is_validated(
    policy_doc: Any,
    agent_client: Callable[[str], APIClient],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given a submission whose validation has not run yet (it runs after commit)
    client = agent_client(AGENT)
    body = answer_body([{"text": GOOD, "citations": [cite(policy_doc, confidence=0.9)]}])
    with django_capture_on_commit_callbacks(execute=False) as pending:
        response = client.post("/api/v1/decisions/", body, format="json")
    assert response.status_code == 201, response.json()
    assert pending, "validation is queued after commit"
    # then the answer is exactly what a read of the decision says: proposed, one event
    created = response.json()
    assert created == client.get(f"/api/v1/decisions/{created['id']}/").json()
    assert created["state"] == "proposed"
    assert [e["kind"] for e in created["events"]] == ["decision.proposed"]
    assert created["events"][0]["seq"] >= 1
    assert len(created["events"][0]["hash"]) == 64


def test_weak_evidence_that_still_passes_is_flagged_for_periodic_review(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    set_policy(tau=0.2, refusal_floor=0.1, floor=0.33)  # 3*floor = 0.99: no item is that strong
    body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    assert body["gate"] == "flagged"
    assert body["state"] == "completed"
    assert PeriodicReview.objects.filter(decision_id=body["id"], zone=ZONE).exists()


def test_a_strict_zone_sends_the_answer_to_its_reviewers_with_a_due_date(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    set_policy(tau=0.99, refusal_floor=0.05, review_sla_hours=4)
    body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    assert body["gate"] == "required"
    assert body["state"] == "approval_required"
    assert body["due_at"]
    push = Outbox.objects.get(decision_id=body["id"], kind="push")
    assert push.payload["type"] == "decision.added"
    assert push.sent_at is not None


def test_an_answer_its_evidence_contradicts_is_blocked_with_the_refusal_context(
    policy_doc: Any, submit: Callable[..., Any]
) -> None:
    body = submit([{"text": WRONG_NUMBER, "citations": [cite(policy_doc, confidence=1.0)]}]).json()
    assert body["gate"] == "blocked"
    assert body["state"] == "failed"
    refusal = body["refusal"]
    assert refusal["sufficiency"] == 0.0
    assert refusal["refusal_floor"] == 0.4
    assert refusal["found"][0]["supported"] is False
    assert any("300,000" in reason for reason in refusal["found"][0]["reasons"])
    assert refusal["try"]


def test_the_same_key_and_body_replay_the_first_answer(
    policy_doc: Any, submit: Callable[..., Any]
) -> None:
    claims = [{"text": GOOD, "citations": [cite(policy_doc)]}]
    first = submit(claims, key="answer-1")
    again = submit(claims, key="answer-1")
    assert first.status_code == 201
    assert again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert Decision.objects.count() == 1


def test_the_same_key_with_another_body_is_422(policy_doc: Any, submit: Callable[..., Any]) -> None:
    submit([{"text": GOOD, "citations": [cite(policy_doc)]}], key="answer-1")
    other = submit([{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}], key="answer-1")
    assert other.status_code == 422
    assert other.json()["error"]["field"] == "Idempotency-Key"
    assert Decision.objects.count() == 1


BAD_CITATION = [{"text": "x", "citations": [{"document": 1}]}]
BAD_CONFIDENCE = [{"text": "x", "citations": [{"document": 1, "paragraph": 1, "confidence": 1.5}]}]
DUPLICATES = [{"text": "Same.", "citations": []}, {"text": "same.", "citations": []}]


@pytest.mark.parametrize(
    ("claims", "extra", "field", "code"),
    [
        (None, {"zone": "G1.U1.P2.Z1"}, None, 403),
        (None, {"zone": "G9.U9.P9.Z9"}, None, 403),
        (None, {"agent": "G1.U1.P1.Z1.A2"}, None, 403),
        (None, {"zone": "G1.U1.P1"}, "zone", 400),
        ([], {}, "claims", 400),
        (BAD_CITATION, {}, "claims.0.citations.0.paragraph", 400),
        (BAD_CONFIDENCE, {}, "claims.0.citations.0.confidence", 400),
        (DUPLICATES, {}, "claims.1.text", 400),
        (None, {"question": "a\x00b"}, None, 400),
    ],
)
def test_bad_submissions_are_refused_and_leave_nothing(
    policy_doc: Any,
    submit: Callable[..., Any],
    claims: list[dict[str, Any]] | None,
    extra: dict[str, Any],
    field: str | None,
    code: int,
) -> None:
    if claims is None:
        claims = [{"text": GOOD, "citations": [cite(policy_doc)]}]
    response = submit(claims, **extra)
    assert response.status_code == code, response.json()
    if field is not None:
        assert response.json()["error"]["field"] == field
    assert Decision.objects.count() == 0


def _raw_post(agent_client: Callable[[str], APIClient], raw: bytes) -> Any:
    return agent_client("G1.U1.P1.Z1.A1").post(
        "/api/v1/decisions/", raw, content_type="application/json"
    )


@pytest.mark.parametrize(
    "raw",
    [
        b'{"question": "q", "question": "again", "answer": "a"}',
        b'{"question": "q", "answer": "a", "zone": "G1.U1.P1.Z1", "agent": "G1.U1.P1.Z1.A1", '
        b'"claims": [{"text": "t", "citations": '
        b'[{"document": 1, "paragraph": 1, "confidence": NaN}]}]}',
        b'{"question": "\\ud800", "answer": "a"}',
        b'{"question": "q\\u0000", "answer": "a"}',
        b"\xff\xfe{}",
        b"[1, 2",
    ],
)
def test_malformed_json_is_a_4xx_never_a_500(
    org: Any, agent_client: Callable[[str], APIClient], raw: bytes
) -> None:
    response = _raw_post(agent_client, raw)
    assert 400 <= response.status_code < 500
    assert response.json()["error"]["message"]
    assert Decision.objects.count() == 0


def test_over_limit_bundles_are_413(policy_doc: Any, submit: Callable[..., Any]) -> None:
    many_claims = [{"text": f"Claim number {i}.", "citations": []} for i in range(51)]
    assert submit(many_claims).status_code == 413
    many_citations = [{"text": GOOD, "citations": [cite(policy_doc)] * 21}]
    assert submit(many_citations).status_code == 413
    assert Decision.objects.count() == 0


def test_people_cannot_submit_decisions(
    policy_doc: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    reviewer = client_for(person("rita", Role.REVIEWER, ZONE))
    response = reviewer.post("/api/v1/decisions/", {"question": "q"}, format="json")
    assert response.status_code == 403


def test_a_since_of_a_day_that_does_not_exist_is_a_400_naming_it(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    auditor = client_for(person("audrey", Role.AUDITOR, "G1"))
    # Well formed, but February has no 30th: once a 500 (parse_datetime raises ValueError).
    response = auditor.get("/api/v1/decisions/?since=2025-02-30T00:00:00Z")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "since"


def test_decisions_are_listed_with_filters_and_scoped(
    policy_doc: Any,
    submit: Callable[..., Any],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    submit([{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}])
    auditor = client_for(person("audrey", Role.AUDITOR, "G1"))
    rows = auditor.get("/api/v1/decisions/?state=failed&gate=blocked&zone=G1.U1").json()["results"]
    assert len(rows) == 1
    assert auditor.get("/api/v1/decisions/?state=completed").json()["results"] == []
    assert auditor.get("/api/v1/decisions/?state=bogus").status_code == 400
    assert auditor.get("/api/v1/decisions/?since=yesterday").json()["error"]["field"] == "since"
    outsider = client_for(person("lex", Role.AUDITOR, "G1.U1.P2"))
    assert outsider.get("/api/v1/decisions/").json()["results"] == []
    assert outsider.get(f"/api/v1/decisions/{rows[0]['id']}/").status_code == 404
