"""Per-zone recalibration of the claim verifier's probability, learned from reviewers'
per-claim verdicts (docs/math.md, DESIGN section 5: "recalibrated per zone").

Pure: no Django. Platt scaling on the global probability's logit,
`p' = sigmoid(a * logit(p) + b)`, fitted by penalised maximum likelihood with an L2 penalty
centred at the identity map (a=1, b=0): with few verdicts the fit stays near the global
model and moves away only as far as the verdicts pull it. Below `MIN_VERDICTS` no
calibration is fitted at all. `a` is kept >= 0, so the map never reverses the order of two
probabilities. `reliability` gives the figures a zone admin compares before adopting one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize
from scipy.special import expit

METHOD = "platt-logit-l2"
MIN_VERDICTS = 50  # below this many verdicts no calibration is proposed
# The penalty's weight, lambda in NLL(a, b) + lambda/2 * ((a-1)^2 + b^2): about as much pull
# toward the global model as this many verdicts that agree with it exactly.
PRIOR_STRENGTH = 20.0
EPSILON = 1e-6  # probabilities are clipped to [EPSILON, 1-EPSILON] before the logit
BINS = 10
HELD_BACK_SHARE = 0.25  # the latest quarter of a zone's verdicts measures a fit
_A_BOUNDS = (0.0, 100.0)  # a >= 0: monotone; the upper bound only keeps the optimiser sane
_B_BOUNDS = (-50.0, 50.0)


@dataclass(frozen=True, slots=True)
class Calibration:
    """A fitted map: its parameters (`a`, `b`) and how many verdicts it was fitted on."""

    params: Mapping[str, float]
    n: int
    method: str = METHOD

    @property
    def a(self) -> float:
        return float(self.params.get("a", 1.0))

    @property
    def b(self) -> float:
        return float(self.params.get("b", 0.0))

    @property
    def is_identity(self) -> bool:
        return self.a == 1.0 and self.b == 0.0


IDENTITY = Calibration(params={"a": 1.0, "b": 0.0}, n=0)


def _probabilities(values: Sequence[float] | np.ndarray, name: str = "probabilities") -> Any:
    p = np.asarray(values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"{name} must be a 1-d sequence, got shape {p.shape}")
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0.0 or p.max() > 1.0):
        raise ValueError(f"{name} must be finite numbers in [0, 1]")
    return p


def _labels(values: Sequence[bool] | np.ndarray, size: int) -> Any:
    y = np.asarray(values, dtype=np.float64)
    if y.shape != (size,):
        raise ValueError(f"labels must be one per probability ({size}), got shape {y.shape}")
    if size and not np.all((y == 0.0) | (y == 1.0)):
        raise ValueError("labels must be true or false (1 or 0)")
    return y


def logit(p: Any) -> Any:
    """log(p / (1-p)) of p clipped to [EPSILON, 1-EPSILON]."""
    clipped = np.clip(p, EPSILON, 1.0 - EPSILON)
    return np.log(clipped) - np.log1p(-clipped)


def fit(
    probabilities: Sequence[float] | np.ndarray,
    labels: Sequence[bool] | np.ndarray,
    *,
    minimum: int = MIN_VERDICTS,
    prior: float = PRIOR_STRENGTH,
) -> Calibration:
    """argmin_{a>=0, b} sum_i logloss(y_i, sigmoid(a*logit(p_i)+b)) + prior/2*((a-1)^2+b^2);
    the identity map when there are fewer than `minimum` verdicts."""
    p = _probabilities(probabilities)
    y = _labels(labels, p.size)
    n = int(p.size)
    if n < minimum:
        return Calibration(params=dict(IDENTITY.params), n=n)
    if prior < 0 or not math.isfinite(prior):
        raise ValueError(f"prior must be a finite number >= 0, got {prior!r}")
    x = logit(p)

    def objective(theta: Any) -> tuple[float, Any]:
        a, b = theta
        z = a * x + b
        # log(1+e^z) - y*z is the log loss of sigmoid(z); logaddexp keeps it finite.
        loss = float(np.sum(np.logaddexp(0.0, z) - y * z))
        loss += 0.5 * prior * ((a - 1.0) ** 2 + b**2)
        residual = expit(z) - y
        gradient = np.array(
            [float(residual @ x) + prior * (a - 1.0), float(residual.sum()) + prior * b]
        )
        return loss, gradient

    result = optimize.minimize(
        objective,
        x0=np.array([1.0, 0.0]),
        jac=True,
        method="L-BFGS-B",
        bounds=[_A_BOUNDS, _B_BOUNDS],
    )
    a, b = (float(v) for v in result.x)
    return Calibration(params={"a": a, "b": b}, n=n)


def apply(calibration: Calibration | None, p: float) -> float:
    """sigmoid(a*logit(p)+b) in [0, 1], non-decreasing in p; p itself without a calibration
    or with the identity map."""
    value = float(p)
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"a probability must be a finite number in [0, 1], got {p!r}")
    if calibration is None or calibration.is_identity:
        return value
    return float(expit(calibration.a * float(logit(value)) + calibration.b))


def apply_all(calibration: Calibration | None, probabilities: Sequence[float] | np.ndarray) -> Any:
    """`apply` to each of `probabilities`, as an array."""
    p = _probabilities(probabilities)
    if calibration is None or calibration.is_identity:
        return p.copy()
    return expit(calibration.a * logit(p) + calibration.b)


# --- reliability -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """Verdicts whose probability fell in [lower, upper) (the last bin includes 1)."""

    lower: float
    upper: float
    count: int
    mean_probability: float | None
    observed_rate: float | None  # the share the reviewers found supported


@dataclass(frozen=True, slots=True)
class Reliability:
    """How well probabilities match verdicts: lower Brier, log loss and ECE are better."""

    n: int
    brier: float | None
    log_loss: float | None
    ece: float | None  # expected calibration error: sum_b |B|/n * |mean p_b - rate_b|
    bins: tuple[ReliabilityBin, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "brier": self.brier,
            "log_loss": self.log_loss,
            "ece": self.ece,
            "bins": [
                {
                    "lower": b.lower,
                    "upper": b.upper,
                    "count": b.count,
                    "mean_probability": b.mean_probability,
                    "observed_rate": b.observed_rate,
                }
                for b in self.bins
            ],
        }


def reliability(
    probabilities: Sequence[float] | np.ndarray,
    labels: Sequence[bool] | np.ndarray,
    *,
    bins: int = BINS,
) -> Reliability:
    """Brier = mean (p-y)^2; log loss = -mean(y log p + (1-y) log(1-p)), p clipped to
    [EPSILON, 1-EPSILON]; ECE over `bins` equal-width bins; a table of the bins."""
    p = _probabilities(probabilities)
    y = _labels(labels, p.size)
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    n = int(p.size)
    edges = np.linspace(0.0, 1.0, bins + 1)
    # Bin b holds [edge_b, edge_b+1); a probability of exactly 1 goes to the last bin.
    index = np.minimum((p * bins).astype(np.int64), bins - 1) if n else np.zeros(0, np.int64)
    table = []
    ece = 0.0
    for b in range(bins):
        mask = index == b
        count = int(mask.sum())
        mean_p = float(p[mask].mean()) if count else None
        rate = float(y[mask].mean()) if count else None
        if count and mean_p is not None and rate is not None:
            ece += count / n * abs(mean_p - rate)
        table.append(
            ReliabilityBin(
                lower=round(float(edges[b]), 6),
                upper=round(float(edges[b + 1]), 6),
                count=count,
                mean_probability=mean_p,
                observed_rate=rate,
            )
        )
    if not n:
        return Reliability(n=0, brier=None, log_loss=None, ece=None, bins=tuple(table))
    clipped = np.clip(p, EPSILON, 1.0 - EPSILON)
    log_loss = -float(np.mean(y * np.log(clipped) + (1.0 - y) * np.log1p(-clipped)))
    return Reliability(
        n=n,
        brier=float(np.mean((p - y) ** 2)),
        log_loss=log_loss,
        ece=float(ece),
        bins=tuple(table),
    )


def split_at(count: int, share: float = HELD_BACK_SHARE) -> int:
    """How many of `count` verdicts, ordered by time, to fit on; the rest, the latest
    ceil(share*count) (at least one when count >= 2), are held back to measure the fit on."""
    if count < 2:
        return count
    held = min(count - 1, max(1, math.ceil(share * count)))
    return count - held
