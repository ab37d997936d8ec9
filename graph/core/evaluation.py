"""The graph paper's evaluation metrics and the grid search that tunes gamma on them.

Seed 002 §11.3: causal path accuracy (CPA) and responsibility chain F1 (RC-F1); §4.3: gamma
chosen by grid search over [0.1, 0.9] in steps of 0.1 to maximise causal path accuracy on a
held-out set of causal queries with known paths. docs/math.md §13 and §20.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

Actor = TypeVar("Actor", bound=Hashable)

# Seed 002 §4.3: "a grid search over [0.1, 0.9] with step 0.1".
GAMMA_GRID: tuple[float, ...] = tuple(round(0.1 * step, 1) for step in range(1, 10))


def causal_path_accuracy(
    annotated: Iterable[tuple[int, int]], extracted: Iterable[tuple[int, int]]
) -> float:
    """CPA = |annotated path edges present in the extracted subgraph| / |annotated path edges|.

    An edge is a directed (source, target) pair; an annotated edge listed twice counts once.
    A query with no annotated edge has no accuracy to measure: refused, not scored 0 or 1.
    """
    truth = set(annotated)
    if not truth:
        raise ValueError("a causal query needs at least one annotated path edge")
    return len(truth & set(extracted)) / len(truth)


def position_weight(position: int) -> float:
    """w(i) = 1/i for the i-th actor (1-based): the nearer an actor to the decision, the
    more it weighs. The paper says only "nearer actors weigh more"; 1/i is our choice."""
    if position < 1:
        raise ValueError("positions start at 1")
    return 1.0 / position


@dataclass(frozen=True)
class ChainScore:
    precision: float
    recall: float
    f1: float


def responsibility_chain_f1(
    chain: Sequence[Actor],
    predicted: Sequence[Actor],
    weight: Callable[[int], float] = position_weight,
) -> ChainScore:
    """RC-F1: F1 of the predicted actors against the chain's, weighted by position.

    Recall weighs each actor of the true chain by its place in the chain (nearest first);
    precision weighs each predicted actor by its place in the prediction (most confident
    first), so a wrong actor named first costs more than one named last. With a constant
    weight both are the plain set precision and recall. Repeats count at their first place.
    """
    truth = list(dict.fromkeys(chain))
    if not truth:
        raise ValueError("a responsibility chain needs at least one actor")
    guesses = list(dict.fromkeys(predicted))
    known, named = set(truth), set(guesses)
    recall = sum(weight(i) for i, a in enumerate(truth, 1) if a in named) / sum(
        weight(i) for i in range(1, len(truth) + 1)
    )
    if not guesses:
        return ChainScore(0.0, recall, 0.0)
    precision = sum(weight(i) for i, a in enumerate(guesses, 1) if a in known) / sum(
        weight(i) for i in range(1, len(guesses) + 1)
    )
    total = precision + recall
    return ChainScore(precision, recall, 2 * precision * recall / total if total else 0.0)


@dataclass(frozen=True)
class GridSearch:
    """The chosen value and the score of every value tried, in grid order."""

    best: float
    scores: tuple[tuple[float, float], ...]


def grid_search(score: Callable[[float], float], grid: Sequence[float] = GAMMA_GRID) -> GridSearch:
    """argmax over the grid of `score` (mean CPA on the validation set, seed 002 §4.3).

    Ties go to the smallest value: a lower gamma reaches less far and so carries less noise
    (§4.3, §10.3) for the same accuracy.
    """
    if not grid:
        raise ValueError("the grid is empty")
    scores = tuple((float(value), float(score(value))) for value in grid)
    best = min(scores, key=lambda pair: (-pair[1], pair[0]))[0]
    return GridSearch(best, scores)
