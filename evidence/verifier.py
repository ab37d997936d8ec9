"""The learned claim verifier: signals of a claim against its evidence, combined by a small
fitted model into a calibrated probability that the evidence supports the claim.

Pure: no Django. The signals (docs/math.md §9) are the rule checks of `evidence.grounding`
(numbers, reversals, key-term coverage; grounding calls this module from `check_claim`) and
signals that do not depend on our own corpus: the best supporting sentence anywhere in the
evidence, names the evidence never mentions, a negation that differs from that sentence, and
character n-gram overlap (which needs no word segmentation, so it reads Japanese as well as
English). Per language, a logistic regression over the standardised signals, its weights
bounded in sign (evidence found only raises it), gives a score; an isotonic map fitted on
out-of-fold scores turns it into a probability (among claims given 0.8, about 80% are
supported). The model is a small JSON file (`verifier_model.json` beside this module),
fitted by `manage.py fit_verifier` (evidence.verifier_fit).
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from evidence.text import content_terms, has_japanese, normalise, split_sentences

MODEL_FORMAT = "maria-claim-verifier-v1"
DEFAULT_MODEL = Path(__file__).with_name("verifier_model.json")

# The signals, in the order the model's weights follow. "Against" signals count what speaks
# against the claim, so a claim of several sentences takes their worst (the maximum); for the
# others the worst is the minimum.
SIGNALS: tuple[str, ...] = (
    "best_sentence_coverage",
    "evidence_coverage",
    "numbers_found",
    "rules_supported",
    "char_overlap_best",
    "char_overlap_evidence",
    "char_jaccard_best",
    "missing_numbers",
    "reversal",
    "novel_names",
    "negation_differs",
    "claim_terms_log",
)
AGAINST = frozenset({"missing_numbers", "reversal", "novel_names", "negation_differs"})

_NEGATION_EN = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot)\b|n't", re.IGNORECASE
)
# Japanese negation: the auxiliaries ない/ず/ぬ/ません and the negating prefixes 不/非/未/無.
_NEGATION_JA = re.compile(
    r"ない|なかっ|ず(?=[にのとも、。]|$)|ません|ぬ(?=[。、]|$)|[不非未無](?=\w)"
)
# A capitalised word that does not open a sentence: a name, a place, an organisation.
_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][\w'-]*[a-z][\w'-]*")
_ANY_CAPITAL = re.compile(r"\b[A-Z][\w'-]+")


class RuleVerdict(Protocol):
    """What the rules found (evidence.grounding.Grounding): the signals that are certain."""

    @property
    def supported(self) -> bool: ...
    @property
    def numbers_ok(self) -> bool: ...
    @property
    def reversal(self) -> bool: ...
    @property
    def missing_numbers(self) -> Sequence[object]: ...


class VerifierModelError(ValueError):
    """The model file is missing, unreadable or not a model of this format."""


def _negations(text: str) -> int:
    pattern = _NEGATION_JA if has_japanese(text) else _NEGATION_EN
    return len(pattern.findall(text))


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", normalise(text).lower())


@lru_cache(maxsize=32768)
def _grams(text: str, n: int = 3) -> frozenset[str]:
    flat = _flat(text)
    return frozenset(flat[i : i + n] for i in range(max(0, len(flat) - n + 1)))


@dataclass(frozen=True, slots=True)
class _Evidence:
    sentences: tuple[str, ...]
    sentence_terms: tuple[frozenset[str], ...]
    terms: frozenset[str]
    names: frozenset[str]
    flat: str  # normalised, lower-cased, spaces folded: where trigrams are looked up


@lru_cache(maxsize=4096)
def _evidence(text: str) -> _Evidence:
    sentences = tuple(split_sentences(text)) or (text,)
    sentence_terms = tuple(frozenset(content_terms(s)) for s in sentences)
    return _Evidence(
        sentences=sentences,
        sentence_terms=sentence_terms,
        terms=frozenset().union(*sentence_terms),  # the text's terms, tokenised once
        names=frozenset(w.lower() for w in _ANY_CAPITAL.findall(text)),
        flat=_flat(text),
    )


def claim_signals(claim: str, evidence: str, rules: RuleVerdict) -> dict[str, float]:
    """The signals of one claim against its evidence (a paragraph, or a whole document),
    given what the rules found for the same pair."""
    return {
        **_text_signals(claim, evidence),
        "numbers_found": float(rules.numbers_ok),
        "rules_supported": float(rules.supported),
        "missing_numbers": float(len(rules.missing_numbers)),
        "reversal": float(rules.reversal),
    }


@lru_cache(maxsize=16384)
def _text_signals(claim: str, evidence: str) -> dict[str, float]:
    seen = _evidence(evidence)
    terms = frozenset(content_terms(claim))
    best, best_coverage = 0, 0.0
    if terms:
        for index, sentence_terms in enumerate(seen.sentence_terms):
            coverage = len(terms & sentence_terms) / len(terms)
            if coverage > best_coverage:
                best, best_coverage = index, coverage
    else:
        best_coverage = 1.0
    sentence = seen.sentences[best]
    grams, best_grams = _grams(claim), _grams(sentence)
    shared = len(grams & best_grams)
    names = {w.lower() for w in _NAME.findall(claim)}
    return {
        "best_sentence_coverage": best_coverage,
        "evidence_coverage": len(terms & seen.terms) / len(terms) if terms else 1.0,
        "char_overlap_best": shared / len(grams) if grams else 1.0,
        "char_overlap_evidence": (
            sum(gram in seen.flat for gram in grams) / len(grams) if grams else 1.0
        ),
        "char_jaccard_best": shared / len(grams | best_grams) if grams else 1.0,
        "novel_names": float(len(names - seen.names)),
        "negation_differs": float((_negations(claim) - _negations(sentence)) % 2 != 0),
        "claim_terms_log": math.log1p(len(terms)),
    }


def worst(signals: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Several claims resting on one evidence (a summary's sentences): each signal at its
    worst, so the answer is only as supported as its least supported sentence."""
    return {name: (max if name in AGAINST else min)(s[name] for s in signals) for name in SIGNALS}


