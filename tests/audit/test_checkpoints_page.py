"""Issue 29 item 9: the auditor sees the trail's checkpoints on a page linked from Verify:
when each sealed the chains, its hash, the key that signed it (checked with the key the
server publishes) and whether the witness holds it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client, override_settings

from coordinates.models import Role
from trail import checkpoints, ledger, signing

pytestmark = pytest.mark.django_db

ZONE = "G1.U1.P1.Z1"
SEED = signing.new_seed()


@pytest.fixture(autouse=True)
def _fresh_keys() -> Iterator[None]:
    signing._configured.cache_clear()
    yield
    signing._configured.cache_clear()


def _seal(on_commit: Any, n: int) -> None:
    for i in range(n):
        ledger.append(kind="test.step", chain=ZONE, actor="system", payload={"i": i})
    with on_commit(execute=True):
        checkpoints.checkpoint_create()


def test_the_checkpoints_page_says_who_signed_each_and_which_the_witness_holds(
    tmp_path: Path, org: Any, person: Any, django_capture_on_commit_callbacks: Any
) -> None:
    witness_file = tmp_path / "witness.jsonl"
    # given checkpoint 1 signed and handed to the witness, checkpoint 2 signed while no
    # witness was configured
    with override_settings(MARIA_TRAIL_SIGNING_KEY=SEED, MARIA_TRAIL_WITNESS=str(witness_file)):
        _seal(django_capture_on_commit_callbacks, 2)
    with override_settings(MARIA_TRAIL_SIGNING_KEY=SEED, MARIA_TRAIL_WITNESS=""):
        _seal(django_capture_on_commit_callbacks, 1)
    key_id = signing.public_key_from(_public()).key_id
    auditor = Client()
    auditor.force_login(person("olga", Role.AUDITOR, "G1"))
    with override_settings(MARIA_TRAIL_SIGNING_KEY=SEED, MARIA_TRAIL_WITNESS=str(witness_file)):
        # when the auditor goes from Verify to the checkpoints
        verify = auditor.get("/audit/verify/", {"zone": ZONE}).content.decode()
        assert 'href="/audit/checkpoints/"' in verify
        page = auditor.get("/audit/checkpoints/").content.decode()
    # then each row names the key, says the signature verifies, and whether it is witnessed
    rows = {
        int(row.split('"', 1)[0]): row.split("</tr>", 1)[0]
        for row in page.split('<tr data-seq="')[1:]
    }
    assert sorted(rows) == [1, 2]
    assert page.index('data-seq="2"') < page.index('data-seq="1"')  # newest first
    for row in rows.values():
        assert key_id in row
        assert "signature verified" in row
    assert "✔ witnessed" in rows[1]
    assert "not witnessed" in rows[2]
    # and with another key configured (rotated without publishing the old one) it says so
    signing._configured.cache_clear()
    with override_settings(MARIA_TRAIL_SIGNING_KEY=signing.new_seed(), MARIA_TRAIL_WITNESS=""):
        page = auditor.get("/audit/checkpoints/").content.decode()
    assert "a key this server does not publish" in page
    assert "No witness is configured" in page
    # a reviewer does not see it
    reviewer = Client()
    reviewer.force_login(person("ann", Role.REVIEWER, "G1"))
    assert reviewer.get("/audit/checkpoints/").status_code == 403


def test_with_no_checkpoint_the_page_says_how_one_is_made(org: Any, person: Any) -> None:
    auditor = Client()
    auditor.force_login(person("olga", Role.AUDITOR, "G1"))
    with override_settings(MARIA_TRAIL_WITNESS=""):
        page = auditor.get("/audit/checkpoints/").content.decode()
    assert "No checkpoint yet" in page


def _public() -> str:
    with override_settings(MARIA_TRAIL_SIGNING_KEY=SEED):
        signing._configured.cache_clear()
        key = signing.public_key()
    assert key is not None
    return key.text


def test_a_witness_that_cannot_be_read_is_said_in_the_pages_language(org: Any, person: Any) -> None:
    # given a witness nobody answers at
    target = "http://127.0.0.1:1/witness"
    auditor = Client()
    auditor.force_login(person("olga", Role.AUDITOR, "G1"))
    # when a Japanese auditor opens the checkpoints page and the Verify page
    auditor.cookies["django_language"] = "ja"
    with override_settings(MARIA_TRAIL_WITNESS=target):
        checkpoints_page = auditor.get("/audit/checkpoints/").content.decode()
        verify_page = auditor.get("/audit/verify/").content.decode()
    # then both say why in Japanese (the operating system's own words stay as it gives them)
    why = f"証人 {target} を読み取れません: "
    assert why in checkpoints_page
    assert why in verify_page
    assert "cannot read the witness" not in checkpoints_page + verify_page
