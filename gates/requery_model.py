"""The zone's requery model (seed 000 §8.1): P_requery = logistic(k((1-S) - s)) fitted on
its refusals, each labelled as the KPI `requery_rate` counts it (the same agent queried the
zone or beneath it again within `REQUERY_SECONDS`), and measured on the latest quarter
against the constant rate. The fit is the pure `evidence.weights_fit`; this reads the
trail. It informs; nothing is gated on it.

A refusal here is a blocked decision, with the sufficiency of its report. A refused `ask`
records its addressing score, not a sufficiency, so it has no S to fit on and is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db.models import DateTimeField, Exists, ExpressionWrapper, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext

from coordinates.models import Zone
from coordinates.selectors import beneath
from decisions.events import Kind
from decisions.models import Decision, Gate
from evidence import weights_fit
from gates.kpis import REQUERY_SECONDS
from trail.ledger import LANE_MARK
from trail.models import TrailEvent

LATEST = 5000  # the latest refusals a model is fitted on: the page reads them on every view


@dataclass(frozen=True, slots=True)
class RequeryModel:
    """The fit and its held-back figures, or why there is none."""

    zone: str
    refusals: int
    fit: weights_fit.RequeryFit | None = None
    why_not: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "zone": self.zone,
            "refusals": self.refusals,
            "requery_seconds": REQUERY_SECONDS,
            "why_not": self.why_not or None,
            "fit": self.fit.as_dict() if self.fit is not None else None,
        }


def requery_examples(zone: Zone) -> list[tuple[float, bool]]:
    """(S of the refused answer, asked again within REQUERY_SECONDS) per blocked decision of
    the zone and beneath it, oldest first; only refusals whose requery minutes are over."""
    coordinate = zone.coordinate
    chains = beneath(zone.coord, "chain") | Q(chain__startswith=f"{coordinate}{LANE_MARK}")
    horizon = ExpressionWrapper(
        OuterRef("created_at") + timedelta(seconds=REQUERY_SECONDS),
        output_field=DateTimeField(),
    )
    again = Exists(
        TrailEvent.objects.filter(
            chains,
            actor=OuterRef("proposed_by__username"),
            kind__in=[Kind.DECISION_PROPOSED, Kind.ASK_REFUSED],
            created_at__gt=OuterRef("created_at"),
            created_at__lte=horizon,
        ).exclude(decision_id=OuterRef("pk"))
    )
    settled = timezone.now() - timedelta(seconds=REQUERY_SECONDS)
    rows = list(
        Decision.objects.filter(
            beneath(zone.coord),
            gate=Gate.BLOCKED,
            report__isnull=False,
            created_at__lte=settled,
        )
        .annotate(again=again)
        .order_by("-created_at", "-pk")
        .values_list("report__sufficiency", "again")[:LATEST]
    )
    rows.reverse()
    return [(min(1.0, max(0.0, float(s))), bool(a)) for s, a in rows if s is not None]


def requery_model(zone: Zone, *, minimum: int = weights_fit.MIN_REFUSALS) -> RequeryModel:
    examples = requery_examples(zone)
    n = len(examples)
    if n < minimum:
        return RequeryModel(
            zone=zone.coordinate,
            refusals=n,
            why_not=gettext(
                "too few refusals: %(zone)s and the zones beneath it have %(n)s refused "
                "answers with a sufficiency; a requery model needs %(minimum)s"
            )
            % {"zone": zone.coordinate, "n": n, "minimum": minimum},
        )
    fit = weights_fit.requery_with_figures([s for s, _ in examples], [a for _, a in examples])
    return RequeryModel(zone=zone.coordinate, refusals=n, fit=fit)
