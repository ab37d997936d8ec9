"""The trail in the database: appends form per-zone chains, and `verify_trail` reports a
flipped byte, a deleted row, a swapped pair, a truncated tail and re-linked chains at the
exact event."""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction

from coordinates import events
from tests.trail.test_trail_bypass import triggers_bypassed
from trail import checkpoints, ledger
from trail import verify as trail_verify
from trail.chain import (
    GENESIS,
    REASON_ALTERED,
    REASON_RELINKED,
    canonical_json,
    chain_hash,
    link_events,
    verify_chain,
)
from trail.models import TrailCheckpoint, TrailEvent, TrailHead

pytestmark = pytest.mark.django_db

ZONE = "G1.U1.P1.Z1"
OTHER = "G1.U1.P1.Z2"


def verify(*args: str) -> tuple[int, str]:
    """Run `manage.py verify_trail`; its exit code and everything it printed."""
    out = io.StringIO()
    try:
        call_command("verify_trail", *args, stdout=out)
    except CommandError as error:
        return error.returncode, f"{out.getvalue()}{error}"
    return 0, out.getvalue()


def fill(chain: str = ZONE, n: int = 6, decision: int | None = None) -> list[TrailEvent]:
    return [
        ledger.append(
            kind="test.step",
            chain=chain,
            actor="system",
            reason=f"step {i}",
            payload={"i": i, "note": "承認"},
            decision_id=decision,
        )
        for i in range(1, n + 1)
    ]


def event(chain: str, seq: int) -> TrailEvent:
    return TrailEvent.objects.get(chain=chain, seq=seq)


@pytest.fixture(params=["default", "reference"])
def verify_paths(request: pytest.FixtureRequest) -> Callable[[], trail_verify.TrailReport]:
    """The default verification (the fast path on PostgreSQL) and the plain reference walk:
    both must reach the same verdict."""
    if request.param == "default":
        return trail_verify.verify_database
    return lambda: trail_verify.verify_database(fast=False)


# --- appending ---------------------------------------------------------------------------


def test_appends_number_each_chain_from_one_and_link_the_hashes() -> None:
    # given events in two zones, interleaved
    first = ledger.append(kind="test.a", chain=ZONE, actor="system", payload={})
    other = ledger.append(kind="test.a", chain=OTHER, actor="system", payload={})
    second = ledger.append(kind="test.b", chain=ZONE, actor="ann", payload={"x": 1})
    # then each chain counts on its own and links to its own previous event
    assert (first.seq, other.seq, second.seq) == (1, 1, 2)
    assert first.prev_hash == GENESIS == other.prev_hash
    assert second.prev_hash == first.hash
    # and the stored bytes are exactly what was hashed
    assert second.hash == chain_hash(second.prev_hash, bytes(second.canonical))
    head = TrailHead.objects.get(chain=ZONE)
    assert (head.seq, head.hash) == (2, second.hash)


def test_the_hashed_body_holds_every_field_and_the_columns_repeat_it() -> None:
    stored = ledger.append(
        kind="decision.approved",
        chain=ZONE,
        actor="ann",
        reason="matches section 2",
        payload={"bundle": "ab" * 32},
        decision_id=42,
    )
    stored.refresh_from_db()
    body = stored.body
    assert body == {
        "v": 1,
        "kind": "decision.approved",
        "chain": ZONE,
        "seq": 1,
        "decision": 42,
        "actor": "ann",
        "reason": "matches section 2",
        "at": stored.created_at.isoformat(timespec="microseconds"),
        "payload": {"bundle": "ab" * 32},
    }
    assert bytes(stored.canonical) == canonical_json(body)
    assert (stored.kind, stored.actor, stored.decision_id) == ("decision.approved", "ann", 42)


def test_an_event_rolls_back_with_the_change_it_records() -> None:
    # given a transaction that appends and then fails
    def change_that_fails() -> None:
        with transaction.atomic():
            ledger.append(kind="test.a", chain=ZONE, actor="system", payload={})
            raise RuntimeError("the state change failed")

    with pytest.raises(RuntimeError):
        change_that_fails()
    # then neither the event nor the head moved
    assert not TrailEvent.objects.exists()
    assert not TrailHead.objects.filter(chain=ZONE, seq__gt=0).exists()
    # and the next append starts the chain at 1
    assert ledger.append(kind="test.a", chain=ZONE, actor="system", payload={}).seq == 1


