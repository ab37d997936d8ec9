"""The functions that change the document store: ingest a version, embed its paragraphs."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.text import slugify

from coordinates.coordinate import Coordinate
from coordinates.models import Zone
from evidence import events, parsing
from evidence.embeddings import Embedder, get_embedder
from evidence.models import (
    EMBEDDING_DIM,
    CorpusState,
    Document,
    DocumentKind,
    DocumentStatus,
    DocumentVersion,
    EvidenceBundle,
    Paragraph,
)
from evidence.signals import version_stored
from maria.errors import ApplicationError, Misconfigured, TooLarge
from trail.chain import canonical_json

EMBED_BATCH = 256


@dataclass(frozen=True, slots=True)
class Ingested:
    document: Document
    version: DocumentVersion
    created: bool  # False when the same content was ingested again (a no-op)


@cache
def embedder() -> Embedder:
    """The configured embedder, built once per process (models are slow to load)."""
    chosen = get_embedder(settings.MARIA_EMBEDDER, api_key=settings.MARIA_EMBEDDER_API_KEY or None)
    if chosen.dim != EMBEDDING_DIM:
        raise Misconfigured(
            f"embedder {chosen.name} makes {chosen.dim} dimensions; the store holds "
            f"{EMBEDDING_DIM}",
        )
    return chosen


def corpus_bump() -> None:
    """Tell every process that paragraphs or embeddings changed (see CorpusState)."""
    updated = CorpusState.objects.filter(pk=1).update(generation=F("generation") + 1)
    if not updated:
        CorpusState.objects.get_or_create(pk=1, defaults={"generation": 1})


def _choice(value: str, choices: type[DocumentKind] | type[DocumentStatus], field: str) -> str:
    if value not in choices.values:
        raise ApplicationError(
            f"unknown {field} {value!r}; one of {', '.join(choices.values)}", field=field
        )
    return value


def _parse(raw: bytes | str, *, format: str | None, filename: str | None) -> parsing.ParsedDocument:
    try:
        return parsing.parse_document(raw, format=format, filename=filename)
    except parsing.DocumentTooLarge as error:
        raise TooLarge(
            str(error),
            field="text",
        ) from error
    except parsing.DocumentError as error:
        raise ApplicationError(
            str(error), code="invalid_document", field=getattr(error, "field", "text")
        ) from error


def document_ingest(
    *,
    zone: Zone,
    raw: bytes | str,
    kind: str,
    status: str,
    title: str | None = None,
    key: str | None = None,
    effective_date: date | None = None,
    format: str | None = None,
    filename: str | None = None,
    supersedes: Document | None = None,
    actor: User | None = None,
) -> Ingested:
    """Store a new version of a document, or nothing when the same content is there already.

    The key names the document within its zone: the same key again makes a new version that
    supersedes the current one. Without a key or `supersedes`, the key is derived from the
    title and the content, so posting the same document twice is a no-op.
    """
    _choice(kind, DocumentKind, "kind")
    _choice(status, DocumentStatus, "status")
    parsed = _parse(raw, format=format, filename=filename)
    digest = parsing.content_hash(parsed.text)
    if supersedes is not None:
        if supersedes.zone_id != zone.pk:
            raise ApplicationError(
                "a new version must stay in the zone of the document it supersedes",
                field="supersedes",
            )
        key = supersedes.key
    # Without a title, heading or file name, the opening words name it, as a heading would:
    # the API documents `title` as optional, and refused such a text with a 400.
    name = (title or parsed.title or filename or parsing.opening_words(parsed)).strip()[:300]
    if not name:
        raise ApplicationError("a title is required (the document has no heading)", field="title")
    if not key:
        key = f"{slugify(name)[:180] or 'document'}-{digest[:12]}"
    key = key.strip()[:200]

    with transaction.atomic():
        try:
            with transaction.atomic():
                document, _ = Document.objects.get_or_create(
                    zone=zone, key=key, defaults={"title": name}
                )
        except IntegrityError:  # a concurrent ingest created it first
            document = Document.objects.get(zone=zone, key=key)
        # The lock serialises versions of one document: numbers never collide, and only one
        # version is current at a time.
        document = Document.objects.select_for_update().get(pk=document.pk)
        current = document.versions.order_by("-version").first()
        if current is not None and (
            current.content_hash,
            current.kind,
            current.status,
            current.effective_date,
        ) == (digest, kind, status, effective_date):
            return Ingested(document, current, created=False)
        version = DocumentVersion.objects.create(
            document=document,
            version=(current.version + 1) if current else 1,
            title=name,
            kind=kind,
            status=status,
            effective_date=effective_date,
            format=parsed.format,
            text=parsed.text,
            content_hash=digest,
            supersedes=current,
            created_by=actor,
        )
        if current is not None:
            DocumentVersion.objects.filter(pk=current.pk).update(superseded_at=timezone.now())
            current.paragraphs.update(current=False)
        if document.title != name:
            Document.objects.filter(pk=document.pk).update(title=name)
        stored = Paragraph.objects.bulk_create(
            Paragraph(
                version=version,
                number=p.number,
                section=p.section[:200],
                start=p.start,
                end=p.end,
                text=p.text,
                text_hash=hashlib.sha256(p.text.encode()).hexdigest(),
                zone=zone.coordinate,
            )
            for p in parsed.paragraphs
        )
        events.version_stored(
            version,
            ((p.number, p.start, p.end, p.text_hash) for p in stored),
            zone=zone.coordinate,
            actor=actor,
        )
        corpus_bump()
        version_id = version.pk
        transaction.on_commit(lambda: _announce_version_stored(version_id))
    return Ingested(document, version, created=True)


def _announce_version_stored(version_id: int) -> None:
    """After commit: its paragraphs are embedded and its graph extracted (evidence.signals)."""
    version_stored.send(sender=DocumentVersion, version_id=version_id)


def version_embed(*, version_id: int) -> int:
    """Embed the version's paragraphs that lack a vector from the configured embedder.

    Idempotent: a retry or a second run embeds nothing twice. Returns how many it embedded.
    """
    model = embedder()
    pending = list(
        Paragraph.objects.filter(version_id=version_id)
        .exclude(embedder=model.name)
        .only("id", "text")
        .order_by("number")
    )
    for start in range(0, len(pending), EMBED_BATCH):
        batch = pending[start : start + EMBED_BATCH]
        vectors = model.embed([p.text for p in batch])
        for paragraph, vector in zip(batch, vectors, strict=True):
            paragraph.embedding = np.asarray(vector, dtype=np.float32)
            paragraph.embedder = model.name
        with transaction.atomic():
            Paragraph.objects.bulk_update(batch, ["embedding", "embedder"])
            corpus_bump()
    DocumentVersion.objects.filter(pk=version_id, embedded_at__isnull=True).update(
        embedded_at=timezone.now()
    )
    return len(pending)


# --- evidence bundles ---------------------------------------------------------------------


def bundle_hash(zone: str, claims: Sequence[Mapping[str, Any]]) -> str:
    return hashlib.sha256(canonical_json({"zone": zone, "claims": list(claims)})).hexdigest()


def bundle_create(*, zone: Coordinate, claims: Sequence[Mapping[str, Any]]) -> EvidenceBundle:
    """Store claims and citations exactly as submitted (already validated for shape)."""
    return EvidenceBundle.objects.create(
        content_hash=bundle_hash(str(zone), claims), zone=str(zone), claims=list(claims)
    )
