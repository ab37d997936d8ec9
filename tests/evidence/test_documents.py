from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from coordinates.models import Role
from evidence import parsing
from evidence.models import Document, DocumentVersion, Paragraph
from tests.evidence.memo import MEMO_PARAGRAPHS, memo_text
from tests.samples import CONTRACT_JA, POLICY_EN
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

URL = "/api/v1/documents/"


def body(**overrides: Any) -> dict[str, Any]:
    return {
        "title": "Travel policy",
        "kind": "policy",
        "status": "approved",
        "zone": "G1.U1.P1.Z1",
        "text": POLICY_EN,
        **overrides,
    }


def counts() -> tuple[int, int, int]:
    return Document.objects.count(), DocumentVersion.objects.count(), Paragraph.objects.count()


def test_an_agent_ingests_into_its_zone_and_gets_paragraphs_numbered_in_reading_order(
    agent_client: Callable[..., APIClient], django_capture_on_commit_callbacks: Any
) -> None:
    client = agent_client("G1.U1.P1.Z1.A1")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(URL, body(), format="json")
    assert response.status_code == 201, response.json()
    created = response.json()
    assert created["version"] == 1
    assert created["paragraphs"] == 3  # one per numbered section; headings set the sections
    assert len(created["content_hash"]) == 64
    # after commit: the embedding task, and the trail's events_committed (the version's seal)
    assert len(callbacks) == 2
    sealed = TrailEvent.objects.get(kind="evidence.version_stored")
    assert sealed.body["payload"]["content_hash"] == created["content_hash"]
    version = DocumentVersion.objects.get()
    paragraphs = list(version.paragraphs.order_by("number"))
    assert [p.number for p in paragraphs] == list(range(1, len(paragraphs) + 1))
    for p in paragraphs:
        assert version.text[p.start : p.end] == p.text
        assert p.embedding is not None
        assert p.embedder
    assert any("500,000 yen" in p.text for p in paragraphs)


def test_the_same_content_again_is_a_no_op(agent_client: Callable[..., APIClient]) -> None:
    client = agent_client()
    first = client.post(URL, body(), format="json")
    again = client.post(URL, body(), format="json")
    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["created"] is False
    assert again.json()["id"] == first.json()["id"]
    assert DocumentVersion.objects.count() == 1


def test_a_new_version_supersedes_the_old_which_stays_citable(
    agent_client: Callable[..., APIClient],
) -> None:
    client = agent_client()
    first = client.post(URL, body(key="travel"), format="json").json()
    changed = POLICY_EN.replace("30 days", "14 days")
    second = client.post(URL, body(key="travel", text=changed), format="json").json()
    assert second["id"] == first["id"]
    assert second["version"] == 2
    old, new = DocumentVersion.objects.order_by("version")
    assert old.is_superseded
    assert not new.is_superseded
    assert not old.paragraphs.filter(current=True).exists()
    assert new.paragraphs.filter(current=True).count() == new.paragraphs.count()
    shown = client.get(f"{URL}{first['id']}/?version=1").json()
    assert shown["shown_version"] == 1
    assert any("30 days" in p["text"] for p in shown["paragraphs"])
    assert [v["superseded"] for v in shown["versions"]] == [False, True]


def test_supersedes_by_id_makes_a_new_version_of_that_document(
    agent_client: Callable[..., APIClient],
) -> None:
    client = agent_client()
    first = client.post(URL, body(), format="json").json()
    second = client.post(
        URL,
        body(
            text=POLICY_EN + "\n4. Audit\nReceipts are kept for 7 years.\n", supersedes=first["id"]
        ),
        format="json",
    ).json()
    assert second["id"] == first["id"]
    assert second["version"] == 2


def test_japanese_documents_keep_their_article_sections(
    agent_client: Callable[..., APIClient],
) -> None:
    client = agent_client()
    created = client.post(
        URL, body(title="業務委託契約書", kind="contract", text=CONTRACT_JA), format="json"
    )
    assert created.status_code == 201
    paragraphs = client.get(f"{URL}{created.json()['id']}/").json()["paragraphs"]
    fee = next(p for p in paragraphs if "120万円" in p["text"])
    assert "第2条" in fee["section"]


@pytest.mark.parametrize(
    ("overrides", "field", "code"),
    [
        ({"kind": "tweet"}, "kind", 400),
        ({"status": "final"}, "status", 400),
        ({"text": "   \n  "}, "text", 400),
        ({"text": "abc\x00def"}, "text", 400),
        ({"zone": "G1.U1.P1"}, "zone", 400),
        ({"zone": "not a zone"}, "zone", 400),
        ({"effective_date": "2024-13-45"}, "effective_date", 400),
        ({"supersedes": 999}, "supersedes", 404),
    ],
)
def test_bad_documents_are_refused_naming_the_field_and_nothing_is_written(
    agent_client: Callable[..., APIClient], overrides: dict[str, Any], field: str, code: int
) -> None:
    response = agent_client().post(URL, body(**overrides), format="json")
    assert response.status_code == code, response.json()
    assert response.json()["error"]["field"] == field
    assert counts() == (0, 0, 0)


