"""The hash chain of the tamper-evident trail: canonical event bytes, the chain hash, and
verification of a trail (and of its tail against a checkpoint) that names the first broken event.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The prev_hash of the first event: 64 zeros, the hex width of a sha256 digest.
GENESIS = "0" * 64

# Domain separation, so a checkpoint digest can never be mistaken for an event hash.
CHECKPOINT_PREFIX = b"maria-trail-checkpoint-v1\n"

REASON_ALTERED = "hash mismatch (content altered)"
REASON_RELINKED = "prev_hash does not match the previous event (deleted or reordered event)"
# Reasons with numbers in them: the verdict keeps the template and its parts beside the
# English, so that trail.verify can show the reason in a page's language.
REASON_GAP = "sequence gap: event %(first)s missing"
REASON_GAP_RUN = "sequence gap: events %(first)s..%(last)s missing"
REASON_OUT_OF_ORDER = "sequence out of order: expected %(expected)s (duplicated or reordered)"
REASON_TRUNCATED_EMPTY = (
    "truncated: the trail ends at no events but the checkpoint covers events %(first)s..%(last)s"
)
REASON_TRUNCATED = (
    "truncated: the trail ends at event %(head)s but the checkpoint covers events "
    "%(first)s..%(last)s"
)
REASON_DIGEST = (
    "checkpoint digest mismatch for events %(first)s..%(last)s "
    "(events deleted, altered or re-linked before the checkpoint)"
)


def _reject_unserialisable(value: Any) -> Any:
    # json.dumps calls this only for types it cannot encode; datetimes land here on purpose:
    # the caller picks the ISO form (and the timezone) so the bytes never depend on defaults.
    kind = type(value).__name__
    if kind in {"datetime", "date", "time"}:
        raise TypeError(f"{kind} values must be ISO 8601 strings before canonical_json")
    raise TypeError(f"canonical_json cannot encode a value of type {kind}")


def _check_tree(value: Any, path: str) -> None:
    # Non-string keys would be coerced by json (1 and "1" would collide), and NaN has no
    # JSON form: reject both with the path to the offending value.
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"canonical_json: {path} is {value!r}; NaN and Infinity are not JSON")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"canonical_json: key {key!r} at {path} must be a string")
            _check_tree(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check_tree(item, f"{path}[{index}]")


def canonical_json(payload: Mapping[str, Any]) -> bytes:
    """The event body as deterministic bytes: sorted keys, no whitespace, UTF-8, no NaN."""
    if not isinstance(payload, Mapping):
        raise TypeError(f"canonical_json takes a mapping, got {type(payload).__name__}")
    _check_tree(payload, "$")
    text = json.dumps(
        payload,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_reject_unserialisable,
    )
    return text.encode("utf-8")


def chain_hash(prev_hash: str, canonical: bytes) -> str:
    """hash = sha256(ascii(prev_hash) + canonical).hexdigest().

    The previous hash enters as its 64 hex characters (ASCII bytes), so an auditor can
    recompute any link with standard tools: printf '%s' "$prev" | cat - body.json | sha256sum.
    """
    digest = hashlib.sha256(prev_hash.encode())
    digest.update(canonical)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class ChainLink:
    """One stored trail event as the verifier sees it."""

    seq: int
    prev_hash: str
    hash: str
    canonical: bytes


@dataclass(frozen=True, slots=True)
class ChainVerdict:
    """Intact, or the first broken event (its seq) and why."""

    intact: bool
    checked: int  # events verified before the verdict
    head_seq: int | None  # seq of the last intact event
    head_hash: str  # hash of the last intact event (GENESIS when none)
    broken_seq: int | None = None
    reason: str = ""  # in English
    template: str = ""  # the reason's template, when it has parts (one of the REASON_s)
    parts: tuple[tuple[str, int], ...] = ()

    def __bool__(self) -> bool:
        return self.intact

    def describe(self) -> str:
        if self.intact:
            return f"intact: {self.checked} events, head seq {self.head_seq} {self.head_hash}"
        return f"broken at event {self.broken_seq}: {self.reason}"


def _because(template: str, parts: dict[str, int]) -> dict[str, Any]:
    """A verdict's reason fields: the English, and the template and parts it was made of."""
    return {"reason": template % parts, "template": template, "parts": tuple(sorted(parts.items()))}


def checkpoint_digest(hashes: Iterable[str]) -> str:
    """digest = sha256(CHECKPOINT_PREFIX + hash_1 + hash_2 + ... + hash_N).hexdigest().

    A flat streaming digest rather than a Merkle root: the trail is always verified whole (no
    one asks for a proof that a single event is included), so one sha256 pass with O(1)
    memory is all a checkpoint needs; the fixed 64-character width of each hash keeps the
    concatenation unambiguous, and the order of events is part of the digest.
    """
    digest = hashlib.sha256(CHECKPOINT_PREFIX)
    for event_hash in hashes:
        digest.update(event_hash.encode())
    return digest.hexdigest()


