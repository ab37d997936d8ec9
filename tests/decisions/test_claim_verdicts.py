"""A reviewer's verdict per claim with every approval and rejection: checked at the edge,
stored beside the engine's verdict in the act's transaction, on the trail, and shown on the
decision page, the auditor's page and the trail (issue 16 point 1)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from coordinates.models import Role
from decisions import services
from decisions.models import ClaimVerdict, Decision, State
from tests.decisions.conftest import GOOD, UNVERIFIABLE, cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_claims(policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]) -> int:
    """A decision waiting for review with two claims: the first holds (the engine verifies
    it), the cited paragraph never says the second (the engine cannot verify it)."""
    set_policy(tau=0.99, refusal_floor=0.0)
    body = submit(
        [
            {"text": GOOD, "citations": [cite(policy_doc)]},
            {"text": UNVERIFIABLE, "citations": [cite(policy_doc)]},
        ]
    ).json()
    assert body["state"] == "approval_required", body
    assert [c["supported"] for c in body["claims"]] == [True, False]
    assert [c["verdict"] for c in body["claims"]] == ["verified", "unverified"]
    return int(body["id"])


@pytest.fixture
def ann(person: Callable[..., Any], client_for: Callable[[Any], APIClient]) -> APIClient:
    return client_for(person("ann", Role.REVIEWER, "G1.U1.P1"))


@pytest.fixture
def ben(person: Callable[..., Any], client_for: Callable[[Any], APIClient]) -> APIClient:
    return client_for(person("ben", Role.REVIEWER, "G1.U1.P1.Z1"))


def act(client: Any, decision_id: int, action: str, body: dict[str, Any]) -> Any:
    return client.post(f"/api/v1/decisions/{decision_id}/{action}/", body, format="json")


def highest_probability(decision_id: int, claim: int) -> float | None:
    """The oracle for engine_probability: read straight from the stored report."""
    report = Decision.objects.get(pk=decision_id).report
    assert report is not None
    found = [
        e["signals"]["probability"]
        for e in report.body["claims"][claim]["evidence"]
        if e["signals"].get("probability") is not None
    ]
    return max(found) if found else None


def verdicts(decision_id: int) -> list[tuple[str, str, int, bool, str, bool]]:
    return [
        (v.reviewer.get_username(), v.action, v.claim, v.supported, v.note, v.engine_supported)
        for v in ClaimVerdict.objects.filter(decision_id=decision_id).order_by("reviewer", "claim")
    ]


# --- the API -------------------------------------------------------------------------------


def test_a_rejection_stores_each_verdict_beside_the_engines_and_puts_them_on_the_trail(
    two_claims: int, ann: APIClient
) -> None:
    # when ann rejects, naming the second claim unsupported and agreeing on the first
    claims = [
        {"index": 1, "supported": False, "note": "the policy says 500,000 yen"},
        {"index": 0, "supported": True},
    ]
    response = act(ann, two_claims, "reject", {"reason": "wrong amount", "claims": claims})

    # then the decision failed and both verdicts are stored with the engine's beside them
    assert response.status_code == 200, response.json()
    assert Decision.objects.get(pk=two_claims).state == State.FAILED
    assert verdicts(two_claims) == [
        ("ann", "reject", 0, True, "", True),
        ("ann", "reject", 1, False, "the policy says 500,000 yen", False),
    ]
    for row in ClaimVerdict.objects.filter(decision_id=two_claims):
        assert row.zone == "G1.U1.P1.Z1"
        assert row.engine_probability == highest_probability(two_claims, row.claim)
    assert ClaimVerdict.objects.get(decision_id=two_claims, claim=0).engine_probability is not None
    # and the trail's rejection names them as sent
    failed = TrailEvent.objects.get(decision_id=two_claims, kind="decision.failed")
    assert failed.payload["claims"] == [
        {"index": 1, "supported": False, "note": "the policy says 500,000 yen"},
        {"index": 0, "supported": True, "note": ""},
    ]


def test_a_rejection_must_name_a_claim_that_is_not_supported(
    two_claims: int, ann: APIClient
) -> None:
    # when ann rejects naming no claim, or only claims she holds supported
    for claims in (None, [], [{"index": 0, "supported": True}]):
        body: dict[str, Any] = {"reason": "no"}
        if claims is not None:
            body["claims"] = claims
        response = act(ann, two_claims, "reject", body)
        # then it is refused, naming the field, and nothing changed
        assert response.status_code == 400, claims
        assert response.json()["error"]["field"] == "claims"
        assert "unsupported" in response.json()["error"]["message"]
    assert Decision.objects.get(pk=two_claims).state == State.APPROVAL_REQUIRED
    assert not ClaimVerdict.objects.exists()
    assert not TrailEvent.objects.filter(decision_id=two_claims, kind="decision.failed").exists()


@pytest.mark.parametrize(
    ("claims", "field"),
    [
        ({"index": 0}, "claims"),
        ("all fine", "claims"),
        ([7], "claims.0"),
        ([{"index": 2, "supported": False}], "claims.0.index"),
        ([{"index": -1, "supported": False}], "claims.0.index"),
        ([{"index": True, "supported": False}], "claims.0.index"),
        ([{"index": "1", "supported": False}], "claims.0.index"),
        ([{"supported": False}], "claims.0.index"),
        ([{"index": 1, "supported": False}, {"index": 1, "supported": True}], "claims.1.index"),
        ([{"index": 1, "supported": "no"}], "claims.0.supported"),
        ([{"index": 1, "supported": 0}], "claims.0.supported"),
        ([{"index": 1}], "claims.0.supported"),
        ([{"index": 1, "supported": False, "note": 5}], "claims.0.note"),
        ([{"index": 1, "supported": False, "note": "x" * 2001}], "claims.0.note"),
        ([{"index": 1, "supported": False, "notes": "typo"}], "claims.0.notes"),
        ([{"index": 0, "supported": True}] * 51, "claims"),
    ],
)
@pytest.mark.parametrize("action", ["approve", "reject"])
def test_a_malformed_verdict_is_a_400_naming_the_field_and_changes_nothing(
    two_claims: int, ann: APIClient, action: str, claims: Any, field: str
) -> None:
    response = act(ann, two_claims, action, {"reason": "because", "claims": claims})
    assert response.status_code == 400, response.json()
    assert response.json()["error"]["field"] == field
    assert Decision.objects.get(pk=two_claims).state == State.APPROVAL_REQUIRED
    assert not ClaimVerdict.objects.exists()
    assert not TrailEvent.objects.filter(decision_id=two_claims, actor="ann").exists()


def test_a_note_of_the_reason_limit_is_taken(two_claims: int, ann: APIClient) -> None:
    note = "n" * services.REASON_LIMIT
    claims = [{"index": 1, "supported": False, "note": note}]
    assert act(ann, two_claims, "reject", {"reason": "no", "claims": claims}).status_code == 200
    assert ClaimVerdict.objects.get(decision_id=two_claims).note == note


def test_an_approval_records_only_the_claims_named_and_each_approver_their_own(
    two_claims: int, ann: APIClient, ben: APIClient, set_policy: Callable[..., Any]
) -> None:
    # given a zone that needs two approvals
    set_policy(tau=0.99, refusal_floor=0.0, approvals_required=2)
    # when ann approves naming only the second claim (supported after all), and ben names none
    first = act(
        ann,
        two_claims,
        "approve",
        # the answer is a refusal (one claim unverified under tau 0.99): its first approver
        # writes the answer to deliver (decisions.delivery)
        {
            "claims": [{"index": 1, "supported": True, "note": "an older rule"}],
            "replacement": GOOD,
        },
    )
    assert first.status_code == 200, first.json()
    assert act(ben, two_claims, "approve", {"reason": "fine"}).status_code == 200

    # then the answer is released and only ann's one verdict is stored
    assert Decision.objects.get(pk=two_claims).state == State.COMPLETED
    assert verdicts(two_claims) == [("ann", "approve", 1, True, "an older rule", False)]
    # and the trail says who judged what: ann's verdict on her recorded approval, none on ben's
    recorded = TrailEvent.objects.get(decision_id=two_claims, kind="decision.approval_recorded")
    assert recorded.payload["claims"] == [{"index": 1, "supported": True, "note": "an older rule"}]
    approved = TrailEvent.objects.get(decision_id=two_claims, kind="decision.approved")
    assert (approved.actor, approved.payload["claims"]) == ("ben", [])


def test_a_reviewer_who_approved_then_rejects_keeps_their_latest_verdict(
    two_claims: int, ann: APIClient, set_policy: Callable[..., Any]
) -> None:
    # given ann's approval, one of two required, holding the second claim supported
    set_policy(tau=0.99, refusal_floor=0.0, approvals_required=2)
    approve = {"claims": [{"index": 1, "supported": True}], "replacement": GOOD}
    assert act(ann, two_claims, "approve", approve).status_code == 200
    # when she rejects after all, the second claim unsupported
    reject = {"reason": "misread", "claims": [{"index": 1, "supported": False, "note": "300k"}]}
    response = act(ann, two_claims, "reject", reject)
    # then the rejection stands (no error from her earlier row) and her verdict is the latest
    assert response.status_code == 200, response.json()
    assert verdicts(two_claims) == [("ann", "reject", 1, False, "300k", False)]
    kinds = TrailEvent.objects.filter(decision_id=two_claims, actor="ann").exclude(
        kind="decision.answer_replaced"
    )
    assert [e.payload.get("claims") for e in kinds.order_by("pk")] == [
        [{"index": 1, "supported": True, "note": ""}],
        [{"index": 1, "supported": False, "note": "300k"}],
    ]


def test_a_reviewer_of_another_zone_learns_nothing_from_the_verdicts(
    two_claims: int, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    # given a reviewer of the legal planet only
    legal = client_for(person("lea", Role.REVIEWER, "G1.U1.P2"))
    # when she names a claim the decision does not have: the answer is the 404 of a missing
    # decision, not a 400 that would tell how many claims it has
    for claims in ([{"index": 9, "supported": False}], [{"index": 1, "supported": False}]):
        response = act(legal, two_claims, "reject", {"reason": "no", "claims": claims})
        assert response.status_code == 404
    assert not ClaimVerdict.objects.exists()


def test_the_schema_documents_the_verdicts_of_approve_and_reject() -> None:
    schema = APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    spec = schema.json()
    components = spec["components"]["schemas"]
    verdict = components["ClaimVerdictInRequest"]
    assert set(verdict["properties"]) == {"index", "supported", "note"}
    assert set(verdict["required"]) == {"index", "supported"}
    assert verdict["properties"]["supported"]["type"] == "boolean"
    assert verdict["properties"]["note"]["maxLength"] == services.REASON_LIMIT
    assert verdict["additionalProperties"] is False
    for action, required in (("approve", False), ("reject", True)):
        body = spec["paths"][f"/api/v1/decisions/{{id}}/{action}/"]["post"]["requestBody"]
        ref = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
        claims = components[ref]["properties"]["claims"]
        assert claims["items"] == {"$ref": "#/components/schemas/ClaimVerdictInRequest"}
        assert ("claims" in components[ref].get("required", [])) is required


# --- the pages -----------------------------------------------------------------------------


def page_of(client: Client, decision_id: int, prefix: str = "/queue/decisions") -> str:
    response = client.get(f"{prefix}/{decision_id}/")
    assert response.status_code == 200
    return str(response.content.decode())


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_decision_page_presets_only_what_the_engine_verified_or_refuted(
    two_claims: int, person: Callable[..., Any]
) -> None:
    rita = logged_in(person("rita", Role.REVIEWER, "G1.U1.P1.Z1"))
    page = page_of(rita, two_claims)
    choices = {
        (index, value): re.search(
            rf'<input type="radio"[^>]*id="claim-{index}-{value}"[^>]*>', page
        )
        for index in (0, 1)
        for value in ("supported", "unsupported")
    }
    assert all(found is not None for found in choices.values())
    # the verified claim comes preset to "supported"; the one the engine could not verify
    # waits for the reviewer's own choice
    assert "checked" in choices[(0, "supported")].group(0)  # type: ignore[union-attr]
    assert "checked" not in choices[(0, "unsupported")].group(0)  # type: ignore[union-attr]
    assert "checked" not in choices[(1, "supported")].group(0)  # type: ignore[union-attr]
    assert "checked" not in choices[(1, "unsupported")].group(0)  # type: ignore[union-attr]
    assert '<span class="badge verified">verified</span>' in page
    assert '<span class="badge unverified">not verified</span>' in page
    assert re.search(r'id="claim-1-note"[^>]*maxlength="2000"', page)
    # and both forms carry the field the page's script fills in
    assert page.count('<input type="hidden" name="claims" value="">') == 2


def test_the_page_refuses_a_rejection_without_an_unsupported_claim_and_records_one_with_it(
    two_claims: int, person: Callable[..., Any]
) -> None:
    rita = logged_in(person("rita", Role.REVIEWER, "G1.U1.P1.Z1"))
    url = f"/queue/decisions/{two_claims}/reject/"
    # when the page sends a rejection with every claim held supported
    all_fine = json.dumps([{"index": 0, "supported": True}, {"index": 1, "supported": True}])
    refused = rita.post(url, {"reason": "no", "claims": all_fine}, follow=True)
    # then it is refused with the reason why, and the decision still waits
    assert "mark at least one claim unsupported" in refused.content.decode()
    assert Decision.objects.get(pk=two_claims).state == State.APPROVAL_REQUIRED
    # and so is a field no script could have written
    garbled = rita.post(url, {"reason": "no", "claims": "{not json"}, follow=True)
    assert "could not be read" in garbled.content.decode()

    # when it sends the second claim unsupported, with a note
    claims = json.dumps(
        [
            {"index": 0, "supported": True, "note": ""},
            {"index": 1, "supported": False, "note": "the policy says 500,000 yen"},
        ]
    )
    done = rita.post(url, {"reason": "wrong amount", "claims": claims}, follow=True)
    assert f"Decision {two_claims} rejected." in done.content.decode()
    assert verdicts(two_claims) == [
        ("rita", "reject", 0, True, "", True),
        ("rita", "reject", 1, False, "the policy says 500,000 yen", False),
    ]

    # then the decision page shows the verdicts after the fact, without toggles now
    page = page_of(rita, two_claims)
    assert 'id="claim-0-supported"' not in page
    review = re.search(r'<li data-reviewer="rita" data-supported="false">.*?</li>', page, re.S)
    assert review is not None
    assert "the policy says 500,000 yen" in review.group(0)
    # and the trail on it names them, as the auditor's page does
    assert re.search(r'<li data-index="1" data-supported="false">claim 2: ', page)
    olga = logged_in(person("olga", Role.AUDITOR, "G1"))
    audit = page_of(olga, two_claims, prefix="/audit/decisions")
    assert re.search(r'<li data-index="1" data-supported="false">claim 2: ', audit)
    assert re.search(r'<li data-reviewer="rita" data-supported="false">', audit)
    assert "the policy says 500,000 yen" in audit


def test_the_page_approves_with_the_verdicts_it_sends(
    two_claims: int, person: Callable[..., Any]
) -> None:
    rita = logged_in(person("rita", Role.REVIEWER, "G1.U1.P1.Z1"))
    claims = json.dumps([{"index": 0, "supported": True}, {"index": 1, "supported": False}])
    form = {"reason": "partly", "claims": claims, "replacement": GOOD}  # a refusal: see above
    rita.post(f"/queue/decisions/{two_claims}/approve/", form)
    assert Decision.objects.get(pk=two_claims).state == State.COMPLETED
    assert [(c, s) for _, _, c, s, _, _ in verdicts(two_claims)] == [(0, True), (1, False)]
