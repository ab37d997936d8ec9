"""Issue 29 (3, 4, 5, 6, 11): the reviewer's pages tell the truth and default to the safe
choice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role
from decisions.models import Decision, ReReview, State
from evidence.models import KnowledgeConflict
from tests.decisions.conftest import GOOD, UNVERIFIABLE, cite
from tests.decisions.test_rereview import POLICY as REMOTE_POLICY
from tests.decisions.test_rereview import remote_answer
from tests.evidence.test_knowledge_conflicts import remote_conflict

__all__ = ["remote_answer", "remote_conflict"]  # fixtures of the re-review and conflict tests

pytestmark = pytest.mark.django_db


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def held_by_source(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> Callable[..., int]:
    """Submit answers whose sufficiency passes τ but whose only source is a kind the zone does
    not let release an answer alone: they wait for a person for that reason alone."""
    set_policy(tau=0.05, delta=0.02, refusal_floor=0.0, release_kinds=["contract"])

    def run(claims: int = 1) -> int:
        # distinct claims (a repeated one is refused), each still resting on the policy alone
        texts = [GOOD + "." * k for k in range(claims)]
        body = submit([{"text": t, "citations": [cite(policy_doc)]} for t in texts]).json()
        assert body["state"] == "approval_required", body
        assert body["sufficiency"] >= 0.05
        return int(body["id"])

    return run


def test_the_queue_gives_the_real_reason_a_sufficient_answer_waits(
    held_by_source: Callable[..., int], person: Callable[..., Any]
) -> None:
    # given an answer above τ that rests only on a policy, which the zone releases with a person
    decision_id = held_by_source()
    reviewer = login(person("fin", Role.REVIEWER, "G1.U1.P1"))
    # when the reviewer opens the queue
    page = reviewer.get("/queue/").content.decode()
    # then its row names the source the zone does not release alone, not a contradiction
    assert f'data-id="{decision_id}"' in page
    assert "Travel policy is an approved policy: in this zone an answer resting on it" in page
    assert "contradicts itself" not in page


def test_the_why_banner_says_a_reason_found_for_every_claim_once(
    held_by_source: Callable[..., int], person: Callable[..., Any]
) -> None:
    # given a 41-claim answer, every claim resting on the same policy the zone holds back
    decision_id = held_by_source(claims=41)
    reviewer = login(person("fin", Role.REVIEWER, "G1.U1.P1"))
    # when the reviewer opens it
    page = reviewer.get(f"/queue/decisions/{decision_id}/").content.decode()
    # then the banner names the source once, and stays a sentence, not a page
    why = page.split('<p id="why"', 1)[1].split("</p>", 1)[0]
    assert why.count("Travel policy is an approved policy") == 1
    assert len(why) < 600


def test_the_why_banner_counts_unverified_claims_instead_of_quoting_each() -> None:
    from gates.presenters import explanation

    claims = [
        {"kind": "factual", "supported": True, "verdict": "unverified", "sufficiency": 0.9}
        for _ in range(3)
    ]
    reasons = [
        "not verified: the cited evidence does not say this in so many words, a person "
        f"decides: claim number {k}"
        for k in range(3)
    ]
    body = {"claims": claims, "contradictions": [], "at_least": {"reasons": reasons}}
    sentence = explanation("required", body, {"tau": 0.5})
    assert "claims 1, 2, 3 are not verified by their evidence" in sentence
    assert "claim number" not in sentence


def test_a_completed_decision_says_who_approved_it_and_counts_down_nothing(
    queue_one: Callable[..., int],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given a decision a person had to decide, approved by ann through the page
    decision_id = queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    with django_capture_on_commit_callbacks(execute=True):
        ann.post(f"/queue/decisions/{decision_id}/claim/")
        ann.post(f"/queue/decisions/{decision_id}/approve/", {"reason": "checked"})
    assert Decision.objects.get(pk=decision_id).state == State.COMPLETED
    # when another reviewer opens it
    page = login(person("bo", Role.REVIEWER, "G1.U1.P1"))
    html = page.get(f"/queue/decisions/{decision_id}/").content.decode()
    # then it says who approved it, no longer that a person must decide, and has no due time
    why = html.split('<p id="why"', 1)[1].split("</p>", 1)[0]
    assert "Approved by ann on " in why
    assert "A person must decide" not in html
    assert "data-due=" not in html


def test_a_rejected_decision_says_who_rejected_it(
    queue_one: Callable[..., int],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    decision_id = queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    verdicts = '[{"index": 0, "supported": false, "note": "wrong"}]'
    with django_capture_on_commit_callbacks(execute=True):
        ann.post(f"/queue/decisions/{decision_id}/claim/")
        ann.post(f"/queue/decisions/{decision_id}/reject/", {"reason": "wrong", "claims": verdicts})
    assert Decision.objects.get(pk=decision_id).state == State.FAILED
    html = ann.get(f"/queue/decisions/{decision_id}/").content.decode()
    why = html.split('<p id="why"', 1)[1].split("</p>", 1)[0]
    assert "Rejected by ann on " in why
    assert "A person must decide" not in html


# --- 6: nothing is chosen for the person -----------------------------------------------------


def test_the_changed_evidence_form_presets_no_verdict_and_refuses_none(
    remote_answer: Decision, ingest: Callable[..., Any], person: Callable[..., Any]
) -> None:
    # given an answer whose cited figure changed in a new version
    ingest(REMOTE_POLICY.replace("3 days", "2 days"), title="Remote work policy", key="remote")
    review = ReReview.objects.get()
    rui = login(person("rui", Role.REVIEWER, "G1.U1.P1.Z1"))
    # when the reviewer opens the page, the verdict is not preset to "Still correct"
    html = rui.get("/reviews/changed/").content.decode()
    select = html.split(f'id="verdict-{review.pk}"', 1)[1].split("</select>", 1)[0]
    assert '<option value="" selected disabled>' in select
    assert select.count("selected") == 1
    assert " required>" in select.split("<option", 1)[0]
    # and a form sent with no verdict is refused, naming the verdict, the review still open
    page = rui.post(f"/reviews/changed/{review.pk}/close/", {"note": ""}, follow=True)
    assert "Choose a verdict: still correct, or wrong now." in page.content.decode()
    review.refresh_from_db()
    assert review.closed_at is None
    assert not review.verdict


def test_a_conflicts_resolution_is_not_preset_to_the_first_side(
    remote_conflict: KnowledgeConflict, person: Callable[..., Any]
) -> None:
    ada = login(person("ada", Role.ZONE_ADMIN, "G1.U1.P1.Z1"))
    html = ada.get("/zones/G1.U1.P1.Z1/conflicts/").content.decode()
    select = html.split(f'id="resolution-{remote_conflict.pk}"', 1)[1].split("</select>", 1)[0]
    assert '<option value="" selected disabled>' in select
    assert select.count("selected") == 1
    page = ada.post(
        f"/zones/G1.U1.P1.Z1/conflicts/{remote_conflict.pk}/resolve/",
        {"reason": "checked"},
        follow=True,
    )
    assert "Choose a resolution: which paragraph governs, or why it is none." in (
        page.content.decode()
    )
    remote_conflict.refresh_from_db()
    assert remote_conflict.resolved_at is None


def test_an_unverified_claim_needs_the_reviewers_own_choice_to_approve(
    queue_one: Callable[..., int],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
    policy_doc: Any,
    submit: Callable[..., Any],
) -> None:
    # given a decision with a verified claim and one the engine could not verify
    queue_one()  # (sets the zone's policy: every answer waits for a person)
    body = submit(
        [
            {"text": GOOD, "citations": [cite(policy_doc)]},
            {"text": UNVERIFIABLE, "citations": [cite(policy_doc)]},
        ]
    ).json()
    assert [c["verdict"] for c in body["claims"]] == ["verified", "unverified"]
    decision_id = body["id"]
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    ann.post(f"/queue/decisions/{decision_id}/claim/")
    html = ann.get(f"/queue/decisions/{decision_id}/").content.decode()
    # then the page presets the verified claim and leaves the unverified one open
    assert 'id="claim-0-supported" data-index="0" value="yes" checked' in html
    assert 'id="claim-1-supported" data-index="1" value="yes">' in html
    assert 'id="claim-1-unsupported" data-index="1" value="no">' in html
    # when the form is sent with no choice for it (no script ran), nothing is approved
    with django_capture_on_commit_callbacks(execute=True):
        page = ann.post(
            f"/queue/decisions/{decision_id}/approve/", {"reason": "ok"}, follow=True
        ).content.decode()
    assert "Say whether the evidence supports claim 2" in page
    assert Decision.objects.get(pk=decision_id).state == State.APPROVAL_REQUIRED
    # and with the choice made it is
    chosen = '[{"index": 0, "supported": true}, {"index": 1, "supported": true}]'
    with django_capture_on_commit_callbacks(execute=True):
        ann.post(f"/queue/decisions/{decision_id}/approve/", {"reason": "ok", "claims": chosen})
    assert Decision.objects.get(pk=decision_id).state == State.COMPLETED


# --- 11: counts in words, an empty bulk action, a long question ------------------------------


def test_the_whatif_says_one_decision_in_the_singular(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    queue_one()
    admin = login(person("zed", Role.ZONE_ADMIN, "G1.U1.P1"))
    preview = admin.post(
        "/zones/G1.U1.P1.Z1/preview/", {"tau": "0.2", "delta": "0.05", "refusal_floor": "0.05"}
    ).content.decode()
    assert "1 decision would change gate: 0 stricter, 1 looser." in preview
    assert "1 decisions" not in preview
    # and in Japanese, which has one form for every count
    admin.cookies["django_language"] = "ja"
    japanese = admin.post(
        "/zones/G1.U1.P1.Z1/preview/", {"tau": "0.2", "delta": "0.05", "refusal_floor": "0.05"}
    ).content.decode()
    assert "1 件の決定のゲートが変わります: 厳しくなるもの 0 件" in japanese


def test_bulk_apply_with_nothing_ticked_says_so_and_one_done_is_singular(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    person("ben", Role.REVIEWER, "G1.U1.P1")
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    empty = ann.post(
        "/queue/bulk/", {"action": "assign", "assignee": "ben"}, follow=True
    ).content.decode()
    assert "Tick the decisions to apply this to: none was ticked." in empty
    one = ann.post(
        "/queue/bulk/",
        {"action": "assign", "assignee": "ben", "decisions": [decision_id]},
        follow=True,
    ).content.decode()
    assert "1 decision: done." in one


def test_an_overridden_block_names_both_people_who_released_it(
    policy_doc: Any,
    submit: Callable[..., Any],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    from django.contrib.auth.models import Permission

    from tests.decisions.conftest import WRONG_NUMBER

    # given a blocked answer released over its block by two zone admins
    blocked = submit([{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}]).json()
    assert blocked["gate"] == "blocked"
    for name, reason in (("zed", "the head confirmed it"), ("zoe", "the email confirms it")):
        admin = person(name, Role.ZONE_ADMIN, "G1.U1.P1.Z1")
        admin.user_permissions.add(Permission.objects.get(codename="override_blocked"))
        api = client_for(type(admin).objects.get(pk=admin.pk))
        done = api.post(
            f"/api/v1/decisions/{blocked['id']}/override/", {"reason": reason}, format="json"
        )
        assert done.status_code == 200, done.content
    assert Decision.objects.get(pk=blocked["id"]).state == State.COMPLETED
    # when a reviewer opens it, the page leads with both people
    html = login(person("ann", Role.REVIEWER, "G1.U1.P1")).get(f"/queue/decisions/{blocked['id']}/")
    why = html.content.decode().split('<p id="why"', 1)[1].split("</p>", 1)[0]
    assert "Released over its block by zed, zoe on " in why
