"""What agents read and cite: passages found by hybrid retrieval, shaped as citations, and
the claims and citations of a plain answer (its sentences split, its `[n]` markers honoured,
its unmarked claims aligned to the best span among its sources)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict

from django.utils import timezone

from coordinates.coordinate import Coordinate
from evidence.claims import Alignment, Claim, align, split_claims
from evidence.models import EvidenceBundle, Paragraph
from evidence.provenance import pin_citations, retrieval_stamp
from evidence.retrieval import DEFAULT_K
from evidence.search import search_paragraphs
from evidence.validation import Item, citable_for, current_versions, read_cited, resolve_item
from maria.errors import ApplicationError, TooLarge


class Passage(TypedDict):
    """One retrieved paragraph. `document`, `version`, `paragraph`, `start` and `end` are a
    citation of exactly `text` (offsets within the paragraph, as citations take them)."""

    document: int
    version: int
    paragraph: int
    start: int
    end: int
    text: str
    section: str
    title: str
    kind: str
    status: str
    effective_date: str | None
    zone: str
    superseded: bool
    score: float
    # When the engine retrieved it (seed 000 §2.2): a citation made from the passage carries
    # it, and the sealed bundle records it.
    retrieved_at: str


def passages_search(
    query: str,
    *,
    scopes: list[Coordinate] | None,
    k: int = DEFAULT_K,
    include_superseded: bool = False,
) -> list[Passage]:
    """The k best passages for `query` among the zones of `scopes` (None: every zone), by
    the hybrid retrieval `ask` uses; superseded versions only when asked for."""
    hits = search_paragraphs(query, scopes=scopes, k=k, include_superseded=include_superseded)
    retrieved_at = retrieval_stamp(timezone.now())
    paragraphs = (
        Paragraph.objects.select_related("version")
        .defer("embedding", "version__text")
        .in_bulk([hit.id for hit in hits])
    )
    passages: list[Passage] = []
    for hit in hits:
        paragraph = paragraphs.get(hit.id)  # type: ignore[call-overload]
        if paragraph is None:
            continue
        version = paragraph.version
        passages.append(
            Passage(
                document=version.document_id,
                version=version.version,
                paragraph=paragraph.number,
                start=0,
                end=len(paragraph.text),
                text=paragraph.text,
                section=paragraph.section,
                title=version.title,
                kind=version.kind,
                status=version.status,
                effective_date=(
                    version.effective_date.isoformat() if version.effective_date else None
                ),
                zone=paragraph.zone,
                superseded=version.is_superseded,
                score=round(float(hit.fused), 6),
                retrieved_at=retrieved_at,
            )
        )
    return passages


# --- plain answers --------------------------------------------------------------------------

MARKER = "marker"  # a citation the answer's own [n] marker asked for
ALIGNMENT = "alignment"  # a citation the engine chose: the best span among the sources


@dataclass(frozen=True, slots=True)
class _Source:
    """A source as submitted and, when it resolves in the zone, the text it cites."""

    index: int  # 1-based, as markers count
    cited: Mapping[str, Any]
    text: str | None  # None: missing, or outside the zone (which reads as missing)
    offset: int  # where `text` starts in its paragraph (a source may cite a slice)
    version: int | None


def _sources_read(zone: Coordinate, sources: Sequence[Mapping[str, Any]]) -> list[_Source]:
    """Each source resolved as validation resolves a citation (evidence.validation), so what
    is aligned here is what the validation will read."""
    probe = EvidenceBundle(zone=str(zone), claims=[{"text": "", "citations": list(sources)}])
    cited = read_cited([probe])
    read = []
    for index, source in enumerate(sources, start=1):
        item = Item(claim=0, cited=source)
        resolve_item(item, str(zone), cited.versions, cited.paragraphs)
        found = item.problem is None and item.version is not None
        read.append(
            _Source(
                index=index,
                cited=source,
                text=item.span if found else None,
                offset=int(source.get("start") or 0) if found else 0,
                version=item.version.version if found and item.version else None,
            )
        )
    return read


def _alignment(source: _Source, found: Alignment | None) -> dict[str, Any] | None:
    if found is None:
        return None
    return {
        "start": source.offset + found.start,
        "end": source.offset + found.end,
        "score": round(found.score, 6),
    }


def _citation(source: _Source, via: str, found: Alignment | None) -> dict[str, Any]:
    """The source as a citation (its version pinned when it resolved: the one aligned
    against), with where the claim was aligned in its paragraph and why it is cited."""
    citation = {k: v for k, v in source.cited.items() if v is not None}
    if source.version is not None:
        citation["version"] = source.version
    return {**citation, "source": source.index, "via": via, "alignment": _alignment(source, found)}


def _claims_of(answer: str) -> list[Claim]:
    claims = split_claims(answer)
    if claims:
        return claims
    # No clause with a letter in it ("42", "30%."): the answer is checked whole, never waved
    # through as a claim-free one.
    start = len(answer) - len(answer.lstrip())
    end = len(answer.rstrip())
    return [Claim(answer[start:end], start, end, ())]


def answer_claims(
    *,
    zone: Coordinate,
    answer: str,
    sources: Sequence[Mapping[str, Any]],
    max_claims: int,
) -> list[dict[str, Any]]:
    """The claims and citations of a plain answer, for `bundle_create`.

    Each claim keeps where it stands in the answer (`answer_start`, `answer_end`) and the
    markers written in it. A claim with markers cites those sources (`via: marker`); one
    without cites the source holding the best span for it (`evidence.claims.align`, `via:
    alignment`), or nothing when no source shares a content word with it. Every citation
    says which source it is (1-based) and where in its paragraph the claim aligned
    (`alignment`: offsets and score, or None). A source that is missing or outside the zone
    is cited as given when a marker names it (validation then reports it fabricated) and is
    never aligned to. A marker beyond the sources is a 400 naming `answer`.
    """
    claims = _claims_of(answer)
    if len(claims) > max_claims:
        raise TooLarge(
            f"the answer holds {len(claims)} claims; at most {max_claims}", field="answer"
        )
    for claim in claims:
        beyond = [n for n in claim.markers if not 1 <= n <= len(sources)]
        if beyond:
            raise ApplicationError(
                f"marker [{beyond[0]}] in {claim.text[:80]!r} points past the "
                f"{len(sources)} source(s); markers count the sources from 1",
                field="answer",
            )
    read = _sources_read(zone, sources)
    usable = [s for s in read if s.text is not None]
    built = []
    for claim in claims:
        if claim.markers:
            citations = []
            for number in claim.markers:
                source = read[number - 1]
                best = align(claim.text, [source.text]) if source.text is not None else []
                citations.append(_citation(source, MARKER, best[0] if best else None))
        else:
            best = align(claim.text, [s.text or "" for s in usable])
            citations = [_citation(usable[best[0].paragraph], ALIGNMENT, best[0])] if best else []
        built.append(
            {
                "text": claim.text,
                "answer_start": claim.start,
                "answer_end": claim.end,
                "markers": list(claim.markers),
                "citations": citations,
            }
        )
    return built


def citations_pinned(
    *, zone: Coordinate, claims: Sequence[Mapping[str, Any]], submitted_at: datetime
) -> list[dict[str, Any]]:
    """The claims as the sealed bundle records them (seed 000 §2.2): each citation without a
    version pinned to the version current now, where validation would read that document for
    the zone (one the zone may not cite, or a level above's that the zone's own overrides,
    stays unpinned, and validation reports it as before), and each without a retrieval time
    stamped with `submitted_at`. One query (the documents' versions) on the submit path: the
    paragraphs are validation's to read."""
    unpinned = {
        int(citation["document"])
        for claim in claims
        for citation in claim.get("citations", [])
        if citation.get("version") is None
    }
    current = current_versions(unpinned) if unpinned else {}
    versions: list[list[int | None]] = []
    for claim in claims:
        row: list[int | None] = []
        for citation in claim.get("citations", []):
            found = (
                None
                if citation.get("version") is not None
                else current.get(int(citation["document"]))
            )
            citable = found is not None and citable_for(found, str(zone))
            row.append(found.version if citable and found is not None else None)
        versions.append(row)
    return pin_citations(claims, versions=versions, submitted_at=submitted_at)
