"""The trail's hash chain: canonical bytes, and tampering reported at the exact event."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import random
from datetime import UTC, date, datetime, time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trail.chain import (
    GENESIS,
    REASON_ALTERED,
    REASON_DIGEST,
    REASON_RELINKED,
    REASON_TRUNCATED_EMPTY,
    BatchChecker,
    ChainLink,
    ChainVerdict,
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


def test_a_checkpoint_of_the_whole_trail_or_of_its_first_event_holds() -> None:
    links = _trail(25)
    whole = verify_against_checkpoint(links, 25, checkpoint_digest(k.hash for k in links))
    first = verify_against_checkpoint(links, 1, checkpoint_digest([links[0].hash]))
    assert (whole.intact, whole.checked, whole.head_seq) == (True, 25, 25)
    assert (first.intact, first.checked, first.head_seq) == (True, 25, 25)


def test_each_refusal_against_a_checkpoint_says_where_the_trail_stood() -> None:
    links = _trail(40)
    digest = checkpoint_digest(link.hash for link in links)
    # An emptied trail: nothing checked, no head, every checkpointed event missing.
    assert verify_against_checkpoint([], 40, digest) == ChainVerdict(
        False,
        0,
        None,
        GENESIS,
        broken_seq=1,
        reason=REASON_TRUNCATED_EMPTY % {"first": 1, "last": 40},
        template=REASON_TRUNCATED_EMPTY,
        parts=(("first", 1), ("last", 40)),
    )
    # A cut tail: the head is the last event left, the first missing one is named.
    cut = verify_against_checkpoint(links[:33], 40, digest)
    assert (cut.intact, cut.checked, cut.head_seq, cut.head_hash) == (
        False,
        33,
        33,
        links[32].hash,
    )
    assert cut.parts == (("first", 1), ("head", 33), ("last", 40))
    # A trail re-linked after a deletion: whole as a chain, so its head is the forged one.
    forged = _relinked(links[:11] + links[14:])
    mismatch = verify_against_checkpoint(forged, 30, digest)
    assert (mismatch.intact, mismatch.checked, mismatch.head_seq, mismatch.head_hash) == (
        False,
        37,
        37,
        forged[-1].hash,
    )
    assert mismatch.template == REASON_DIGEST


def test_checkpoint_seq_must_be_positive() -> None:
    with pytest.raises(ValueError, match="checkpoint_seq"):
        verify_against_checkpoint(_trail(3), 0, GENESIS)


# --- BatchChecker: stored rows in batches, as the database fast path reads them -------------

Row = tuple[Any, ...]
ZONES = [f"G1.U1.P1.Z{n}".encode() for n in range(1, 5)]


def _stored(chain: bytes, n: int) -> list[Row]:
    """A chain's rows as stored: (chain, seq, prev_hash, hash, canonical), text as bytes."""
    bodies = [
        canonical_json({"chain": chain.decode(), "seq": i, "to": "approved", "note": "承認"})
        for i in range(1, n + 1)
    ]
    return [
        (chain, link.seq, link.prev_hash.encode(), link.hash.encode(), link.canonical)
        for link in link_events(bodies)
    ]


def _interleaved(*chains: list[Row]) -> list[Row]:
    """Equal-length chains, one row of each in turn (as zones append side by side)."""
    return [row for rows in zip(*chains, strict=True) for row in rows]


def _as_read(stored: list[Row], server_hashes: list[bool]) -> list[Row]:
    """The rows as the checker gets them, (chain, seq, hash, hashed, digest): `hashed` is
    prev_hash + canonical, or prev_hash alone where the server sends sha256(prev_hash +
    canonical) of the stored bytes instead; None when prev_hash is not 64 bytes wide."""
    rows: list[Row] = []
    for (chain, seq, prev, stored_hash, body), by_server in zip(stored, server_hashes, strict=True):
        wide = len(prev) == 64
        if by_server:
            digest = hashlib.sha256(prev + body).digest()
            rows.append((chain, seq, stored_hash, prev if wide else None, digest))
        else:
            rows.append((chain, seq, stored_hash, prev + body if wide else None, None))
    return rows


