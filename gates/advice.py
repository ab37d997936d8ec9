"""Threshold advice for a zone admin (the paper's section 5.3): how the share of answers sent
to people and the share of released answers reviewers would have rejected move with tau, the
tau that meets the admin's target, and the refusal economics at each tau.

Pure: no Django. Every gate comes from `gates.grading.replay_gate` on the stored numbers, the
same replay as the what-if preview; only tau changes, the other thresholds stay the zone's.

What the labels can say: a decision has a reviewer's verdict only when a person looked at
it, mostly because it was sent to the queue (its sufficiency under the tau of that day).
So the curve knows well what lowering tau would release, and little about raising it: above
the tau the reviewed decisions were graded with, few of them come out released, and every
point says on how many labelled decisions its share stands.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from evidence.scoring import refusal_break_even, refusal_economics
from gates.grading import GATES, Gate, GradedNumbers, replay_gate

# Below this many reviewed decisions the curve is shown with a plain warning: a share of 2%
# needs some fifty labels before a single wrong answer moves it by less than the target.
MIN_REVIEWED = 30
DEFAULT_TARGET = 0.02
# The grid the admin reads: tau 0.50 to 0.99 in steps of 0.01, plus the zone's current tau.
GRID: tuple[float, ...] = tuple(round(0.50 + 0.01 * i, 2) for i in range(50))
RELEASED: frozenset[Gate] = frozenset({"auto", "flagged"})  # answered with no person


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The thresholds a decision's zone grades with now (GateThresholds, and delta, which
    bounds how low tau may go: tau - 2*delta >= 0)."""

    tau: float
    floor: float
    refusal_floor: float
    delta: float = 0.0

    def admits(self, tau: float) -> bool:
        """The zone's policy stays valid with this tau (coordinates.policy.check_effective)."""
        return self.refusal_floor <= tau <= 1.0 and tau - 2 * self.delta >= 0.0


@dataclass(frozen=True, slots=True)
class Case:
    """One recent decision of the zone or beneath it, as the advice replays it.

    `wrong` is the reviewers' outcome: True when a person rejected it or marked a claim
    unsupported (reviewers would have rejected it), False when a person approved it with
    every claim supported, None when no person reviewed it. `follows_tau` is False for a
    decision of a zone beneath that sets its own tau: the admin's tau does not reach it, so
    it is replayed under its own.
    """

    score: GradedNumbers
    thresholds: Thresholds
    wrong: bool | None = None
    follows_tau: bool = True

    @property
    def reviewed(self) -> bool:
        return self.wrong is not None


@dataclass(frozen=True, slots=True)
class Costs:
    """What the admin says an outcome costs, and the zone's observed P_requery. `correct` is
    what a correct answer costs (the paper's C_correct, "near zero"; negative: its worth)."""

    hallucination: float
    requery: float
    abandon: float
    p_requery: float
    correct: float = 0.0

    @property
    def refuse_cost(self) -> float:
        """E[refuse] = P_rq*C_rq + (1-P_rq)*C_abandon: the same at every tau."""
        return refusal_economics(
            0.0, self.hallucination, self.p_requery, self.requery, self.abandon
        ).refuse_cost

    @property
    def break_even(self) -> float | None:
        """The P_hallucination above which refusing is the cheaper choice (section 8.4):
        (E[refuse] - C_correct) / (C_h - C_correct), 0.075% for the paper's enterprise
        figures with C_correct 0 (docs/math.md §8 on its "about 0.2%"); None when a
        hallucination costs no more than a correct answer."""
        return refusal_break_even(
            self.hallucination, self.p_requery, self.requery, self.abandon, self.correct
        )


@dataclass(frozen=True, slots=True)
class Economics:
    """E[respond] = P_h*C_h + (1-P_h)*C_correct and E[refuse] = P_rq*C_rq + (1-P_rq)*C_abandon
    at one tau."""

    p_hallucination: float
    respond_cost: float
    refuse_cost: float
    refuse: bool  # refusing is cheaper than answering at this tau's hallucination rate


@dataclass(frozen=True, slots=True)
class Point:
    """The replayed decisions at one tau, by gate, and the labelled ones among the released."""

    tau: float
    decisions: int
    gates: dict[Gate, int]
    reviewed_released: int  # reviewed decisions this tau would release (auto or flagged)
    reviewed_wrong: int  # of those, the ones reviewers would have rejected
    economics: Economics | None = None

    @property
    def sent_to_people(self) -> int:
        return self.gates["required"]

    @property
    def human_share(self) -> float | None:
        """required / decisions: the share the gate sends to the reviewer queue."""
        return self.sent_to_people / self.decisions if self.decisions else None

    @property
    def wrong_auto_share(self) -> float | None:
        """reviewed_wrong / reviewed_released; None when no labelled decision is released."""
        return self.reviewed_wrong / self.reviewed_released if self.reviewed_released else None

    def meets(self, target: float) -> bool:
        """Known to keep the wrong share of released answers at or below `target`."""
        share = self.wrong_auto_share
        return share is not None and share <= target


