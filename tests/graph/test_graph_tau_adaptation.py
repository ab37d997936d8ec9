"""/graph/ answers that escalate and that the authority above approves are verdicts for the
asking zone's tau_c adaptation (seed 002 §9.4): held back below tau_c, found right."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from graph.core.adaptation import EMA_WEIGHT
from tests.graph.conftest import ZONE
from tests.graph.test_query import CHAIN, ask

pytestmark = pytest.mark.django_db


def test_escalated_graph_answers_approved_above_count_as_right_below_tau(
    import_lines: Callable[..., Any],
    reviewer_api: Any,
    admin_api: Any,
    set_policy: Callable[..., None],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    # given the chain (0.1875) in a critical zone (tau_c 0.50): every answer escalates
    import_lines(CHAIN)
    set_policy(graph_risk="critical")
    planet = client_for(person("pia", Role.REVIEWER, "G1.U1.P1"))
    for i in range(10):
        body = ask(reviewer_api, q=f"printer vendor {i}", k=4)
        assert body["gate"] == "escalate"
        approved = planet.post(
            f"/api/v1/decisions/{body['decision']}/approve/", {"reason": "ok"}, format="json"
        )
        assert approved.status_code == 200, approved.json()
    # one unreviewed answer is no verdict
    ask(reviewer_api, k=4)
    proposal = admin_api.get(f"/api/v1/zones/{ZONE}/graph-tau/").json()
    assert proposal["current"] == pytest.approx(0.50)
    assert proposal["verdicts"] == 10
    # ten right answers below tau_c: the agreement average is 1 - 0.9^10, short of 0.90
    assert proposal["agreement_below"] == pytest.approx(1 - (1 - EMA_WEIGHT) ** 10)
    assert proposal["error_above"] == 0.0
    assert proposal["adapted"] == pytest.approx(0.50)