def _walk(
    links: Iterable[ChainLink],
    prev_hash: str,
    first_seq: int,
    checkpoint_seq: int | None,
) -> tuple[ChainVerdict, str | None]:
    """Verify links in order; also digest the hashes up to checkpoint_seq when asked."""
    sha256 = hashlib.sha256
    expected_prev = prev_hash
    expected_seq = first_seq
    digest = sha256(CHECKPOINT_PREFIX) if checkpoint_seq is not None else None
    checked = 0

    def broken(seq: int, template: str, **parts: int) -> tuple[ChainVerdict, None]:
        head = expected_seq - 1 if checked else None
        return (
            ChainVerdict(
                False, checked, head, expected_prev, broken_seq=seq, **_because(template, parts)
            ),
            None,
        )

    for link in links:
        seq = link.seq
        if seq != expected_seq:
            if seq > expected_seq:
                if seq == expected_seq + 1:
                    return broken(seq, REASON_GAP, first=expected_seq)
                return broken(seq, REASON_GAP_RUN, first=expected_seq, last=seq - 1)
            return broken(seq, REASON_OUT_OF_ORDER, expected=expected_seq)
        # The hash covers prev_hash and body together, so a changed byte in either field or
        # in the hash itself shows up here, at the event that was touched.
        h = sha256(link.prev_hash.encode())
        h.update(link.canonical)
        stored_hash = link.hash
        if h.hexdigest() != stored_hash:
            return broken(seq, REASON_ALTERED)
        if link.prev_hash != expected_prev:
            return broken(seq, REASON_RELINKED)
        if digest is not None and checkpoint_seq is not None and seq <= checkpoint_seq:
            digest.update(stored_hash.encode())
        expected_prev = stored_hash
        checked += 1
        expected_seq += 1
    head_seq = expected_seq - 1 if checked else None
    verdict = ChainVerdict(True, checked, head_seq, expected_prev)
    return verdict, (digest.hexdigest() if digest is not None else None)


def verify_chain(
    links: Iterable[ChainLink], *, prev_hash: str = GENESIS, first_seq: int = 1
) -> ChainVerdict:
    """Walk the links in seq order and report the first broken one, or intact.

    Hashes the stored canonical bytes and never re-serialises: the bytes are the record.
    `prev_hash` and `first_seq` let a verification start after a trusted checkpoint.
    """
    verdict, _ = _walk(links, prev_hash, first_seq, None)
    return verdict


def verify_against_checkpoint(
    links: Iterable[ChainLink],
    checkpoint_seq: int,
    checkpoint_digest_hex: str,
) -> ChainVerdict:
    """Verify the chain, then that events 1..checkpoint_seq still digest to the checkpoint.

    Catches what the chain alone cannot: a truncated tail (the last events simply gone) and
    a deleted run of events after which the rest was renumbered and re-hashed. The
    checkpoint must be kept outside the trail's database (export, signed note), or whoever
    rewrites the trail can rewrite the checkpoint too.
    """
    first_seq = 1
    if checkpoint_seq < first_seq:
        raise ValueError(f"checkpoint_seq must be >= {first_seq}, got {checkpoint_seq}")
    verdict, digest = _walk(links, GENESIS, first_seq, checkpoint_seq)
    if not verdict.intact:
        return verdict
    if verdict.head_seq is None or verdict.head_seq < checkpoint_seq:
        first_missing = first_seq if verdict.head_seq is None else verdict.head_seq + 1
        span = {"first": first_seq, "last": checkpoint_seq}
        return ChainVerdict(
            False,
            verdict.checked,
            verdict.head_seq,
            verdict.head_hash,
            broken_seq=first_missing,
            **(
                _because(REASON_TRUNCATED_EMPTY, span)
                if verdict.head_seq is None
                else _because(REASON_TRUNCATED, {**span, "head": verdict.head_seq})
            ),
        )
    if digest != checkpoint_digest_hex:
        return ChainVerdict(
            False,
            verdict.checked,
            verdict.head_seq,
            verdict.head_hash,
            broken_seq=checkpoint_seq,
            **_because(REASON_DIGEST, {"first": first_seq, "last": checkpoint_seq}),
        )
    return verdict


