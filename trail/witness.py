"""Handing each signed checkpoint to a witness outside the database (MARIA_TRAIL_WITNESS):
a file the operator keeps elsewhere (one JSON line a checkpoint, appended) or an http(s)
URL (POSTed as JSON). A witness that holds checkpoint N shows that the database's copy lost
it, or that a tail after it was rewritten. A failed hand-over is logged and the checkpoint
stands: the witness is a copy, not a gate."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from trail.ledger import iso_time

if TYPE_CHECKING:
    from trail.models import TrailCheckpoint

log = logging.getLogger(__name__)
TIMEOUT = 5.0


def statement(checkpoint: TrailCheckpoint) -> dict[str, Any]:
    """What a witness keeps: enough to check the checkpoint and its signature later."""
    return {
        "type": "trail.seal",
        "checkpoint": checkpoint.seq,
        "created_at": iso_time(checkpoint.created_at),
        "prev_hash": checkpoint.prev_hash,
        "hash": checkpoint.hash,
        "canonical": bytes(checkpoint.canonical).decode(),
        "signature": checkpoint.signature or "",
        "key_id": checkpoint.key_id or "",
    }


def hand_over(checkpoint: TrailCheckpoint) -> bool:
    target = settings.MARIA_TRAIL_WITNESS
    if not target:
        return False
    line = json.dumps(statement(checkpoint), separators=(",", ":"))
    try:
        if target.startswith(("http://", "https://")):
            request = urllib.request.Request(  # noqa: S310 (the scheme is checked above)
                target,
                data=line.encode(),
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=TIMEOUT):  # noqa: S310
                pass
        else:
            with Path(target).open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
    except (OSError, urllib.error.URLError) as error:
        log.warning(
            "the trail witness did not take checkpoint %s: %s",
            checkpoint.seq,
            error,
            extra={"checkpoint": checkpoint.seq, "witness": target},
        )
        return False
    return True
