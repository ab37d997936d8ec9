"""The evidence-bundle paper's models of a system over time and over many queries (seed 000
§4.4, §6.5, §6.6, §7.4, §8.1–8.3, §10; docs/math.md §20): total accuracy, hallucination by
type, completeness under knowledge-base drift, trust recovery, requeries, the learning
curve, knowledge gaps and source refinement.

scoring.py scores one bundle; this module is the arithmetic *about* bundles: what a zone's
figures imply. Every function is pure. Where the seed's translated text lost a formula and
kept only its words and numbers, the form chosen here is the simplest one that reproduces
those numbers, and docs/math.md §20 says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# §6.1: the shares of the three hallucination types in an unbundled system (midpoints of
# the paper's ranges 40–50%, 30–35%, 15–25%, rescaled to sum to 1).
TYPE_SHARES_RAW = (0.45 / 0.975, 0.325 / 0.975, 0.20 / 0.975)
# §6.5: how much of each type a complete bundle catches. Fabrication is caught whole (its
# coefficient is 1); distortion "typically 0.85–0.95", extrapolation "0.40–0.60".
ALPHA_DISTORTION = 0.90
ALPHA_EXTRAPOLATION = 0.50

# §8.2: a requery after a refusal that showed its sources and sufficiency reaches 34% more
# sufficiency than the refused query; after a bare "I don't know", 8% more.
REQUERY_GAIN_WITH_CONTEXT = 0.34
REQUERY_GAIN_BARE = 0.08

# §10.4: "95% of A_max" is 95% of the way from A_0 to A_max (the paper's 20 weeks at 0.15).
CONVERGED_FRACTION = 0.95


def _unit(name: str, value: float) -> float:
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be a finite number in [0, 1], got {value!r}")
    return number


def _positive(name: str, value: float) -> float:
    number = float(value)
    if not math.isfinite(number) or number <= 0.0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return number


def _non_negative(name: str, value: float) -> float:
    number = float(value)
    if not math.isfinite(number) or number < 0.0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return number


# --- §4.4 total accuracy -----------------------------------------------------------------


def validation_accuracy(h_bundled: float) -> float:
    """A_validation = 1 - H_bundled: the share of answers validation lets through right."""
    return 1.0 - _unit("h_bundled", h_bundled)


def total_accuracy(a_retrieval: float, a_reasoning: float, a_validation: float) -> float:
    """A_total = A_retrieval * A_reasoning * A_validation: the three stages fail
    independently, so a right answer needs all three to be right."""
    return (
        _unit("a_retrieval", a_retrieval)
        * _unit("a_reasoning", a_reasoning)
        * _unit("a_validation", a_validation)
    )


# --- §6.5 hallucination by type ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HallucinationByType:
    fabrication: float
    distortion: float
    extrapolation: float

    @property
    def total(self) -> float:
        return self.fabrication + self.distortion + self.extrapolation


def hallucination_by_type(
    h_raw: float,
    completeness: float,
    *,
    shares: tuple[float, float, float] = TYPE_SHARES_RAW,
    alpha_d: float = ALPHA_DISTORTION,
    alpha_e: float = ALPHA_EXTRAPOLATION,
) -> HallucinationByType:
    """H_bundled split by type: H_raw * share_type * (1 - alpha_type * BC), with
    alpha = 1 for fabrication (no evidence matches an invented claim). With every alpha 1
    the sum is §6.2's H_raw * (1 - BC)."""
    h = _unit("h_raw", h_raw)
    bc = _unit("completeness", completeness)
    fab, dist, extr = (_unit("share", share) for share in shares)
    if not math.isclose(fab + dist + extr, 1.0, abs_tol=1e-9):
        raise ValueError(f"the type shares must sum to 1, got {shares!r}")
    a_d = _unit("alpha_d", alpha_d)
    a_e = _unit("alpha_e", alpha_e)
    return HallucinationByType(
        fabrication=h * fab * (1.0 - bc),
        distortion=h * dist * (1.0 - a_d * bc),
        extrapolation=h * extr * (1.0 - a_e * bc),
    )


# --- §6.6 completeness under drift ---------------------------------------------------------


def completeness_over_time(bc_0: float, mu: float, nu: float, t: float) -> float:
    """BC(t) = min(1, BC_0 * exp((mu - nu) t)): new documents arrive at rate mu, old ones go
    stale at rate nu; completeness grows when mu > nu and decays when nu > mu."""
    bc = _unit("bc_0", bc_0)
    rate = _non_negative("mu", mu) - _non_negative("nu", nu)
    return min(1.0, bc * math.exp(rate * _non_negative("t", t)))


