"""Issue 18's bugs on the reviewer, zone-admin and auditor pages and in the approval service,
each pinned by the behaviour a person saw (the browser's share is in tests/web)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role
from decisions.models import Decision, State
from gates.models import SavedFilter
from tests.decisions.conftest import WRONG_NUMBER, cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

ZONE = "G1.U1.P1.Z1"


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def messages_of(page: str) -> list[str]:
    return re.findall(r'<li class="[^"]*" role="status">(.*?)</li>', page, re.S)


@pytest.fixture
def two_approvals(queue_one: Callable[..., int], set_policy: Callable[..., Any]) -> int:
    """A decision waiting in a zone that needs two approvals."""
    decision_id = queue_one()
    set_policy(approvals_required=2)
    return decision_id


# --- two required approvals ------------------------------------------------------------------


def test_the_first_of_two_approvals_says_it_is_recorded_and_the_page_offers_no_second(
    two_approvals: int, person: Callable[..., Any]
) -> None:
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    page = f"/queue/decisions/{two_approvals}/"
    # when the first reviewer claims and approves
    ann.post(f"{page}claim/")
    answer = ann.post(f"{page}approve/", {"reason": "section 2 says so"}, follow=True)
    # then she is told her approval counts and another reviewer must approve too
    said = " ".join(messages_of(answer.content.decode()))
    assert "approval of decision" in said
    assert "is recorded (1 of 2)" in said
    assert "another reviewer must approve it too" in said
    assert Decision.objects.get(pk=two_approvals).state == State.APPROVAL_REQUIRED
    # and the decision page no longer offers her Claim or Approve, and says why
    shown = ann.get(page).content.decode()
    assert 'id="claim"' not in shown
    assert 'id="approve"' not in shown
    assert 'id="approved-by-me"' in shown
    assert "it waits for another reviewer" in shown


def test_a_second_try_by_the_first_approver_reads_as_one_plain_message(
    two_approvals: int, person: Callable[..., Any]
) -> None:
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    page = f"/queue/decisions/{two_approvals}/"
    ann.post(f"{page}claim/")
    ann.post(f"{page}approve/", {"reason": "ok"})
    # when she tries again (a stale tab)
    again = ann.post(f"{page}approve/", {"reason": "ok"}, follow=True).content.decode()
    # then the message says what happened, and not that she herself "acted first"
    [said] = [m for m in messages_of(again) if "approved" in m]
    assert "you have approved this decision already" in said
    assert "acted first" not in said
    assert "decision.approval_recorded" not in said


def test_the_first_approvers_reason_is_on_the_approval_recorded_event(
    two_approvals: int, person: Callable[..., Any]
) -> None:
    from decisions.services import decision_approve

    ann = person("ann", Role.REVIEWER, "G1.U1.P1")
    decision_approve(decision_id=two_approvals, user=ann, reason="  section 2 says so ")
    event = TrailEvent.objects.get(kind="decision.approval_recorded")
    assert (event.actor, event.reason) == ("ann", "section 2 says so")
    assert (event.payload["given"], event.payload["needed"]) == (1, 2)


# --- zone admin ------------------------------------------------------------------------------


def test_a_revoke_from_the_zone_page_names_the_admin_on_the_trail(
    person: Callable[..., Any], org: Any
) -> None:
    from coordinates.models import RoleAssignment

    zed = login(person("zed", Role.ZONE_ADMIN, "G1.U1.P1"))
    rita = person("rita", Role.REVIEWER, ZONE)
    assignment = RoleAssignment.objects.get(user=rita, role=Role.REVIEWER)
    # when the zone admin revokes the reviewer from the zone page
    zed.post(f"/zones/{ZONE}/roles/{assignment.pk}/revoke/")
    # then the trail says who removed her
    event = TrailEvent.objects.get(kind="role.revoked")
    assert event.actor == "zed"
    assert not RoleAssignment.objects.filter(pk=assignment.pk).exists()


# --- saved filters ---------------------------------------------------------------------------


def test_saved_filters_are_written_and_deleted_through_the_gates_service(
    person: Callable[..., Any], org: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gates import services

    fin = person("fin", Role.REVIEWER, "G1.U1.P1")
    client = login(fin)
    saves: list[dict[str, Any]] = []
    deletes: list[dict[str, Any]] = []
    real_save, real_delete = services.saved_filter_save, services.saved_filter_delete

    def save(**kw: Any) -> Any:
        saves.append(kw)
        return real_save(**kw)

    def delete(**kw: Any) -> None:
        deletes.append(kw)
        real_delete(**kw)

    monkeypatch.setattr(services, "saved_filter_save", save)
    monkeypatch.setattr(services, "saved_filter_delete", delete)
    # when the reviewer saves a filter from the page, then deletes it
    client.post("/queue/filters/", {"name": "mine", "state": "mine", "zone": ZONE})
    [saved] = SavedFilter.objects.filter(user=fin)
    client.post(f"/queue/filters/{saved.pk}/delete/")
    # then both went through the service, which wrote the query the page read
    assert [(s["name"], s["query"]) for s in saves] == [("mine", f"zone={ZONE}&state=mine")]
    assert [d["filter_id"] for d in deletes] == [saved.pk]
    assert not SavedFilter.objects.exists()


def test_the_filter_service_refuses_a_nameless_filter_and_anothers_delete(
    person: Callable[..., Any], org: Any
) -> None:
    from gates.services import saved_filter_delete, saved_filter_save
    from maria.errors import ApplicationError, NotFound

    fin, lex = person("fin"), person("lex")
    with pytest.raises(ApplicationError) as nameless:
        saved_filter_save(user=fin, name="  ", query="state=mine")
    assert nameless.value.field == "name"
    mine = saved_filter_save(user=fin, name="mine", query="state=mine")
    with pytest.raises(NotFound):
        saved_filter_delete(user=lex, filter_id=mine.pk)
    assert SavedFilter.objects.filter(pk=mine.pk).exists()


# --- one limit for a reason ------------------------------------------------------------------


def test_the_api_refuses_a_reject_reason_longer_than_the_forms_limit_naming_the_field(
    queue_one: Callable[..., int], person: Callable[..., Any], client_for: Callable[..., Any]
) -> None:
    from decisions.services import REASON_LIMIT

    decision_id = queue_one()
    rita = person("rita", Role.REVIEWER, ZONE)
    api = client_for(rita)
    url = f"/api/v1/decisions/{decision_id}/reject/"
    # when a client sends a 100,000-character reason
    refused = api.post(url, {"reason": "x" * 100_000}, format="json")
    # then it is refused at once, naming the field, and nothing changed
    assert refused.status_code == 400, refused.json()
    assert refused.json()["error"]["field"] == "reason"
    assert str(REASON_LIMIT) in refused.json()["error"]["message"]
    assert Decision.objects.get(pk=decision_id).state == State.APPROVAL_REQUIRED
    assert not TrailEvent.objects.filter(kind="decision.failed").exists()
    # and the page's reason fields carry the same limit, which the API accepts
    page = login(rita).get(f"/queue/decisions/{decision_id}/").content.decode()
    assert re.search(rf'id="reject-reason"[^>]*maxlength="{REASON_LIMIT}"', page)
    assert re.search(rf'id="approve-reason"[^>]*maxlength="{REASON_LIMIT}"', page)
    assert REASON_LIMIT == 2000
    unsupported = [{"index": 0, "supported": False}]
    accepted = api.post(url, {"reason": "y" * REASON_LIMIT, "claims": unsupported}, format="json")
    assert accepted.status_code == 200, accepted.json()


# --- the auditor's export of one decision ----------------------------------------------------


def test_export_json_lines_on_a_decision_exports_that_decision(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    first, second = queue_one(question="First?"), queue_one(question="Second?")
    olga = login(person("olga", Role.AUDITOR, "G1"))
    page = olga.get(f"/audit/decisions/{first}/").content.decode()
    # when the auditor follows "Export JSON Lines" on the first decision
    link = re.search(r'href="([^"]+)"[^>]*>Export JSON Lines<', page)
    assert link is not None
    response = olga.get(link.group(1).replace("&amp;", "&"))
    assert response.status_code == 200
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]  # type: ignore[attr-defined]
    # then it holds that decision's events, every one, and no other decision's
    events = [line for line in lines if line["type"] == "trail.event"]
    exported = [e["id"] for e in events]
    assert exported == list(
        TrailEvent.objects.filter(decision_id=first).order_by("pk").values_list("pk", flat=True)
    )
    assert TrailEvent.objects.filter(decision_id=second).exists()
    assert str(second) not in {
        str(b.get("decision")) for b in lines if b["type"] == "evidence.bundle"
    }
    assert (lines[0]["type"], lines[0]["decision"]) == ("decision.export", first)
    assert lines[-1] == {
        "type": "trail.end",
        "events": len(events),
        "records": len(lines) - 2 - len(events),
    }
    # and each event line is the stored link: chain, seq, hashes and the hashed bytes
    for e in events:
        stored = TrailEvent.objects.get(pk=e["id"])
        assert (stored.chain, stored.seq, stored.prev_hash, stored.hash) == (
            e["chain"],
            e["seq"],
            e["prev_hash"],
            e["hash"],
        )
        assert bytes(stored.canonical).decode() == e["canonical"]


def test_a_decision_of_another_zone_is_not_exported(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    legal = login(person("lex", Role.AUDITOR, "G1.U1.P2"))
    assert legal.get(f"/audit/export/?decision={decision_id}").status_code == 404


# --- 403 pages and the navigation ------------------------------------------------------------


def nav_links(page: str) -> set[str]:
    nav = re.search(r"<nav>(.*?)</nav>", page, re.S)
    assert nav is not None, "the page has no navigation"
    return set(re.findall(r'<a href="([^"]+)"', nav.group(1)))


def test_a_403_page_has_the_navigation(person: Callable[..., Any], org: Any) -> None:
    olga = login(person("olga", Role.AUDITOR, "G1"))
    answer = olga.get("/queue/")
    assert answer.status_code == 403
    page = answer.content.decode()
    assert "/audit/" in nav_links(page)
    assert 'id="forbidden"' in page


def test_the_nav_shows_each_person_only_the_pages_they_may_open(
    person: Callable[..., Any], org: Any
) -> None:
    reviewer = login(person("rita", Role.REVIEWER, ZONE))
    auditor = login(person("olga", Role.AUDITOR, "G1"))
    admin = login(person("zed", Role.ZONE_ADMIN, "G1.U1.P1"))
    for client, pages in ((reviewer, "rita"), (auditor, "olga"), (admin, "zed")):
        links = nav_links(client.get("/").content.decode())
        shown = {p for p in ("/queue/", "/zones/", "/audit/") if p in links}
        # every page the nav offers opens for that person
        for path in shown:
            assert client.get(path).status_code == 200, (pages, path)
        for path in {"/queue/", "/zones/", "/audit/"} - shown:
            assert client.get(path).status_code == 403, (pages, path)
    assert nav_links(reviewer.get("/").content.decode()) & {"/zones/", "/audit/"} == set()
    assert "/queue/" in nav_links(reviewer.get("/").content.decode())
    assert "/audit/" in nav_links(auditor.get("/").content.decode())
    assert {"/queue/", "/zones/"} <= nav_links(admin.get("/").content.decode())


# --- the decision page's text ----------------------------------------------------------------


def claims_section(page: str) -> str:
    found = re.search(r'<section class="claims">.*?</section>', page, re.S)
    assert found is not None
    return found.group(0)


def test_each_reason_appears_once_and_a_numbers_veto_reads_plainly(
    submit: Callable[..., Any], policy_doc: Any, person: Callable[..., Any]
) -> None:
    blocked = submit([{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}]).json()
    page = login(person("fin", Role.REVIEWER, "G1.U1.P1")).get(f"/queue/decisions/{blocked['id']}/")
    claims = claims_section(page.content.decode())
    reason = "number 300,000 JPY not found in the cited paragraph (it says 500,000 JPY)"
    assert claims.count(reason) == 1
    assert "reversal: numbers" not in claims
    assert "vetoed: a number differs from the cited paragraph" in claims


def test_a_fabricated_citation_names_no_version(
    submit: Callable[..., Any], policy_doc: Any, person: Callable[..., Any]
) -> None:
    fabricated = submit(
        [{"text": "Expenses need approval.", "citations": [{"document": 999, "paragraph": 3}]}]
    ).json()
    page = login(person("fin", Role.REVIEWER, "G1.U1.P1")).get(
        f"/queue/decisions/{fabricated['id']}/"
    )
    claims = claims_section(page.content.decode())
    assert "vNone" not in claims
    assert "document 999 ¶3" in claims
    assert claims.count("document 999 does not exist") == 1
