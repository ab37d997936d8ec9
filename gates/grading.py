"""Gate grading (docs/math.md §7): the sufficiency gate, the final gate of a report (the
live pipeline's rules), and the what-if re-grading of stored
decisions under another set of thresholds.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

Gate = Literal["auto", "flagged", "required", "blocked"]

# Least to most strict: a gate later in this tuple asks for more human attention.
GATES: tuple[Gate, ...] = ("auto", "flagged", "required", "blocked")
STRICTNESS: Mapping[str, int] = {gate: rank for rank, gate in enumerate(GATES)}

# An item needs this multiple of the floor for an answer to pass without a periodic review.
AUTO_CONFIDENCE_FACTOR = 3.0


def _threshold(name: str, value: float) -> float:
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be a finite number in [0, 1], got {value!r}")
    return number


def grade(
    sufficiency: float,
    confidence: Sequence[float] | np.ndarray,
    tau: float,
    floor: float,
    refusal_floor: float,
) -> Gate:
    """auto S>=tau, all c_j>=3*floor; flagged S>=tau; required S>=refusal_floor; else blocked.

    `confidence` holds the kept items' confidences (after the floor dropped the noise).
    """
    s = _threshold("sufficiency", sufficiency)
    tau = _threshold("tau", tau)
    floor = _threshold("floor", floor)
    refusal_floor = _threshold("refusal_floor", refusal_floor)
    if refusal_floor > tau:
        raise ValueError(f"refusal_floor ({refusal_floor}) must not exceed tau ({tau})")
    c = np.asarray(confidence, dtype=np.float64)
    if c.ndim != 1:
        raise ValueError(f"confidence must be a 1-d sequence, got shape {c.shape}")
    if c.size and not np.all(np.isfinite(c)):
        raise ValueError("confidence must be finite (no NaN or infinity)")
    if s < refusal_floor:
        return "blocked"
    if s < tau:
        return "required"
    if c.size and float(c.min()) < AUTO_CONFIDENCE_FACTOR * floor:
        return "flagged"
    return "auto"


def final_gate(
    sufficiency: float,
    confidence: Sequence[float] | np.ndarray,
    tau: float,
    floor: float,
    refusal_floor: float,
    *,
    has_contradictions: bool,
    has_factual_claims: bool,
    at_least: Gate = "auto",
) -> Gate:
    """The gate a report gets: grade(...), or flagged without a factual claim; then at least
    required when its evidence contradicts itself, and at least `at_least`, the gate the
    report's other findings ask for (a refuted claim: blocked; an unverified one: required;
    an answer to another question, one resting on a superseded or unapproved source:
    evidence.validation says which).

    Low sufficiency alone refuses nothing (docs/math.md §6): evidence too weak to vouch for
    an answer is "I could not tell", and a person decides; only a refuted claim, passed in
    as at_least="blocked", refuses an answer. An answer that asserts no fact needs no
    evidence (its numbers are not graded), but a person should see it now and then.
    Disagreeing evidence is never resolved silently.
    """
    gate: Gate = (
        grade(sufficiency, confidence, tau, floor, refusal_floor)
        if has_factual_claims
        else "flagged"
    )
    if gate == "blocked":
        gate = "required"
    if has_contradictions:
        gate = stricter(gate, "required")
    return stricter(gate, at_least)


def stricter(one: Gate, other: Gate) -> Gate:
    """The gate of the two that asks for more human attention."""
    return one if STRICTNESS[one] >= STRICTNESS[other] else other


class GateThresholds(Protocol):
    """The thresholds grade reads from a policy (coordinates.policy.PolicyValues fits)."""

    @property
    def tau(self) -> float: ...
    @property
    def floor(self) -> float: ...
    @property
    def refusal_floor(self) -> float: ...


class GradedNumbers(Protocol):
    """The stored numbers and facts of one validation report that its gate depends on."""

    @property
    def sufficiency(self) -> float: ...
    @property
    def confidence(self) -> Sequence[float]: ...
    @property
    def has_contradictions(self) -> bool: ...
    @property
    def has_factual_claims(self) -> bool: ...
    @property
    def at_least(self) -> Gate: ...


@dataclass(frozen=True, slots=True)
class StoredScore:
    """A GradedNumbers built from a stored report (e.g. BundleScore.to_dict() values)."""

    sufficiency: float
    confidence: Sequence[float]
    has_contradictions: bool = False
    has_factual_claims: bool = True
    at_least: Gate = "auto"


@dataclass(frozen=True, slots=True)
class WhatIf:
    """Gate counts of the same decisions under the old and the new thresholds."""

    old: Mapping[Gate, int]
    new: Mapping[Gate, int]
    moves: Mapping[tuple[Gate, Gate], int]  # (old gate, new gate) -> count, changes only

    @property
    def changed(self) -> int:
        return sum(self.moves.values())

    @property
    def stricter(self) -> int:
        return sum(n for (a, b), n in self.moves.items() if STRICTNESS[b] > STRICTNESS[a])

    @property
    def looser(self) -> int:
        return sum(n for (a, b), n in self.moves.items() if STRICTNESS[b] < STRICTNESS[a])


def replay_gate(report: GradedNumbers, policy: GateThresholds) -> Gate:
    """The gate the live pipeline would give this stored report under `policy`."""
    return final_gate(
        report.sufficiency,
        report.confidence,
        policy.tau,
        policy.floor,
        policy.refusal_floor,
        has_contradictions=report.has_contradictions,
        has_factual_claims=report.has_factual_claims,
        at_least=report.at_least,
    )


def whatif(
    reports: Iterable[GradedNumbers], old_policy: GateThresholds, new_policy: GateThresholds
) -> WhatIf:
    """Re-grade every report under both policies, by the live rules (final_gate); count per
    gate and per (old, new) move."""
    old: Counter[Gate] = Counter(dict.fromkeys(GATES, 0))
    new: Counter[Gate] = Counter(dict.fromkeys(GATES, 0))
    moves: Counter[tuple[Gate, Gate]] = Counter()
    for report in reports:
        before = replay_gate(report, old_policy)
        after = replay_gate(report, new_policy)
        old[before] += 1
        new[after] += 1
        if before != after:
            moves[(before, after)] += 1
    return WhatIf(old=dict(old), new=dict(new), moves=dict(moves))