# --- §7.4 trust recovery ------------------------------------------------------------------


def trust_recovery_half_life(alpha: float, beta: float) -> float:
    """Correct answers needed to win back half the trust one hallucination costs:
    a hallucination costs beta, each correct answer earns alpha, so beta / (2 alpha)."""
    return _non_negative("beta", beta) / (2.0 * _positive("alpha", alpha))


def hallucination_interval(hallucination_rate: float) -> float | None:
    """Mean answers between two hallucinations, 1 / H (None: no hallucination at all)."""
    rate = _unit("hallucination_rate", hallucination_rate)
    return 1.0 / rate if rate else None


def recovers_between_hallucinations(hallucination_rate: float, alpha: float, beta: float) -> bool:
    """Whether trust is fully recovered (beta / alpha correct answers, twice the half-life)
    before the next hallucination comes, on average; if not, it spirals down."""
    interval = hallucination_interval(hallucination_rate)
    return interval is None or interval >= 2.0 * trust_recovery_half_life(alpha, beta)


# --- §8.1–8.3 requeries -------------------------------------------------------------------


def requery_probability(sufficiency: float, *, steepness: float, midpoint: float) -> float:
    """P(requery | S) = f(1 - S) with f the logistic 1 / (1 + exp(-k (x - s))): the less
    sufficient the refused evidence, the likelier the asker tries again. The paper gives
    the form, not k or s: they are a zone's to fit."""
    insufficiency = 1.0 - _unit("sufficiency", sufficiency)
    k = _positive("steepness", steepness)
    s = _unit("midpoint", midpoint)
    return 1.0 / (1.0 + math.exp(-k * (insufficiency - s)))


def requery_sufficiency(refused_sufficiency: float, *, with_context: bool) -> float:
    """The sufficiency a requery reaches: 34% more when the refusal showed its sources and
    sufficiency, 8% more after a bare refusal (capped at 1)."""
    gain = REQUERY_GAIN_WITH_CONTEXT if with_context else REQUERY_GAIN_BARE
    return min(1.0, _unit("refused_sufficiency", refused_sufficiency) * (1.0 + gain))


def resolved_by_attempt(shares_by_attempt: Iterable[float]) -> list[float]:
    """Cumulative share of refused queries answered by each attempt (the shares of the
    2nd, 3rd, ... attempt that resolved them): §12.5's 63% + 28% = 91% by the third."""
    running = 0.0
    out = []
    for share in shares_by_attempt:
        running += _unit("share", share)
        if running > 1.0 + 1e-9:
            raise ValueError("the shares resolved by each attempt sum to more than 1")
        out.append(min(1.0, running))
    return out


def requery_load(refusal_rate: float, p_requery: float) -> float:
    """Extra query volume requeries bring, as a share of the queries: refusal rate x
    P_requery (10% refused x 70% requeried = 7% more queries)."""
    return _unit("refusal_rate", refusal_rate) * _unit("p_requery", p_requery)


# --- §10 self-improvement -----------------------------------------------------------------


def learning_rate(lambda_0: float, eta: float, evidence_quality: float) -> float:
    """lambda = lambda_0 (1 + eta * AvgEvidenceQuality): better bundles teach faster.
    AvgEvidenceQuality is the window's mean sufficiency."""
    return _non_negative("lambda_0", lambda_0) * (
        1.0 + _non_negative("eta", eta) * _unit("evidence_quality", evidence_quality)
    )


def learning_curve(a_0: float, a_max: float, rate: float, t: float) -> float:
    """A(t) = A_max - (A_max - A_0) exp(-lambda t): fast early gains that flatten out."""
    start = _unit("a_0", a_0)
    ceiling = _unit("a_max", a_max)
    if start > ceiling:
        raise ValueError(f"a_0 ({a_0!r}) cannot exceed a_max ({a_max!r})")
    return ceiling - (ceiling - start) * math.exp(
        -_non_negative("rate", rate) * _non_negative("t", t)
    )


@dataclass(frozen=True, slots=True)
class LearningFit:
    a_0: float
    a_max: float
    rate: float  # lambda, per unit of t
    points: int


MIN_LEARNING_POINTS = 4  # a curve of three parameters needs more points than parameters