def link_events(
    bodies: Sequence[bytes], *, prev_hash: str = GENESIS, first_seq: int = 1
) -> list[ChainLink]:
    """Build the links for canonical bodies appended in order (what the trail writer does)."""
    links: list[ChainLink] = []
    for offset, body in enumerate(bodies):
        event_hash = chain_hash(prev_hash, body)
        links.append(ChainLink(first_seq + offset, prev_hash, event_hash, body))
        prev_hash = event_hash
    return links


# --- checking stored rows in batches ---------------------------------------------------------
#
# The database verifier reads the events in the order they were written, the zones' chains
# interleaved, a block of them at a time, straight from the database driver: no ChainLink per
# event, no str per hash, one dict lookup and a few comparisons per event. The server may
# hash some of the events itself (see trail.verify); those come with their digest instead
# of their body.

GENESIS_BYTES = GENESIS.encode()

# (chain, seq, hash, hashed, digest), text as UTF-8 bytes: `hashed` is prev_hash + canonical,
# or prev_hash alone when `digest`, sha256(prev_hash + canonical), was computed elsewhere;
# `hashed` is None when the stored prev_hash is not 64 bytes wide.
StoredRow = tuple[Any, ...]


@dataclass(slots=True)
class ChainProgress:
    """Where one chain's check stands while its rows arrive."""

    checkpoint_seq: int = 0  # digest the hashes up to this seq (0: no checkpoint)
    digest: Any = None  # the running checkpoint_digest of the hashes so far, when wanted
    checkpoint_digest: str | None = None  # frozen when the rows reach checkpoint_seq
    expected: int = 1  # the seq the next row must have
    prev: bytes = GENESIS_BYTES  # the hash the next row's prev_hash must be
    failed: bool = False  # a check failed: the reference walk must say where and why
    pending: list[bytes] | None = None  # intact hashes not digested yet, when digesting

    @property
    def head_seq(self) -> int:
        return self.expected - 1

    def flush(self) -> None:
        """Digest the pending hashes, one call per chain and batch rather than per event;
        freeze the checkpoint's digest on the way when they reach its seq."""
        pending = self.pending
        if not pending or self.digest is None:
            return
        # The pending hashes are those of seqs first..head, consecutive (checked).
        first = self.expected - len(pending)
        cut = self.checkpoint_seq - first + 1
        if 0 < cut <= len(pending):
            self.digest.update(b"".join(pending[:cut]))
            self.checkpoint_digest = self.digest.copy().hexdigest()
            del pending[:cut]
        self.digest.update(b"".join(pending))
        pending.clear()


class BatchChecker:
    """Checks stored rows (`StoredRow`) batch by batch exactly as `verify_chain` would, one
    `ChainProgress` per chain; a chain's rows must come in seq order, other chains' rows may
    come between.

    A chain that fails any check is only marked failed (and its later rows skipped): naming
    the event and the reason is the reference walk's job.
    """

    def __init__(self, checkpoint_seqs: Mapping[Any, int], *, digest_all: bool) -> None:
        self.chains: dict[Any, ChainProgress] = {}
        self._live: dict[Any, ChainProgress] = {}  # the chains not failed (yet)
        self._checkpoint_seqs = checkpoint_seqs
        self._digest_all = digest_all

    def feed(self, rows: Iterable[StoredRow]) -> None:
        live = self._live
        sha256 = hashlib.sha256
        touched: list[ChainProgress] = []
        for chain, seq, event_hash, hashed, digest in rows:
            progress = live.get(chain)
            if progress is None:
                if chain in self.chains:
                    continue  # failed already
                progress = self._start(chain)
            try:
                # seq in order; prev_hash (the first 64 bytes of `hashed`, exactly 64 wide) is
                # the previous hash; the hash is sha256(prev_hash + canonical) in lowercase hex.
                intact = (
                    seq == progress.expected
                    and hashed.startswith(progress.prev)
                    and (
                        sha256(hashed).hexdigest().encode()
                        if digest is None
                        else digest.hex().encode()
                    )
                    == event_hash
                )
            except (TypeError, AttributeError):  # a NULL, or a prev_hash of the wrong width
                intact = False
            if not intact:
                progress.failed = True
                del live[chain]
                continue
            progress.prev = event_hash
            progress.expected = seq + 1
            pending = progress.pending
            if pending is not None:
                if not pending:
                    touched.append(progress)
                pending.append(event_hash)
        for progress in touched:
            progress.flush()

    def _start(self, chain: Any) -> ChainProgress:
        checkpoint_seq = self._checkpoint_seqs.get(chain, 0)
        wanted = self._digest_all or checkpoint_seq > 0
        progress = ChainProgress(checkpoint_seq)
        if wanted:
            progress.digest, progress.pending = hashlib.sha256(CHECKPOINT_PREFIX), []
        self.chains[chain] = self._live[chain] = progress
        return progress
