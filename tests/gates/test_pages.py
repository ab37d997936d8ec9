"""The reviewer, zone-admin and auditor pages: scope, actions, filters, what-if, trail."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role, ZonePolicyVersion
from decisions.models import Decision, State
from gates.models import SavedFilter
from tests.decisions.conftest import cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_queue_lists_decisions_of_the_reviewers_zones_only(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    # given a decision waiting in G1.U1.P1.Z1, a reviewer of that planet and one of legal
    decision_id = queue_one(question="Who approves travel expenses above 500,000 yen?")
    finance = login(person("fin", Role.REVIEWER, "G1.U1.P1"))
    legal = login(person("lex", Role.REVIEWER, "G1.U1.P2"))
    # when both open their queue
    mine = finance.get("/queue/").content.decode()
    theirs = legal.get("/queue/").content.decode()
    # then only the finance reviewer sees it, with its zone, gate reason and threshold
    assert f'data-id="{decision_id}"' in mine
    assert "G1.U1.P1.Z1" in mine
    assert "τ 0.99" in mine
    assert f'data-id="{decision_id}"' not in theirs


def test_a_long_queue_shows_the_soonest_due_page_and_says_how_many_wait(
    queue_one: Callable[..., int], person: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given three waiting decisions and a page of two
    from gates import selectors

    monkeypatch.setattr(selectors, "QUEUE_LIMIT", 2)
    first, second, third = (queue_one(question=f"Question {n}") for n in range(3))
    reviewer = login(person("fin", Role.REVIEWER, "G1.U1.P1"))
    # when the reviewer opens the queue
    page = reviewer.get("/queue/").content.decode()
    # then the two due first are listed, linked, and the page says one more waits
    assert f'data-id="{first}"' in page
    assert f'data-id="{second}"' in page
    assert f'data-id="{third}"' not in page
    assert f'href="/queue/decisions/{first}/"' in page
    assert "Showing the 2 due first of 3 waiting decisions" in page


def test_another_zones_decision_is_404_by_url_and_action(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    legal = login(person("lex", Role.REVIEWER, "G1.U1.P2"))
    assert legal.get(f"/queue/decisions/{decision_id}/").status_code == 404
    assert legal.post(f"/queue/decisions/{decision_id}/claim/").status_code == 404
    assert Decision.objects.get(pk=decision_id).claimed_by is None


def test_pages_need_their_role(person: Callable[..., Any], org: Any) -> None:
    auditor = login(person("olga", Role.AUDITOR, "G1"))
    assert auditor.get("/queue/").status_code == 403
    assert auditor.get("/zones/").status_code == 403
    assert auditor.get("/audit/").status_code == 200
    assert Client().get("/queue/").status_code == 302  # to the login page


def test_claim_then_approve_through_the_page(
    queue_one: Callable[..., int],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    decision_id = queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    with django_capture_on_commit_callbacks(execute=True):
        assert ann.post(f"/queue/decisions/{decision_id}/claim/").status_code == 302
    page = ann.get(f"/queue/decisions/{decision_id}/").content.decode()
    assert 'id="approve"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = ann.post(f"/queue/decisions/{decision_id}/approve/", {"reason": "checked"})
    assert response.status_code == 302
    assert Decision.objects.get(pk=decision_id).state == State.COMPLETED


def test_a_claimed_decision_shows_its_holder_and_offers_no_action(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    ben = login(person("ben", Role.REVIEWER, "G1.U1.P1"))
    ann.post(f"/queue/decisions/{decision_id}/claim/")
    page = ben.get(f"/queue/decisions/{decision_id}/").content.decode()
    assert "Claimed by ann" in page
    assert 'id="approve"' not in page
    assert 'title="held by someone else">ann<' in ben.get("/queue/").content.decode()


def test_a_stale_action_says_who_acted_first(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    ben = login(person("ben", Role.REVIEWER, "G1.U1.P1"))
    ann.post(f"/queue/decisions/{decision_id}/approve/", {"reason": "fine"})
    response = ben.post(f"/queue/decisions/{decision_id}/reject/", {"reason": "no"}, follow=True)
    assert "ann acted first" in response.content.decode()
    assert Decision.objects.get(pk=decision_id).state == State.COMPLETED


def test_reject_needs_a_reason(queue_one: Callable[..., int], person: Callable[..., Any]) -> None:
    decision_id = queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    response = ann.post(f"/queue/decisions/{decision_id}/reject/", {"reason": " "}, follow=True)
    assert "a reason is required" in response.content.decode()
    assert Decision.objects.get(pk=decision_id).state == State.APPROVAL_REQUIRED


def test_filters_narrow_the_queue_and_can_be_saved(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    first = queue_one(question="Who approves travel expenses above 500,000 yen?")
    second = queue_one(question="When are expenses reimbursed?", key="second")
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    rows = ann.get("/queue/rows/", {"q": "reimbursed"}).content.decode()
    assert f'data-id="{second}"' in rows
    assert f'data-id="{first}"' not in rows
    ann.post("/queue/filters/", {"name": "refunds", "q": "reimbursed"})
    saved = SavedFilter.objects.get(user__username="ann", name="refunds")
    assert saved.query == "q=reimbursed"
    ann.post(f"/queue/decisions/{first}/claim/")
    mine = ann.get("/queue/rows/", {"state": "mine"}).content.decode()
    assert f'data-id="{first}"' in mine
    assert f'data-id="{second}"' not in mine


def test_the_decision_page_shows_claims_spans_signals_and_thresholds(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    page = ann.get(f"/queue/decisions/{decision_id}/").content.decode()
    assert "badge verified" in page
    assert "<mark>Expenses above 500,000 yen require prior approval" in page
    for signal in ("similarity", "coverage", "recency", "authority"):
        assert signal in page
    assert 'class="chart"' in page
    assert "decision.queued" in page


def test_the_decision_page_marks_the_claims_words_that_failed(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    person: Callable[..., Any],
) -> None:
    # given an answer whose number the cited paragraph does not state
    set_policy(tau=0.99, refusal_floor=0.05)
    claim = "Expenses above 300,000 yen require prior approval by the division head."
    decision_id = submit([{"text": claim, "citations": [cite(policy_doc)]}]).json()["id"]
    # when a reviewer opens it
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    page = ann.get(f"/queue/decisions/{decision_id}/").content.decode()
    # then the wrong number is marked in the claim, and the right words are not
    assert '">300,000 yen</mark>' in page
    assert 'class="failed"' in page
    assert '">division head</mark>' not in page


# --- auditor -------------------------------------------------------------------------------


def test_auditor_search_timeline_verify_and_export(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one(question="Who approves travel expenses above 500,000 yen?")
    auditor = login(person("olga", Role.AUDITOR, "G1.U1"))
    found = auditor.get("/audit/", {"zone": "G1.U1.P1.Z1", "q": "travel"}).content.decode()
    assert f"/audit/decisions/{decision_id}/" in found
    page = auditor.get(f"/audit/decisions/{decision_id}/").content.decode()
    event = TrailEvent.objects.filter(decision_id=decision_id).first()
    assert event is not None
    assert event.hash in page
    decision = Decision.objects.get(pk=decision_id)
    assert decision.bundle.content_hash in page
    assert decision.policy_label in page
    verdict = auditor.get("/audit/verify/", {"zone": "G1.U1.P1.Z1"}).content.decode()
    assert 'data-intact="1"' in verdict
    export = auditor.get("/audit/export/", {"zone": "G1.U1.P1.Z1"})
    content = b"".join(export.streaming_content)  # type: ignore[attr-defined]
    lines = [json.loads(line) for line in content.splitlines()]
    assert lines[0]["type"] == "trail.export"
    assert lines[-1]["type"] == "trail.end"
    assert any(r.get("hash") == event.hash for r in lines)


def test_auditor_pages_change_nothing_and_stay_in_scope(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    outsider = login(person("ola", Role.AUDITOR, "G2"))
    assert outsider.get(f"/audit/decisions/{decision_id}/").status_code == 404
    assert outsider.get("/audit/verify/", {"zone": "G1.U1.P1.Z1"}).status_code == 404
    auditor = login(person("olga", Role.AUDITOR, "G1"))
    page = auditor.get(f"/audit/decisions/{decision_id}/").content.decode()
    assert 'method="post"' not in page.split("<main>", 1)[1]
    for url in ("/audit/", "/audit/verify/", "/audit/export/", f"/audit/decisions/{decision_id}/"):
        assert auditor.post(url).status_code == 405


def test_verify_names_where_the_trail_breaks(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    from django.db import connection

    from tests.trail.test_trail_bypass import triggers_bypassed

    queue_one()
    event = TrailEvent.objects.filter(chain="G1.U1.P1.Z1").order_by("seq").first()
    assert event is not None
    with triggers_bypassed(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE decisions_decisionevent SET canonical = %s WHERE id = %s",
            [bytes(event.canonical).replace(b'"v":1', b'"v":2'), event.pk],
        )
    auditor = login(person("olga", Role.AUDITOR, "G1"))
    verdict = auditor.get("/audit/verify/", {"zone": "G1.U1.P1.Z1"}).content.decode()
    assert 'data-intact="0"' in verdict
    assert "BROKEN" in verdict


# --- zone admin ----------------------------------------------------------------------------


def test_zone_tree_shows_effective_values_and_their_sources(
    set_policy: Callable[..., Any], person: Callable[..., Any]
) -> None:
    set_policy("G1.U1.P1", tau=0.8)
    admin = login(person("zed", Role.ZONE_ADMIN, "G1"))
    page = admin.get("/zones/").content.decode()
    assert "G1.U1.P1.Z1" in page
    assert "↑ G1.U1.P1" in page
    assert "G2" not in page.split("<tbody>", 1)[1]


def test_zone_edit_validates_saves_a_version_and_lists_history(
    org: Any, person: Callable[..., Any]
) -> None:
    admin = login(person("zed", Role.ZONE_ADMIN, "G1.U1.P1"))
    bad = admin.post("/zones/G1.U1.P1.Z1/", {"tau": "1.5", "reason": "try"}).content.decode()
    assert "tau must lie in [0, 1]" in bad
    related = admin.post(
        "/zones/G1.U1.P1.Z1/", {"tau": "0.3", "refusal_floor": "0.5", "reason": "x"}
    ).content.decode()
    assert "must not exceed tau" in related
    no_reason = admin.post("/zones/G1.U1.P1.Z1/", {"tau": "0.8"}).content.decode()
    assert "A reason is required" in no_reason
    assert not ZonePolicyVersion.objects.exists()
    saved = admin.post("/zones/G1.U1.P1.Z1/", {"tau": "0.8", "reason": "stricter"}, follow=True)
    assert "stricter" in saved.content.decode()
    version = ZonePolicyVersion.objects.get()
    assert version.overrides == {"tau": 0.8}
    assert version.created_by is not None
    assert version.created_by.username == "zed"
    assert admin.get("/zones/G1.U1.P2.Z1/").status_code == 404


def test_whatif_preview_counts_gates_under_old_and_new_values_and_saves_nothing(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    # given two decisions that needed a person under tau 0.99
    queue_one()
    queue_one(key="two")
    admin = login(person("zed", Role.ZONE_ADMIN, "G1.U1.P1"))
    before = ZonePolicyVersion.objects.count()
    # when the admin previews a tau low enough for them to pass
    preview = admin.post(
        "/zones/G1.U1.P1.Z1/preview/", {"tau": "0.2", "delta": "0.05", "refusal_floor": "0.05"}
    ).content.decode()
    # then the table moves both out of "required", and nothing was saved
    required = preview.split('data-gate="required"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="num">2</td><td class="num">0</td>' in required
    assert ZonePolicyVersion.objects.count() == before


def test_zone_admin_grants_and_revokes_reviewers(org: Any, person: Callable[..., Any]) -> None:
    person("newbie")
    admin = login(person("zed", Role.ZONE_ADMIN, "G1.U1.P1"))
    admin.post("/zones/G1.U1.P1.Z1/roles/", {"username": "newbie", "role": "reviewer"})
    page = admin.get("/zones/G1.U1.P1.Z1/").content.decode()
    assert "newbie" in page
    from coordinates.models import RoleAssignment

    assignment = RoleAssignment.objects.get(user__username="newbie")
    admin.post(f"/zones/G1.U1.P1.Z1/roles/{assignment.pk}/revoke/")
    assert not RoleAssignment.objects.filter(user__username="newbie").exists()


def test_the_pages_speak_japanese_after_the_language_switch(
    person: Callable[..., Any], org: Any
) -> None:
    client = login(person("ann", Role.REVIEWER, "G1"))
    client.post("/i18n/setlang/", {"language": "ja", "next": "/queue/"})
    page = client.get("/queue/").content.decode()
    assert "レビューキュー" in page
    assert 'lang="ja"' in page
