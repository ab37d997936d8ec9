"""A zone's confidence weights w1..w4 learned from its reviewers' verdicts (seed 000 §4.5):
proposed with held-back figures, adopted by a zone admin as a new policy version on the
trail, rolled back the same way; another zone's admin sees nothing of it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from coordinates.models import Role, Zone
from coordinates.selectors import effective_policy
from decisions.models import ClaimVerdict, Decision
from evidence import weights_fit
from evidence.models import ValidationReport
from tests.decisions.conftest import GOOD, ZONE, cite
from trail.models import TrailEvent

OTHER = "G1.U1.P1.Z2"
TRUE = np.array([0.1, 0.7, 0.05, 0.15])  # the reviewers go by coverage, mostly
URL = f"/api/v1/zones/{ZONE}/confidence-weights/"

pytestmark = pytest.mark.django_db


@pytest.fixture
def verdicts(person: Callable[..., Any], policy_doc: Any, submit: Callable[..., Any]) -> Any:
    """Add `n` verdicts on the claims of one decision whose report's signals are random and
    whose reviewers found a claim supported with probability x.TRUE."""
    reviewer = person("rhea", Role.REVIEWER, ZONE)
    decision = Decision.objects.get(
        pk=submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()["id"]
    )

    claims: list[dict[str, Any]] = []  # every call's, in the one report the decision carries

    def add(n: int, *, seed: int = 3) -> None:
        rng = np.random.default_rng(seed)
        x = rng.uniform(0.0, 1.0, size=(n, 4))
        supported = rng.uniform(size=n) < x @ TRUE
        real = decision.report
        assert real is not None
        start = len(claims)
        claims.extend(
            {
                "kind": "factual",
                "evidence": [
                    # a fabricated citation with high signals: never the claim's example
                    {"fabricated": True, "signals": dict.fromkeys(weights_fit.SIGNALS, 1.0)},
                    {
                        "fabricated": False,
                        "signals": {
                            **dict(zip(weights_fit.SIGNALS, map(float, row), strict=True)),
                            "probability": 0.9,
                        },
                    },
                    {"fabricated": False, "signals": {"similarity": 1.0, "probability": 0.1}},
                ],
            }
            for row in x
        )
        report = ValidationReport.objects.create(
            bundle=real.bundle,
            policy_label=real.policy_label,
            policy=real.policy,
            sufficiency=real.sufficiency,
            completeness=real.completeness,
            cohesion=real.cohesion,
            mode=real.mode,
            gate=real.gate,
            body={"claims": list(claims)},
            content_hash="test",
        )
        Decision.objects.filter(pk=decision.pk).update(report=report)
        ClaimVerdict.objects.bulk_create(
            ClaimVerdict(
                decision=decision,
                reviewer=reviewer,
                action=ClaimVerdict.Action.APPROVE,
                claim=start + i,
                supported=bool(supported[i]),
                engine_supported=True,
                engine_probability=0.9,
                zone=ZONE,
            )
            for i in range(n)
        )

    return add


def _weights(coordinate: str = ZONE) -> tuple[float, ...]:
    values = effective_policy(Zone.objects.get(coordinate=coordinate).coord).values
    return (values.w1, values.w2, values.w3, values.w4)


def test_too_few_verdicts_propose_nothing_and_say_why(
    org: Any, verdicts: Any, person: Callable[..., Any], client_for: Callable[[Any], Any]
) -> None:
    verdicts(weights_fit.MIN_WEIGHT_VERDICTS - 1)
    body = client_for(person("ada", Role.ZONE_ADMIN, ZONE)).get(URL).json()
    assert body["fit"] is None
    assert body["verdicts"] == weights_fit.MIN_WEIGHT_VERDICTS - 1
    assert "too few verdicts" in body["why_not"]
    assert f"needs {weights_fit.MIN_WEIGHT_VERDICTS}" in body["why_not"]


def test_a_proposal_finds_the_reviewers_weights_and_beats_the_current_ones_held_back(
    org: Any, verdicts: Any, person: Callable[..., Any], client_for: Callable[[Any], Any]
) -> None:
    # given 800 verdicts from reviewers who judge mostly by coverage
    verdicts(800)
    # when a zone admin asks for the proposal
    response = client_for(person("ada", Role.ZONE_ADMIN, ZONE)).get(URL)
    # then it is fitted on the older 600 and measured on the latest 200
    assert response.status_code == 200
    fit = response.json()["fit"]
    assert fit["fitted_on"] == 600
    assert fit["held_back_after"]["n"] == fit["held_back_before"]["n"] == 200
    learned = np.array([fit["weights"][w] for w in ("w1", "w2", "w3", "w4")])
    assert np.abs(learned - TRUE).max() < 0.15
    assert learned.sum() == pytest.approx(1.0)
    assert tuple(fit["current"].values()) == _weights()
    # and the learned weights predict the held-back verdicts better than the current ones
    assert fit["held_back_after"]["brier"] < fit["held_back_before"]["brier"]
    # nothing changed: a proposal judges nothing
    assert not TrailEvent.objects.filter(kind="policy.changed").exists()


def test_adopt_writes_a_policy_version_on_the_trail_and_rollback_restores_the_weights(
    org: Any,
    verdicts: Any,
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
    set_policy: Callable[..., Any],
) -> None:
    set_policy(ZONE, tau=0.8)  # version 1: no weights of its own
    before = _weights()
    verdicts(400)
    admin = client_for(person("ada", Role.ZONE_ADMIN, ZONE))
    proposal = admin.get(URL).json()
    # a reason and the fingerprint are required
    for body in ({"fingerprint": proposal["fingerprint"]}, {"reason": "ok"}, ["x"]):
        assert admin.post(f"{URL}adopt/", body, format="json").status_code == 400, body
    adopted = admin.post(
        f"{URL}adopt/",
        {"reason": "reviewers weigh coverage", "fingerprint": proposal["fingerprint"]},
        format="json",
    )
    assert adopted.status_code == 200
    assert adopted.json()["version"] == 2
    learned = tuple(proposal["fit"]["weights"][w] for w in ("w1", "w2", "w3", "w4"))
    assert _weights() == learned
    assert effective_policy(Zone.objects.get(coordinate=ZONE).coord).values.tau == 0.8
    event = TrailEvent.objects.filter(kind="policy.changed").latest("pk")
    assert event.payload["version"] == 2
    assert event.payload["overrides"]["w2"] == learned[1]
    assert "reviewers weigh coverage" in event.reason
    assert "held-back Brier" in event.reason
    # a sibling zone keeps its weights
    assert _weights(OTHER) == before
    # when the verdicts moved since the preview, adopting it is refused
    verdicts(10, seed=9)
    stale = admin.post(
        f"{URL}adopt/", {"reason": "again", "fingerprint": proposal["fingerprint"]}, format="json"
    )
    assert stale.status_code == 409
    # rollback to version 1: the weights are inherited again, tau stays
    back = admin.post(f"{URL}rollback/", {"reason": "too early", "version": 1}, format="json")
    assert back.status_code == 200
    assert back.json()["version"] == 3
    assert _weights() == before
    assert effective_policy(Zone.objects.get(coordinate=ZONE).coord).values.tau == 0.8
    missing = admin.post(f"{URL}rollback/", {"reason": "x", "version": 9}, format="json")
    assert missing.status_code == 404
    assert missing.json()["error"]["field"] == "version"
    bad = admin.post(f"{URL}rollback/", {"reason": "x", "version": "one"}, format="json")
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "version"


def test_only_the_zones_admins_adopt_and_another_zones_admin_sees_nothing(
    org: Any, verdicts: Any, person: Callable[..., Any], client_for: Callable[[Any], Any]
) -> None:
    verdicts(200)
    fingerprint = client_for(person("ada", Role.ZONE_ADMIN, ZONE)).get(URL).json()["fingerprint"]
    body = {"reason": "looks right", "fingerprint": fingerprint}
    auditor = client_for(person("otto", Role.AUDITOR, ZONE))
    assert auditor.get(URL).status_code == 200
    assert auditor.post(f"{URL}adopt/", body, format="json").status_code == 403
    for outsider in (person("sam", Role.ZONE_ADMIN, OTHER), person("rita", Role.REVIEWER, ZONE)):
        client = client_for(outsider)
        for response in (
            client.get(URL),
            client.post(f"{URL}adopt/", body, format="json"),
            client.post(f"{URL}rollback/", {"reason": "x", "version": 1}, format="json"),
        ):
            assert response.status_code == 404
            assert response.json()["error"]["field"] == "coordinate"
    assert not TrailEvent.objects.filter(kind="policy.changed").exists()
