"""The reviews export: every reviewer's verdict on a claim as one JSON line, scoped like every
API, and read back by `fit_verifier`'s corpora reader as labelled examples (issue 16 point 5).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from coordinates.models import Role
from decisions import services
from decisions.models import ClaimVerdict, Decision
from evidence import corpora
from evidence.models import Paragraph
from evidence.verifier import model as verifier_model
from tests.decisions.conftest import GOOD, UNVERIFIABLE, cite
from tests.samples import POLICY_EN

pytestmark = pytest.mark.django_db

ZONE = "G1.U1.P1.Z1"
OTHER_ZONE = "G1.U1.P1.Z2"
FIELDS = {
    "type", "decision", "zone", "claim_index", "claim", "span", "signals",
    "engine_probability", "engine_supported", "reviewer_supported", "note", "reviewer",
    "action", "verifier", "calibration", "created_at",
}  # fmt: skip


@pytest.fixture
def reviewed(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    person: Callable[..., Any],
    ingest: Callable[..., Any],
) -> list[int]:
    """Three decisions reviewed through the services: one approved by ann with both claims
    judged, one rejected by ben (the wrong number unsupported), one in the other zone of the
    planet approved by carl; and one still waiting, with no verdict."""
    ann = person("ann", Role.REVIEWER, "G1.U1.P1")
    ben = person("ben", Role.REVIEWER, ZONE)
    carl = person("carl", Role.REVIEWER, OTHER_ZONE)
    set_policy(tau=0.99, refusal_floor=0.0)
    set_policy(OTHER_ZONE, tau=0.99, refusal_floor=0.0)
    # The other zone's own copy of the policy: a sibling zone's documents are not citable.
    ingest(POLICY_EN, zone=OTHER_ZONE, title="Travel policy", key="travel-z2")
    theirs = Paragraph.objects.get(
        text__contains="500,000 yen require", current=True, zone=OTHER_ZONE
    )
    pair = [
        {"text": GOOD, "citations": [cite(policy_doc)]},
        {"text": UNVERIFIABLE, "citations": [cite(policy_doc)]},
    ]
    first = submit(pair).json()["id"]
    second = submit(pair, question="Again?").json()["id"]
    other = submit(
        [{"text": GOOD, "citations": [cite(theirs)]}],
        zone=OTHER_ZONE,
        agent=f"{OTHER_ZONE}.A1",
        token_of=f"{OTHER_ZONE}.A1",
    ).json()["id"]
    submit(pair, question="Still waiting?")
    services.decision_approve(
        decision_id=first,
        user=ann,
        reason="fine",
        claims=[
            {"index": 0, "supported": True},
            {"index": 1, "supported": True, "note": "an older rule allowed it"},
        ],
    )
    services.decision_reject(
        decision_id=second,
        user=ben,
        reason="wrong amount",
        claims=[{"index": 1, "supported": False, "note": "the policy says 500,000 yen"}],
    )
    services.decision_approve(
        decision_id=other, user=carl, claims=[{"index": 0, "supported": True, "note": "z2"}]
    )
    return [first, second, other]


def export(client: APIClient, query: str = "") -> Any:
    return client.get(f"/api/v1/reviews/export/{query}")


def lines_of(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/x-ndjson"
    text = b"".join(response.streaming_content).decode()
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_every_verdict_is_one_line_with_its_claim_span_signals_and_versions(
    reviewed: list[int], person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    first, second, other = reviewed
    auditor = client_for(person("olga", Role.AUDITOR, "G1"))

    # when the auditor of the galaxy exports
    lines = lines_of(export(auditor))

    # then there is one line per verdict, oldest first, with every field
    assert len(lines) == ClaimVerdict.objects.count() == 4
    assert [(x["decision"], x["claim_index"]) for x in lines] == [
        (first, 0), (first, 1), (second, 1), (other, 0)
    ]  # fmt: skip
    assert all(set(line) == FIELDS for line in lines)
    assert {line["type"] for line in lines} == {"review.claim"}
    for line in lines:
        decision = Decision.objects.get(pk=line["decision"])
        assert decision.report is not None
        claim = decision.report.body["claims"][line["claim_index"]]
        row = ClaimVerdict.objects.get(
            decision=decision, claim=line["claim_index"], reviewer__username=line["reviewer"]
        )
        assert line["zone"] == decision.zone
        assert line["claim"] == claim["text"]
        # the span the claim was checked on: the aligned part of the cited paragraph
        item = max(claim["evidence"], key=lambda e: e["signals"]["probability"] or 0.0)
        start, end = item["aligned"] or (0, len(item["span"]))
        assert line["span"] == item["span"][start:end]
        assert line["span"]
        assert line["span"] in item["span"]
        assert line["signals"] == item["signals"]
        assert line["engine_probability"] == item["signals"]["probability"]
        assert line["engine_probability"] == row.engine_probability
        assert line["engine_supported"] is claim["supported"]
        assert line["reviewer_supported"] is row.supported
        assert line["note"] == row.note
        assert line["action"] == row.action
        assert line["verifier"] == decision.report.body["verifier"] == verifier_model().version
        assert line["calibration"] == decision.report.body.get("calibration")
        assert line["created_at"] == row.created_at.isoformat()
    assert [x["reviewer"] for x in lines] == ["ann", "ann", "ben", "carl"]
    assert [x["action"] for x in lines] == ["approve", "approve", "reject", "approve"]
    assert lines[2]["note"] == "the policy says 500,000 yen"
    assert lines[2]["claim"] == UNVERIFIABLE
    assert (lines[2]["engine_supported"], lines[2]["reviewer_supported"]) == (False, False)


def test_zone_takes_the_zones_beneath_it_and_since_the_newer_verdicts(
    reviewed: list[int], person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    first, second, _other = reviewed
    auditor = client_for(person("olga", Role.AUDITOR, "G1"))
    assert {x["decision"] for x in lines_of(export(auditor, f"?zone={ZONE}"))} == {first, second}
    assert {x["decision"] for x in lines_of(export(auditor, "?zone=G1.U1.P1"))} == set(reviewed)
    assert lines_of(export(auditor, "?zone=G1.U1.P2")) == []
    # given ben's verdict a day younger than the others
    ClaimVerdict.objects.exclude(reviewer__username="ben").update(
        created_at=timezone.now() - timedelta(days=2)
    )
    since = (timezone.now() - timedelta(days=1)).date().isoformat()
    assert [x["reviewer"] for x in lines_of(export(auditor, f"?since={since}"))] == ["ben"]
    moment = (timezone.now() - timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    assert [x["reviewer"] for x in lines_of(export(auditor, f"?since={moment}"))] == ["ben"]
    assert len(lines_of(export(auditor, "?since="))) == 4


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?since=yesterday", "since"),
        ("?since=2026-02-30", "since"),
        ("?since=2026-13-01T00:00:00Z", "since"),
        ("?zone=Z1", "zone"),
        (f"?zone={ZONE}.A1", "zone"),
    ],
)
def test_a_bad_since_or_zone_is_a_400_naming_it(
    reviewed: list[int],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
    query: str,
    field: str,
) -> None:
    response = export(client_for(person("olga", Role.AUDITOR, "G1")), query)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == field


def test_each_caller_sees_only_the_zones_they_hold(
    reviewed: list[int],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
    agent_client: Callable[[str], APIClient],
) -> None:
    _first, second, other = reviewed
    # a zone admin of the other zone sees that zone's verdicts only
    zara = client_for(person("zara", Role.ZONE_ADMIN, OTHER_ZONE))
    assert {x["decision"] for x in lines_of(export(zara))} == {other}
    assert {x["decision"] for x in lines_of(export(zara, "?zone=G1.U1.P1"))} == {other}
    # and asking for the first zone by name is refused
    refused = export(zara, f"?zone={ZONE}")
    assert refused.status_code == 403
    assert b"500,000" not in refused.content
    # a reviewer (no admin or auditor role) and an agent are refused outright
    ben = client_for(Decision.objects.get(pk=second).claim_verdicts.get().reviewer)
    assert export(ben).status_code == 403
    assert export(agent_client(f"{ZONE}.A1")).status_code == 403
    assert APIClient().get("/api/v1/reviews/export/").status_code == 401
    # an unknown zone the caller's scope covers is a 404
    auditor = client_for(person("olga", Role.AUDITOR, "G1"))
    assert export(auditor, "?zone=G1.U1.P1.Z7").status_code == 404


def test_the_corpora_reader_reads_the_export_back_into_labelled_examples(
    reviewed: list[int],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
    tmp_path: Path,
) -> None:
    # given the export written to a file
    lines = lines_of(export(client_for(person("olga", Role.AUDITOR, "G1"))))
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")

    # when fit_verifier's reader reads it
    examples = corpora.read(path)

    # then each verdict is one example: the claim against its span, the reviewer's label
    assert [(e.claims, e.evidence, e.supported) for e in examples] == [
        ((x["claim"],), x["span"], x["reviewer_supported"]) for x in lines
    ]
    assert {e.corpus for e in examples} == {"reviews"}
    assert [e.held_out for e in examples] == [x["decision"] % 5 == 0 for x in lines]
    assert examples[2].tags == ("reject", "unsupported")
    # and a JNLI file is still read as JNLI
    jnli = tmp_path / "jnli.jsonl"
    pair = {"sentence_pair_id": 1, "sentence1": "A", "sentence2": "B", "label": "entailment"}
    jnli.write_text(json.dumps(pair) + "\n", encoding="utf-8")
    assert [e.corpus for e in corpora.read(jnli)] == ["jnli"]


def test_fit_verifier_fits_on_the_export(
    reviewed: list[int],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
    tmp_path: Path,
) -> None:
    # given an export with enough verdicts of both kinds for the folds: the reviewed lines
    # many times over, half of them relabelled, as a team's reviewers would disagree
    lines = lines_of(export(client_for(person("olga", Role.AUDITOR, "G1"))))
    many = []
    for n in range(40):
        for line in lines:
            many.append({**line, "decision": n + 1, "reviewer_supported": n % 2 == 0})
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in many), encoding="utf-8")
    out = tmp_path / "model.json"

    # when fit_verifier is pointed at it
    call_command("fit_verifier", "--corpus", str(path), "--out", str(out))

    # then it writes a model fitted on the export's examples, measured on the held-out ones
    model = json.loads(out.read_text(encoding="utf-8"))
    assert model["provenance"]["fitted_on"] == 4 * 32
    assert model["provenance"]["measured_on"] == 4 * 8
    assert set(model["provenance"]["held_out"]) == {"reviews"}