@dataclass(frozen=True)
class LanguageModel:
    """Logistic weights over standardised signals, then an isotonic map to a probability."""

    signals: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    intercept: float
    calibration_scores: np.ndarray  # increasing scores ...
    calibration_probabilities: np.ndarray  # ... and the probability at each (non-decreasing)
    threshold: float  # the probability a claim needs to pass

    def score(self, signals: Mapping[str, float]) -> float:
        """w . (x - mean) / scale + b: the logistic model's log-odds."""
        # Plain floats: for a dozen signals numpy's call overhead costs more than the sums.
        total = self.intercept
        for name, mean, scale, weight in self._terms:
            total += weight * (signals[name] - mean) / scale
        return total

    def probability(self, signals: Mapping[str, float]) -> float:
        """The calibrated probability that the evidence supports the claim, in [0, 1]."""
        scores, probabilities = self._calibration
        x = self.score(signals)
        if not x > scores[0]:  # below the first point, or not a number: its probability
            return probabilities[0] if x == x else 0.0
        if x >= scores[-1]:
            return probabilities[-1]
        i = bisect.bisect_right(scores, x)
        left, right = scores[i - 1], scores[i]
        share = (x - left) / (right - left) if right > left else 1.0
        return min(
            1.0, max(0.0, probabilities[i - 1] + share * (probabilities[i] - probabilities[i - 1]))
        )

    @cached_property
    def _terms(self) -> tuple[tuple[str, float, float, float], ...]:
        return tuple(
            zip(
                self.signals,
                self.mean.tolist(),
                self.scale.tolist(),
                self.weights.tolist(),
                strict=True,
            )
        )

    @cached_property
    def _calibration(self) -> tuple[list[float], list[float]]:
        return self.calibration_scores.tolist(), self.calibration_probabilities.tolist()

    def as_json(self) -> dict[str, Any]:
        return {
            "signals": list(self.signals),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "weights": self.weights.tolist(),
            "intercept": self.intercept,
            "calibration": {
                "scores": self.calibration_scores.tolist(),
                "probabilities": self.calibration_probabilities.tolist(),
            },
            "threshold": self.threshold,
        }


