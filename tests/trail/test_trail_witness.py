"""Checkpoints that cannot vanish (issue 28 point 2): the witness read back finds deleted or
rewritten checkpoints and chains, from the database and offline from an export; a failed
hand-over is caught up; an unsigned checkpoint never blocks the signed run nor passes for a
seal."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client, override_settings

from coordinates.models import Role
from tests.trail_support import triggers_bypassed
from trail import checkpoints, export, ledger, signing, witness
from trail.chain import canonical_json, chain_hash
from trail.models import TrailCheckpoint, TrailEvent, TrailHead
from trail.verify import TrailBroken

pytestmark = pytest.mark.django_db

ZONE = "G1.U1.P1.Z1"
SEED = signing.new_seed()


@pytest.fixture(autouse=True)
def _fresh_keys() -> Iterator[None]:
    signing._configured.cache_clear()
    yield
    signing._configured.cache_clear()


@pytest.fixture
def witness_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "witness.jsonl"
    with override_settings(MARIA_TRAIL_SIGNING_KEY=SEED, MARIA_TRAIL_WITNESS=str(path)):
        yield path


def _fill(n: int = 6, chain: str = ZONE) -> None:
    for i in range(n):
        ledger.append(kind="test.step", chain=chain, actor="system", payload={"i": i})


def _seal(on_commit: Any) -> TrailCheckpoint:
    with on_commit(execute=True):
        return checkpoints.checkpoint_create()


def _run(command: str, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command(command, *args, stdout=out, stderr=out)
    except CommandError as error:
        return error.returncode, out.getvalue() + str(error)
    return 0, out.getvalue()


def _public() -> str:
    key = signing.public_key()
    assert key is not None
    return key.text


def _rewrite_chain(chain: str = ZONE) -> None:
    """Straight SQL: change event 3's reason, re-link every later event and move the head."""
    events = list(TrailEvent.objects.filter(chain=chain).order_by("seq"))
    bodies = [bytes(e.canonical) for e in events]
    body = json.loads(bodies[2])
    body["reason"] = "rewritten"
    bodies[2] = canonical_json(body)
    prev = events[0].prev_hash
    with triggers_bypassed():
        for event, canonical in zip(events, bodies, strict=True):
            digest = chain_hash(prev, canonical)
            TrailEvent.objects.filter(pk=event.pk).update(
                prev_hash=prev,
                hash=digest,
                canonical=canonical,
                reason=json.loads(canonical).get("reason", ""),
            )
            prev = digest
        TrailHead.objects.filter(chain=chain).update(hash=prev)


def _delete_every_checkpoint() -> None:
    with triggers_bypassed():
        TrailCheckpoint.objects.all().delete()


def _export(path: Path) -> Path:
    path.write_text("".join(export.export_lines(scopes=None)))
    return path


# --- the attack the issue measured --------------------------------------------------------


def test_deleted_checkpoints_and_a_rewritten_chain_are_found_from_the_database(
    witness_file: Path, django_capture_on_commit_callbacks: Any
) -> None:
    # given a trail sealed twice, each checkpoint handed to the witness
    _fill()
    _seal(django_capture_on_commit_callbacks)
    _fill(2)
    _seal(django_capture_on_commit_callbacks)
    public = _public()
    assert _run("verify_trail", "--public-key", public, "--witness", str(witness_file))[0] == 0
    # when every checkpoint is deleted and one chain re-hashed with its head
    _delete_every_checkpoint()
    _rewrite_chain()
    # then the witness tells: the first missing checkpoint and the rewritten chain
    code, out = _run("verify_trail", "--public-key", public, "--witness", str(witness_file))
    assert code == 1, out
    assert "checkpoint 1 is missing from the database but the witness holds it" in out
    assert f"chain {ZONE}: event 8 differs from what the witness's checkpoint 2 sealed" in out
    # and the configured witness is read without --witness too
    code, out = _run("verify_trail", "--public-key", public)
    assert code == 1
    assert "checkpoint 1 is missing from the database" in out