def _feed(checker: BatchChecker, rows: list[Row], cuts: list[int]) -> None:
    for start, end in itertools.pairwise([0, *sorted(set(cuts)), len(rows)]):
        checker.feed(rows[start:end])


def _reference(stored: list[Row]) -> dict[Any, tuple[ChainVerdict, list[str]]]:
    """verify_chain over each chain's rows in the order they came, and the hashes it passed."""
    links: dict[Any, list[ChainLink]] = {}
    for chain, seq, prev, stored_hash, body in stored:
        link = ChainLink(seq, prev.decode(), stored_hash.decode(), body)
        links.setdefault(chain, []).append(link)
    return {
        chain: (verify_chain(chain_links), [link.hash for link in chain_links])
        for chain, chain_links in links.items()
    }


def _tamper(stored: list[Row], how: str, at: int, flip: int) -> None:
    """One edit that bypasses the triggers, at row `at` (text stays ASCII, as in the database)."""
    index = at % len(stored)
    chain, seq, prev, stored_hash, body = stored[index]
    assert isinstance(prev, bytes)
    assert isinstance(stored_hash, bytes)
    assert isinstance(body, bytes)
    if how == "body":
        changed = bytearray(body)
        changed[flip % len(changed)] ^= flip % 255 + 1
        stored[index] = (chain, seq, prev, stored_hash, bytes(changed))
    elif how in {"prev", "hash"}:
        text = bytearray(prev if how == "prev" else stored_hash)
        text[flip % 64] ^= flip % 127 + 1
        if how == "prev":
            stored[index] = (chain, seq, bytes(text), stored_hash, body)
        else:
            stored[index] = (chain, seq, prev, bytes(text), body)
    elif how == "upper":
        stored[index] = (chain, seq, prev, stored_hash.upper(), body)
    elif how == "short_prev":  # the prev_hash's last character moved into the body
        stored[index] = (chain, seq, prev[:-1], stored_hash, prev[-1:] + body)
    elif how == "delete":
        del stored[index]
    elif how == "duplicate":
        stored.insert(index, stored[index])
    elif how == "swap" and index + 1 < len(stored):
        stored[index], stored[index + 1] = stored[index + 1], stored[index]
    elif how == "seq":
        stored[index] = (chain, seq + 1 + flip % 3, prev, stored_hash, body)
    elif how == "shift_hash" and index + 1 < len(stored):
        # a hash's last character moved to the front of the next row's: joined, the column
        # reads the same
        after = stored[index + 1]
        stored[index] = (chain, seq, prev, stored_hash[:-1], body)
        stored[index + 1] = (*after[:3], stored_hash[-1:] + after[3], after[4])
    elif how == "rehash":  # the body altered and its own hash recomputed: the next link breaks
        forged = body + b" "
        stored[index] = (chain, seq, prev, chain_hash(prev.decode(), forged).encode(), forged)
    elif how in {"swap_contents", "renumber"}:
        later = [i for i in range(index + 1, len(stored)) if stored[i][0] == chain]
        if how == "renumber":  # the row deleted, the chain's later rows renumbered to close the gap
            for i in later:
                other = stored[i]
                stored[i] = (other[0], other[1] - 1, *other[2:])
            del stored[index]
        elif later:  # two rows of a chain keep their seq and trade everything hashed
            after = stored[later[0]]
            stored[index] = (chain, seq, *after[2:])
            stored[later[0]] = (chain, after[1], prev, stored_hash, body)


@st.composite
def stored_trails(draw: st.DrawFn) -> tuple[list[Row], dict[bytes, int]]:
    """Up to four chains interleaved in one arrival order, a checkpoint seq for some."""
    lengths = draw(st.lists(st.integers(0, 25), min_size=1, max_size=4))
    queues = [_stored(ZONES[i], n) for i, n in enumerate(lengths)]
    picks = draw(st.permutations([i for i, n in enumerate(lengths) for _ in range(n)]))
    stored = [queues[i].pop(0) for i in picks]
    checkpoints = {
        ZONES[i]: draw(st.integers(1, n + 2)) for i, n in enumerate(lengths) if draw(st.booleans())
    }
    return stored, checkpoints


