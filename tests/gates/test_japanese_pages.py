"""Issue 29, "Japanese left in English": what the engine or a model names in English (a
document's kind and status, a role, a threshold, a policy's problem, a trail event, the trail
verification report) reads in Japanese on a Japanese page, and as before on an English one."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

ZONE = "G1.U1.P1.Z1"


def login(user: Any, language: str) -> Client:
    client = Client()
    client.force_login(user)
    client.cookies["django_language"] = language
    return client


def main_text(page: str) -> str:
    """The visible text of the page's <main> (tags, scripts and attributes left out)."""
    main = page.split("<main>", 1)[1].split("</main>", 1)[0]
    return re.sub(r"<[^>]+>", " ", main)


def test_the_verify_report_reads_in_japanese(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    # given a zone's trail, intact
    queue_one()
    olga = person("olga", Role.AUDITOR, "G1")
    # when the auditor verifies it in Japanese
    page = login(olga, "ja").get("/audit/verify/", {"zone": ZONE}).content.decode()
    # then every line of the report is Japanese, its figures and hashes as they are
    text = main_text(page)
    assert "対象: 表示中の範囲" in text
    assert "チェックポイント: チェックポイントなし" in text
    assert "署名: " in text
    assert f"チェーン {ZONE}: 改ざんなし、イベント 1〜" in text
    for english in ("source:", "signatures:", "checkpoint:", "intact", "events", "the shown range"):
        assert english not in text, english
    # and in English it says what it always said
    english = main_text(login(olga, "en").get("/audit/verify/", {"zone": ZONE}).content.decode())
    assert "source: the shown range" in english
    assert f"chain {ZONE}: intact, events 1.." in english


def test_a_broken_trail_is_named_in_japanese(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    from django.db import connection

    from tests.trail.test_trail_bypass import triggers_bypassed

    # given an event whose hashed body was changed behind the ledger's back
    queue_one()
    event = TrailEvent.objects.filter(chain=ZONE).order_by("seq").first()
    assert event is not None
    with triggers_bypassed(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE decisions_decisionevent SET canonical = %s WHERE id = %s",
            [bytes(event.canonical).replace(b'"v":1', b'"v":2'), event.pk],
        )
    # when the auditor verifies in Japanese
    page = login(person("olga", Role.AUDITOR, "G1"), "ja").get("/audit/verify/", {"zone": ZONE})
    text = main_text(page.content.decode())
    # then the verdict and the line name the break in Japanese
    assert 'data-intact="0"' in page.content.decode()
    assert "証跡が破損しています" in text
    assert f"チェーン {ZONE}: イベント 1" in text
    assert "ハッシュ不一致（内容が改変されています）" in text
    assert "BROKEN" not in text
    assert "hash mismatch" not in text


def test_the_audited_decision_shows_thresholds_events_and_hashes_in_japanese(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    decision_id = queue_one()
    olga = login(person("olga", Role.AUDITOR, "G1"), "ja")
    text = main_text(olga.get(f"/audit/decisions/{decision_id}/").content.decode())
    # the thresholds line, the trail's event names and its prev / hash labels
    assert "信頼度の下限" in text
    assert "凝集度 τ" in text
    assert "提案" in text  # decision.proposed
    assert "レビュー待ちに追加" in text  # decision.queued
    for english in (" floor ", " refusal ", "cohesion τ", "decision.proposed", " prev "):
        assert english not in text, english


def test_documents_show_their_kind_and_status_in_japanese(
    queue_one: Callable[..., int], person: Callable[..., Any]
) -> None:
    queue_one()  # the travel policy, approved, in the zone
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"), "ja")
    text = main_text(ann.get("/documents/").content.decode())
    assert "方針" in text
    assert "承認済み" in text
    assert "Policy" not in text
    assert "Approved" not in text


def test_the_zone_page_names_thresholds_roles_and_problems_in_japanese(
    org: Any, person: Callable[..., Any]
) -> None:
    zed = person("zed", Role.ZONE_ADMIN, "G1.U1.P1")
    admin = login(zed, "ja")
    page = admin.get(f"/zones/{ZONE}/").content.decode()
    # the threshold fields and the roles, named in Japanese
    assert "τ（充足度のしきい値）" in page
    assert "拒否下限" in page
    assert "ゾーン管理者" in main_text(page)
    assert ">Zone admin<" not in page
    # a value out of range, and two values that do not fit together, refused in Japanese
    bad = main_text(admin.post(f"/zones/{ZONE}/", {"tau": "1.5", "reason": "try"}).content.decode())
    assert "tau は [0, 1] の範囲で指定してください（値: 1.5）" in bad
    assert "must lie in" not in bad
    related = admin.post(f"/zones/{ZONE}/", {"tau": "0.3", "refusal_floor": "0.5", "reason": "x"})
    text = main_text(related.content.decode())
    assert "refusal_floor（拒否下限 0.5）は tau（τ 0.3）を超えてはなりません" in text
    assert "must not exceed" not in text
