"""The evidence-bundle math (docs/math.md §1-§8): item confidence,
sufficiency, completeness, cohesion, contradictions, answer mode, and the bundle aggregate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt
from scipy import sparse

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
AnswerMode = Literal["full", "hedged", "partial", "refusal"]

WEIGHT_TOLERANCE = 1e-6
DEFAULT_FLOOR = 0.3  # docs/math.md §1: below it an item is noise
H_RAW_BASELINE = 0.237  # docs/math.md §3: hallucination rate of the unbundled baseline
# Two items this confident that contradict each other are surfaced (docs/math.md §5). Kept
# low on purpose: a surfaced contradiction costs an admin a look, a hidden one an answer.
CONTRADICTION_CONFIDENCE = 0.5

# Recency: exponential decay of the document's age. A year-old document keeps half its
# recency; a superseded version keeps a fifth of that, so it can still be cited for audit
# but never outranks the version that replaced it (docs/math.md §1, recency).
RECENCY_HALF_LIFE_DAYS = 365.0
SUPERSEDED_RECENCY_FACTOR = 0.2

# Authority = kind weight x status weight, the orders of docs/math.md §1
# (policy > contract > report > minutes > memo > email; approved > draft > archived).
# The only table of these constants: change them here.
KIND_AUTHORITY: Mapping[str, float] = {
    "policy": 1.0,
    "contract": 0.9,
    "report": 0.75,
    "minutes": 0.6,
    "memo": 0.45,
    "email": 0.3,
}
STATUS_AUTHORITY: Mapping[str, float] = {
    "approved": 1.0,
    "draft": 0.6,
    "archived": 0.3,
}


# --- validation -------------------------------------------------------------------------


def _unit_vector(name: str, values: Any) -> FloatArray:
    """Coerce to a 1-d float array, rejecting non-finite values and values outside [0, 1]."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-d sequence of numbers, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    if array.size and (array.min() < 0.0 or array.max() > 1.0):
        raise ValueError(
            f"{name} must lie in [0, 1], got values from {array.min():g} to {array.max():g}"
        )
    return array


def _unit_scalar(name: str, value: float) -> float:
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be a finite number in [0, 1], got {value!r}")
    return number


