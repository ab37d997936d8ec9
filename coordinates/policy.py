"""Zone policy values: the fields, the system default, validation and inheritance.

A zone's effective policy is its own overrides merged over its ancestors' (zone over planet
over universe over galaxy over the system default). Most fields are numbers; two are lists
of names (which document kinds and statuses may carry an answer to release without a person).
Pure: no Django. Problems are `said` (maria.wording): English for the API's callers that
read them so, in the reader's language on a page.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from maria.wording import Said, gettext_noop, said

WEIGHT_FIELDS = ("w1", "w2", "w3", "w4")
JUDGE_MOVES = ("verify", "refute")
WEIGHT_TOLERANCE = 1e-6

# The values of evidence.models.DocumentKind and DocumentStatus, written out because this
# module stays pure (no Django, no evidence import); tests/coordinates/test_release_policy.py
# holds the two to each other.
DOCUMENT_KINDS: tuple[str, ...] = ("policy", "contract", "report", "minutes", "memo", "email")
DOCUMENT_STATUSES: tuple[str, ...] = ("approved", "draft", "archived")
# The graph gate's tau_c by the risk of a zone's decisions (seed 002 §9.2), written out here
# because this module stays pure; graph/core/gate.py::COHESION_TAU_BY_RISK is the same table
# (tests/coordinates/test_graph_risk.py holds the two to each other).
GRAPH_RISK_TAU: dict[str, float] = {"low": 0.05, "medium": 0.15, "high": 0.30, "critical": 0.50}


@dataclass(frozen=True, slots=True)
class PolicyValues:
    """Every threshold that judges an answer in a zone (docs/math.md §7, §11)."""

    tau: float = 0.70  # sufficiency needed to answer in full
    delta: float = 0.10  # width of the hedged and partial bands below tau
    floor: float = 0.30  # items below this confidence are noise (docs/math.md §1)
    refusal_floor: float = 0.40  # below this sufficiency an answer is blocked
    # Evidence items an answer needs for full completeness (seed 000 §4.3); 0, the default:
    # as many as its question asks for (evidence.questions.required_evidence_of, 2 for a
    # simple lookup up to 10), a number: that many for every question in the zone.
    required_evidence: int = 0
    w1: float = 0.40  # confidence weight of embedding similarity
    w2: float = 0.30  # ... of key-term coverage
    w3: float = 0.15  # ... of document recency
    w4: float = 0.15  # ... of document authority
    # The risk of the zone's decisions, which sets the graph gate's tau_c (seed 002 §9.2).
    graph_risk: str = "medium"
    # A tau_c the zone sets outright, over its risk level's; None: the level's (graph_tau).
    cohesion_tau: float | None = None
    gamma: float = 0.70  # graph diffusion decay
    hops: int = 3  # graph diffusion depth
    # PPR's restart: each step follows an edge with probability rho (seed 002 §6.1, §11.4).
    ppr_rho: float = 0.85
    risk_threshold: float = 0.50  # share of causal paths through a node that needs review above
    review_sla_hours: float = 24.0  # time a reviewer has before escalation
    approvals_required: int = 1  # distinct reviewers needed to approve
    # Share of flagged answers sampled for the zone's periodic review (decisions.periodic).
    periodic_review_rate: float = 1.0
    # How far back answers are reviewed again when the text they cited changes (decisions.rereview).
    rereview_days: int = 90
    # Which kinds and statuses of document may carry an answer to release without a person
    # (DESIGN section 5, "currency and authority"); evidence.currency.may_release reads them.
    release_kinds: tuple[str, ...] = ("policy", "contract", "report")
    release_statuses: tuple[str, ...] = ("approved",)
    # What a plug-in judge (the LLM judge, the local NLI model: evidence.validation) may do to
    # a claim the rules could not verify, on its own word: "verify" it, "refute" it. None by
    # default: the zone decides whether a judge it has measured may release or refuse.
    judge_moves: tuple[str, ...] = ()
    # The judge's confidence a move needs.
    judge_confidence: float = 0.90
    # Source diversity (seed 000 §2.3): the distinct documents a high-stakes zone's answers
    # must rest on; an answer on fewer is at least flagged. 1, the default: no requirement.
    min_sources: int = 1

    def __post_init__(self) -> None:
        # Stored policies come back from JSON with lists: hold them as tuples, so that the
        # values stay hashable and equal whichever way they were built.
        for name in LIST_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))

    @property
    def graph_tau(self) -> float:
        """The graph gate's tau_c in force: the zone's own, else its risk level's."""
        if self.cohesion_tau is not None:
            return float(self.cohesion_tau)
        return GRAPH_RISK_TAU[self.graph_risk]

    def as_dict(self) -> dict[str, Any]:
        """The values in their JSON shape (the list fields as lists), with the tau_c in force
        as `cohesion_tau`: what a stored report was judged under and a reader compares to."""
        values = self._own()
        values["cohesion_tau"] = self.graph_tau
        return values

    def _own(self) -> dict[str, Any]:
        """The fields as set (cohesion_tau None when the risk level decides)."""
        values = asdict(self)
        for name in LIST_FIELDS:
            values[name] = list(values[name])
        return values


