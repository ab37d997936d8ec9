"""Fitting the claim verifier (evidence.verifier) on labelled corpora with scikit-learn.

Reproducible: the same corpora give the same model (fixed folds, a deterministic solver).
Only the examples that are not held out are fitted on; the held-out ones are what the
model's figures are measured on, and what `bench/bench_verdicts.py` reports.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import sklearn
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.isotonic import IsotonicRegression
from sklearn.model_selection import StratifiedKFold

from evidence.corpora import Example
from evidence.grounding import rule_verdict
from evidence.verifier import (
    AGAINST,
    SIGNALS,
    LanguageModel,
    VerifierModel,
    claim_signals,
    language,
    worst,
)

FOLDS = 5
SEED = 20261201


def signals_of(claim: str, evidence: str) -> dict[str, float]:
    """The verifier's signals of a claim, the rules' verdict on it included."""
    return claim_signals(claim, evidence, rule_verdict(claim, evidence))


def signal_matrix(examples: Sequence[Example]) -> np.ndarray:
    """One row per example: its claims' signals at their worst, in SIGNALS order."""
    rows = []
    for example in examples:
        signals = worst([signals_of(claim, example.evidence) for claim in example.claims])
        rows.append([signals[name] for name in SIGNALS])
    return np.asarray(rows, dtype=np.float64)


def balanced_accuracy(supported: np.ndarray, passed: np.ndarray) -> float:
    good, bad = supported == 1, supported == 0
    return float((passed[good].mean() + (~passed[bad]).mean()) / 2)


# The direction each signal may move the verdict: more of the claim found in the evidence
# can only raise the probability, and a missing number, a new name, a reversal or a negation
# only lower it. Fitted without these bounds on SummEdits, whose edits keep the words of the
# summary they change, the weights learned that overlap counts against a claim: a claim copied
# word for word scored below the same claim against unrelated text.
DIRECTION: dict[str, int] = {name: -1 if name in AGAINST else 1 for name in SIGNALS}
DIRECTION["claim_terms_log"] = 0  # longer claims: either way
L2 = 1.0


Bounds = list[tuple[float | None, float | None]]


def _direction_bounds() -> Bounds:
    return [
        (0.0, None) if DIRECTION[name] > 0 else (None, 0.0) if DIRECTION[name] < 0 else (None, None)
        for name in SIGNALS
    ]


def logistic(
    z: np.ndarray, y: np.ndarray, bounds: Bounds | None = None
) -> tuple[np.ndarray, float]:
    """Class-balanced, L2-penalised logistic regression with each weight's sign bounded
    (`bounds`, one per column of `z`; by default the verifier's DIRECTION), by scipy's
    L-BFGS-B: the weights and the intercept. The addressing model is fitted with it too."""
    weight = np.where(y == 1, 0.5 / max(y.mean(), 1e-9), 0.5 / max(1 - y.mean(), 1e-9))
    sign = 2.0 * y - 1.0
    n = len(y)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        beta, bias = theta[:-1], theta[-1]
        margin = sign * (z @ beta + bias)
        value = float(np.sum(weight * np.logaddexp(0.0, -margin)) / n + L2 * beta @ beta / (2 * n))
        slope = -weight * sign * expit(-margin) / n
        gradient = np.append(z.T @ slope + L2 * beta / n, slope.sum())
        return value, gradient

    limits = [*(_direction_bounds() if bounds is None else bounds), (None, None)]
    found = minimize(loss, np.zeros(z.shape[1] + 1), jac=True, method="L-BFGS-B", bounds=limits)
    return found.x[:-1], float(found.x[-1])


def _fit_language(train: Sequence[Example]) -> LanguageModel:
    x, y = signal_matrix(train), np.array([int(e.supported) for e in train])
    if len(set(y.tolist())) < 2:
        raise ValueError("the corpora must hold both supported and unsupported examples")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    # Calibrated on scores the model gave examples it was not fitted on (out-of-fold).
    scores = np.zeros(len(y))
    folds = StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=SEED)
    for fitted, scored in folds.split(z, y):
        beta, bias = logistic(z[fitted], y[fitted])
        scores[scored] = z[scored] @ beta + bias
    isotonic = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(scores, y)
    weights, intercept = logistic(z, y)
    calibration_scores = np.asarray(isotonic.X_thresholds_, dtype=np.float64)
    calibration_probabilities = np.asarray(isotonic.y_thresholds_, dtype=np.float64)
    return LanguageModel(
        signals=SIGNALS,
        mean=mean,
        scale=scale,
        weights=weights,
        intercept=intercept,
        calibration_scores=calibration_scores,
        calibration_probabilities=calibration_probabilities,
        # The probability at log-odds 0, where the class-balanced model is undecided: the
        # pass mark; a zone's tau can ask for more.
        threshold=float(np.interp(0.0, calibration_scores, calibration_probabilities)),
    )


def _language_of(example: Example) -> str:
    return language(example.claims[0] if example.claims else example.evidence)


def fit(examples: Sequence[Example], *, sources: Sequence[Path]) -> VerifierModel:
    """Fit one model per language on the examples that are not held out; measure on those
    that are."""
    train = [e for e in examples if not e.held_out]
    test = [e for e in examples if e.held_out]
    languages = {
        name: _fit_language([e for e in train if _language_of(e) == name])
        for name in sorted({_language_of(e) for e in train})
    }
    if "en" not in languages:
        raise ValueError("the corpora must hold English examples")
    model = VerifierModel(version="", languages=languages, provenance={})
    now = datetime.now(tz=UTC)
    provenance: dict[str, Any] = {
        "fitted": now.isoformat(timespec="seconds"),
        "by": f"manage.py fit_verifier (scipy, scikit-learn {sklearn.__version__})",
        "corpora": [_source(path) for path in sources],
        "fitted_on": len(train),
        "measured_on": len(test),
        "held_out": _figures(model, test),
    }
    return replace(model, version=now.strftime("%Y-%m-%d"), provenance=provenance)


def _source(path: Path) -> dict[str, Any]:
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.read_bytes())
    return {"name": path.name, "files": len(files), "sha256": digest.hexdigest()}


def passes(model: VerifierModel, example: Example) -> tuple[bool, float]:
    """Whether every claim of the example reaches its language's pass mark, and the lowest
    probability among them."""
    lowest, passed = 1.0, True
    for claim in example.claims:
        language_model = model.for_claim(claim)
        p = language_model.probability(signals_of(claim, example.evidence))
        lowest = min(lowest, p)
        passed = passed and p >= language_model.threshold
    return passed, lowest


def _figures(model: VerifierModel, test: Sequence[Example]) -> dict[str, Any]:
    """Balanced accuracy and share passed of the held-out examples, per corpus."""
    figures: dict[str, Any] = {}
    for corpus in sorted({e.corpus for e in test}):
        chosen = [e for e in test if e.corpus == corpus]
        supported = np.array([int(e.supported) for e in chosen])
        passed = np.array([passes(model, e)[0] for e in chosen])
        entry: dict[str, Any] = {"n": len(chosen), "passed": round(float(passed.mean()), 4)}
        if len(set(supported.tolist())) == 2:
            entry["balanced_accuracy"] = round(balanced_accuracy(supported, passed), 4)
        figures[corpus] = entry
    return figures
