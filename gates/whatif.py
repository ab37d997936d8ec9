"""The zone admin's what-if preview: replay stored reports under old and new thresholds.

Pure: no Django. A preview for a planet covers every zone beneath it, and each zone has its
own old and new effective policy, so the reports are re-graded zone by zone
(`gates.grading.whatif`, by the live pipeline's rules) and the counts added up. Nothing is
re-validated: a report's numbers, contradictions and claim kinds are as stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from gates.grading import (
    GATES,
    STRICTNESS,
    Gate,
    GateThresholds,
    GradedNumbers,
    StoredScore,
    WhatIf,
    whatif,
)


def stored_score(
    *,
    sufficiency: float,
    kept_confidence: Sequence[float] | None,
    claim_sufficiency: Sequence[Any] | None,
    contradictions: Sequence[Any] | None,
    at_least: str | None = None,
) -> StoredScore:
    """What a stored report was gated on, from its columns and body (evidence.validation):
    `sufficiency`, `body.score.kept_confidence`, `body.score.claim_sufficiency` (one entry
    per factual claim, none when the answer asserts no fact), `body.contradictions` and
    `body.at_least.gate` (what the report's other findings asked for; older reports have none)."""
    return StoredScore(
        sufficiency=float(sufficiency),
        confidence=[float(c) for c in kept_confidence or ()],
        has_contradictions=bool(contradictions),
        has_factual_claims=bool(claim_sufficiency),
        at_least=cast(Gate, at_least) if at_least in STRICTNESS else "auto",
    )


@dataclass(frozen=True, slots=True)
class ZoneReplay:
    """The stored reports of one zone and the two policies to grade them under."""

    zone: str
    reports: Sequence[GradedNumbers]
    old: GateThresholds
    new: GateThresholds


def whatif_zones(replays: Iterable[ZoneReplay]) -> WhatIf:
    """Sum of whatif(reports_z, old_z, new_z) over the zones z."""
    old: Counter[Gate] = Counter(dict.fromkeys(GATES, 0))
    new: Counter[Gate] = Counter(dict.fromkeys(GATES, 0))
    moves: Counter[tuple[Gate, Gate]] = Counter()
    for replay in replays:
        result = whatif(replay.reports, replay.old, replay.new)
        old.update(result.old)
        new.update(result.new)
        moves.update(result.moves)
    return WhatIf(old=dict(old), new=dict(new), moves=dict(moves))