TAMPERINGS = [
    "body",
    "prev",
    "hash",
    "upper",
    "short_prev",
    "delete",
    "duplicate",
    "swap",
    "seq",
    "rehash",
    "swap_contents",
    "renumber",
    "shift_hash",
]


@settings(max_examples=400, deadline=None)
@given(
    stored_trails(),
    st.lists(
        st.tuples(st.sampled_from(TAMPERINGS), st.integers(0, 10_000), st.integers(0, 10_000)),
        max_size=2,
    ),
    st.data(),
)
def test_the_batch_checker_fails_exactly_the_chains_verify_chain_fails(
    trail: tuple[list[Row], dict[bytes, int]],
    tamperings: list[tuple[str, int, int]],
    data: st.DataObject,
) -> None:
    # given interleaved chains, some rows tampered with, some hashed by the server, cut into
    # batches anywhere
    stored, checkpoints = trail
    for how, at, flip in tamperings:
        if stored:
            _tamper(stored, how, at, flip)
    server_hashes = data.draw(st.lists(st.booleans(), min_size=len(stored), max_size=len(stored)))
    cuts = data.draw(st.lists(st.integers(0, len(stored)), max_size=4))
    digest_all = data.draw(st.booleans())
    _agrees_with_the_reference(stored, checkpoints, server_hashes, cuts, digest_all=digest_all)


@pytest.mark.parametrize("how", TAMPERINGS)
@pytest.mark.parametrize("server", ["none", "all", "every other"])
@pytest.mark.parametrize("cuts", [[], [7, 16, 17, 33]], ids=["one batch", "five batches"])
def test_the_batch_checker_agrees_with_verify_chain_on_each_tampering(
    how: str, server: str, cuts: list[int]
) -> None:
    # given two chains side by side, one edit at the first's 9th event ("swap" trades it with
    # the second chain's 9th, which leaves both intact: chains may interleave in any order)
    stored = _interleaved(_stored(ZONES[0], 20), _stored(ZONES[1], 20))
    _tamper(stored, how, 16, 5)
    assert _reference(stored)[ZONES[0]][0].intact is (how == "swap")
    server_hashes = [server == "all" or (server == "every other" and i % 2 == 0) for i in range(50)]
    _agrees_with_the_reference(
        stored, {ZONES[0]: 20}, server_hashes[: len(stored)], cuts, digest_all=True
    )


def _agrees_with_the_reference(
    stored: list[Row],
    checkpoints: dict[bytes, int],
    server_hashes: list[bool],
    cuts: list[int],
    *,
    digest_all: bool,
) -> None:
    # when the checker reads them
    checker = BatchChecker(checkpoints, digest_all=digest_all)
    _feed(checker, _as_read(stored, server_hashes), cuts)
    # then it fails exactly the chains the reference walk fails, and agrees on the others
    reference = _reference(stored)
    assert set(checker.chains) == set(reference)
    for chain, (verdict, hashes) in reference.items():
        progress = checker.chains[chain]
        assert progress.failed is not verdict.intact
        if not verdict.intact:
            continue
        assert progress.head_seq == (verdict.head_seq or 0)
        assert progress.prev.decode() == verdict.head_hash
        checkpoint_seq = checkpoints.get(chain, 0)
        if digest_all or checkpoint_seq:
            assert progress.digest.hexdigest() == checkpoint_digest(hashes)
        else:
            assert progress.digest is None
        if checkpoint_seq and checkpoint_seq <= len(hashes):
            assert progress.checkpoint_digest == checkpoint_digest(hashes[:checkpoint_seq])
        else:
            assert progress.checkpoint_digest is None


