"""What a sealed bundle records of each source it cites (seed 000 §2.2): the document, the
version cited and when the agent retrieved it, so that the bundle alone says what was cited
and when, whatever the document store holds later. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

# How far ahead of the engine's clock an agent's retrieval time may be: agents' clocks drift
# by seconds, and a minute or two is no claim about the future. Beyond it the time is wrong.
CLOCK_SKEW = timedelta(minutes=5)


def retrieved_too_late(retrieved_at: datetime, now: datetime, skew: timedelta = CLOCK_SKEW) -> bool:
    """Whether a retrieval time lies in the future: retrieved_at > now + skew."""
    if retrieved_at.tzinfo is None or now.tzinfo is None:
        raise ValueError("retrieved_at and now must be timezone-aware datetimes")
    return retrieved_at > now + skew


def retrieval_stamp(retrieved_at: datetime) -> str:
    """The time as the bundle stores it: ISO 8601 in UTC, to the microsecond it was given."""
    if retrieved_at.tzinfo is None:
        raise ValueError("retrieved_at must be a timezone-aware datetime")
    return retrieved_at.astimezone(UTC).isoformat()


def pin_citations(
    claims: Sequence[Mapping[str, Any]],
    *,
    versions: Sequence[Sequence[int | None]],
    submitted_at: datetime,
) -> list[dict[str, Any]]:
    """The claims with each citation's version and retrieval time filled in where the agent
    gave none: `versions[k][i]` is the version current at submission for citation i of
    claim k (None: it resolves to none the zone may cite, and stays unpinned for validation
    to report); the retrieval time defaults to the submission time. What the agent gave is
    kept as given."""
    if len(versions) != len(claims):
        raise ValueError(f"versions has {len(versions)} rows for {len(claims)} claims")
    stamp = retrieval_stamp(submitted_at)
    pinned = []
    for claim, current in zip(claims, versions, strict=True):
        citations = list(claim.get("citations", []))
        if len(current) != len(citations):
            raise ValueError(f"{len(current)} versions for {len(citations)} citations")
        out = []
        for citation, version in zip(citations, current, strict=True):
            cited = dict(citation)
            if cited.get("version") is None and version is not None:
                cited["version"] = version
            cited.setdefault("retrieved_at", stamp)
            out.append(cited)
        pinned.append({**claim, "citations": out})
    return pinned


__all__ = ["CLOCK_SKEW", "pin_citations", "retrieval_stamp", "retrieved_too_late"]
