"""Learning a zone's confidence weights w1..w4 (seed 000 §4.5) and its requery model (§8.1)
from its stored trail, with figures on held-back examples. Pure: no Django.

Weights. c = w1*sim + w2*cov + w3*rec + w4*auth is read as the probability that a reviewer
finds the claim supported, so w is the simplex-constrained least-squares fit (minimum Brier
score) of the reviewers' verdicts on the claims' signals, with an L2 pull toward the zone's
current weights: argmin_{w >= 0, sum w = 1} sum_i (x_i.w - y_i)^2 + prior/2 * |w - w0|^2.
Least squares, not a logistic fit: c is used as a probability-like score, linear in the
signals, so its Brier score is the loss of the very quantity the engine computes. The
constraints are the policy's own (four non-negative weights summing to 1).

Requery. P_requery(S) = 1 / (1 + exp(-k((1-S) - s))) fitted by maximum likelihood on the
refusals (S of the refused answer, whether the asker queried again within the KPI's
horizon), k >= 0 (s may fall outside [0, 1]); compared on the held-back refusals with the
constant rate.

Both split by time like calibration (`evidence.calibration.split_at`): the latest quarter
is held back to measure the fit and never fitted on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize
from scipy.special import expit

from evidence.calibration import EPSILON, split_at

WEIGHTS_METHOD = "simplex-least-squares-l2"
REQUERY_METHOD = "logistic-mle"
SIGNALS = ("similarity", "coverage", "recency", "authority")  # w1, w2, w3, w4
MIN_WEIGHT_VERDICTS = 50  # below this many verdicts no weights are proposed
MIN_REFUSALS = 30  # below this many refusals no requery model is fitted
# About as much pull toward the current weights as this many verdicts that fit them exactly.
PRIOR_STRENGTH = 5.0
DECIMALS = 4  # weights as a policy stores them
_K_BOUNDS = (0.0, 50.0)  # k >= 0: more insufficiency never makes a requery less likely
_B_BOUNDS = (-50.0, 50.0)


# --- shared checks ----------------------------------------------------------------------


def _signals(values: Sequence[Sequence[float]] | np.ndarray) -> Any:
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 4:
        raise ValueError(f"signals must be rows of four numbers, got shape {x.shape}")
    if x.size and (not np.all(np.isfinite(x)) or x.min() < 0.0 or x.max() > 1.0):
        raise ValueError("signals must be finite numbers in [0, 1]")
    return x


def _labels(values: Sequence[bool] | np.ndarray, size: int) -> Any:
    y = np.asarray(values, dtype=np.float64)
    if y.shape != (size,):
        raise ValueError(f"labels must be one per example ({size}), got shape {y.shape}")
    if size and not np.all((y == 0.0) | (y == 1.0)):
        raise ValueError("labels must be true or false (1 or 0)")
    return y


def _weights(values: Sequence[float]) -> Any:
    w = np.asarray(values, dtype=np.float64)
    if w.shape != (4,) or not np.all(np.isfinite(w)) or w.min() < 0 or abs(w.sum() - 1) > 1e-6:
        raise ValueError(f"weights must be four numbers >= 0 summing to 1, got {values!r}")
    return w


@dataclass(frozen=True, slots=True)
class Figures:
    """How well probabilities predict outcomes: lower Brier and log loss are better."""

    n: int
    brier: float | None
    log_loss: float | None
    accuracy: float | None  # the share where p >= 0.5 agrees with the outcome

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "brier": self.brier,
            "log_loss": self.log_loss,
            "accuracy": self.accuracy,
        }


def figures(
    probabilities: Sequence[float] | np.ndarray, labels: Sequence[bool] | np.ndarray
) -> Figures:
    """Brier = mean (p-y)^2; log loss = -mean(y log p + (1-y) log(1-p)), p clipped to
    [EPSILON, 1-EPSILON]; accuracy = mean [(p >= 0.5) == y]."""
    p = np.clip(np.asarray(probabilities, dtype=np.float64), 0.0, 1.0)
    y = _labels(labels, p.size)
    if not p.size:
        return Figures(n=0, brier=None, log_loss=None, accuracy=None)
    clipped = np.clip(p, EPSILON, 1.0 - EPSILON)
    return Figures(
        n=int(p.size),
        brier=float(np.mean((p - y) ** 2)),
        log_loss=-float(np.mean(y * np.log(clipped) + (1.0 - y) * np.log1p(-clipped))),
        accuracy=float(np.mean((p >= 0.5) == (y == 1.0))),
    )


# --- w1..w4 ------------------------------------------------------------------------------


def fit_weights(
    signals: Sequence[Sequence[float]] | np.ndarray,
    labels: Sequence[bool] | np.ndarray,
    current: Sequence[float],
    *,
    prior: float = PRIOR_STRENGTH,
) -> tuple[float, float, float, float]:
    """argmin_{w>=0, sum w=1} sum_i (x_i.w - y_i)^2 + prior/2 |w - current|^2, rounded to
    DECIMALS places and still summing to exactly 1; `current` itself without examples."""
    x = _signals(signals)
    y = _labels(labels, x.shape[0])
    w0 = _weights(current)
    if prior < 0 or not math.isfinite(prior):
        raise ValueError(f"prior must be a finite number >= 0, got {prior!r}")
    if not x.shape[0]:
        return _rounded(w0)
    gram = x.T @ x
    xty = x.T @ y

    def objective(w: Any) -> tuple[float, Any]:
        residual = x @ w - y
        loss = float(residual @ residual) + 0.5 * prior * float((w - w0) @ (w - w0))
        gradient = 2.0 * (gram @ w - xty) + prior * (w - w0)
        return loss, gradient

    result = optimize.minimize(
        objective,
        x0=w0,
        jac=True,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * 4,
        constraints=[
            {"type": "eq", "fun": lambda w: float(w.sum()) - 1.0, "jac": lambda w: np.ones(4)}
        ],
        options={"ftol": 1e-12, "maxiter": 200},
    )
    w = np.clip(result.x, 0.0, None)
    return _rounded(w / w.sum() if w.sum() > 0 else w0)


def _rounded(w: Any) -> tuple[float, float, float, float]:
    """Round to DECIMALS places; the rounding error goes to the largest weight, so the four
    still sum to 1 as the policy requires."""
    step = 10**DECIMALS
    units = np.round(np.asarray(w, dtype=np.float64) * step).astype(np.int64)
    units[int(np.argmax(units))] += step - int(units.sum())
    a, b, c, d = (float(u) / step for u in units)
    return a, b, c, d


def confidences(signals: Sequence[Sequence[float]] | np.ndarray, weights: Sequence[float]) -> Any:
    """c_i = x_i . w, each in [0, 1]."""
    return np.clip(_signals(signals) @ _weights(weights), 0.0, 1.0)


@dataclass(frozen=True, slots=True)
class WeightsFit:
    """Fitted weights and the held-back figures of them and of the current ones."""

    weights: tuple[float, float, float, float]
    current: tuple[float, float, float, float]
    fitted_on: int
    before: Figures  # the current weights, on the held-back examples
    after: Figures  # the fitted weights, on the same
    method: str = WEIGHTS_METHOD

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "weights": dict(zip(("w1", "w2", "w3", "w4"), self.weights, strict=True)),
            "current": dict(zip(("w1", "w2", "w3", "w4"), self.current, strict=True)),
            "fitted_on": self.fitted_on,
            "held_back_before": self.before.as_dict(),
            "held_back_after": self.after.as_dict(),
        }


def weights_with_figures(
    signals: Sequence[Sequence[float]] | np.ndarray,
    labels: Sequence[bool] | np.ndarray,
    current: Sequence[float],
    *,
    prior: float = PRIOR_STRENGTH,
) -> WeightsFit:
    """Fit on all but the latest quarter of the examples (given oldest first), measure the
    fitted and the current weights on that quarter."""
    x = _signals(signals)
    y = _labels(labels, x.shape[0])
    w0 = _weights(current)
    split = split_at(x.shape[0])
    fitted = fit_weights(x[:split], y[:split], w0, prior=prior)
    held_x, held_y = x[split:], y[split:]
    return WeightsFit(
        weights=fitted,
        current=_rounded(w0),
        fitted_on=split,
        before=figures(confidences(held_x, w0), held_y),
        after=figures(confidences(held_x, fitted), held_y),
    )


# --- §8.1 requery model -------------------------------------------------------------------


def requery_curve(
    sufficiency: Any, steepness: float, midpoint: float | None, flat: float = 0.5
) -> Any:
    """1 / (1 + exp(-k((1-S) - s))) for each S (evidence.dynamics.requery_probability on
    arrays); `flat` everywhere when k is 0 (no midpoint: the rate does not depend on S)."""
    s = np.asarray(sufficiency, dtype=np.float64)
    if midpoint is None or steepness == 0.0:
        return np.full(s.shape, flat)
    return expit(steepness * ((1.0 - s) - midpoint))


@dataclass(frozen=True, slots=True)
class RequeryFit:
    """Fitted k, s of §8.1, the constant rate beside it, and both on the held-back refusals."""

    steepness: float  # k
    midpoint: float | None  # s; None when k is 0
    rate: float  # the constant P_requery of the fitted refusals
    fitted_on: int
    constant: Figures  # the constant rate, held back
    model: Figures  # the fitted curve, held back
    method: str = REQUERY_METHOD

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "k": self.steepness,
            "s": self.midpoint,
            "rate": self.rate,
            "fitted_on": self.fitted_on,
            "held_back_constant": self.constant.as_dict(),
            "held_back_model": self.model.as_dict(),
        }


def fit_requery(
    sufficiency: Sequence[float] | np.ndarray, requeried: Sequence[bool] | np.ndarray
) -> tuple[float, float | None, float]:
    """(k, s, flat): the maximum-likelihood logistic in x = 1 - S, fitted as
    sigmoid(a x + b) with a >= 0 (convex: one optimum), so k = a and s = -b/a, the
    insufficiency at which P_requery is one half. s may lie outside [0, 1]: a zone whose
    askers seldom come back has its midpoint beyond total insufficiency. With k = 0 there is
    no midpoint (None) and `flat` = sigmoid(b) is the rate at every S."""
    s_values = np.asarray(sufficiency, dtype=np.float64)
    if s_values.ndim != 1 or (
        s_values.size
        and (not np.all(np.isfinite(s_values)) or s_values.min() < 0 or s_values.max() > 1)
    ):
        raise ValueError("sufficiency must be a 1-d sequence of numbers in [0, 1]")
    y = _labels(requeried, s_values.size)
    if not s_values.size:
        raise ValueError("a requery model needs at least one refusal")
    x = 1.0 - s_values

    def objective(theta: Any) -> tuple[float, Any]:
        a, b = theta
        z = a * x + b
        loss = float(np.sum(np.logaddexp(0.0, z) - y * z))
        residual = expit(z) - y
        return loss, np.array([float(residual @ x), float(residual.sum())])

    result = optimize.minimize(
        objective,
        x0=np.array([1.0, 0.0]),
        jac=True,
        method="L-BFGS-B",
        bounds=[_K_BOUNDS, _B_BOUNDS],
    )
    a, b = (float(v) for v in result.x)
    if a <= 1e-9:
        return 0.0, None, float(expit(b))
    return a, -b / a, float(expit(b))


def requery_with_figures(
    sufficiency: Sequence[float] | np.ndarray, requeried: Sequence[bool] | np.ndarray
) -> RequeryFit:
    """Fit k, s on all but the latest quarter of the refusals (given oldest first); log loss
    and Brier of the curve and of the constant rate on that quarter."""
    s_values = np.asarray(sufficiency, dtype=np.float64)
    y = _labels(requeried, s_values.size)
    split = split_at(s_values.size)
    k, mid, flat = fit_requery(s_values[:split], y[:split])
    rate = float(y[:split].mean())
    held_s, held_y = s_values[split:], y[split:]
    return RequeryFit(
        steepness=k,
        midpoint=mid,
        rate=rate,
        fitted_on=split,
        constant=figures(np.full(held_y.size, rate), held_y),
        model=figures(requery_curve(held_s, k, mid, flat), held_y),
    )