def test_an_intact_trail_gives_each_chain_its_head_and_digests() -> None:
    # given three chains interleaved, every other row hashed by the server, a checkpoint in
    # the middle of a batch
    stored = _interleaved(*(_stored(zone, 40) for zone in ZONES[:3]))
    rows = _as_read(stored, [i % 2 == 0 for i in range(len(stored))])
    checker = BatchChecker({ZONES[0]: 17}, digest_all=True)
    # when it is read in batches
    _feed(checker, rows, [25, 50, 100])
    # then every chain is intact at its head, with both digests
    hashes = [row[3].decode() for row in stored if row[0] == ZONES[0]]
    first = checker.chains[ZONES[0]]
    assert (first.failed, first.head_seq, first.prev.decode()) == (False, 40, hashes[-1])
    assert first.checkpoint_digest == checkpoint_digest(hashes[:17])
    assert first.digest.hexdigest() == checkpoint_digest(hashes)
    assert not any(progress.failed for progress in checker.chains.values())
    assert not any(progress.pending for progress in checker.chains.values())


def test_a_broken_chain_does_not_hold_up_the_others() -> None:
    # given two interleaved chains, the second's body altered at its 5th event
    stored = _interleaved(*(_stored(zone, 30) for zone in ZONES[:2]))
    _tamper(stored, "body", 9, 3)
    checker = BatchChecker({}, digest_all=False)
    # when it is read in batches of 10 rows
    _feed(checker, _as_read(stored, [False] * len(stored)), list(range(10, 60, 10)))
    # then only that chain failed, the other reached its head
    assert checker.chains[ZONES[1]].failed
    assert not checker.chains[ZONES[0]].failed
    assert checker.chains[ZONES[0]].head_seq == 30


@pytest.mark.parametrize(
    ("column", "value"),
    [
        (1, None),  # seq
        (2, None),  # hash
        (3, None),  # prev_hash + canonical (or prev_hash not 64 bytes wide)
        (2, "a" * 64),  # text that was not read as bytes
        (4, b"\x00" * 32),  # a digest that is not the body's
        (4, b"\x00" * 31),  # a digest of the wrong size
    ],
)
def test_a_null_or_mistyped_value_fails_its_chain_only(column: int, value: object) -> None:
    stored = _interleaved(_stored(ZONES[0], 5), _stored(ZONES[1], 5))
    rows = _as_read(stored, [column == 4] * len(stored))
    row = list(rows[4])  # ZONES[0], seq 3
    row[column] = value
    rows[4] = tuple(row)
    checker = BatchChecker({}, digest_all=False)
    checker.feed(rows)
    assert checker.chains[ZONES[0]].failed
    assert not checker.chains[ZONES[1]].failed
    assert checker.chains[ZONES[1]].head_seq == 5


def test_what_canonical_json_refuses_it_names() -> None:
    with pytest.raises(TypeError, match=r"^canonical_json takes a mapping, got list$"):
        canonical_json([1])  # type: ignore[arg-type]
    for value, kind in ((date(2026, 1, 2), "date"), (time(3), "time")):
        with pytest.raises(TypeError, match=rf"^{kind} values must be ISO 8601 strings"):
            canonical_json({"at": value})
    with pytest.raises(TypeError, match=r"^canonical_json cannot encode a value of type set$"):
        canonical_json({"tags": {"a"}})


def test_a_verdict_at_the_first_event_has_no_head_and_one_further_on_names_the_last_good() -> None:
    links = _trail(5)
    first_altered = [dataclasses.replace(links[0], canonical=links[0].canonical + b" ")]
    verdict = verify_chain(first_altered + links[1:])
    assert (verdict.checked, verdict.head_seq, verdict.head_hash) == (0, None, GENESIS)
    repeated = verify_chain([*links[:3], links[2], *links[3:]])
    assert (repeated.broken_seq, repeated.head_seq, repeated.head_hash) == (3, 3, links[2].hash)
    assert repeated.parts == (("expected", 4),)
