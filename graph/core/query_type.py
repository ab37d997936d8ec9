"""Which retrieval a question gets: query type from cohesion, method from query type.

Seed 002 §8.5: cohesion scores are bimodal over queries; questions with a clear causal
structure give cohesive evidence (> 0.3), questions across domain boundaries (comparative)
give loose evidence (< 0.1), so a query can be classified by its cohesion. §6.3: h-hop
diffusion for questions of a known causal depth (a chain to trace), PPR for open-ended
ones (what contributed, compare), which gather evidence at every depth. docs/math.md §14 and §20.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import kurtosis, skew

QueryType = Literal["causal", "comparative"]
Method = Literal["hop", "ppr"]

# §8.5's two modes: causal evidence above 0.3, comparative below 0.1. They are not used as
# fixed cuts: this product's cohesion (directed, over |S|^2 ordered pairs, k = 8) keeps
# tree-like evidence at or below (k-1)/k^2 = 0.11, so a zone's split is read from its own
# answers, where the two groups fall (bench/bench_graph_eval.py).
CAUSAL_COHESION = 0.3
COMPARATIVE_COHESION = 0.1
# Sarle's coefficient of a uniform distribution: above it a sample is read as bimodal.
BIMODAL_BC = 5.0 / 9.0
# Fewer cohesion scores than this say nothing reliable about the shape of their spread.
MIN_HISTORY = 20


def bimodality_coefficient(values: ArrayLike) -> float:
    """Sarle's BC = (g^2 + 1) / (k + 3 (n-1)^2 / ((n-2)(n-3))) with the sample skewness g and
    excess kurtosis k (both bias-corrected). 1/3 for a normal, 5/9 for a uniform, up to 1 for
    two equal spikes. Needs four values; nan when they are all equal (no shape at all)."""
    sample = np.asarray(values, dtype=np.float64).ravel()
    n = sample.size
    if n < 4:
        raise ValueError("the bimodality coefficient needs at least 4 values")
    if np.ptp(sample) == 0.0:
        return float("nan")
    g = float(skew(sample, bias=False))
    k = float(kurtosis(sample, fisher=True, bias=False))
    return (g * g + 1.0) / (k + 3.0 * (n - 1) ** 2 / ((n - 2) * (n - 3)))


def two_mode_split(values: ArrayLike) -> float:
    """The cut between two groups of a sample with the largest between-group variance
    (Otsu), placed halfway between the last value below it and the first above."""
    ordered = np.sort(np.asarray(values, dtype=np.float64).ravel())
    n = ordered.size
    if n < 2 or ordered[0] == ordered[-1]:
        raise ValueError("a split needs at least two distinct values")
    below = np.arange(1, n)  # sizes of the lower group for each cut
    mean_low = np.cumsum(ordered)[:-1] / below
    mean_high = (ordered.sum() - np.cumsum(ordered)[:-1]) / (n - below)
    between = below * (n - below) * (mean_high - mean_low) ** 2
    between[ordered[1:] == ordered[:-1]] = -1.0  # a cut between equal values splits nothing
    cut = int(np.argmax(between))
    return float((ordered[cut] + ordered[cut + 1]) / 2)


@dataclass(frozen=True)
class CohesionSplit:
    """Where causal ends and comparative begins (None: the scores are not two groups),
    with the coefficient and the number of scores it was read from."""

    split: float | None
    bimodality: float | None
    history: int


def cohesion_split(history: ArrayLike) -> CohesionSplit:
    """The split of past cohesion scores that fall into two groups (Sarle's BC > 5/9 over
    at least MIN_HISTORY scores, §8.5); None otherwise: without two groups there is no
    type to read a question's cohesion as."""
    sample = np.asarray(history, dtype=np.float64).ravel()
    sample = sample[np.isfinite(sample)]
    if sample.size < MIN_HISTORY:
        return CohesionSplit(None, None, int(sample.size))
    bc = bimodality_coefficient(sample)
    if not bc > BIMODAL_BC:
        return CohesionSplit(None, None if np.isnan(bc) else bc, int(sample.size))
    return CohesionSplit(two_mode_split(sample), bc, int(sample.size))


def query_type(cohesion: float, split: float) -> QueryType:
    """Causal when the question's (h-hop) evidence is at least as cohesive as the split."""
    return "causal" if cohesion >= split else "comparative"


def method_for(kind: QueryType) -> Method:
    """§6.3: trace a causal chain by h-hop (its depth is known: h*); open-ended and
    comparative questions by PPR, which needs no depth."""
    return "hop" if kind == "causal" else "ppr"
