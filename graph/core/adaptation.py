"""Dynamic adaptation of the graph gate's cohesion threshold (seed 002 §9.4, docs/math.md
§20): exponential moving averages of how graph answers fared after review move tau_c.

The paper: when answers above tau_c are more and more often wrong, raise tau_c; when answers
below it keep being found right by a person, lower it. Its text gives no formula or numbers,
so the form here is the plain one: two EMAs, one of the error rate of answers at or above
tau_c and one of the agreement rate of answers below it, and a fixed step when either
passes its mark, within floor and ceiling. Pure: the caller keeps the state.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

# How much one verdict moves an average: about the last 1 / EMA_WEIGHT verdicts count.
EMA_WEIGHT = 0.1
# Raise tau_c when more than this share of the answers it let through were wrong ...
MAX_ERROR_ABOVE = 0.10
# ... and lower it when at least this share of the answers it held back were right.
MIN_AGREEMENT_BELOW = 0.90
TAU_STEP = 0.01
TAU_FLOOR = 0.05  # the paper's low-risk tau_c (§9.2): never below it
TAU_CEILING = 0.50  # its critical-risk tau_c: never above it


@dataclass(frozen=True, slots=True)
class ThresholdState:
    """tau_c and the two averages it is steered by. An average starts at its mark's safe
    side (no error seen above, no agreement below), so the first verdicts alone move little."""

    tau: float
    error_above: float = 0.0
    agreement_below: float = 0.0


def ema(previous: float, observation: float, weight: float = EMA_WEIGHT) -> float:
    """(1 - w) * previous + w * observation."""
    w = float(weight)
    if not math.isfinite(w) or not 0.0 < w <= 1.0:
        raise ValueError(f"weight must be in (0, 1], got {weight!r}")
    return (1.0 - w) * previous + w * float(observation)


def adapt_cohesion_tau(
    state: ThresholdState,
    cohesion: float,
    correct: bool,
    *,
    weight: float = EMA_WEIGHT,
    max_error_above: float = MAX_ERROR_ABOVE,
    min_agreement_below: float = MIN_AGREEMENT_BELOW,
    step: float = TAU_STEP,
    floor: float = TAU_FLOOR,
    ceiling: float = TAU_CEILING,
) -> ThresholdState:
    """One reviewed graph answer (its evidence cohesion, whether a person found it right)
    folded into the state. An answer at or above tau_c updates the error average and, if it
    was wrong and that average is past its mark, takes tau_c one step up; one below updates
    the agreement average and, if it was right and that average is past its mark, takes
    tau_c one step down; tau_c stays in [floor, ceiling]. Only the verdict's own side moves
    tau_c, and only in the direction the verdict argues for: a right answer never raises
    it, and an average no verdict updates cannot keep pushing it."""
    if not math.isfinite(cohesion):
        raise ValueError(f"cohesion must be finite, got {cohesion!r}")
    if not 0.0 <= floor <= ceiling <= 1.0:
        raise ValueError(f"need 0 <= floor <= ceiling <= 1, got {floor!r}, {ceiling!r}")
    tau = state.tau
    if cohesion >= tau:
        error = ema(state.error_above, not correct, weight)
        state = replace(state, error_above=error)
        if not correct and error > max_error_above:
            tau += step
    else:
        agreement = ema(state.agreement_below, correct, weight)
        state = replace(state, agreement_below=agreement)
        if correct and agreement >= min_agreement_below:
            tau -= step
    return replace(state, tau=min(ceiling, max(floor, tau)))


def adapted_cohesion_tau(
    state: ThresholdState, reviewed: Iterable[tuple[float, bool]], **options: Any
) -> ThresholdState:
    """The state after a stream of (cohesion, correct) verdicts, oldest first."""
    for cohesion, correct in reviewed:
        state = adapt_cohesion_tau(state, cohesion, correct, **options)
    return state