def _square_matrix(name: str, matrix: Any) -> FloatArray:
    array = np.asarray(matrix, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    return array


def check_weights(weights: Sequence[float]) -> tuple[float, float, float, float]:
    """Validate the confidence weights (w1, w2, w3, w4): four finite, non-negative, sum 1."""
    if len(weights) != 4:
        raise ValueError(f"weights (w1, w2, w3, w4) must be four numbers, got {len(weights)}")
    w = tuple(float(x) for x in weights)
    if not all(math.isfinite(x) and x >= 0.0 for x in w):
        raise ValueError(f"weights (w1, w2, w3, w4) must be finite and >= 0, got {w}")
    total = math.fsum(w)
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        raise ValueError(
            f"weights (w1, w2, w3, w4) = {w} must sum to 1 within {WEIGHT_TOLERANCE}, "
            f"got {total:.9g}"
        )
    return w[0], w[1], w[2], w[3]


# --- item confidence signals --------------------------------------------------------------


def item_confidence(
    similarity: Any,
    coverage: Any,
    recency: Any,
    authority: Any,
    weights: Sequence[float],
) -> FloatArray:
    """c_j = w1*sim_j + w2*coverage_j + w3*recency_j + w4*authority_j (docs/math.md §1)."""
    w1, w2, w3, w4 = check_weights(weights)
    sim = _unit_vector("similarity", similarity)
    cov = _unit_vector("coverage", coverage)
    rec = _unit_vector("recency", recency)
    auth = _unit_vector("authority", authority)
    if not sim.size == cov.size == rec.size == auth.size:
        raise ValueError(
            "similarity, coverage, recency and authority must have the same length, got "
            f"{sim.size}, {cov.size}, {rec.size}, {auth.size}"
        )
    # Weights sum to 1 only within tolerance, so clip the rounding back into [0, 1].
    return np.clip(w1 * sim + w2 * cov + w3 * rec + w4 * auth, 0.0, 1.0)


def document_age_days(effective: datetime, as_of: datetime) -> float:
    """Age in days = (as_of - effective) / 1 day, from timezone-aware datetimes."""
    if effective.tzinfo is None or as_of.tzinfo is None:
        raise ValueError("effective and as_of must be timezone-aware datetimes")
    return (as_of - effective).total_seconds() / 86_400.0


def recency(
    age_days: float,
    *,
    superseded: bool = False,
    half_life_days: float = RECENCY_HALF_LIFE_DAYS,
) -> float:
    """recency = 0.5^(age / half_life), times SUPERSEDED_RECENCY_FACTOR for a superseded version."""
    if not math.isfinite(age_days):
        raise ValueError(f"age_days must be finite, got {age_days!r}")
    if not (math.isfinite(half_life_days) and half_life_days > 0.0):
        raise ValueError(f"half_life_days must be a positive number, got {half_life_days!r}")
    # A document dated in the future (clock skew, post-dated policy) counts as brand new.
    decay = math.pow(0.5, max(age_days, 0.0) / half_life_days)
    return decay * SUPERSEDED_RECENCY_FACTOR if superseded else decay


def authority(kind: str, status: str) -> float:
    """authority = KIND_AUTHORITY[kind] * STATUS_AUTHORITY[status]."""
    try:
        kind_weight = KIND_AUTHORITY[kind]
    except KeyError:
        raise ValueError(
            f"unknown document kind {kind!r}; expected one of {', '.join(KIND_AUTHORITY)}"
        ) from None
    try:
        status_weight = STATUS_AUTHORITY[status]
    except KeyError:
        raise ValueError(
            f"unknown document status {status!r}; expected one of {', '.join(STATUS_AUTHORITY)}"
        ) from None
    return kind_weight * status_weight


def above_floor(confidence: Any, floor: float = DEFAULT_FLOOR) -> BoolArray:
    """kept_j = c_j >= floor (items below the floor are noise, docs/math.md §1)."""
    c = _unit_vector("confidence", confidence)
    return c >= _unit_scalar("floor", floor)


# --- sufficiency and completeness --------------------------------------------------------


def sufficiency(confidence: Any, relevance: Any) -> float:
    """Sufficiency(B) = (1/|B|) * sum_j c_j * r_j, and 0 for the empty bundle (docs/math.md §2)."""
    c = _unit_vector("confidence", confidence)
    r = _unit_vector("relevance", relevance)
    if c.size != r.size:
        raise ValueError(
            f"confidence and relevance must have the same length, got {c.size} and {r.size}"
        )
    if c.size == 0:
        return 0.0
    return float(np.dot(c, r) / c.size)


def sufficiency_of_claims(per_claim: Iterable[float]) -> float:
    """Sufficiency = min_k Sufficiency(B_k), and 0 with no claims (docs/math.md §2)."""
    values = [_unit_scalar("claim sufficiency", s) for s in per_claim]
    return min(values) if values else 0.0


def bundle_completeness(n_items: int, required: int, confidence: Any) -> float:
    """BundleCompleteness = min(1, |B| / RequiredEvidence) * AvgConfidence (docs/math.md §3)."""
    if isinstance(n_items, bool) or int(n_items) != n_items or n_items < 0:
        raise ValueError(f"n_items must be a whole number >= 0, got {n_items!r}")
    if isinstance(required, bool) or int(required) != required or required < 1:
        raise ValueError(f"required evidence must be a whole number >= 1, got {required!r}")
    c = _unit_vector("confidence", confidence)
    if n_items == 0 or c.size == 0:
        return 0.0
    return min(1.0, n_items / required) * float(c.mean())


# RequiredEvidence by question (seed 000 §4.3): "a simple factual lookup may need only 1-2
# evidence triples; a complex analytical question, covering several documents and periods,
# 5-10". Two per part asked (the upper end for a simple lookup, so that one citation alone
# is never complete), one more per part that asks for analysis (a reason, a summary), two
# more when the question spans time (more versions and periods to cover); within 2..10.
REQUIRED_PER_PART = 2
REQUIRED_PER_ANALYSIS = 1
REQUIRED_FOR_TIME_SPAN = 2
REQUIRED_SIMPLE = 2
REQUIRED_MOST = 10


def required_evidence(parts: int, *, analytic: int = 0, spans_time: bool = False) -> int:
    """RequiredEvidence = clip(2*parts + analytic + 2*[spans time], 2, 10) (seed 000 §4.3)."""
    for name, value in (("parts", parts), ("analytic", analytic)):
        if isinstance(value, bool) or int(value) != value or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    if analytic > parts:
        raise ValueError(f"analytic ({analytic}) cannot exceed parts ({parts})")
    wanted = (
        REQUIRED_PER_PART * parts
        + REQUIRED_PER_ANALYSIS * analytic
        + (REQUIRED_FOR_TIME_SPAN if spans_time else 0)
    )
    return max(REQUIRED_SIMPLE, min(REQUIRED_MOST, wanted))


def distinct_sources(documents: Iterable[int | None]) -> int:
    """How many different documents the kept evidence comes from (None: unresolved)."""
    return len({d for d in documents if d is not None})


def lacks_diversity(documents: Iterable[int | None], min_sources: int) -> bool:
    """Source diversity (seed 000 §2.3): a high-stakes answer needs evidence from at least
    `min_sources` independent documents; True when it has fewer (1 or less: no requirement;
    no evidence at all is the sufficiency's to judge, not diversity's)."""
    if isinstance(min_sources, bool) or int(min_sources) != min_sources or min_sources < 0:
        raise ValueError(f"min_sources must be a whole number >= 0, got {min_sources!r}")
    found = distinct_sources(documents)
    return min_sources > 1 and 0 < found < min_sources


def hallucination_bundled(h_raw: float, completeness: float) -> float:
    """H_bundled = H_raw * (1 - BundleCompleteness) (docs/math.md §3)."""
    return _unit_scalar("h_raw", h_raw) * (1.0 - _unit_scalar("completeness", completeness))


# --- cohesion and contradictions --------------------------------------------------------


def cohesion(adjacency: Any) -> float:
    """Cohesion(S) = (1/|S|^2) * sum_{i != j in S} A_ij; the diagonal is ignored; empty S -> 0.

    The diagonal does not count: an item trivially relates to itself, and a set with no
    relations between its items scores 0 (docs/math.md §4, §16: flat top-k measures an edge
    density of 0.04, below the 1/|S| a counted diagonal would force).
    So a single item has cohesion 0 and a fully related set reaches 1 - 1/|S|.
    """
    if sparse.issparse(adjacency):
        matrix = sparse.csr_array(adjacency, dtype=np.float64)
        n_rows, n_cols = (int(x) for x in matrix.shape)
        if n_rows != n_cols:
            raise ValueError(f"adjacency must be a square matrix, got shape {matrix.shape}")
        if not np.all(np.isfinite(matrix.data)):
            raise ValueError("adjacency must be finite (no NaN or infinity)")
        if n_rows == 0:
            return 0.0
        total = float(matrix.sum()) - float(matrix.diagonal().sum())
        return total / n_rows**2
    dense = _square_matrix("adjacency", adjacency)
    n = int(dense.shape[0])
    if n == 0:
        return 0.0
    return (float(dense.sum()) - float(np.trace(dense))) / n**2


def cohesion_adjusted(s: float, cohesion_value: float) -> float:
    """Sufficiency_adj = Sufficiency * (0.5 + 0.5 * clip(Cohesion, -1, 1)) (docs/math.md §4)."""
    if not math.isfinite(cohesion_value):
        raise ValueError(f"cohesion must be finite, got {cohesion_value!r}")
    # Contradictions make cohesion negative and arbitrary weights could push it past 1; the
    # clip keeps the multiplier in [0, 1], so the adjustment can only lower sufficiency and
    # the result stays in [0, 1].
    clipped = min(1.0, max(-1.0, cohesion_value))
    return _unit_scalar("sufficiency", s) * (0.5 + 0.5 * clipped)


def cohesion_weighted_confidence(confidence: Any, adjacency: Any, delta: float) -> FloatArray:
    """c'_j = clip(c_j + delta * sum_{k != j} A_jk * c_k, 0, 1) (docs/math.md §4)."""
    c = _unit_vector("confidence", confidence)
    a = _square_matrix("adjacency", adjacency)
    if a.shape[0] != c.size:
        raise ValueError(
            f"adjacency is {a.shape[0]}x{a.shape[0]} but there are {c.size} confidences"
        )
    if not (math.isfinite(delta) and delta >= 0.0):
        raise ValueError(f"delta (reinforcement) must be a finite number >= 0, got {delta!r}")
    support = a @ c - np.diagonal(a) * c  # an item does not corroborate itself
    return np.clip(c + delta * support, 0.0, 1.0)


def contradiction_pairs(
    adjacency: Any, confidence: Any, min_confidence: float
) -> list[tuple[int, int]]:
    """Pairs (i, j), i < j, with min(A_ij, A_ji) < 0 and c_i, c_j >= min_confidence (000, 9.6)."""
    c = _unit_vector("confidence", confidence)
    a = _square_matrix("adjacency", adjacency)
    if a.shape[0] != c.size:
        raise ValueError(
            f"adjacency is {a.shape[0]}x{a.shape[0]} but there are {c.size} confidences"
        )
    threshold = _unit_scalar("min_confidence", min_confidence)
    # A contradiction recorded in either direction counts: relation matrices from directed
    # graphs need not be symmetric.
    negative = np.triu(np.minimum(a, a.T) < 0.0, k=1)
    confident = c >= threshold
    rows, cols = np.nonzero(negative & confident[:, None] & confident[None, :])
    return [(int(i), int(j)) for i, j in zip(rows, cols, strict=True)]


# --- decisions from the scores -----------------------------------------------------------


def responds(sufficiency: float, tau: float) -> bool:
    """The response decision of seed 000 §4.2: respond iff Sufficiency(B) >= tau, refuse
    below. `ask` decides by it before it submits anything; a submitted answer is then graded
    like any agent's (gates.grading), where low S sends it to a person instead."""
    return _unit_scalar("sufficiency", sufficiency) >= _unit_scalar("tau", tau)


def answer_mode(s: float, tau: float, delta: float) -> AnswerMode:
    """full S>=tau; hedged tau-delta<=S<tau; partial tau-2*delta<=S<tau-delta; else refusal."""
    s = _unit_scalar("sufficiency", s)
    tau = _unit_scalar("tau", tau)
    if not (math.isfinite(delta) and delta >= 0.0):
        raise ValueError(f"delta must be a finite number >= 0, got {delta!r}")
    if s >= tau:
        return "full"
    if s >= tau - delta:
        return "hedged"
    if s >= tau - 2 * delta:
        return "partial"
    return "refusal"


@dataclass(frozen=True, slots=True)
class RefusalEconomics:
    respond_cost: float
    refuse_cost: float

    @property
    def refuse(self) -> bool:
        return self.refuse_cost < self.respond_cost


def _finite(name: str, value: float, *, at_least: float | None = 0.0) -> float:
    number = float(value)
    if not math.isfinite(number) or (at_least is not None and number < at_least):
        bound = "" if at_least is None else f" >= {at_least:g}"
        raise ValueError(f"{name} must be a finite number{bound}, got {value!r}")
    return number


def refusal_economics(
    p_hallucination: float,
    cost_hallucination: float,
    p_requery: float,
    cost_requery: float,
    cost_abandon: float,
    cost_correct: float = 0.0,
) -> RefusalEconomics:
    """The paper's section 8.4 (docs/math.md §8): E[respond] = P_h*C_h + (1-P_h)*C_correct
    versus E[refuse] = P_rq*C_rq + (1-P_rq)*C_abandon.

    `cost_correct` is what a correct answer costs; the paper calls it "near zero". A negative
    one is a correct answer's worth (answering gains it, refusing forgoes it)."""
    p_h = _unit_scalar("p_hallucination", p_hallucination)
    p_rq = _unit_scalar("p_requery", p_requery)
    c_h = _finite("cost_hallucination", cost_hallucination)
    c_rq = _finite("cost_requery", cost_requery)
    c_ab = _finite("cost_abandon", cost_abandon)
    c_ok = _finite("cost_correct", cost_correct, at_least=None)
    return RefusalEconomics(
        respond_cost=p_h * c_h + (1.0 - p_h) * c_ok,
        refuse_cost=p_rq * c_rq + (1.0 - p_rq) * c_ab,
    )


def refusal_break_even(
    cost_hallucination: float,
    p_requery: float,
    cost_requery: float,
    cost_abandon: float,
    cost_correct: float = 0.0,
) -> float | None:
    """The P_h at which E[respond] = E[refuse]; above it refusing is the cheaper choice:
    (E[refuse] - C_correct) / (C_h - C_correct), clipped to [0, 1]. None when a hallucination
    costs no more than a correct answer (then answering is never the dearer choice).

    The paper's figures (C_h 2,400, C_rq 0.50, C_abandon 5.00, P_rq 0.71) give 0.075% with
    C_correct = 0; its "about 0.2%" needs a correct answer worth about 3.00 (C_correct -3)."""
    c_h = _finite("cost_hallucination", cost_hallucination)
    c_ok = _finite("cost_correct", cost_correct, at_least=None)
    if c_h <= c_ok:
        return None
    refuse = refusal_economics(0.0, c_h, p_requery, cost_requery, cost_abandon).refuse_cost
    return min(1.0, max(0.0, (refuse - c_ok) / (c_h - c_ok)))


def trust(
    trust_0: float,
    correct_rate: float,
    hallucination_rate: float,
    refusal_rate: float,
    *,
    alpha: float = 1.0,
    beta: float = 5.0,
    gamma: float = 0.7,
) -> float:
    """Trust = Trust_0 + alpha*Correct - beta*Halluc - gamma*Refusal (docs/math.md §8)."""
    rates = (
        _unit_scalar("correct_rate", correct_rate),
        _unit_scalar("hallucination_rate", hallucination_rate),
        _unit_scalar("refusal_rate", refusal_rate),
    )
    return trust_0 + alpha * rates[0] - beta * rates[1] - gamma * rates[2]


# --- the bundle aggregate ----------------------------------------------------------------


class ScoringPolicy(Protocol):
    """What score_bundle reads from a zone policy (coordinates.policy.PolicyValues fits)."""

    @property
    def w1(self) -> float: ...
    @property
    def w2(self) -> float: ...
    @property
    def w3(self) -> float: ...
    @property
    def w4(self) -> float: ...
    @property
    def floor(self) -> float: ...
    @property
    def tau(self) -> float: ...
    @property
    def delta(self) -> float: ...
    @property
    def refusal_floor(self) -> float: ...
    @property
    def required_evidence(self) -> int: ...


@dataclass(frozen=True, slots=True)
class BundlePolicy:
    """A standalone ScoringPolicy with the system defaults, for callers without a zone."""

    w1: float = 0.40
    w2: float = 0.30
    w3: float = 0.15
    w4: float = 0.15
    floor: float = DEFAULT_FLOOR
    tau: float = 0.70
    delta: float = 0.10
    refusal_floor: float = 0.40
    required_evidence: int = 3


@dataclass(frozen=True, slots=True)
class ClaimSignals:
    """The per-item signals of one claim's evidence, each an array over its cited items."""

    similarity: Sequence[float] | FloatArray
    coverage: Sequence[float] | FloatArray
    recency: Sequence[float] | FloatArray
    authority: Sequence[float] | FloatArray
    relevance: Sequence[float] | FloatArray


@dataclass(frozen=True, slots=True)
class BundleScore:
    """Everything the validation report stores about one bundle; items in claim order."""

    confidence: tuple[float, ...]  # per item, after reinforcement when it is on
    kept: tuple[bool, ...]  # per item: confidence >= floor
    item_claim: tuple[int, ...]  # per item: index of the claim it supports
    claim_sufficiency: tuple[float, ...]
    sufficiency: float  # min over claims
    completeness: float
    cohesion: float  # over the kept items
    adjusted_sufficiency: float
    hallucination: float  # H_bundled, reported, not gated on
    contradictions: tuple[tuple[int, int], ...]  # item indices into the whole bundle
    mode: AnswerMode  # from the gated sufficiency
    gated_sufficiency: float  # the value answer mode and gate grade on
    kept_confidence: tuple[float, ...]  # what gates.grading.grade takes
    required_evidence: int = 0  # the RequiredEvidence completeness was counted against

    def to_dict(self) -> dict[str, Any]:
        """Plain floats, ints, bools and lists, ready for a JSON field."""
        return {
            "confidence": list(self.confidence),
            "kept": list(self.kept),
            "item_claim": list(self.item_claim),
            "claim_sufficiency": list(self.claim_sufficiency),
            "sufficiency": self.sufficiency,
            "completeness": self.completeness,
            "cohesion": self.cohesion,
            "adjusted_sufficiency": self.adjusted_sufficiency,
            "hallucination": self.hallucination,
            "contradictions": [list(pair) for pair in self.contradictions],
            "mode": self.mode,
            "gated_sufficiency": self.gated_sufficiency,
            "kept_confidence": list(self.kept_confidence),
            "required_evidence": self.required_evidence,
        }


def score_bundle(
    claims: Sequence[ClaimSignals],
    relations: Any,
    policy: ScoringPolicy,
    *,
    h_raw: float = H_RAW_BASELINE,
    reinforcement: float = 0.0,
    contradiction_confidence: float = CONTRADICTION_CONFIDENCE,
    gate_on_adjusted: bool = False,
    required: int | None = None,
) -> BundleScore:
    """Score a bundle: c_j, floor, c'_j, Sufficiency(B_k), min_k, BC, Cohesion, H, mode.

    `relations` is the item-by-item relation matrix A over all items in claim order (None
    means no known relations). Items below the floor are dropped before anything else, so
    noise neither counts towards a claim nor reinforces its neighbours. `reinforcement` is
    the delta of docs/math.md §4 (0 = off; 0.1-0.2 is the usual range). Contradictions are looked
    for among kept items with c >= `contradiction_confidence`. The mode and
    `gated_sufficiency` use the raw sufficiency unless `gate_on_adjusted`: the graph gate
    judges cohesion on its own, and a single-item bundle has cohesion 0, which would halve
    every one-citation answer. `required`: the question's RequiredEvidence
    (`required_evidence`); None counts against the policy's, whose 0 ("by the question")
    with no question in hand is a simple lookup's.
    """
    if required is None:
        required = policy.required_evidence or REQUIRED_SIMPLE
    required_count = required
    weights = (policy.w1, policy.w2, policy.w3, policy.w4)
    floor = _unit_scalar("floor", policy.floor)
    item_claim_list: list[int] = []
    confidences: list[FloatArray] = []
    relevances: list[FloatArray] = []
    for k, claim in enumerate(claims):
        c = item_confidence(
            claim.similarity, claim.coverage, claim.recency, claim.authority, weights
        )
        r = _unit_vector(f"relevance of claim {k}", claim.relevance)
        if r.size != c.size:
            raise ValueError(
                f"claim {k}: relevance has {r.size} values but there are {c.size} items"
            )
        confidences.append(c)
        relevances.append(r)
        item_claim_list.extend([k] * c.size)

    n_items = len(item_claim_list)
    confidence = np.concatenate(confidences) if confidences else np.zeros(0)
    relevance = np.concatenate(relevances) if relevances else np.zeros(0)
    item_claim = np.asarray(item_claim_list, dtype=np.int64)
    if relations is None:
        a = np.zeros((n_items, n_items))
    else:
        dense = relations.toarray() if sparse.issparse(relations) else relations
        a = _square_matrix("relations", dense)
        if a.shape[0] != n_items:
            raise ValueError(
                f"relations is {a.shape[0]}x{a.shape[0]} but the claims cite {n_items} items"
            )

    kept = confidence >= floor
    kept_index = np.flatnonzero(kept)
    a_kept = a[np.ix_(kept_index, kept_index)]
    if reinforcement:
        confidence = confidence.copy()
        confidence[kept_index] = cohesion_weighted_confidence(
            confidence[kept_index], a_kept, reinforcement
        )

    claim_sufficiency = tuple(
        sufficiency(confidence[kept & (item_claim == k)], relevance[kept & (item_claim == k)])
        for k in range(len(claims))
    )
    overall = sufficiency_of_claims(claim_sufficiency)
    kept_confidence = confidence[kept_index]
    completeness = bundle_completeness(int(kept_index.size), required_count, kept_confidence)
    cohesion_value = cohesion(a_kept)
    adjusted = cohesion_adjusted(overall, cohesion_value)
    pairs = contradiction_pairs(a_kept, kept_confidence, contradiction_confidence)
    gated = adjusted if gate_on_adjusted else overall
    return BundleScore(
        confidence=tuple(confidence.tolist()),
        kept=tuple(kept.tolist()),
        item_claim=tuple(item_claim.tolist()),
        claim_sufficiency=claim_sufficiency,
        sufficiency=overall,
        completeness=completeness,
        cohesion=cohesion_value,
        adjusted_sufficiency=adjusted,
        hallucination=hallucination_bundled(h_raw, completeness),
        contradictions=tuple((int(kept_index[i]), int(kept_index[j])) for i, j in pairs),
        mode=answer_mode(gated, policy.tau, policy.delta),
        gated_sufficiency=gated,
        kept_confidence=tuple(kept_confidence.tolist()),
        required_evidence=required_count,
    )