def fit_learning_curve(
    t: Sequence[float], accuracy: Sequence[float], weights: Sequence[float] | None = None
) -> LearningFit | None:
    """§10.2 fitted to a zone's measured accuracy: the A_0 <= A_max in [0, 1] and lambda >= 0
    whose A(t) comes closest to `accuracy` at `t` in weighted least squares (weights: each
    point's answers, so a quiet week counts less). None below MIN_LEARNING_POINTS points or
    when the optimiser finds no fit. A_max = A_0 + g (1 - A_0), g in [0, 1], keeps the order."""
    import numpy as np
    from scipy.optimize import curve_fit

    times = np.asarray(t, dtype=float)
    measured = np.asarray(accuracy, dtype=float)
    if times.shape != measured.shape or times.ndim != 1:
        raise ValueError("t and accuracy must be two sequences of the same length")
    if times.size < MIN_LEARNING_POINTS:
        return None
    for value in measured:
        _unit("accuracy", float(value))
    spread = np.ones_like(times) if weights is None else np.asarray(weights, dtype=float)
    if spread.shape != times.shape or (spread <= 0).any():
        raise ValueError("weights must be one positive number a point")

    def curve(x: Any, a_0: float, gap: float, rate: float) -> Any:
        a_max = a_0 + gap * (1.0 - a_0)
        return a_max - (a_max - a_0) * np.exp(-rate * x)

    start = (float(measured[0]), 0.5, 0.1)
    try:
        (a_0, gap, rate), _ = curve_fit(
            curve,
            times,
            measured,
            p0=start,
            sigma=1.0 / np.sqrt(spread),
            bounds=((0.0, 0.0, 0.0), (1.0, 1.0, 50.0)),
            maxfev=5000,
        )
    except (RuntimeError, ValueError):
        return None
    return LearningFit(
        a_0=float(a_0),
        a_max=float(a_0 + gap * (1.0 - a_0)),
        rate=float(rate),
        points=int(times.size),
    )


def time_to_converge(rate: float, fraction: float = CONVERGED_FRACTION) -> float:
    """t at which A(t) has closed `fraction` of the gap from A_0 to A_max:
    -ln(1 - fraction) / lambda (ln 20 / 0.15 = 20 weeks)."""
    closed = float(fraction)
    if not 0.0 <= closed < 1.0:
        raise ValueError(f"fraction must be in [0, 1), got {fraction!r}")
    return -math.log(1.0 - closed) / _positive("rate", rate)


@dataclass(frozen=True, slots=True)
class KnowledgeGap:
    topic: str
    refused: int
    asked: int

    @property
    def refusal_rate(self) -> float:
        return self.refused / self.asked


def knowledge_gaps(
    refused: Mapping[str, int],
    asked: Mapping[str, int],
    *,
    min_refused: int = 3,
    overall_factor: float = 2.0,
) -> list[KnowledgeGap]:
    """§10.3 gap detection: the topics where refusals cluster. A topic is a gap when at least
    `min_refused` of its questions were refused and its refusal rate is at least
    `overall_factor` times the rate over all topics; worst first. A refusal spread evenly
    over topics is the threshold's doing, not a hole in the corpus."""
    total_asked = sum(asked.values())
    if not total_asked:
        return []
    overall = sum(refused.values()) / total_asked
    gaps = []
    for topic, n_refused in refused.items():
        n_asked = max(asked.get(topic, 0), n_refused)
        if n_refused >= min_refused and n_refused / n_asked >= overall_factor * overall:
            gaps.append(KnowledgeGap(topic, n_refused, n_asked))
    return sorted(gaps, key=lambda gap: (-gap.refusal_rate, -gap.refused, gap.topic))


@dataclass(frozen=True, slots=True)
class SourceCalibration:
    source: str
    mean_confidence: float
    accuracy: float
    verdicts: int

    @property
    def overconfidence(self) -> float:
        return self.mean_confidence - self.accuracy


def overconfident_sources(
    verdicts: Iterable[tuple[str, float, bool]],
    *,
    min_verdicts: int = 5,
    margin: float = 0.15,
) -> list[SourceCalibration]:
    """§10.3 retrieval refinement and confidence calibration: from reviewers' verdicts
    (source, the confidence its evidence had, whether the answer was right), the sources
    whose evidence claims more than it delivers, by at least `margin`, over at least
    `min_verdicts` verdicts; the most overconfident first. These are the sources to
    re-index, re-weight or flag for a person."""
    seen: dict[str, list[tuple[float, bool]]] = {}
    for source, confidence, right in verdicts:
        seen.setdefault(source, []).append((_unit("confidence", confidence), bool(right)))
    flagged = []
    for source, rows in seen.items():
        if len(rows) < min_verdicts:
            continue
        calibration = SourceCalibration(
            source=source,
            mean_confidence=sum(c for c, _ in rows) / len(rows),
            accuracy=sum(1 for _, right in rows if right) / len(rows),
            verdicts=len(rows),
        )
        if calibration.overconfidence >= margin:
            flagged.append(calibration)
    return sorted(flagged, key=lambda c: (-c.overconfidence, c.source))
