"""The trail's hash chain: canonical bytes, and tampering reported at the exact event."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decisions.chain import (
    GENESIS,
    REASON_ALTERED,
    REASON_RELINKED,
    ChainLink,
    canonical_json,
    chain_hash,
    checkpoint_digest,
    link_events,
    verify_against_checkpoint,
    verify_chain,
)


def _trail(n: int) -> list[ChainLink]:
    bodies = [
        canonical_json({"seq": i, "type": "decision.transition", "to": "approved", "note": "承認"})
        for i in range(1, n + 1)
    ]
    return link_events(bodies)


def _relinked(links: list[ChainLink]) -> list[ChainLink]:
    # what a forger with write access does after deleting rows: renumber and re-hash
    return link_events([link.canonical for link in links])


# --- canonical_json -------------------------------------------------------------------


def test_canonical_json_sorts_keys_drops_whitespace_and_keeps_unicode() -> None:
    body = canonical_json({"b": [1, 2.5, None], "a": {"z": True, "y": "決定"}})
    assert body == '{"a":{"y":"決定","z":true},"b":[1,2.5,null]}'.encode()


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=8), st.randoms())
def test_canonical_json_does_not_depend_on_key_order(
    payload: dict[str, object], rnd: random.Random
) -> None:
    items = list(payload.items())
    rnd.shuffle(items)
    assert canonical_json(dict(items)) == canonical_json(payload)


@pytest.mark.parametrize(
    "payload",
    [
        {"score": math.nan},
        {"score": math.inf},
        {"nested": [{"deep": -math.inf}]},
    ],
)
def test_canonical_json_rejects_nan_and_infinity(payload: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="NaN and Infinity are not JSON"):
        canonical_json(payload)


def test_canonical_json_names_the_path_to_a_nan() -> None:
    with pytest.raises(ValueError, match=r"\$\.claims\[1\]\.confidence"):
        canonical_json({"claims": [{"confidence": 0.5}, {"confidence": math.nan}]})


def test_canonical_json_requires_datetimes_as_iso_strings() -> None:
    with pytest.raises(TypeError, match="ISO 8601"):
        canonical_json({"at": datetime(2025, 1, 1, tzinfo=UTC)})
    iso = datetime(2025, 1, 1, tzinfo=UTC).isoformat()
    assert canonical_json({"at": iso}) == b'{"at":"2025-01-01T00:00:00+00:00"}'


def test_canonical_json_rejects_non_string_keys() -> None:
    # json would turn 1 into "1" and let two different payloads share bytes
    with pytest.raises(ValueError, match="must be a string"):
        canonical_json({"a": {1: "x"}})


# --- chain_hash -----------------------------------------------------------------------


def test_chain_hash_is_sha256_of_ascii_prev_hash_then_body() -> None:
    body = b'{"a":1}'
    assert chain_hash(GENESIS, body) == hashlib.sha256(b"0" * 64 + body).hexdigest()
    assert len(GENESIS) == 64
    assert set(GENESIS) == {"0"}


# --- verify_chain ---------------------------------------------------------------------


def test_an_untouched_trail_is_intact() -> None:
    links = _trail(50)
    verdict = verify_chain(links)
    assert verdict.intact
    assert bool(verdict)
    assert (verdict.checked, verdict.head_seq, verdict.head_hash) == (50, 50, links[-1].hash)


def test_an_empty_trail_is_intact_at_genesis() -> None:
    verdict = verify_chain([])
    assert verdict.intact
    assert (verdict.checked, verdict.head_seq, verdict.head_hash) == (0, None, GENESIS)


def test_a_flipped_byte_is_reported_at_its_event() -> None:
    links = _trail(20)
    body = bytearray(links[11].canonical)
    body[5] ^= 0x01
    links[11] = dataclasses.replace(links[11], canonical=bytes(body))
    verdict = verify_chain(links)
    assert not verdict.intact
    assert (verdict.broken_seq, verdict.reason) == (12, REASON_ALTERED)
    assert (verdict.checked, verdict.head_seq) == (11, 11)


def test_a_deleted_row_is_reported_as_a_gap_at_the_next_event() -> None:
    links = _trail(20)
    del links[6]  # seq 7
    verdict = verify_chain(links)
    assert (verdict.broken_seq, verdict.reason) == (8, "sequence gap: event 7 missing")


def test_several_deleted_rows_name_the_missing_range() -> None:
    links = _trail(20)
    del links[6:9]  # seqs 7..9
    verdict = verify_chain(links)
    assert (verdict.broken_seq, verdict.reason) == (10, "sequence gap: events 7..9 missing")


def test_a_deleted_row_with_renumbered_seqs_breaks_the_prev_hash_link() -> None:
    links = _trail(20)
    del links[6]
    renumbered = [dataclasses.replace(link, seq=i) for i, link in enumerate(links, start=1)]
    verdict = verify_chain(renumbered)
    assert (verdict.broken_seq, verdict.reason) == (7, REASON_RELINKED)


def test_a_swapped_pair_is_reported_at_the_first_of_the_pair() -> None:
    # the rows keep their seq numbers; their contents (body, hashes) trade places
    links = _trail(20)
    a, b = links[4], links[5]
    links[4] = dataclasses.replace(b, seq=a.seq)
    links[5] = dataclasses.replace(a, seq=b.seq)
    verdict = verify_chain(links)
    assert (verdict.broken_seq, verdict.reason) == (5, REASON_RELINKED)


def test_rows_out_of_seq_order_are_reported_at_the_first_displaced_row() -> None:
    links = _trail(10)
    links[4], links[5] = links[5], links[4]
    verdict = verify_chain(links)
    assert verdict.broken_seq == 6
    assert verdict.reason.startswith("sequence gap")
    links = _trail(10)
    links.insert(5, links[3])  # a replayed copy of seq 4
    verdict = verify_chain(links)
    assert verdict.broken_seq == 4
    assert verdict.reason.startswith("sequence out of order")


def test_an_event_altered_and_rehashed_is_caught_by_the_next_link() -> None:
    links = _trail(10)
    forged_body = canonical_json({"seq": 3, "type": "decision.transition", "to": "rejected"})
    links[2] = dataclasses.replace(
        links[2], canonical=forged_body, hash=chain_hash(links[2].prev_hash, forged_body)
    )
    verdict = verify_chain(links)
    assert (verdict.broken_seq, verdict.reason) == (4, REASON_RELINKED)


def test_verification_can_resume_after_a_trusted_event() -> None:
    links = _trail(30)
    tail = links[10:]
    assert verify_chain(tail, prev_hash=links[9].hash, first_seq=11).intact
    assert not verify_chain(tail, prev_hash=links[8].hash, first_seq=11).intact


@st.composite
def single_byte_mutations(draw: st.DrawFn) -> tuple[int, str, int, int]:
    index = draw(st.integers(min_value=0, max_value=11))
    field = draw(st.sampled_from(["canonical", "hash", "prev_hash"]))
    position = draw(st.integers(min_value=0, max_value=10_000))
    flip = draw(st.integers(min_value=1, max_value=255))
    return index, field, position, flip


@given(single_byte_mutations())
def test_any_single_byte_mutation_is_caught_at_that_event(
    mutation: tuple[int, str, int, int],
) -> None:
    index, field, position, flip = mutation
    links = _trail(12)
    original = links[index]
    if field == "canonical":
        data = bytearray(original.canonical)
        data[position % len(data)] ^= flip
        links[index] = dataclasses.replace(original, canonical=bytes(data))
    else:
        text = bytearray(getattr(original, field).encode("ascii"))
        text[position % len(text)] ^= flip
        # latin-1 maps every byte to one character, so each mutation stays a one-char change
        mutated = text.decode("latin-1")
        if field == "hash":
            links[index] = dataclasses.replace(original, hash=mutated)
        else:
            links[index] = dataclasses.replace(original, prev_hash=mutated)
    verdict = verify_chain(links)
    assert not verdict.intact
    assert verdict.broken_seq == original.seq
    assert verdict.checked == index


# --- checkpoints ----------------------------------------------------------------------


def test_checkpoint_digest_is_order_sensitive_and_domain_separated() -> None:
    hashes = [link.hash for link in _trail(5)]
    assert checkpoint_digest(hashes) != checkpoint_digest(list(reversed(hashes)))
    assert checkpoint_digest(hashes) != hashlib.sha256("".join(hashes).encode()).hexdigest()
    assert checkpoint_digest(iter(hashes)) == checkpoint_digest(hashes)


def test_a_trail_matching_its_checkpoint_is_intact() -> None:
    links = _trail(40)
    digest = checkpoint_digest(link.hash for link in links[:25])
    verdict = verify_against_checkpoint(links, 25, digest)
    assert verdict.intact
    assert verdict.checked == 40


def test_a_truncated_tail_passes_the_chain_but_not_the_checkpoint() -> None:
    links = _trail(40)
    digest = checkpoint_digest(link.hash for link in links[:40])
    truncated = links[:33]
    assert verify_chain(truncated).intact  # the chain alone cannot see a missing tail
    verdict = verify_against_checkpoint(truncated, 40, digest)
    assert not verdict.intact
    assert verdict.broken_seq == 34
    assert verdict.reason.startswith("truncated: the trail ends at event 33")


def test_a_deleted_decision_is_caught_even_after_the_chain_is_relinked() -> None:
    links = _trail(40)
    digest = checkpoint_digest(link.hash for link in links[:30])
    # every event of one decision (here seqs 12, 13 and 14) deleted, the rest re-linked
    forged = _relinked(links[:11] + links[14:])
    assert verify_chain(forged).intact
    verdict = verify_against_checkpoint(forged, 30, digest)
    assert not verdict.intact
    assert verdict.broken_seq == 30
    assert "checkpoint digest mismatch" in verdict.reason


def test_a_broken_link_is_reported_before_the_checkpoint_is_compared() -> None:
    links = _trail(20)
    digest = checkpoint_digest(link.hash for link in links[:20])
    links[3] = dataclasses.replace(links[3], canonical=links[3].canonical + b" ")
    verdict = verify_against_checkpoint(links, 20, digest)
    assert (verdict.broken_seq, verdict.reason) == (4, REASON_ALTERED)


def test_checkpoint_seq_must_be_positive() -> None:
    with pytest.raises(ValueError, match="checkpoint_seq"):
        verify_against_checkpoint(_trail(3), 0, GENESIS)