def language(claim: str) -> str:
    """Which of the model's languages reads a claim: "ja" when it holds Japanese, else "en"."""
    return "ja" if has_japanese(claim) else "en"


@dataclass(frozen=True)
class VerifierModel:
    """One fitted model per language (English and Japanese signals behave differently), with
    what it was fitted on and how it did on held-out examples. The question-addressing model
    (evidence.questions) is one of these too, over its own signals, in a file of its own
    `format`."""

    version: str
    languages: Mapping[str, LanguageModel]
    provenance: Mapping[str, Any]
    format: str = MODEL_FORMAT

    def for_language(self, name: str) -> LanguageModel:
        return self.languages.get(name) or self.languages["en"]

    def for_claim(self, claim: str) -> LanguageModel:
        return self.for_language(language(claim))

    def as_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "version": self.version,
            "languages": {name: m.as_json() for name, m in sorted(self.languages.items())},
            "provenance": dict(self.provenance),
        }


def _language_from_json(
    data: Mapping[str, Any], source: str, known: Sequence[str] = SIGNALS
) -> LanguageModel:
    try:
        signals = tuple(str(s) for s in data["signals"])
        vectors = [np.asarray(data[key], dtype=np.float64) for key in ("mean", "scale", "weights")]
        calibration = data["calibration"]
        scores = np.asarray(calibration["scores"], dtype=np.float64)
        probabilities = np.asarray(calibration["probabilities"], dtype=np.float64)
        intercept = float(data["intercept"])
        threshold = float(data["threshold"])
    except (KeyError, TypeError, ValueError) as error:
        raise VerifierModelError(f"{source}: malformed model ({error})") from error
    unknown = set(signals) - set(known)
    if unknown:
        raise VerifierModelError(f"{source}: signals this engine does not compute: {unknown}")
    if any(v.shape != (len(signals),) for v in vectors) or not np.all(vectors[1] > 0):
        raise VerifierModelError(f"{source}: mean, scale and weights must match the signals")
    if (
        scores.ndim != 1
        or scores.shape != probabilities.shape
        or len(scores) < 2
        or np.any(np.diff(scores) < 0)
        or np.any(np.diff(probabilities) < 0)
        or np.any((probabilities < 0) | (probabilities > 1))
        or not 0.0 <= threshold <= 1.0
    ):
        raise VerifierModelError(f"{source}: the calibration must be non-decreasing in [0, 1]")
    values = [*vectors, scores, probabilities, np.array([intercept])]
    if not all(np.all(np.isfinite(v)) for v in values):
        raise VerifierModelError(f"{source}: the model holds a value that is not finite")
    mean, scale, weights = vectors
    return LanguageModel(signals, mean, scale, weights, intercept, scores, probabilities, threshold)


def model_from_json(
    data: Mapping[str, Any],
    *,
    source: str = "model",
    format: str = MODEL_FORMAT,
    signals: Sequence[str] = SIGNALS,
) -> VerifierModel:
    """Check a model's JSON and build it; VerifierModelError names what is wrong."""
    if data.get("format") != format:
        raise VerifierModelError(f"{source}: not a {format} file")
    languages = data.get("languages")
    if not isinstance(languages, dict) or "en" not in languages:
        raise VerifierModelError(f"{source}: no model for English")
    return VerifierModel(
        version=str(data.get("version", "")),
        languages={
            str(name): _language_from_json(entry, f"{source} ({name})", signals)
            for name, entry in languages.items()
        },
        provenance=dict(data.get("provenance", {})),
        format=format,
    )


def load_model(
    path: Path,
    *,
    format: str = MODEL_FORMAT,
    signals: Sequence[str] = SIGNALS,
) -> VerifierModel:
    """Read a model file; a missing or corrupt file raises VerifierModelError naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise VerifierModelError(f"{path}: cannot read the model ({error})") from error
    if not isinstance(data, dict):
        raise VerifierModelError(f"{path}: not a {format} file")
    return model_from_json(data, source=str(path), format=format, signals=signals)


@lru_cache(maxsize=4)
def model(path: Path = DEFAULT_MODEL) -> VerifierModel:
    """The model, read once per process (the evidence app reads it at start-up)."""
    return load_model(path)
