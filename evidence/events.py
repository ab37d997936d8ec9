"""The evidence store's trail events: each stored document version is sealed on its zone's
chain by its content hash and a digest of its paragraphs, so that `verify_trail` can re-hash
the text an answer was judged against (audit.integrity)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from trail import ledger

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from evidence.models import DocumentVersion, KnowledgeConflict, Paragraph

VERSION_STORED = "evidence.version_stored"


def paragraph_digest(paragraphs: Iterable[tuple[int, int, int, str]]) -> str:
    """sha256 over each paragraph's (number, start, end, text hash), one line each, in
    number order: what places each paragraph in its version."""
    lines = (f"{n}:{start}:{end}:{text_hash}\n" for n, start, end, text_hash in sorted(paragraphs))
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def version_stored(
    version: DocumentVersion,
    paragraphs: Iterable[tuple[int, int, int, str]],
    *,
    zone: str,
    actor: AbstractBaseUser | None,
) -> None:
    placed = list(paragraphs)
    ledger.append(
        kind=VERSION_STORED,
        chain=ledger.chain_for(zone),
        actor=actor,
        payload={
            "document": version.document_id,
            "version": version.version,
            "status": version.status,
            "content_hash": version.content_hash,
            "paragraphs": len(placed),
            "paragraph_digest": paragraph_digest(placed),
        },
    )


CONFLICT_RESOLVED = "evidence.conflict_resolved"


def _side(paragraph: Paragraph) -> dict[str, int]:
    return {
        "document": paragraph.version.document_id,
        "version": paragraph.version.version,
        "paragraph": paragraph.number,
    }


def conflict_resolved(conflict: KnowledgeConflict, *, actor: AbstractBaseUser | None) -> None:
    """Which side of a knowledge-base conflict governs, who said so and why: on the chain of
    the zone whose admins resolve it."""
    ledger.append(
        kind=CONFLICT_RESOLVED,
        chain=ledger.chain_for(conflict.zone),
        actor=actor,
        payload={
            "conflict": conflict.pk,
            "kind": conflict.kind,
            "first": _side(conflict.first),
            "second": _side(conflict.second),
            "resolution": conflict.resolution,
        },
        reason=conflict.resolution_reason,
    )
