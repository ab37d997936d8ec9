"""Sealing the trail: a checkpoint over every chain's head and digest."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from trail import signing, witness
from trail.chain import (
    GENESIS,
    canonical_json,
    chain_hash,
)
from trail.ledger import CHECKPOINT_TYPE, TrailError, iso_time
from trail.models import TrailCheckpoint
from trail.verify import TrailBroken, verify_database

# --- sealing -----------------------------------------------------------------------------


def checkpoint_create() -> TrailCheckpoint:
    """Verify the whole trail, then seal every chain's head and all-hashes digest.

    Refuses (TrailBroken) when the trail does not verify: a checkpoint must never bless a
    tampered trail. Events appended while this runs are left for the next checkpoint.
    """
    report = verify_database(digests=True)
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
        transaction.on_commit(lambda: witness.hand_over(checkpoint))
        return checkpoint
