"""Sealing the trail: a checkpoint over every chain's head and digest, signed, handed to the
witness, and the database checked against what the witness holds."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from maria.wording import gettext_noop, said
from trail import signing, witness
from trail.chain import (
    GENESIS,
    canonical_json,
    chain_hash,
)
from trail.ledger import CHECKPOINT_TYPE, TrailError, iso_time
from trail.models import TrailCheckpoint, TrailEvent
from trail.signing import PublicKey
from trail.verify import TrailBroken, TrailReport, verify_database

log = logging.getLogger(__name__)

KEY_SETTINGS = "MARIA_TRAIL_SIGNING_KEY or MARIA_TRAIL_SIGNING_KEY_FILE"


class UnsignedRefused(TrailError):
    """No usable signing key, where a checkpoint must be signed: the checkpoints here are
    signed (an unsigned one would prove nothing), or the configured key cannot be read."""


# --- sealing -----------------------------------------------------------------------------


def checkpoint_create() -> TrailCheckpoint:
    """Verify the whole trail (against the witness too, when one is configured), then seal
    every chain's head and all-hashes digest, signed when a key is configured.

    Refuses (TrailBroken) when the trail does not verify: a checkpoint must never bless a
    tampered trail. Refuses (UnsignedRefused) to write an unsigned checkpoint once signed
    ones exist. An unsigned latest checkpoint does not stop a signed run: the new one
    supersedes it. Events appended while this runs are left for the next checkpoint.
    """
    try:
        key = signing.signing_key()
    except signing.SigningKeyError as error:
        # A key is configured but unreadable: never fall back to an unsigned checkpoint.
        raise UnsignedRefused(f"not sealed: {error}") from error
    if key is None and signed_exist():
        raise UnsignedRefused(
            "not sealed: the checkpoints here are signed, but no signing key is configured; "
            f"set {KEY_SETTINGS} (an unsigned checkpoint would prove nothing)"
        )
    # The witness first: what it holds was committed before the verification's snapshot.
    witnessed = _witness_read()
    report = verify_database(digests=True, sealing=True)
    held: int | None = None
    if witnessed is not None:
        # A checkpoint must not bless a trail that lost what the witness holds.
        witness_compare(report, witnessed, keys=signing.public_keys(), unsound_lines=False)
        held = max(witnessed.seals) if witnessed.seals else 0
    if not report.intact:
        raise TrailBroken(report)
    chains: dict[str, dict[str, Any]] = {}
    for result in report.chains:
        if result.verdict.head_seq is None:
            continue  # a head row with no events yet: nothing to seal
        if result.digest is None:  # unreachable: digests were asked for
            raise TrailError(f"no digest for chain {result.chain}")
        chains[result.chain] = {
            "seq": result.verdict.head_seq,
            "hash": result.verdict.head_hash,
            "digest": result.digest,
        }
    with transaction.atomic():
        previous = TrailCheckpoint.objects.order_by("-seq").first()
        seq = previous.seq + 1 if previous is not None else 1
        prev_hash = previous.hash if previous is not None else GENESIS
        now = timezone.now()
        events = sum(int(entry["seq"]) for entry in chains.values())
        body = canonical_json(
            {
                "type": CHECKPOINT_TYPE,
                "seq": seq,
                "at": iso_time(now),
                "events": events,
                "chains": chains,
            }
        )
        # The hash commits to prev_hash, so the signature over it signs the previous
        # checkpoint too: the checkpoints are a signed chain of their own.
        sealed = chain_hash(prev_hash, body)
        signature, key_id = signing.sign(sealed)
        try:
            # A savepoint, so a lost race leaves the caller's transaction usable.
            with transaction.atomic():
                checkpoint = TrailCheckpoint.objects.create(
                    seq=seq,
                    created_at=now,
                    prev_hash=prev_hash,
                    hash=sealed,
                    chains=len(chains),
                    events=events,
                    canonical=body,
                    signature=signature or None,
                    key_id=key_id or None,
                )
        except IntegrityError as error:
            # seq and prev_hash are unique: another run sealed the same predecessor first.
            raise TrailError("another checkpoint was sealed at the same time") from error
        transaction.on_commit(lambda: witness_catch_up(checkpoint.seq, held))
        return checkpoint


def signed_exist() -> bool:
    return TrailCheckpoint.objects.exclude(signature__isnull=True).exclude(signature="").exists()


def superseded(checkpoint: TrailCheckpoint) -> list[int]:
    """The unsigned checkpoints just before a signed one: written without the key, now
    covered by it (it signs their hashes through its prev_hash)."""
    if not checkpoint.signature:
        return []
    earlier = TrailCheckpoint.objects.filter(seq__lt=checkpoint.seq).order_by("-seq")
    seqs: list[int] = []
    for seq, signature in earlier.values_list("seq", "signature"):
        if signature:
            break
        seqs.append(seq)
    return sorted(seqs)


# --- the witness -------------------------------------------------------------------------


def _witness_read() -> witness.WitnessLog | None:
    """The configured witness read back, or None when there is none or it cannot be read
    (logged: the checkpoint is still made, the witness is a copy, not a gate)."""
    target = settings.MARIA_TRAIL_WITNESS
    if not target:
        return None
    try:
        witnessed = witness.read_back(target)
    except witness.WitnessError as error:
        log.warning("the trail witness could not be read back: %s", error)
        return None
    for problem in witnessed.problems:
        # The witness's own bad statements are the verifier's to report; they must not stop
        # the checkpoints.
        log.warning("the trail witness: %s", problem)
    return witnessed


def witness_catch_up(seq: int, held: int | None) -> int:
    """After checkpoint `seq` commits: hand the witness every checkpoint it lacks (after
    `held`, the latest it holds; None: unknown, so only this one), in order, stopping at the
    first failure (the next checkpoint tries again). The number handed over."""
    target = settings.MARIA_TRAIL_WITNESS
    if not target:
        return 0
    start = seq if held is None else held + 1
    handed = 0
    for checkpoint in TrailCheckpoint.objects.filter(seq__gte=start, seq__lte=seq).order_by("seq"):
        if not witness.hand_over(checkpoint, target):
            break
        handed += 1
    return handed


def recorded_seals() -> list[witness.Seal]:
    rows = TrailCheckpoint.objects.order_by("seq").values_list(
        "seq", "prev_hash", "hash", "signature", "key_id"
    )
    return [
        witness.Seal(seq, prev_hash, sealed, signature or "", key_id or "")
        for seq, prev_hash, sealed, signature, key_id in rows
    ]


def _event_hash(chain: str, seq: int) -> str | None:
    return TrailEvent.objects.filter(chain=chain, seq=seq).values_list("hash", flat=True).first()


def witness_compare(
    report: TrailReport,
    witnessed: witness.WitnessLog,
    *,
    keys: Sequence[PublicKey],
    unsound_lines: bool = True,
) -> None:
    """Add to a database report what contradicts the witness: a witnessed checkpoint missing
    or different, a chain behind or off what the witness's latest checkpoint sealed; and
    say how far the witness has kept up."""
    recorded = recorded_seals()
    report.problems.extend(
        witness.checkpoint_problems(
            witnessed,
            recorded,
            where=said(gettext_noop("database")),
            keys=keys,
            unsound_lines=unsound_lines,
        )
    )
    # Chains reported broken already are left; a chain with no rows at all has no events.
    heads: dict[str, int | None] = dict.fromkeys(witnessed.latest_chains)
    for result in report.chains:
        if result.intact:
            heads[result.chain] = result.verdict.head_seq
        else:
            heads.pop(result.chain, None)
    report.problems.extend(
        witness.chain_problems(witnessed, heads=heads, hash_at=_event_hash, covers=lambda _: True)
    )
    report.witness = witness.behind(witnessed, recorded)