def test_a_document_over_the_size_limit_is_413(agent_client: Callable[..., APIClient]) -> None:
    huge = ("Expenses require approval. " * 40 + "\n\n") * 6000  # about 6.5 MB
    response = agent_client().post(URL, body(text=huge), format="json")
    assert response.status_code == 413
    assert counts() == (0, 0, 0)


def test_a_document_of_more_paragraphs_than_the_limit_is_413_naming_the_limit(
    agent_client: Callable[..., APIClient],
) -> None:
    # given a body well under the size limit, of one paragraph more than the limit allows
    many = "\n\n".join(f"Rule {n} applies." for n in range(parsing.MAX_PARAGRAPHS + 1))

    # when an agent posts it
    response = agent_client().post(URL, body(text=many), format="json")

    # then it is refused, saying which limit, and nothing is stored
    assert response.status_code == 413
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("too_large", "text")
    assert f"the limit is {parsing.MAX_PARAGRAPHS:,} paragraphs" in error["message"]
    assert counts() == (0, 0, 0)


def test_the_memo_of_issue_28_is_within_the_limits() -> None:
    # 1.9 MB of 43,687 short paragraphs: accepted, and its JSON body under the request limit
    text = memo_text()
    assert len(parsing.parse_document(text, format="text").paragraphs) == MEMO_PARAGRAPHS
    assert len(json.dumps({"text": text}).encode()) < settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def test_invalid_utf8_is_a_400(agent_client: Callable[..., APIClient]) -> None:
    raw = (
        b'{"title":"x","kind":"policy","status":"approved","zone":"G1.U1.P1.Z1","text":"\xff\xfe"}'
    )
    response = agent_client().post(URL, raw, content_type="application/json")
    assert response.status_code == 400
    assert counts() == (0, 0, 0)


def test_agents_and_admins_add_documents_only_inside_their_scope(
    agent_client: Callable[..., APIClient],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    assert (
        agent_client("G1.U1.P1.Z1.A1")
        .post(URL, body(zone="G1.U1.P2.Z1"), format="json")
        .status_code
        == 404  # a zone it may not see: answered as one that does not exist
    )
    legal_admin = client_for(person("lee", Role.ZONE_ADMIN, "G1.U1.P2"))
    assert legal_admin.post(URL, body(), format="json").status_code == 404
    reviewer = client_for(person("rita", Role.REVIEWER, "G1"))
    assert reviewer.post(URL, body(), format="json").status_code == 403
    assert APIClient().post(URL, body(), format="json").status_code == 401
    assert counts() == (0, 0, 0)
    finance_admin = client_for(person("fay", Role.ZONE_ADMIN, "G1.U1.P1"))
    assert finance_admin.post(URL, body(), format="json").status_code == 201


def test_documents_of_other_zones_are_invisible(
    agent_client: Callable[..., APIClient],
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
) -> None:
    created = agent_client("G1.U1.P1.Z1.A1").post(URL, body(), format="json").json()
    outsider = client_for(person("lex", Role.REVIEWER, "G1.U1.P2"))
    assert outsider.get(f"{URL}{created['id']}/").status_code == 404
    assert outsider.get(URL).json()["documents"] == []
    insider = client_for(person("fin", Role.AUDITOR, "G1.U1"))
    assert insider.get(f"{URL}{created['id']}/").status_code == 200


def test_ingest_command_versions_files_by_path(org: Any, tmp_path: Path) -> None:
    (tmp_path / "travel.txt").write_text(POLICY_EN, encoding="utf-8")
    (tmp_path / "contract.md").write_text("# 業務委託契約書\n\n" + CONTRACT_JA, encoding="utf-8")
    call_command(
        "ingest", str(tmp_path), "--zone", "G1.U1.P1.Z1", "--kind", "policy", "--no-progress"
    )
    assert DocumentVersion.objects.count() == 2
    call_command(
        "ingest", str(tmp_path), "--zone", "G1.U1.P1.Z1", "--kind", "policy", "--no-progress"
    )
    assert DocumentVersion.objects.count() == 2
    (tmp_path / "travel.txt").write_text(POLICY_EN.replace("30 days", "10 days"), encoding="utf-8")
    call_command(
        "ingest", str(tmp_path), "--zone", "G1.U1.P1.Z1", "--kind", "policy", "--no-progress"
    )
    assert DocumentVersion.objects.count() == 3
    assert Document.objects.count() == 2


def test_ingest_command_reports_files_it_could_not_read(org: Any, tmp_path: Path) -> None:
    (tmp_path / "good.txt").write_text(POLICY_EN, encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe broken")
    with pytest.raises(CommandError, match="1 file"):
        call_command(
            "ingest", str(tmp_path), "--zone", "G1.U1.P1.Z1", "--kind", "memo", "--no-progress"
        )
    assert DocumentVersion.objects.count() == 1
