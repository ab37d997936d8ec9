"""Checkpoints signed with a key the database does not hold: a rewritten trail re-sealed by
someone with the database but not the key is found by the signature, from the database and
offline from an export."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings
from rest_framework.test import APIClient

from tests.trail_support import triggers_bypassed
from trail import checkpoints, export, ledger, signing
from trail.models import TrailCheckpoint, TrailEvent, TrailHead

pytestmark = pytest.mark.django_db

ZONE = "G1.U1.P1.Z1"
SEED = signing.new_seed()
OTHER_SEED = signing.new_seed()


@pytest.fixture(autouse=True)
def _fresh_keys() -> Iterator[None]:
    signing._configured.cache_clear()
    yield
    signing._configured.cache_clear()


def _fill(n: int = 6) -> None:
    for i in range(n):
        ledger.append(kind="test.step", chain=ZONE, actor="system", payload={"i": i})


def _verify(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_trail", *args, stdout=out)
    except CommandError as error:
        return error.returncode, out.getvalue() + str(error)
    return 0, out.getvalue()


def _public() -> str:
    key = signing.public_key()
    assert key is not None
    return key.text


def _reseal_without_the_key() -> None:
    """The attack: rewrite event 3's reason in body and column, re-link every later event,
    move the head, and replace the checkpoint by one sealed without the key."""
    events = list(TrailEvent.objects.filter(chain=ZONE).order_by("seq"))
    bodies = [bytes(e.canonical) for e in events]
    body = json.loads(bodies[2])
    body["reason"] = "rewritten"
    from trail.chain import canonical_json, chain_hash

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
        TrailHead.objects.filter(chain=ZONE).update(hash=prev)
        TrailCheckpoint.objects.all().delete()
    with override_settings(MARIA_TRAIL_SIGNING_KEY="", MARIA_TRAIL_SIGNING_KEY_FILE=""):
        signing._configured.cache_clear()
        checkpoints.checkpoint_create()
    signing._configured.cache_clear()


@override_settings(MARIA_TRAIL_SIGNING_KEY=SEED)
def test_a_checkpoint_is_signed_and_verifies_with_the_published_key() -> None:
    _fill()
    sealed = checkpoints.checkpoint_create()
    key = signing.public_key()
    assert key is not None
    assert sealed.key_id == key.key_id
    assert key.verifies(sealed.hash, str(sealed.signature))
    published = APIClient().get("/api/v1/trail/public-key/").json()
    assert published == {"algorithm": "Ed25519", "key_id": key.key_id, "public_key": key.text}
    code, out = _verify("--public-key", published["public_key"])
    assert code == 0, out
    assert f"signatures: checked with key {key.key_id}" in out


@override_settings(MARIA_TRAIL_SIGNING_KEY=SEED)
def test_a_rewritten_trail_resealed_without_the_key_is_found_by_the_signature() -> None:
    _fill()
    checkpoints.checkpoint_create()
    public = _public()
    _reseal_without_the_key()
    # every hash, head and checkpoint agrees again: only the signature tells
    code, out = _verify("--public-key", public)
    assert code == 1
    assert "the latest checkpoint is not signed" in out


@override_settings(MARIA_TRAIL_SIGNING_KEY=SEED)
def test_a_rotated_key_keeps_older_checkpoints_verifiable_only_when_listed() -> None:
    _fill()
    checkpoints.checkpoint_create()
    old_public = _public()
    # the operator rotates: a new key, the old one's public half listed as previous
    with override_settings(
        MARIA_TRAIL_SIGNING_KEY=OTHER_SEED, MARIA_TRAIL_PREVIOUS_PUBLIC_KEYS=[old_public]
    ):
        signing._configured.cache_clear()
        _fill(1)
        checkpoints.checkpoint_create()
        new_public = _public()
        assert _verify()[0] == 0
    signing._configured.cache_clear()
    assert _verify("--public-key", old_public, "--public-key", new_public)[0] == 0
    # an auditor holding only the old key is told checkpoint 2 is not signed by it
    code, out = _verify("--public-key", old_public)
    assert code == 1
    assert "checkpoint 2: signed by key" in out


@override_settings(MARIA_TRAIL_SIGNING_KEY=SEED)
def test_an_export_verifies_its_signed_seal_offline(tmp_path: Path) -> None:
    _fill()
    checkpoints.checkpoint_create()
    public = _public()
    path = tmp_path / "trail.jsonl"
    path.write_text("".join(export.export_lines(scopes=None)))
    assert _verify("--file", str(path), "--public-key", public)[0] == 0
    # a seal whose signature was altered, or an entry that differs from the seal, is found
    lines = path.read_text().splitlines(keepends=True)
    seal = json.loads(lines[1])
    assert seal["type"] == "trail.seal"
    seal["signature"] = seal["signature"][::-1]
    path.write_text("".join([lines[0], json.dumps(seal) + "\n", *lines[2:]]))
    code, out = _verify("--file", str(path), "--public-key", public)
    assert code == 1
    assert "the signature does not verify" in out


@override_settings(MARIA_TRAIL_SIGNING_KEY=SEED)
def test_each_checkpoint_is_handed_to_the_witness(
    tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    witness = tmp_path / "witness.jsonl"
    with override_settings(MARIA_TRAIL_WITNESS=str(witness)):
        _fill(2)
        with django_capture_on_commit_callbacks(execute=True):
            first = checkpoints.checkpoint_create()
        _fill(1)
        with django_capture_on_commit_callbacks(execute=True):
            second = checkpoints.checkpoint_create()
    kept = [json.loads(line) for line in witness.read_text().splitlines()]
    assert [(k["checkpoint"], k["hash"], k["signature"]) for k in kept] == [
        (first.seq, first.hash, first.signature),
        (second.seq, second.hash, second.signature),
    ]


def test_without_a_key_checkpoints_are_unsigned_and_the_key_page_says_so() -> None:
    _fill(1)
    sealed = checkpoints.checkpoint_create()
    assert not sealed.signature
    response = APIClient().get("/api/v1/trail/public-key/")
    assert response.status_code == 404
    code, out = _verify()
    assert code == 0
    assert "signatures: not checked (no public key)" in out


def test_a_bad_public_key_is_a_clear_error() -> None:
    code, out = _verify("--public-key", "not-a-key")
    assert code == 2
    assert "not base64" in out
