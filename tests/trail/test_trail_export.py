"""`GET /api/v1/trail/`: JSON Lines scoped to the auditor's zones, which `verify_trail --file`
checks offline, catching a doctored export at the exact event."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.http import StreamingHttpResponse
from django.utils import timezone

from tests.trail.test_trail_bypass import committed_trail  # noqa: F401 - fixture
from tests.trail_support import empty_trail
from trail import checkpoints, ledger
from trail.chain import REASON_ALTERED, REASON_RELINKED
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

ZONE = "G1.U1.P1.Z1"
TRICKY = 'quote " backslash \\ tab \t newline \n 承認 😀 \u2028 \x7f'


def verify_file(path: Path | str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_trail", "--file", str(path), stdout=out)
    except CommandError as error:
        return error.returncode, f"{out.getvalue()}{error}"
    return 0, out.getvalue()


def fill(chain: str, n: int, reason: str = "") -> None:
    for i in range(1, n + 1):
        ledger.append(
            kind="test.step", chain=chain, actor="system", reason=reason, payload={"i": i}
        )


@pytest.fixture
def trail_data(org: dict[str, Any]) -> None:
    """Events in the finance zones, the legal planet, galaxy G1 and galaxy G2 (and nothing
    else: the zone.created events of the organisation are cleared first)."""
    empty_trail()
    fill("G1.U1.P1.Z1", 5, reason=TRICKY)
    fill("G1.U1.P1.Z2", 3)
    fill("G1.U1.P2.Z1", 2)
    fill("G1", 2)
    fill("G2.U1.P1.Z1", 2)


@pytest.fixture
def auditor(person: Any, client_for: Any) -> Callable[..., Any]:
    def make(*scopes: str) -> Any:
        return client_for(person("aud", "auditor", *scopes))

    return make


def export(client: Any, **params: str) -> Any:
    return client.get("/api/v1/trail/", params)


def body_of(response: Any) -> bytes:
    return b"".join(response.streaming_content)


def records(content: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in content.splitlines()]


def chains_in(content: bytes) -> set[str]:
    return {r["chain"] for r in records(content) if r["type"] == "trail.event"}


def save(tmp_path: Path, lines: list[dict[str, Any]] | bytes) -> Path:
    path = tmp_path / "trail.jsonl"
    if isinstance(lines, bytes):
        path.write_bytes(lines)
    else:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines)
        path.write_text(text, encoding="utf-8")
    return path


# --- scope and errors --------------------------------------------------------------------


def test_an_auditor_gets_every_chain_under_their_scopes_and_nothing_else(
    trail_data: None, auditor: Callable[..., Any]
) -> None:
    response = export(auditor("G1.U1.P1", "G2"))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    assert "attachment" in response["Content-Disposition"]
    content = body_of(response)
    # the zones' events, and the auditor's own role grants on the two scopes
    assert chains_in(content) == {
        "G1.U1.P1",
        "G1.U1.P1.Z1",
        "G1.U1.P1.Z2",
        "G2",
        "G2.U1.P1.Z1",
    }
    lines = records(content)
    assert lines[0]["type"] == "trail.export"
    assert lines[-1] == {"type": "trail.end", "events": 12, "records": 0}


def test_a_zone_narrows_the_export_to_its_subtree(
    trail_data: None, auditor: Callable[..., Any]
) -> None:
    content = body_of(export(auditor("G1"), zone="G1.U1.P1.Z2"))
    assert chains_in(content) == {"G1.U1.P1.Z2"}
    assert chains_in(body_of(export(auditor("G1"), zone="G1"))) == {
        "G1",
        "G1.U1.P1.Z1",
        "G1.U1.P1.Z2",
        "G1.U1.P2.Z1",
    }


def test_an_empty_zone_is_left_out_as_in_every_other_zone_filter(
    trail_data: None, auditor: Callable[..., Any]
) -> None:
    # `?zone=` was a 400 the OpenAPI document allowed (a plain string there).
    client = auditor("G1.U1.P1", "G2")
    empty = export(client, zone="")
    assert empty.status_code == 200
    assert chains_in(body_of(empty)) == chains_in(body_of(export(client)))
    parameter = next(
        p
        for p in client.get("/api/v1/schema/?format=json").json()["paths"]["/api/v1/trail/"]["get"][
            "parameters"
        ]
        if p["name"] == "zone"
    )
    assert parameter["schema"]["pattern"].startswith("^$|")


def test_a_zone_s_export_holds_its_decision_lanes_and_no_other_zone_s(
    trail_data: None, auditor: Callable[..., Any], person: Any, client_for: Any, tmp_path: Path
) -> None:
    fill("G1.U1.P1.Z1/3", 2)
    fill("G1.U1.P1.Z1/12", 1)
    fill("G1.U1.P1.Z2/3", 1)
    fill("G1.U1.P1.Z10/3", 1)  # a zone whose name starts with the other's
    content = body_of(export(auditor("G1"), zone="G1.U1.P1.Z1"))
    assert chains_in(content) == {"G1.U1.P1.Z1", "G1.U1.P1.Z1/3", "G1.U1.P1.Z1/12"}
    assert verify_file(save(tmp_path, content))[0] == 0
    # an auditor of that zone alone gets its lanes too, and nothing of the other zones
    own = chains_in(body_of(export(client_for(person("zone-aud", "auditor", "G1.U1.P1.Z1")))))
    assert {"G1.U1.P1.Z1/3", "G1.U1.P1.Z1/12"} <= own
    assert not any(chain.startswith(("G1.U1.P1.Z2", "G1.U1.P1.Z10")) for chain in own)


def test_a_superuser_gets_every_chain(trail_data: None, client_for: Any) -> None:
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser("root", password="pw-root-123")
    assert len(chains_in(body_of(export(client_for(root))))) == 5


@pytest.mark.parametrize(
    ("scopes", "params", "status", "field"),
    [
        (("G1.U1.P1",), {"zone": "G1.U1.P2"}, 403, None),
        (("G1.U1.P1",), {"zone": "G1"}, 403, None),
        (("G1",), {"zone": "G1.U1.P9"}, 404, "zone"),
        (("G1",), {"zone": "X1"}, 400, "zone"),
        (("G1",), {"zone": "G1.U1.P1.Z1.A1"}, 400, "zone"),
        (("G1",), {"since": "yesterday"}, 400, "since"),
        (("G1",), {"since": "2025-02-30"}, 400, "since"),
    ],
)
def test_bad_requests_get_the_error_shape(
    trail_data: None,
    auditor: Callable[..., Any],
    scopes: tuple[str, ...],
    params: dict[str, str],
    status: int,
    field: str | None,
) -> None:
    response = export(auditor(*scopes), **params)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["field"] == field
    assert error["message"]


def test_people_without_an_auditor_role_are_refused(
    trail_data: None, person: Any, client_for: Any
) -> None:
    reviewer = person("rev", "reviewer", "G1")
    response = export(client_for(reviewer))
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"


def test_agents_are_refused(trail_data: None, agent_client: Callable[[str], Any]) -> None:
    assert export(agent_client("G1.U1.P1.Z1.A1")).status_code == 403


def test_anonymous_requests_are_refused(trail_data: None) -> None:
    from rest_framework.test import APIClient

    assert export(APIClient()).status_code == 401


def test_errors_come_as_a_json_line_to_a_client_that_accepts_only_json_lines(
    trail_data: None, auditor: Callable[..., Any]
) -> None:
    response = auditor("G1").get(
        "/api/v1/trail/", {"since": "soon"}, HTTP_ACCEPT="application/x-ndjson"
    )
    assert response.status_code == 400
    assert json.loads(response.content)["error"]["field"] == "since"


# --- offline verification ----------------------------------------------------------------


def test_an_export_verifies_offline_byte_for_byte(
    trail_data: None, auditor: Callable[..., Any], tmp_path: Path
) -> None:
    # given an export whose events carry quotes, backslashes, control characters and emoji
    checkpoints.checkpoint_create()
    content = body_of(export(auditor("G1")))
    lines = records(content)
    event = next(r for r in lines if r["type"] == "trail.event" and r["chain"] == ZONE)
    assert TRICKY in json.loads(event["canonical"])["reason"]
    # then the stored bytes come back exactly and the whole file verifies
    stored = TrailEvent.objects.get(pk=event["id"])
    assert event["canonical"].encode() == bytes(stored.canonical)
    code, out = verify_file(save(tmp_path, content))
    assert code == 0, out
    assert "chain G1.U1.P1.Z1: intact, events 1..5" in out
    assert "matches the checkpoint at seq 5" in out
    assert "trail intact: 4 chains, 13 events" in out  # 12 filled + the auditor's role grant


def test_a_since_export_starts_each_chain_mid_way_and_says_what_it_trusts(
    org: dict[str, Any],
    auditor: Callable[..., Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given three events a week ago and two today in one zone, one old event in another
    last_week = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
    monkeypatch.setattr(timezone, "now", lambda: last_week)
    fill(ZONE, 3)
    fill("G1.U1.P1.Z2", 1)
    monkeypatch.undo()
    fill(ZONE, 2)
    checkpoints.checkpoint_create()
    # when exporting since yesterday
    since = (timezone.now() - timedelta(days=1)).isoformat()
    content = body_of(export(auditor("G1"), since=since))
    seqs = [(r["chain"], r["seq"]) for r in records(content) if r["type"] == "trail.event"]
    # then only that chain's recent segment is there (with today's role grant to the
    # auditor on G1), and it verifies from where it starts
    assert seqs == [("G1", 1), (ZONE, 4), (ZONE, 5)]
    code, out = verify_file(save(tmp_path, content))
    assert code == 0, out
    assert "starts mid-chain at seq 4, trusting its prev_hash" in out
    assert "matches the checkpoint at seq 5" in out
    # and the quiet zone is listed without events, its checkpoint out of reach
    assert "chain G1.U1.P1.Z2: intact, no events" in out
    # and a date alone means its midnight (UTC)
    everything = body_of(export(auditor("G1"), since="2025-06-01"))
    assert len([r for r in records(everything) if r["type"] == "trail.event"]) == 7


@pytest.fixture
def exported(trail_data: None, auditor: Callable[..., Any]) -> list[dict[str, Any]]:
    checkpoints.checkpoint_create()
    return records(body_of(export(auditor("G1.U1.P1"))))


def _event_index(lines: list[dict[str, Any]], chain: str, seq: int) -> int:
    return next(
        i
        for i, r in enumerate(lines)
        if r["type"] == "trail.event" and (r["chain"], r["seq"]) == (chain, seq)
    )


def test_a_flipped_character_in_an_export_is_reported_at_its_event(
    exported: list[dict[str, Any]], tmp_path: Path
) -> None:
    i = _event_index(exported, ZONE, 3)
    exported[i]["canonical"] = exported[i]["canonical"].replace('"i":3', '"i":4')
    code, out = verify_file(save(tmp_path, exported))
    assert code == 1
    assert f"chain {ZONE}: BROKEN at event 3: {REASON_ALTERED}" in out


def test_a_deleted_line_is_reported_at_the_event_after_it(
    exported: list[dict[str, Any]], tmp_path: Path
) -> None:
    del exported[_event_index(exported, ZONE, 2)]
    exported[-1]["events"] -= 1  # a careful forger fixes the count too
    code, out = verify_file(save(tmp_path, exported))
    assert code == 1
    assert f"chain {ZONE}: BROKEN at event 3: sequence gap: event 2 missing" in out


def test_a_swapped_pair_of_lines_is_reported(
    exported: list[dict[str, Any]], tmp_path: Path
) -> None:
    i, j = _event_index(exported, ZONE, 2), _event_index(exported, ZONE, 3)
    exported[i], exported[j] = exported[j], exported[i]
    code, out = verify_file(save(tmp_path, exported))
    assert code == 1
    assert f"chain {ZONE}: BROKEN at event 3: sequence gap: event 2 missing" in out


def test_swapped_seq_numbers_in_an_export_are_reported(
    exported: list[dict[str, Any]], tmp_path: Path
) -> None:
    # the lines stay in place but trade their seq (and so their order as the verifier sees it)
    i, j = _event_index(exported, ZONE, 2), _event_index(exported, ZONE, 3)
    exported[i]["seq"], exported[j]["seq"] = 3, 2
    exported[i], exported[j] = exported[j], exported[i]
    code, out = verify_file(save(tmp_path, exported))
    assert code == 1
    assert f"chain {ZONE}: BROKEN at event 2: {REASON_RELINKED}" in out


def test_a_renamed_chain_is_caught_by_its_hashed_body(
    exported: list[dict[str, Any]], tmp_path: Path
) -> None:
    for record in exported:
        if record.get("chain") == ZONE:
            record["chain"] = "G1.U1.P1.Z9"
    code, out = verify_file(save(tmp_path, exported))
    assert code == 1
    assert (
        "chain G1.U1.P1.Z9: BROKEN at event 1: the 'chain' column says 'G1.U1.P1.Z9' but the "
        f"hashed body says '{ZONE}'"
    ) in out


def test_a_cut_tail_is_caught_against_the_checkpoint_the_export_carries(
    exported: list[dict[str, Any]], tmp_path: Path
) -> None:
    for seq in (5, 4):
        del exported[_event_index(exported, ZONE, seq)]
    exported[-1]["events"] -= 2
    code, out = verify_file(save(tmp_path, exported))
    assert code == 1
    assert (
        f"chain {ZONE}: BROKEN at event 4: truncated: the trail ends at event 3 but the "
        "checkpoint covers events 1..5"
    ) in out


def test_a_cut_off_file_is_reported(exported: list[dict[str, Any]], tmp_path: Path) -> None:
    code, out = verify_file(save(tmp_path, exported[:-1]))
    assert code == 1
    assert "PROBLEM: the export has no end line (cut off?)" in out


def test_a_line_that_is_not_json_is_reported_with_its_number(
    exported: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = save(tmp_path, exported)
    text = path.read_text(encoding="utf-8").splitlines()
    text[3] = text[3][:-5]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    code, out = verify_file(path)
    assert code == 1
    assert "PROBLEM: line 4: not JSON" in out


def test_a_file_that_cannot_be_read_exits_2(tmp_path: Path) -> None:
    code, out = verify_file(tmp_path / "missing.jsonl")
    assert code == 2
    assert "cannot read" in out


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("committed_trail")
async def test_under_asgi_the_export_streams_chunk_by_chunk(
    org: dict[str, Any],
    person: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # given committed events and an auditor, served through the ASGI handler
    from asgiref.sync import sync_to_async
    from django.db import connections
    from django.test import AsyncClient

    from maria import jsonlines

    try:
        user = await sync_to_async(person)("aud", "auditor", "G1")
        await sync_to_async(fill)(ZONE, 5, TRICKY)
        monkeypatch.setattr(jsonlines, "LINES_PER_CHUNK", 2)
        client = AsyncClient()
        await client.aforce_login(user)
        # when the export is read
        response = await client.get("/api/v1/trail/")
        assert response.status_code == 200
        assert isinstance(response, StreamingHttpResponse)
        assert response.is_async  # not read to the end into memory first
        chunks = [bytes(chunk) async for chunk in response.streaming_content]
        # then it came in pieces and verifies
        assert len(chunks) == 4  # header + 5 events + end line, two lines at a time
        code, out = await sync_to_async(verify_file)(save(tmp_path, b"".join(chunks)))
        assert code == 0, out
    finally:
        # The worker thread's connection, or the test database cannot be dropped.
        await sync_to_async(connections.close_all)()


def test_an_export_can_be_piped_in_on_stdin(
    exported: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = save(tmp_path, exported).read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(content)))
    code, out = verify_file("-")
    assert code == 0, out
    assert "source: -" in out


def test_verifying_a_file_needs_no_database(exported: list[dict[str, Any]], tmp_path: Path) -> None:
    # given an auditor's machine whose database URL leads nowhere
    path = save(tmp_path, exported)
    env = {**os.environ, "DATABASE_URL": "postgres://nobody@127.0.0.1:9/nowhere"}
    env.pop("REDIS_URL", None)
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(  # noqa: S603 - our own interpreter and manage.py
        [sys.executable, "manage.py", "verify_trail", "--file", str(path)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "trail intact" in result.stdout