@dataclass(frozen=True, slots=True)
class Advice:
    """The curve over the grid, the zone's current tau on it, and the tau advised."""

    points: tuple[Point, ...]
    current: Point
    target: float
    advised: Point | None  # the smallest human share that meets the target; None: none does
    decisions: int
    reviewed: int
    reviewed_wrong: int
    pinned: int  # decisions of zones beneath that set their own tau: the curve moves none
    skipped: tuple[float, ...]  # grid taus the zone's policy does not admit
    costs: Costs | None

    @property
    def enough_reviews(self) -> bool:
        return self.reviewed >= MIN_REVIEWED


def _unit(name: str, value: float) -> float:
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be a finite number in [0, 1], got {value!r}")
    return number


def gates_over(case: Case, taus: Sequence[float]) -> list[Gate]:
    """replay_gate(case.score, thresholds with tau=t) for each t of the ascending `taus`.

    A gate only gets stricter as tau rises (grading.final_gate compares sufficiency with tau
    and nothing else with it), so where the two ends of a stretch agree every tau between
    them gives the same gate: replayed by halves, a decision costs a few replays instead of
    one per tau (tests/gates/test_advice.py holds this to the replay at every tau).
    """
    if not case.follows_tau:
        return [replay_gate(case.score, case.thresholds)] * len(taus)
    out: list[Gate | None] = [None] * len(taus)

    def at(i: int) -> Gate:
        found = out[i]
        if found is None:
            found = out[i] = replay_gate(case.score, replace(case.thresholds, tau=taus[i]))
        return found

    def fill(lo: int, hi: int) -> None:
        if hi - lo <= 1:
            at(lo)
            at(hi)
            return
        if at(lo) == at(hi):
            for i in range(lo + 1, hi):
                out[i] = out[lo]
            return
        mid = (lo + hi) // 2
        fill(lo, mid)
        fill(mid, hi)

    if taus:
        fill(0, len(taus) - 1)
    return [gate for gate in out if gate is not None]


def economics(p_hallucination: float, costs: Costs) -> Economics:
    """The section 8.4 comparison at one tau, by evidence.scoring.refusal_economics."""
    found = refusal_economics(
        p_hallucination,
        costs.hallucination,
        costs.p_requery,
        costs.requery,
        costs.abandon,
        costs.correct,
    )
    return Economics(
        p_hallucination=p_hallucination,
        respond_cost=found.respond_cost,
        refuse_cost=found.refuse_cost,
        refuse=found.refuse,
    )


def curve(cases: Sequence[Case], taus: Sequence[float], costs: Costs | None = None) -> list[Point]:
    """One Point per tau of `taus` (ascending, each admitted by every following case)."""
    ordered = sorted(taus)
    counts = [dict.fromkeys(GATES, 0) for _ in ordered]
    released = [0] * len(ordered)
    wrong = [0] * len(ordered)
    for case in cases:
        for i, gate in enumerate(gates_over(case, ordered)):
            counts[i][gate] += 1
            if case.reviewed and gate in RELEASED:
                released[i] += 1
                wrong[i] += bool(case.wrong)
    points = []
    for i, tau in enumerate(ordered):
        point = Point(
            tau=tau,
            decisions=len(cases),
            gates=counts[i],
            reviewed_released=released[i],
            reviewed_wrong=wrong[i],
        )
        share = point.wrong_auto_share
        if costs is not None and share is not None:
            point = replace(point, economics=economics(share, costs))
        points.append(point)
    return points


def advised(points: Sequence[Point], target: float) -> Point | None:
    """Of the points that meet the target, the one with the smallest human share (the
    smallest tau among equals); None when no point meets it."""
    meeting = [p for p in points if p.meets(target)]
    return min(meeting, key=lambda p: (p.human_share or 0.0, p.tau), default=None)


def advise(
    cases: Sequence[Case],
    *,
    current_tau: float,
    target: float = DEFAULT_TARGET,
    costs: Costs | None = None,
    grid: Sequence[float] = GRID,
) -> Advice:
    """The curve over `grid` and the current tau, and the advised tau for `target` (the
    largest share of released answers reviewers would have rejected the admin accepts)."""
    current_tau = _unit("current_tau", current_tau)
    target = _unit("target", target)
    if costs is not None:
        _unit("p_requery", costs.p_requery)
    following = [c.thresholds for c in cases if c.follows_tau]
    wanted = sorted({round(float(t), 4) for t in grid} | {current_tau})
    # A tau the policy of some zone beneath would refuse (below its refusal floor, or
    # tau - 2*delta < 0) is no advice; the current tau is valid, so it always stays.
    taus = [t for t in wanted if t == current_tau or all(th.admits(t) for th in following)]
    skipped = tuple(t for t in wanted if t not in taus)
    points = tuple(curve(cases, taus, costs))
    reviewed = [c for c in cases if c.reviewed]
    return Advice(
        points=points,
        current=next(p for p in points if p.tau == current_tau),
        target=target,
        advised=advised(points, target),
        decisions=len(cases),
        reviewed=len(reviewed),
        reviewed_wrong=sum(bool(c.wrong) for c in reviewed),
        pinned=sum(not c.follows_tau for c in cases),
        skipped=skipped,
        costs=costs,
    )