def test_deleted_checkpoints_and_a_rewritten_chain_are_found_offline_from_an_export(
    witness_file: Path, tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    _fill()
    _seal(django_capture_on_commit_callbacks)
    public = _public()
    kept = tmp_path / "kept-witness.jsonl"  # the auditor's copy of the witness
    kept.write_text(witness_file.read_text())
    good = _export(tmp_path / "good.jsonl")
    args = ("--public-key", public, "--witness", str(kept))
    assert _run("verify_trail", "--file", str(good), *args)[0] == 0, _run(
        "verify_trail", "--file", str(good), *args
    )
    _delete_every_checkpoint()
    _rewrite_chain()
    bad = _export(tmp_path / "bad.jsonl")
    # on main this export verified intact with --public-key: nothing noticed the checkpoints
    code, out = _run("verify_trail", "--file", str(bad), *args)
    assert code == 1, out
    assert "checkpoint 1 is missing from the export but the witness holds it" in out
    assert f"chain {ZONE}: event 6 differs from what the witness's checkpoint 1 sealed" in out


def test_a_removed_tail_and_its_checkpoint_are_found_against_the_witness(
    witness_file: Path, tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    # given checkpoint 1 at event 4 and checkpoint 2 at event 6, both witnessed
    _fill(4)
    _seal(django_capture_on_commit_callbacks)
    _fill(2)
    _seal(django_capture_on_commit_callbacks)
    # when events 5 and 6 go, the head moves back and checkpoint 2 is deleted
    with triggers_bypassed():
        TrailEvent.objects.filter(chain=ZONE, seq__gt=4).delete()
        fourth = TrailEvent.objects.get(chain=ZONE, seq=4)
        TrailHead.objects.filter(chain=ZONE).update(seq=4, hash=fourth.hash)
        TrailCheckpoint.objects.filter(seq=2).delete()
    # then the database and the export both name the missing checkpoint and events
    code, out = _run("verify_trail")
    assert code == 1, out
    assert "checkpoint 2 is missing from the database" in out
    assert f"chain {ZONE}: events 5..6 are missing, but the witness's checkpoint 2" in out
    code, out = _run("verify_trail", "--file", str(_export(tmp_path / "cut.jsonl")))
    assert code == 1, out
    assert "checkpoint 2 is missing from the export" in out
    assert f"chain {ZONE}: events 5..6 are missing" in out
    # and the signed run refuses to seal over it: the hourly job cannot bless the removal
    with pytest.raises(TrailBroken, match="checkpoint 2 is missing"):
        checkpoints.checkpoint_create()


def test_a_whole_chain_deleted_is_found_against_the_witness(
    witness_file: Path, tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    other = "G1.U1.P1.Z2"
    _fill(3)
    _fill(2, chain=other)
    _seal(django_capture_on_commit_callbacks)
    with triggers_bypassed():
        TrailEvent.objects.filter(chain=other).delete()
        TrailHead.objects.filter(chain=other).delete()
        TrailCheckpoint.objects.all().delete()
    code, out = _run("verify_trail")
    assert code == 1
    assert f"chain {other}: events 1..2 are missing" in out


def test_the_verify_page_reads_the_configured_witness(
    witness_file: Path, org: Any, person: Any, django_capture_on_commit_callbacks: Any
) -> None:
    _fill(3)
    _seal(django_capture_on_commit_callbacks)
    auditor = Client()
    auditor.force_login(person("olga", Role.AUDITOR, "G1"))
    page = auditor.get("/audit/verify/", {"zone": ZONE}).content.decode()
    assert 'data-intact="1"' in page
    assert "holds checkpoints up to 1" in page
    _delete_every_checkpoint()
    _rewrite_chain()
    page = auditor.get("/audit/verify/", {"zone": ZONE}).content.decode()
    assert 'data-intact="0"' in page
    assert "checkpoint 1 is missing from the export but the witness holds it" in page


def test_a_witness_over_its_size_bound_is_refused_not_read(
    witness_url: str, tmp_path: Path
) -> None:
    _Witness.lines = [b"x" * 100 + b"\n"] * 3
    with pytest.raises(witness.WitnessError, match="holds more than 250 bytes"):
        witness.read_back(witness_url, max_bytes=250)
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"y" * 300)
    with pytest.raises(witness.WitnessError, match="holds more than 250 bytes"):
        witness.read_back(str(path), max_bytes=250)


def test_a_forged_witness_line_is_a_problem_not_a_crash(
    witness_file: Path, django_capture_on_commit_callbacks: Any
) -> None:
    _fill(2)
    _seal(django_capture_on_commit_callbacks)
    with witness_file.open("a") as handle:
        handle.write('{"checkpoint": 9, "hash": "00", "prev_hash": "00", "canonical": "{}"}\n')
        handle.write("not json\n")
    code, out = _run("verify_trail")
    assert code == 1
    assert "witness line 2: checkpoint 9 does not hash to its hash" in out
    assert "skipped lines that are no checkpoint statement: 3" in out


def test_a_witness_line_cut_short_stops_neither_the_checkpoints_nor_the_next_line(
    witness_file: Path, django_capture_on_commit_callbacks: Any
) -> None:
    # given a witness whose last hand-over was cut short mid-line (a crash, a full disk)
    _fill(2)
    _seal(django_capture_on_commit_callbacks)
    with witness_file.open("a") as handle:
        handle.write('{"type":"trail.seal","checkpoint":2,"hash":"ab')
    # when the next checkpoints are sealed
    _fill(1)
    _seal(django_capture_on_commit_callbacks)
    # then each lands on a line of its own, and the trail verifies against the witness
    held = [line for line in witness_file.read_text().splitlines() if line.endswith("}")]
    assert [json.loads(line)["checkpoint"] for line in held] == [1, 2]
    code, out = _run("verify_trail")
    assert code == 0, out
    assert "skipped lines that are no checkpoint statement: 2" in out


def test_an_unreadable_witness_named_on_the_command_line_is_exit_2(tmp_path: Path) -> None:
    code, out = _run("verify_trail", "--witness", str(tmp_path / "nowhere.jsonl"))
    assert code == 2
    assert "cannot read the witness" in out


# --- the witness over http ----------------------------------------------------------------


class _Witness(BaseHTTPRequestHandler):
    lines: list[bytes] = []

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        type(self).lines.append(self.rfile.read(length) + b"\n")
        self.send_response(201)
        self.end_headers()

    def do_GET(self) -> None:
        body = b"".join(type(self).lines)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def witness_url() -> Iterator[str]:
    _Witness.lines = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Witness)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/witness"
    finally:
        server.shutdown()
        server.server_close()


def test_a_url_witness_is_posted_to_and_read_back_with_get(
    witness_url: str, django_capture_on_commit_callbacks: Any
) -> None:
    with override_settings(MARIA_TRAIL_SIGNING_KEY=SEED, MARIA_TRAIL_WITNESS=witness_url):
        _fill(3)
        _seal(django_capture_on_commit_callbacks)
        assert len(_Witness.lines) == 1
        assert _run("verify_trail", "--witness", witness_url)[0] == 0
        _delete_every_checkpoint()
    code, out = _run("verify_trail", "--witness", witness_url)
    assert code == 1
    assert "checkpoint 1 is missing from the database but the witness holds it" in out


# --- a failed hand-over -------------------------------------------------------------------


def test_a_failed_hand_over_is_reported_behind_and_caught_up_by_the_next_checkpoint(
    tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    witness = tmp_path / "witness.jsonl"
    with override_settings(MARIA_TRAIL_SIGNING_KEY=SEED, MARIA_TRAIL_WITNESS=str(witness)):
        _fill(2)
        _seal(django_capture_on_commit_callbacks)
        # the witness's mount goes away (a directory where the file was): the hand-over fails
        witness.rename(tmp_path / "saved.jsonl")
        witness.mkdir()
        _fill(1)
        _seal(django_capture_on_commit_callbacks)
        witness.rmdir()
        (tmp_path / "saved.jsonl").rename(witness)
        code, out = _run("verify_trail")
        assert code == 0, out
        assert "behind: checkpoints 2..2 were not handed over" in out
        # the next checkpoint hands over the one the witness lacks, and its own
        _fill(1)
        _seal(django_capture_on_commit_callbacks)
    held = [json.loads(line)["checkpoint"] for line in witness.read_text().splitlines()]
    assert held == [1, 2, 3]


# --- the unsigned-checkpoint trap ---------------------------------------------------------


def test_without_the_key_trail_checkpoint_refuses_once_checkpoints_are_signed() -> None:
    with override_settings(MARIA_TRAIL_SIGNING_KEY=SEED):
        _fill(2)
        checkpoints.checkpoint_create()
    signing._configured.cache_clear()
    _fill(1)
    code, out = _run("trail_checkpoint")
    assert code == 1
    assert "no signing key is configured; set MARIA_TRAIL_SIGNING_KEY or " in out
    assert "MARIA_TRAIL_SIGNING_KEY_FILE" in out
    assert TrailCheckpoint.objects.count() == 1


def test_an_unreadable_key_file_never_yields_an_unsigned_checkpoint(tmp_path: Path) -> None:
    _fill(1)
    with override_settings(MARIA_TRAIL_SIGNING_KEY_FILE=str(tmp_path / "missing.key")):
        code, out = _run("trail_checkpoint")
    assert code == 1
    assert "cannot read the trail signing key" in out
    assert not TrailCheckpoint.objects.exists()


def test_an_unsigned_latest_checkpoint_is_superseded_by_the_next_signed_one(
    tmp_path: Path, org: Any, person: Any
) -> None:
    # given checkpoints written without the key (the trap of the issue)
    _fill(2)
    assert not checkpoints.checkpoint_create().signature
    auditor = Client()
    auditor.force_login(person("olga", Role.AUDITOR, "G1"))
    with override_settings(MARIA_TRAIL_SIGNING_KEY=SEED):
        public = _public()
        path = _export(tmp_path / "before.jsonl")
        # then the database, the export and the web page agree: not sealed yet, and why
        code, out = _run("verify_trail", "--public-key", public)
        assert code == 1
        assert "the latest checkpoint is not signed" in out
        assert "the next signed checkpoint supersedes it" in out
        assert _run("verify_trail", "--file", str(path), "--public-key", public)[0] == 1
        page = auditor.get("/audit/verify/", {"zone": ZONE}).content.decode()
        assert 'data-intact="0"' in page
        # when the keyed run seals (on main it refused: "the latest checkpoint is not signed")
        code, out = _run("trail_checkpoint")
        assert code == 0, out
        assert "it supersedes the unsigned checkpoint 1" in out
        # then all three say intact
        assert _run("verify_trail", "--public-key", public)[0] == 0
        after = _export(tmp_path / "after.jsonl")
        assert _run("verify_trail", "--file", str(after), "--public-key", public)[0] == 0
        page = auditor.get("/audit/verify/", {"zone": ZONE}).content.decode()
        assert 'data-intact="1"' in page


def test_an_unsigned_checkpoint_between_signed_ones_no_longer_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with override_settings(MARIA_TRAIL_SIGNING_KEY=SEED):
        _fill(2)
        checkpoints.checkpoint_create()
        public = _public()
        # an older version wrote an unsigned checkpoint after a signed one
        with monkeypatch.context() as patched:
            patched.setattr(signing, "sign", lambda message: ("", ""))
            _fill(1)
            checkpoints.checkpoint_create()
        code, out = _run("verify_trail", "--public-key", public)
        assert code == 1
        assert "checkpoint 2 after signed checkpoint 1" in out
        _fill(1)
        code, out = _run("trail_checkpoint")
        assert code == 0, out
        assert "supersedes the unsigned checkpoint 2" in out
        code, out = _run("verify_trail", "--public-key", public)
        assert code == 0, out


def test_an_export_whose_checkpoint_list_has_a_gap_is_broken(
    witness_file: Path, tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    for _ in range(3):
        _fill(1)
        _seal(django_capture_on_commit_callbacks)
    path = _export(tmp_path / "trail.jsonl")
    public = _public()
    assert _run("verify_trail", "--file", str(path), "--public-key", public)[0] == 0
    # a doctored copy leaves checkpoint 2 out of the list
    lines = path.read_text().splitlines(keepends=True)
    kept = [
        line
        for line in lines
        if not (json.loads(line)["type"] == "trail.sealed" and json.loads(line)["checkpoint"] == 2)
    ]
    assert len(kept) == len(lines) - 1
    path.write_text("".join(kept))
    code, out = _run("verify_trail", "--file", str(path), "--public-key", public)
    assert code == 1
    assert "checkpoint 2 is missing (the checkpoints jump to 3)" in out