def test_a_held_chain_writes_a_change_s_events_together_and_they_verify() -> None:
    # given one event before, then a change that holds the chain and appends three, with an
    # append to another chain in between
    ledger.append(kind="test.a", chain=ZONE, actor="system", payload={})
    with transaction.atomic(), ledger.holding(ZONE):
        held = [
            ledger.append(kind="test.b", chain=ZONE, actor="ann", payload={"i": i})
            for i in range(3)
        ]
        other = ledger.append(kind="test.c", chain=OTHER, actor="system", payload={})
        # nothing is written (nor linked) before the change's block ends, in any chain
        assert TrailEvent.objects.filter(chain=ZONE).count() == 1
        assert held[0].hash == ""
        assert other.pk is None
    # the other chain's event is written too, as that chain's first
    assert (other.seq, other.prev_hash) == (1, "0" * 64)
    assert TrailEvent.objects.filter(chain=OTHER).count() == 1
    # then they follow the earlier event in order, linked, and the head moved to the last
    stored = list(TrailEvent.objects.filter(chain=ZONE).order_by("seq"))
    assert [e.seq for e in stored] == [1, 2, 3, 4]
    assert [e.hash for e in stored[1:]] == [e.hash for e in held]
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(stored))
    head = TrailHead.objects.get(chain=ZONE)
    assert (head.seq, head.hash) == (4, held[-1].hash)
    # and the trail verifies, the next plain append continuing the chain
    assert ledger.append(kind="test.d", chain=ZONE, actor="system", payload={}).seq == 5
    assert verify()[0] == 0


def test_a_held_change_that_fails_writes_none_of_its_events() -> None:
    ledger.append(kind="test.a", chain=ZONE, actor="system", payload={})

    def change_that_fails() -> None:
        with transaction.atomic(), ledger.holding(ZONE):
            ledger.append(kind="test.b", chain=ZONE, actor="system", payload={})
            raise RuntimeError("the state change failed")

    with pytest.raises(RuntimeError):
        change_that_fails()
    assert list(TrailEvent.objects.values_list("seq", flat=True)) == [1]
    assert TrailHead.objects.get(chain=ZONE).seq == 1
    # and nothing is left held: the next change starts from the stored head
    with transaction.atomic(), ledger.holding(ZONE):
        appended = ledger.append(kind="test.c", chain=ZONE, actor="system", payload={})
    assert appended.seq == 2
    assert verify()[0] == 0


@pytest.mark.parametrize(
    ("coordinate", "chain"),
    [("G1", "G1"), ("G1.U1.P1.Z1", "G1.U1.P1.Z1"), ("G1.U1.P1.Z1.A7", "G1.U1.P1.Z1")],
)
def test_an_agent_s_events_belong_to_its_zone_s_chain(coordinate: str, chain: str) -> None:
    assert ledger.chain_for(coordinate) == chain


def test_a_decision_s_events_go_to_the_lane_of_its_zone_its_id_picks() -> None:
    lanes = {ledger.lane_for("G1.U1.P1.Z1.A7", n) for n in range(1, 4 * ledger.LANES + 1)}
    assert lanes == {f"G1.U1.P1.Z1/{k}" for k in range(ledger.LANES)}
    assert ledger.chain_node("G1.U1.P1.Z1/3") == "G1.U1.P1.Z1"
    assert ledger.lane_for("G1.U1.P1.Z1", 11) == ledger.lane_for("G1.U1.P1.Z1", 11 + ledger.LANES)


@pytest.mark.parametrize("chain", ["G1.U1.P1.Z1/", "G1.U1.P1.Z1/x", "G1.U1.P1.Z1/03", "G1/1/2"])
def test_a_malformed_lane_is_refused(chain: str) -> None:
    with pytest.raises(ValueError, match="lane"):
        ledger.append(kind="test.a", chain=chain, actor="system", payload={})