# The list fields and the names each may hold; every other field is a number.
LIST_FIELDS: dict[str, tuple[str, ...]] = {
    "release_kinds": DOCUMENT_KINDS,
    "release_statuses": DOCUMENT_STATUSES,
    "judge_moves": JUDGE_MOVES,
}
# The fields that hold one name of a few, and the names each may hold.
CHOICE_FIELDS: dict[str, tuple[str, ...]] = {"graph_risk": tuple(GRAPH_RISK_TAU)}
# The list fields an empty list is a value of ("no move"), not a mistake.
MAY_BE_EMPTY = frozenset({"judge_moves"})
SYSTEM_DEFAULT = PolicyValues()
FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(PolicyValues))
NUMBER_FIELDS: tuple[str, ...] = tuple(
    name for name in FIELD_NAMES if name not in LIST_FIELDS and name not in CHOICE_FIELDS
)
_INT_FIELDS = frozenset(
    {"required_evidence", "hops", "approvals_required", "rereview_days", "min_sources"}
)
_UNIT_FIELDS = frozenset(
    {
        "tau", "delta", "floor", "refusal_floor", "cohesion_tau", "risk_threshold",
        "periodic_review_rate", "judge_confidence", *WEIGHT_FIELDS,
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class PolicyProblem:
    field: str
    message: str


def _number_problem(name: str, value: Any) -> Said | None:
    if name in _INT_FIELDS:
        if isinstance(value, bool) or not isinstance(value, int):
            return said(gettext_noop("must be a whole number"))
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return said(gettext_noop("must be a number"))
    if not math.isfinite(value):
        return said(gettext_noop("must be a finite number"))
    return None


def _list_problems(name: str, value: Any) -> list[Said]:
    """A list field: a non-empty list of known names, each once."""
    known = LIST_FIELDS[name]
    # A bare string is a sequence too, of letters: refused rather than read letter by letter.
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        return [
            said(
                gettext_noop("%(name)s must be a list of names from %(known)s"),
                {"name": name, "known": ", ".join(known)},
            )
        ]
    if not value and name not in MAY_BE_EMPTY:
        return [
            said(
                gettext_noop("%(name)s must name at least one of %(known)s"),
                {"name": name, "known": ", ".join(known)},
            )
        ]
    problems = [
        said(
            gettext_noop("%(name)s: unknown name %(value)s (known: %(known)s)"),
            {"name": name, "value": repr(v), "known": ", ".join(known)},
        )
        for v in dict.fromkeys(value)
        if v not in known
    ]
    twice = [v for v, n in Counter(value).items() if n > 1]
    if twice:
        problems.append(
            said(
                gettext_noop("%(name)s names %(twice)s more than once"),
                {"name": name, "twice": ", ".join(map(repr, twice))},
            )
        )
    return problems


def check_overrides(overrides: Mapping[str, Any]) -> list[PolicyProblem]:
    """Problems with one zone's own overrides taken alone (unknown fields, types, ranges)."""
    problems: list[PolicyProblem] = []
    for name, value in overrides.items():
        if name not in FIELD_NAMES:
            problems.append(
                PolicyProblem(
                    name, said(gettext_noop("unknown policy field %(name)s"), {"name": repr(name)})
                )
            )
            continue
        if value is None:
            continue
        if name in LIST_FIELDS:
            problems.extend(PolicyProblem(name, m) for m in _list_problems(name, value))
            continue
        if name in CHOICE_FIELDS:
            if value not in CHOICE_FIELDS[name]:
                problems.append(
                    PolicyProblem(
                        name,
                        said(
                            gettext_noop("%(name)s must be one of %(known)s"),
                            {"name": name, "known": ", ".join(CHOICE_FIELDS[name])},
                        ),
                    )
                )
            continue
        if (message := _number_problem(name, value)) is not None:
            problems.append(PolicyProblem(name, message))
            continue
        if name in _UNIT_FIELDS and not 0.0 <= value <= 1.0:
            problems.append(
                PolicyProblem(
                    name,
                    said(
                        gettext_noop("%(name)s must lie in [0, 1], got %(value)s"),
                        {"name": name, "value": value},
                    ),
                )
            )
        elif name == "gamma" and not 0.0 < value <= 1.0:
            problems.append(
                PolicyProblem(
                    name,
                    said(gettext_noop("gamma must lie in (0, 1], got %(value)s"), {"value": value}),
                )
            )
        elif name == "ppr_rho" and not 0.0 < value < 1.0:
            # rho = 1 never restarts (I - Ahat is singular), rho = 0 never leaves the seeds.
            problems.append(
                PolicyProblem(
                    name,
                    said(
                        gettext_noop("ppr_rho must lie strictly between 0 and 1, got %(value)s"),
                        {"value": value},
                    ),
                )
            )
        elif name == "hops" and not 0 <= value <= 10:
            problems.append(
                PolicyProblem(
                    name,
                    said(gettext_noop("hops must be 0 to 10, got %(value)s"), {"value": value}),
                )
            )
        elif name == "required_evidence" and not 0 <= value <= 100:
            problems.append(
                PolicyProblem(
                    name,
                    said(
                        gettext_noop(
                            "required_evidence must be 0 (by the question) to 100, got %(value)s"
                        ),
                        {"value": value},
                    ),
                )
            )
        elif name == "approvals_required" and not 1 <= value <= 5:
            problems.append(
                PolicyProblem(
                    name,
                    said(
                        gettext_noop("approvals_required must be 1 to 5, got %(value)s"),
                        {"value": value},
                    ),
                )
            )
        elif name == "min_sources" and not 1 <= value <= 10:
            problems.append(
                PolicyProblem(
                    name,
                    said(
                        gettext_noop("min_sources must be 1 to 10, got %(value)s"),
                        {"value": value},
                    ),
                )
            )
        elif name == "rereview_days" and not 1 <= value <= 3650:
            problems.append(
                PolicyProblem(
                    name,
                    said(
                        gettext_noop("rereview_days must be 1 to 3650, got %(value)s"),
                        {"value": value},
                    ),
                )
            )
        elif name == "review_sla_hours" and not 0 < value <= 24 * 365:
            problems.append(
                PolicyProblem(
                    name,
                    said(
                        gettext_noop("review_sla_hours must be in (0, 8760], got %(value)s"),
                        {"value": value},
                    ),
                )
            )
    return problems


def check_effective(values: PolicyValues) -> list[PolicyProblem]:
    """Problems that only show once overrides are merged: relations between fields."""
    problems: list[PolicyProblem] = []
    if values.refusal_floor > values.tau:
        problems.append(
            PolicyProblem(
                "refusal_floor",
                said(
                    gettext_noop("refusal_floor (%(refusal_floor)s) must not exceed tau (%(tau)s)"),
                    {"refusal_floor": values.refusal_floor, "tau": values.tau},
                ),
            )
        )
    total = values.w1 + values.w2 + values.w3 + values.w4
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        problems.append(
            PolicyProblem(
                "weights",
                said(
                    gettext_noop("w1 + w2 + w3 + w4 must equal 1 within 1e-6, got %(total)s"),
                    {"total": f"{total:.6g}"},
                ),
            )
        )
    if values.floor > 1 / 3:
        # The auto gate needs every item at 3*floor or above; past 1/3 that is unreachable.
        problems.append(
            PolicyProblem(
                "floor",
                said(
                    gettext_noop("floor above 1/3 makes the auto gate unreachable (%(floor)s)"),
                    {"floor": values.floor},
                ),
            )
        )
    if values.tau - 2 * values.delta < 0:
        problems.append(
            PolicyProblem(
                "delta",
                said(
                    gettext_noop("tau - 2*delta must not fall below 0 (tau %(tau)s)"),
                    {"tau": values.tau},
                ),
            )
        )
    return problems


def merge(chain: Sequence[Mapping[str, Any]], base: PolicyValues = SYSTEM_DEFAULT) -> PolicyValues:
    """Apply overrides outermost first; a missing or null field inherits from above, and a
    list replaces the one above whole (a zone that lists kinds lists all it allows)."""
    values = base._own()
    for overrides in chain:
        for name, value in overrides.items():
            if value is not None and name in values:
                values[name] = value
    return PolicyValues(**values)


def sources(chain: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, str]:
    """Where each effective value comes from: the coordinate that set it, or 'default'."""
    origin = dict.fromkeys(FIELD_NAMES, "default")
    for coordinate, overrides in chain:
        for name, value in overrides.items():
            if value is not None and name in origin:
                origin[name] = coordinate
    return origin


def normalise_overrides(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Drop nulls, store numbers in their field's type and lists sorted, so equal policies
    hash equal."""
    clean: dict[str, Any] = {}
    for name in FIELD_NAMES:
        value = overrides.get(name)
        if value is None:
            continue
        if name in LIST_FIELDS:
            clean[name] = sorted(value)
        elif name in CHOICE_FIELDS:
            clean[name] = str(value)
        else:
            clean[name] = int(value) if name in _INT_FIELDS else float(value)
    return clean
