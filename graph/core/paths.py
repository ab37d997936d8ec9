"""Constrained causal paths: best-weight path under an edge-type pattern, time order and length.

docs/math.md §17: argmax_p prod w_e = argmin_p sum -log w_e, solved by label-setting Dijkstra.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import count
from typing import Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from graph.core.matrix import EdgeArrays
from graph.core.types import CAUSAL_EDGES, EDGE_TYPES, EdgeType, edge_code

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
TimeOrder: TypeAlias = Literal["non_decreasing", "non_increasing", "any"]

_TOKEN = re.compile(r"\s*(->|[A-Za-z_]+|[()|*+?.,])")
_N_TYPES = len(EDGE_TYPES)


# ----- edge-type patterns ------------------------------------------------------------


@dataclass(frozen=True)
class EdgePattern:
    """A DFA over edge types: transition[q, type] is the next state or -1 (dead)."""

    transition: NDArray[np.int64]
    accepting: NDArray[np.bool_]
    source: str = ""

    @classmethod
    def compile(cls, pattern: str) -> EdgePattern:
        """Regex over edge type names: `caused_by* approved_by`, `(caused_by|depends_on)+`.

        Names follow each other (optionally joined by `->` or `,`); `|`, `*`, `+`, `?` and
        parentheses as usual; `.` is any edge type.
        """
        return _compile(pattern)

    @classmethod
    def any_sequence(cls) -> EdgePattern:
        """Every sequence of edge types, the empty one included."""
        return cls(np.zeros((1, _N_TYPES), dtype=np.int64), np.array([True]), ".*")

    @classmethod
    def repeat_of(cls, edge_types: Iterable[EdgeType | str]) -> EdgePattern:
        """Any sequence drawn from the given edge types: (t1|t2|...)*."""
        table = np.full((1, _N_TYPES), -1, dtype=np.int64)
        for edge_type in edge_types:
            table[0, edge_code(edge_type)] = 0
        return cls(table, np.array([True]), "repeat")

    @property
    def n_states(self) -> int:
        return int(self.transition.shape[0])

    def matches(self, edge_types: Iterable[EdgeType | str | int]) -> bool:
        """Whether the whole sequence of edge types is accepted."""
        state = 0
        for edge_type in edge_types:
            state = int(self.transition[state, edge_code(edge_type)])
            if state < 0:
                return False
        return bool(self.accepting[state])


class _Nfa:
    """Thompson construction: epsilon moves plus moves on sets of edge-type codes."""

    def __init__(self) -> None:
        self.epsilon: list[list[int]] = []
        self.moves: list[list[tuple[frozenset[int], int]]] = []

    def state(self) -> int:
        self.epsilon.append([])
        self.moves.append([])
        return len(self.epsilon) - 1


class _Parser:
    def __init__(self, pattern: str, nfa: _Nfa) -> None:
        symbols: list[str] = []
        position = 0
        stripped = pattern.rstrip()
        while position < len(stripped):
            match = _TOKEN.match(stripped, position)
            if match is None:
                raise ValueError(f"bad edge pattern {pattern!r} at {position}")
            if match.group(1) not in {"->", ","}:
                symbols.append(match.group(1))
            position = match.end()
        self.symbols = symbols
        self.at = 0
        self.nfa = nfa
        self.pattern = pattern

    def peek(self) -> str | None:
        return self.symbols[self.at] if self.at < len(self.symbols) else None

    def take(self) -> str:
        symbol = self.symbols[self.at]
        self.at += 1
        return symbol

    def parse(self) -> tuple[int, int]:
        fragment = self.alternation()
        if self.peek() is not None:
            raise ValueError(f"bad edge pattern {self.pattern!r}: unexpected {self.peek()!r}")
        return fragment

    def alternation(self) -> tuple[int, int]:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.take()
            branches.append(self.sequence())
        if len(branches) == 1:
            return branches[0]
        start, end = self.nfa.state(), self.nfa.state()
        for first, last in branches:
            self.nfa.epsilon[start].append(first)
            self.nfa.epsilon[last].append(end)
        return start, end

    def sequence(self) -> tuple[int, int]:
        start = end = self.nfa.state()
        while self.peek() not in {None, "|", ")"}:
            first, last = self.repetition()
            self.nfa.epsilon[end].append(first)
            end = last
        return start, end

    def repetition(self) -> tuple[int, int]:
        first, last = self.atom()
        while self.peek() in {"*", "+", "?"}:
            operator = self.take()
            start, end = self.nfa.state(), self.nfa.state()
            self.nfa.epsilon[start].append(first)
            self.nfa.epsilon[last].append(end)
            if operator in {"*", "?"}:
                self.nfa.epsilon[start].append(end)
            if operator in {"*", "+"}:
                self.nfa.epsilon[last].append(first)
            first, last = start, end
        return first, last

    def atom(self) -> tuple[int, int]:
        symbol = self.take() if self.peek() is not None else None
        if symbol == "(":
            fragment = self.alternation()
            if self.peek() != ")":
                raise ValueError(f"bad edge pattern {self.pattern!r}: missing ')'")
            self.take()
            return fragment
        if symbol == ".":
            label = frozenset(range(_N_TYPES))
        elif symbol is not None and symbol not in {")", "|", "*", "+", "?"}:
            try:
                label = frozenset({edge_code(EdgeType(symbol))})
            except ValueError as error:
                raise ValueError(f"unknown edge type {symbol!r} in {self.pattern!r}") from error
        else:
            raise ValueError(f"bad edge pattern {self.pattern!r}: unexpected {symbol!r}")
        start, end = self.nfa.state(), self.nfa.state()
        self.nfa.moves[start].append((label, end))
        return start, end


def _closure(nfa: _Nfa, states: Iterable[int]) -> frozenset[int]:
    stack, seen = list(states), set(states)
    while stack:
        for nxt in nfa.epsilon[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return frozenset(seen)


def _compile(pattern: str) -> EdgePattern:
    nfa = _Nfa()
    start, accept = _Parser(pattern, nfa).parse()
    # Subset construction over the (small) edge-type alphabet.
    initial = _closure(nfa, [start])
    index = {initial: 0}
    order = [initial]
    rows: list[list[int]] = []
    for subset in order:
        row = []
        for code in range(_N_TYPES):
            targets = [nxt for s in subset for label, nxt in nfa.moves[s] if code in label]
            if not targets:
                row.append(-1)
                continue
            target = _closure(nfa, targets)
            if target not in index:
                index[target] = len(order)
                order.append(target)
            row.append(index[target])
        rows.append(row)
    transition = np.array(rows, dtype=np.int64).reshape(len(order), _N_TYPES)
    accepting = np.array([accept in subset for subset in order])
    # States that can no longer reach acceptance are dead: cut them so search prunes early.
    alive = accepting.copy()
    changed = True
    while changed:
        reach = np.array([bool(np.any(alive[row[row >= 0]])) for row in transition]) | accepting
        changed = bool(np.any(reach != alive))
        alive = reach
    transition = np.where((transition >= 0) & alive[np.maximum(transition, 0)], transition, -1)
    if not alive[0]:
        transition[:] = -1
    return EdgePattern(transition, accepting, pattern)


# ----- the causal graph ----------------------------------------------------------------


@dataclass(frozen=True)
class CausalGraph:
    """Typed, timed edges grouped by source node, with costs -log w, ready for many queries."""

    n_nodes: int
    indptr: IntArray
    edge_ids: IntArray
    dst: IntArray
    edge_type: NDArray[np.int8]
    cost: FloatArray
    time: FloatArray
    src_of_edge: IntArray = field(repr=False)
    dst_of_edge: IntArray = field(repr=False)
    type_of_edge: NDArray[np.int8] = field(repr=False)
    weight_of_edge: FloatArray = field(repr=False)

    @classmethod
    def from_arrays(
        cls,
        src: ArrayLike,
        dst: ArrayLike,
        edge_type: ArrayLike,
        weight: ArrayLike,
        time: ArrayLike | None = None,
        *,
        n_nodes: int | None = None,
    ) -> CausalGraph:
        """Edges i -> j with type codes (or names), weights in (0, 1] and optional times."""
        sources = np.asarray(src, dtype=np.int64)
        targets = np.asarray(dst, dtype=np.int64)
        types = np.asarray(edge_type)
        codes = (
            types.astype(np.int8)
            if np.issubdtype(types.dtype, np.integer)
            else np.fromiter((edge_code(t) for t in types.tolist()), np.int8, types.shape[0])
        )
        weights = np.asarray(weight, dtype=np.float64)
        if np.any(weights <= 0.0) or np.any(weights > 1.0):
            # -log w must be >= 0 for Dijkstra; weights are confidences in (0, 1].
            raise ValueError("causal edge weights must lie in (0, 1]")
        times = np.zeros(sources.shape[0]) if time is None else np.asarray(time, np.float64)
        size = (
            int(n_nodes)
            if n_nodes is not None
            else int(max(sources.max(initial=-1), targets.max(initial=-1)) + 1)
        )
        order = np.argsort(sources, kind="stable")
        indptr = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.bincount(sources, minlength=size), out=indptr[1:])
        return cls(
            n_nodes=size,
            indptr=indptr,
            edge_ids=order,
            dst=targets[order],
            edge_type=codes[order],
            cost=-np.log(weights[order]),
            time=times[order],
            src_of_edge=sources,
            dst_of_edge=targets,
            type_of_edge=codes,
            weight_of_edge=weights,
        )

    @classmethod
    def from_edges(cls, edges: EdgeArrays) -> CausalGraph:
        """From GraphIndex.typed_edges() (edges of weight 0 are not causal links: dropped)."""
        keep = edges.weight > 0.0
        return cls.from_arrays(
            edges.src[keep],
            edges.dst[keep],
            edges.edge_type[keep],
            np.minimum(edges.weight[keep], 1.0),
            edges.time[keep],
            n_nodes=edges.n_nodes,
        )


@dataclass(frozen=True)
class CausalPath:
    """A best path: its nodes, edge ids (into the graph's input arrays), types and weight."""

    nodes: list[int]
    edges: list[int]
    edge_types: list[EdgeType]
    weight: float

    @property
    def length(self) -> int:
        return len(self.edges)


@dataclass
class _Labels:
    """Label-setting Dijkstra over (node, pattern state) with Pareto labels (time, length)."""

    graph: CausalGraph
    pattern: EdgePattern
    max_length: float
    sign: float
    parent: list[int] = field(default_factory=list)
    edge: list[int] = field(default_factory=list)
    settled: dict[tuple[int, int], list[tuple[float, int]]] = field(default_factory=dict)

    def dominated(self, node: int, state: int, time: float, length: int) -> bool:
        # Settled labels were popped first, so they already cost no more than this one.
        return any(t <= time and n <= length for t, n in self.settled.get((node, state), ()))

    def expand(
        self, node: int, state: int, time: float, length: int
    ) -> Iterable[tuple[int, int, int, float, float]]:
        """(edge slot, next node, next state, edge cost, next time) of the allowed moves."""
        if length >= self.max_length:
            return ()
        graph = self.graph
        lo, hi = int(graph.indptr[node]), int(graph.indptr[node + 1])
        if lo == hi:
            return ()
        states = self.pattern.transition[state, graph.edge_type[lo:hi]]
        times = self.sign * graph.time[lo:hi]
        allowed = np.flatnonzero((states >= 0) & (times >= time))
        return zip(
            (allowed + lo).tolist(),
            graph.dst[lo:hi][allowed].tolist(),
            states[allowed].tolist(),
            graph.cost[lo:hi][allowed].tolist(),
            times[allowed].tolist(),
            strict=True,
        )


def _time_sign(time_order: TimeOrder) -> float:
    signs = {"non_decreasing": 1.0, "non_increasing": -1.0, "any": 0.0}
    if time_order not in signs:
        raise ValueError(f"unknown time order {time_order!r}")
    return signs[time_order]


def best_causal_path(
    graph: CausalGraph,
    source: int,
    target: int,
    pattern: EdgePattern | str | None = None,
    *,
    max_length: int | None = None,
    time_order: TimeOrder = "non_decreasing",
) -> CausalPath | None:
    """argmax_p prod_{e in p} w_e = argmin_p sum -log w_e from source to target, subject to
    the edge-type sequence matching `pattern`, edge times ordered along p and |p| <= max_length.

    Dijkstra over labels (node, pattern state) carrying the arrival time and length; a label
    is dropped only when a settled label at the same (node, state) costs no more, arrived no
    later and used no more edges, so the answer is exact. Paths are walks: a node may repeat
    only if the pattern needs it (with star patterns the optimum is always simple).
    None when no admissible path exists.
    """
    automaton = _as_pattern(pattern)
    sign = _time_sign(time_order)
    labels = _Labels(graph, automaton, math.inf if max_length is None else max_length, sign)
    tie = count()
    heap: list[tuple[float, int, int, int, float, int, int]] = [
        (0.0, next(tie), source, 0, -math.inf, 0, -1)
    ]
    while heap:
        cost, _, node, state, time, length, label = heapq.heappop(heap)
        if labels.dominated(node, state, time, length):
            continue
        labels.settled.setdefault((node, state), []).append((time, length))
        if node == target and automaton.accepting[state]:
            return _unwind(graph, labels, label, source, cost)
        for slot, nxt, nxt_state, edge_cost, edge_time in labels.expand(node, state, time, length):
            if labels.dominated(nxt, nxt_state, edge_time, length + 1):
                continue
            labels.parent.append(label)
            labels.edge.append(slot)
            heapq.heappush(
                heap,
                (
                    cost + edge_cost,
                    next(tie),
                    nxt,
                    nxt_state,
                    edge_time,
                    length + 1,
                    len(labels.edge) - 1,
                ),
            )
    return None


def _as_pattern(pattern: EdgePattern | str | None) -> EdgePattern:
    if pattern is None:
        return EdgePattern.any_sequence()
    return pattern if isinstance(pattern, EdgePattern) else EdgePattern.compile(pattern)


def _unwind(
    graph: CausalGraph, labels: _Labels, label: int, source: int, cost: float
) -> CausalPath:
    slots: list[int] = []
    while label >= 0:
        slots.append(labels.edge[label])
        label = labels.parent[label]
    slots.reverse()
    edges = [int(graph.edge_ids[slot]) for slot in slots]
    nodes = [source] + [int(graph.dst[slot]) for slot in slots]
    types = [EDGE_TYPES[int(graph.edge_type[slot])] for slot in slots]
    return CausalPath(nodes, edges, types, math.exp(-cost))


@dataclass(frozen=True)
class CausalSubgraph:
    """Union of the strong paths leaving an outcome along causal edges (outcome -> causes).

    `strength` is the best path weight from the outcome to each node of `nodes`;
    `root_causes` are the nodes no kept edge leaves.
    """

    outcome: int
    edges: IntArray
    src: IntArray
    dst: IntArray
    nodes: IntArray
    strength: FloatArray
    root_causes: IntArray


def causal_subgraph(
    graph: CausalGraph,
    outcome: int,
    *,
    edge_types: Iterable[EdgeType | str] = CAUSAL_EDGES,
    min_weight: float = 0.1,
    max_length: int | None = None,
    time_order: TimeOrder = "non_increasing",
) -> CausalSubgraph:
    """Edges e on an admissible path from the outcome with prod w >= min_weight (math.md §17).

    caused_by links an outcome to its antecedent (docs/math.md §12), so causes are reached along
    edge direction from the outcome, and going further back a chain moves back in time:
    hence the non-increasing default. An edge is kept when some non-dominated label at its
    tail extends over it within the -log(min_weight) budget, which is exact because a
    dominating label (cheaper, no more restrictive in time, shorter) extends wherever a
    dominated one would.
    """
    if not 0.0 < min_weight <= 1.0:
        raise ValueError("min_weight must lie in (0, 1]")
    budget = -math.log(min_weight)
    labels = _Labels(
        graph,
        EdgePattern.repeat_of(edge_types),
        math.inf if max_length is None else max_length,
        _time_sign(time_order),
    )
    best: dict[int, float] = {}
    kept: set[int] = set()
    tie = count()
    heap: list[tuple[float, int, int, float, int]] = [(0.0, next(tie), outcome, -math.inf, 0)]
    while heap:
        cost, _, node, time, length = heapq.heappop(heap)
        if labels.dominated(node, 0, time, length):
            continue
        labels.settled.setdefault((node, 0), []).append((time, length))
        best.setdefault(node, cost)
        for slot, nxt, _, edge_cost, edge_time in labels.expand(node, 0, time, length):
            if cost + edge_cost > budget:
                continue
            kept.add(slot)
            if not labels.dominated(nxt, 0, edge_time, length + 1):
                heapq.heappush(heap, (cost + edge_cost, next(tie), nxt, edge_time, length + 1))
    slots = np.array(sorted(kept), dtype=np.int64)
    edges = graph.edge_ids[slots]
    src = graph.src_of_edge[edges]
    dst = graph.dst[slots]
    nodes = np.array(sorted(best), dtype=np.int64)
    strength = np.exp(-np.array([best[int(v)] for v in nodes]))
    root_causes = np.setdiff1d(nodes, src)
    return CausalSubgraph(
        outcome=outcome,
        edges=edges,
        src=src,
        dst=dst,
        nodes=nodes,
        strength=strength,
        root_causes=root_causes,
    )