@pytest.mark.parametrize(
    ("kind", "chain", "error"),
    [
        ("approved", ZONE, "kind"),
        ("test.a", "G1.U1.P1.Z1.A1", "zone-tree"),
        ("test.a", "zone one", "segment"),
    ],
)
def test_a_bad_kind_or_chain_is_refused(kind: str, chain: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        ledger.append(kind=kind, chain=chain, actor="system", payload={})


def test_actors_are_recorded_as_usernames_agents_or_system(person: Any) -> None:
    ann = person("ann")
    assert ledger.actor_label(ann) == "ann"
    assert ledger.actor_label(None) == "system"
    assert ledger.actor_label("agent:G1.U1.P1.Z1.A1") == "agent:G1.U1.P1.Z1.A1"
    with pytest.raises(ValueError, match="empty"):
        ledger.actor_label(" ")


def test_payloads_that_are_not_json_are_refused() -> None:
    with pytest.raises(ValueError, match="NaN"):
        ledger.append(kind="test.a", chain=ZONE, actor="system", payload={"x": float("nan")})
    assert not TrailEvent.objects.exists()


def test_content_hash_is_the_sha256_of_the_canonical_form() -> None:
    assert ledger.content_hash({"b": 1, "a": 2}) == ledger.content_hash(b'{"a":2,"b":1}')


@pytest.mark.django_db(transaction=True)
def test_lock_outside_a_transaction_is_refused() -> None:
    with pytest.raises(ledger.TrailError, match=r"inside transaction\.atomic"):
        ledger.lock(ZONE)


# --- the first event types ---------------------------------------------------------------


def test_zone_created_and_role_granted_land_in_the_zone_s_chain(
    org: dict[str, Any], person: Any
) -> None:
    from coordinates.models import RoleAssignment

    admin = person("zed")
    auditor = person("aud", "auditor", "G1.U1")
    zone = org[ZONE]
    created = events.zone_created(zone, actor=admin)
    granted = events.role_granted(RoleAssignment.objects.get(user=auditor), actor=admin)
    assert (created.chain, created.kind, created.actor) == (ZONE, "zone.created", "zed")
    assert created.payload == {
        "zone": ZONE,
        "level": "zone",
        "name": "",
        "parent": "G1.U1.P1",
    }
    assert (granted.chain, granted.kind) == ("G1.U1", "role.granted")
    assert granted.payload == {"user": "aud", "role": "auditor", "scope": "G1.U1"}


# --- verification: intact ----------------------------------------------------------------


def test_an_intact_trail_verifies_with_exit_0() -> None:
    fill(ZONE)
    fill(OTHER, 3)
    code, out = verify()
    assert code == 0, out
    assert f"chain {ZONE}: intact, events 1..6" in out
    assert "trail intact: 2 chains, 9 events" in out


def test_an_empty_trail_verifies() -> None:
    code, out = verify()
    assert code == 0, out
    assert "0 chains" in out


# --- verification: tampering, each at the exact event --------------------------------------


def test_a_flipped_byte_is_reported_at_its_event(
    verify_paths: Callable[[], trail_verify.TrailReport],
) -> None:
    # given six events, the third with one byte of its body changed
    fill()
    target = event(ZONE, 3)
    body = bytearray(bytes(target.canonical))
    at = body.index(b"step 3") + len(b"step ")
    body[at] = ord("8")
    with triggers_bypassed():
        TrailEvent.objects.filter(pk=target.pk).update(canonical=bytes(body))
    # when the trail is verified
    report = verify_paths()
    code, out = verify()
    # then exactly that event is named, with the reason
    assert not report.intact
    (broken,) = report.broken
    assert (broken.verdict.broken_seq, broken.verdict.reason) == (3, REASON_ALTERED)
    assert code == 1
    assert f"chain {ZONE}: BROKEN at event 3 (id {target.pk}): {REASON_ALTERED}" in out


def test_a_changed_hash_column_is_reported_at_its_event(
    verify_paths: Callable[[], trail_verify.TrailReport],
) -> None:
    fill()
    with triggers_bypassed():
        TrailEvent.objects.filter(chain=ZONE, seq=5).update(hash="f" * 64)
    (broken,) = verify_paths().broken
    assert (broken.verdict.broken_seq, broken.verdict.reason) == (5, REASON_ALTERED)


def test_a_deleted_row_is_reported_at_the_event_after_the_gap(
    verify_paths: Callable[[], trail_verify.TrailReport],
) -> None:
    fill()
    after = event(ZONE, 4)
    with triggers_bypassed():
        TrailEvent.objects.filter(chain=ZONE, seq=3).delete()
    (broken,) = verify_paths().broken
    assert (broken.verdict.broken_seq, broken.event_id) == (4, after.pk)
    assert broken.verdict.reason == "sequence gap: event 3 missing"
    code, out = verify()
    assert code == 1
    assert f"BROKEN at event 4 (id {after.pk}): sequence gap: event 3 missing" in out


def test_a_swapped_pair_is_reported_at_the_first_of_the_two(
    verify_paths: Callable[[], trail_verify.TrailReport],
) -> None:
    # given events 3 and 4 trading places (their seq numbers swapped)
    fill()
    third, fourth = event(ZONE, 3), event(ZONE, 4)
    with triggers_bypassed():
        TrailEvent.objects.filter(pk=third.pk).update(seq=1000)
        TrailEvent.objects.filter(pk=fourth.pk).update(seq=3)
        TrailEvent.objects.filter(pk=third.pk).update(seq=4)
    # then the walk stops at seq 3, which no longer follows seq 2
    (broken,) = verify_paths().broken
    assert (broken.verdict.broken_seq, broken.verdict.reason) == (3, REASON_RELINKED)
    assert broken.event_id == fourth.pk


def test_swapped_contents_are_reported_at_the_first_of_the_two(
    verify_paths: Callable[[], trail_verify.TrailReport],
) -> None:
    # given rows 2 and 3 keeping their seq but exchanging everything hashed
    fill()
    second, third = event(ZONE, 2), event(ZONE, 3)
    fields = ("prev_hash", "hash", "canonical")
    with triggers_bypassed():
        TrailEvent.objects.filter(pk=second.pk).update(hash="0" * 64)
        TrailEvent.objects.filter(pk=third.pk).update(
            **{name: getattr(second, name) for name in fields}
        )
        TrailEvent.objects.filter(pk=second.pk).update(
            **{name: getattr(third, name) for name in fields}
        )
    (broken,) = verify_paths().broken
    assert (broken.verdict.broken_seq, broken.verdict.reason) == (2, REASON_RELINKED)


def test_a_deleted_tail_is_caught_by_the_head_row_before_any_checkpoint() -> None:
    fill()
    with triggers_bypassed():
        TrailEvent.objects.filter(chain=ZONE, seq__gte=5).delete()
    code, out = verify()
    assert code == 1
    assert (
        "BROKEN at event 5: truncated: the head row records seq 6 but events 5..6 are missing"
        in out
    )


def test_a_truncated_tail_is_caught_against_the_last_checkpoint(
    verify_paths: Callable[[], trail_verify.TrailReport],
) -> None:
    # given a checkpoint over six events, then the last two deleted and the head rewound
    fill()
    checkpoints.checkpoint_create()
    kept = event(ZONE, 4)
    with triggers_bypassed():
        TrailEvent.objects.filter(chain=ZONE, seq__gte=5).delete()
        TrailHead.objects.filter(chain=ZONE).update(seq=4, hash=kept.hash)
    # then the chain alone looks fine, but the checkpoint says where it must reach
    (broken,) = verify_paths().broken
    assert broken.verdict.broken_seq == 5
    assert broken.verdict.reason == (
        "truncated: the trail ends at event 4 but the checkpoint covers events 1..6"
    )
    code, out = verify()
    assert code == 1
    assert "trail BROKEN" in out


def test_a_whole_chain_deleted_is_caught_against_the_last_checkpoint() -> None:
    fill(ZONE)
    fill(OTHER, 2)
    checkpoints.checkpoint_create()
    with triggers_bypassed():
        TrailEvent.objects.filter(chain=OTHER).delete()
        TrailHead.objects.filter(chain=OTHER).delete()
    code, out = verify()
    assert code == 1
    assert (
        f"chain {OTHER}: BROKEN at event 1: truncated: the trail ends at no events but the "
        "checkpoint covers events 1..2"
    ) in out
    assert f"chain {ZONE}: intact" in out


def _relink(chain: str, keep: Callable[[TrailEvent], bool]) -> None:
    """What a forger with write access does: drop events, renumber and re-hash the rest,
    fix the head. Every chain check passes afterwards."""
    kept = [e for e in TrailEvent.objects.filter(chain=chain).order_by("seq") if keep(e)]
    bodies = []
    for new_seq, stored in enumerate(kept, start=1):
        body = stored.body
        body["seq"] = new_seq
        bodies.append(canonical_json(body))
    links = link_events(bodies)
    with triggers_bypassed():
        TrailEvent.objects.filter(chain=chain).delete()
        TrailEvent.objects.bulk_create(
            TrailEvent(
                chain=chain,
                seq=link.seq,
                kind=stored.kind,
                decision_id=stored.decision_id,
                actor=stored.actor,
                reason=stored.reason,
                created_at=stored.created_at,
                prev_hash=link.prev_hash,
                hash=link.hash,
                canonical=link.canonical,
            )
            for link, stored in zip(links, kept, strict=True)
        )
        TrailHead.objects.filter(chain=chain).update(seq=links[-1].seq, hash=links[-1].hash)


def test_a_decision_s_events_deleted_and_the_chain_re_linked_are_caught_by_the_checkpoint(
    verify_paths: Callable[[], trail_verify.TrailReport],
) -> None:
    # given two decisions' events interleaved in one zone, sealed by a checkpoint
    for _ in range(3):
        fill(ZONE, 1, decision=1)
        fill(ZONE, 1, decision=2)
    checkpoints.checkpoint_create()
    # when decision 2's events are removed and the chain re-hashed to look whole
    _relink(ZONE, keep=lambda e: e.decision_id != 2)
    relinked = TrailEvent.objects.filter(chain=ZONE).order_by("seq")
    assert verify_chain(e.link for e in relinked).intact  # the chain alone looks whole
    # then the checkpoint catches it
    (broken,) = verify_paths().broken
    assert broken.verdict.reason == (
        "truncated: the trail ends at event 3 but the checkpoint covers events 1..6"
    )


def test_a_re_linked_chain_as_long_as_before_is_caught_by_the_checkpoint_digest() -> None:
    # given a sealed chain whose second event is rewritten and every later one re-hashed
    fill()
    checkpoints.checkpoint_create()
    target = event(ZONE, 2)
    body = target.body
    body["reason"] = "rewritten"
    bodies = [bytes(e.canonical) for e in TrailEvent.objects.filter(chain=ZONE).order_by("seq")]
    bodies[1] = canonical_json(body)
    links = link_events(bodies)
    with triggers_bypassed():
        for link in links:
            TrailEvent.objects.filter(chain=ZONE, seq=link.seq).update(
                prev_hash=link.prev_hash, hash=link.hash, canonical=link.canonical
            )
        # the column too, as a careful attacker would: only the checkpoint sees it now
        TrailEvent.objects.filter(chain=ZONE, seq=2).update(reason="rewritten")
        TrailHead.objects.filter(chain=ZONE).update(hash=links[-1].hash)
    code, out = verify()
    assert code == 1
    assert "BROKEN at event 6" in out
    assert "checkpoint digest mismatch for events 1..6" in out


# --- checkpoints -------------------------------------------------------------------------


def test_a_checkpoint_seals_every_chain_and_chains_to_the_previous_one() -> None:
    fill(ZONE, 4)
    fill(OTHER, 2)
    first = checkpoints.checkpoint_create()
    fill(ZONE, 1)
    second = checkpoints.checkpoint_create()
    assert (first.seq, first.prev_hash, first.chains, first.events) == (1, GENESIS, 2, 6)
    assert (second.seq, second.prev_hash, second.events) == (2, first.hash, 7)
    assert second.hash == chain_hash(first.hash, bytes(second.canonical))
    entries = trail_verify.checkpoint_entries(second)
    last = event(ZONE, 5)
    assert entries[ZONE].seq == 5
    assert entries[ZONE].hash == last.hash
    hashes = TrailEvent.objects.filter(chain=ZONE).order_by("seq").values_list("hash", flat=True)
    from trail.chain import checkpoint_digest

    assert entries[ZONE].digest == checkpoint_digest(hashes)


def test_the_checkpoint_digests_agree_between_the_fast_and_the_reference_path() -> None:
    fill(ZONE, 7)
    fill(OTHER, 3)
    fast = {r.chain: r.digest for r in trail_verify.verify_database(digests=True).chains}
    reference = {
        r.chain: r.digest for r in trail_verify.verify_database(digests=True, fast=False).chains
    }
    assert fast == reference
    assert None not in fast.values()


def test_a_broken_trail_is_never_sealed() -> None:
    fill()
    with triggers_bypassed():
        TrailEvent.objects.filter(chain=ZONE, seq=2).delete()
    with pytest.raises(trail_verify.TrailBroken, match="sequence gap"):
        checkpoints.checkpoint_create()
    assert not TrailCheckpoint.objects.exists()
    with pytest.raises(CommandError, match="not sealed"):
        call_command("trail_checkpoint", stdout=io.StringIO(), stderr=io.StringIO())


def test_the_checkpoint_command_prints_the_hash_to_keep() -> None:
    fill()
    out = io.StringIO()
    call_command("trail_checkpoint", stdout=out)
    checkpoint = TrailCheckpoint.objects.get()
    assert f"checkpoint 1: 1 chains, 6 events, hash {checkpoint.hash}" in out.getvalue()


def test_the_periodic_task_seals_a_checkpoint() -> None:
    from trail.tasks import trail_checkpoint

    fill()
    assert trail_checkpoint.delay().get() == 1
    assert TrailCheckpoint.objects.get().events == 6


def test_an_altered_checkpoint_is_reported() -> None:
    fill()
    checkpoint = checkpoints.checkpoint_create()
    body = checkpoint.body
    body["chains"][ZONE]["seq"] = 3
    with triggers_bypassed():
        TrailCheckpoint.objects.filter(pk=checkpoint.pk).update(canonical=canonical_json(body))
    code, out = verify()
    assert code == 1
    assert f"PROBLEM: checkpoint 1: {REASON_ALTERED}" in out


def test_a_kept_checkpoint_hash_catches_the_latest_checkpoint_being_rewritten() -> None:
    # given a checkpoint whose hash the auditor kept
    fill()
    kept = checkpoints.checkpoint_create().hash
    assert verify("--checkpoint", kept)[0] == 0
    # when the tail and the checkpoint are both rewritten
    with triggers_bypassed():
        TrailEvent.objects.filter(chain=ZONE, seq__gte=5).delete()
        TrailHead.objects.filter(chain=ZONE).update(seq=4, hash=event(ZONE, 4).hash)
        TrailCheckpoint.objects.all().delete()
    checkpoints.checkpoint_create()
    # then the database alone looks intact, but not against the kept hash
    assert verify()[0] == 0
    code, out = verify("--checkpoint", kept)
    assert code == 1
    assert f"no checkpoint has the hash {kept}" in out


# --- columns against bodies ---------------------------------------------------------------


def test_verification_catches_a_column_that_disagrees_with_the_hashed_body() -> None:
    # given an event whose actor column was changed but whose hashed bytes were not
    fill()
    target = event(ZONE, 4)
    with triggers_bypassed():
        TrailEvent.objects.filter(pk=target.pk).update(actor="mallory", decision_id=7)
    # then plain verification (the fast path on PostgreSQL) and --deep name the event and
    # the column
    for args in ((), ("--deep",)):
        code, out = verify(*args)
        assert code == 1
        assert (
            f"BROKEN at event 4 (id {target.pk}): the 'decision' column says 7 but the hashed "
            "body says None"
        ) in out


def test_a_rewritten_reason_column_is_found_by_default() -> None:
    # An auditor reads the reason on the page: the column, not the hashed bytes.
    fill()
    target = event(ZONE, 2)
    with triggers_bypassed():
        TrailEvent.objects.filter(pk=target.pk).update(reason="approved after a call")
    code, out = verify()
    assert code == 1
    assert f"BROKEN at event 2 (id {target.pk}): the 'reason' column says" in out


def test_verification_output_is_plain_lines_with_a_summary() -> None:
    fill()
    code, out = verify()
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0] == "source: database"
    assert lines[1] == "checkpoint: no checkpoint"
    assert lines[-1].startswith("trail intact: 1 chains, 6 events in ")
    assert "events/s" in lines[-1]
    json.dumps(lines)  # printable as is


def test_the_admin_shows_the_trail_read_only(client: Any, django_user_model: Any) -> None:
    fill(ZONE, 2)
    checkpoints.checkpoint_create()
    root = django_user_model.objects.create_superuser("root", password="pw-root-123")
    client.force_login(root)
    first = event(ZONE, 1)
    listing = client.get("/admin/trail/trailevent/")
    detail = client.get(f"/admin/trail/trailevent/{first.pk}/change/")
    checkpoint = client.get("/admin/trail/trailcheckpoint/")
    assert (listing.status_code, detail.status_code, checkpoint.status_code) == (200, 200, 200)
    assert "承認" in detail.content.decode()  # the hashed body, decoded
    assert b"Save" not in detail.content
    assert client.get("/admin/trail/trailevent/add/").status_code == 403
