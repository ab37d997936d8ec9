"""The engine learns from its reviewers (issue 16, "Done when"), walked end to end through the
API on both backends: a zone gets 200 reviewed decisions with per-claim verdicts from two
reviewers whose judgement differs from the engine's in a known way; `manage.py calibrate`
proposes a version more reliable than the global model on the held-back verdicts; the zone
admin previews and adopts it; later decisions in the zone are graded with it; the threshold
advice finds the tau that meets a target; and every KPI equals a count made here."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from coordinates.models import Role
from decisions.models import ClaimVerdict, Decision
from evidence.models import Paragraph, ZoneCalibration
from evidence.scoring import trust
from tests.decisions.conftest import ZONE, cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

# Two claims on the same paragraph that the engine verifies alike: every word of each is in
# the paragraph. This zone's reviewers hold the loose one unsupported (it leaves out who
# approves): the known way their truth differs from the engine's.
CLOSE = "Expenses above 500,000 yen require prior approval by the division head."
LOOSE = "Expenses above 500,000 yen require prior approval."
RELEASED = 10  # answers the zone released on its own before the calibration
REVIEWED = 200
LOOSE_SHARE = 0.7  # of the reviewed decisions


def _api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def _gates(zone: str = ZONE) -> dict[str, int]:
    counts = {"auto": 0, "flagged": 0, "required": 0, "blocked": 0}
    for gate in Decision.objects.filter(zone=zone).values_list("gate", flat=True):
        counts[gate] += 1
    return counts


def _review_seconds() -> list[float]:
    """Queue entry to final verdict, from the trail, for each reviewed decision."""
    queued = {
        e.decision_id: e.created_at for e in TrailEvent.objects.filter(kind="decision.queued")
    }
    done = TrailEvent.objects.filter(
        kind__in=("decision.approved", "decision.failed"), decision_id__in=queued
    ).exclude(actor="system")
    return [(e.created_at - queued[e.decision_id]).total_seconds() for e in done]


def test_the_loop_from_reviewer_verdicts_to_a_calibrated_zone(
    policy_doc: Paragraph,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    rhea = _api(person("rhea", Role.REVIEWER, ZONE))
    ravi = _api(person("ravi", Role.REVIEWER, ZONE))
    admin_user = person("ada", Role.ZONE_ADMIN, ZONE)
    admin = _api(admin_user)

    # 1. Two hundred answers, every one sent to a person (tau 0.99), each reviewed with a
    # verdict on its claim: the close claim supported, the loose one not.
    set_policy(tau=0.99, refusal_floor=0.05)
    order = [LOOSE] * int(REVIEWED * LOOSE_SHARE) + [CLOSE] * int(REVIEWED * (1 - LOOSE_SHARE))
    random.Random(16).shuffle(order)
    for n, text in enumerate(order):
        body = submit([{"text": text, "citations": [cite(policy_doc)]}]).json()
        assert body["state"] == "approval_required", body
        reviewer = (rhea, ravi)[n % 2]
        verdict = {"index": 0, "supported": text == CLOSE, "note": "" if text == CLOSE else "loose"}
        action = "approve" if text == CLOSE else "reject"
        with django_capture_on_commit_callbacks(execute=True):
            done = reviewer.post(
                f"/api/v1/decisions/{body['id']}/{action}/",
                {"reason": "reviewed", "claims": [verdict]},
                format="json",
            )
        assert done.status_code == 200, done.content
    verdicts = ClaimVerdict.objects.filter(zone=ZONE)
    assert verdicts.count() == REVIEWED
    assert set(verdicts.values_list("reviewer__username", flat=True)) == {"rhea", "ravi"}

    # and, with tau lowered, answers of both kinds the engine released without a person
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.01)
    for n in range(RELEASED):
        text = (CLOSE, LOOSE)[n % 2]
        body = submit([{"text": text, "citations": [cite(policy_doc)]}], key=f"early-{n}").json()
        assert body["gate"] in ("auto", "flagged"), body

    # 2. calibrate proposes a version more reliable than the global model on the verdicts it
    # held back.
    out = StringIO()
    call_command("calibrate", zone=ZONE, stdout=out)
    assert "Proposed calibration v1" in out.getvalue()
    proposed = ZoneCalibration.objects.get(zone__coordinate=ZONE, version=1)
    assert proposed.status == "proposed"
    before, after = proposed.reliability_before, proposed.reliability_after
    assert after["brier"] < before["brier"]
    assert after["log_loss"] < before["log_loss"]

    # 3. The admin previews it, then adopts it with a reason, on the trail.
    preview = admin.post(f"/api/v1/zones/{ZONE}/calibration/1/preview/", {}, format="json")
    assert preview.status_code == 200, preview.content
    # the engine's probability barely tells the two apart, and this zone's reviewers reject
    # most of what it verifies: every answer it released on its own goes to a person now
    assert preview.json()["moves"] == [{"from": "auto", "to": "required", "count": RELEASED}]
    adopted = admin.post(
        f"/api/v1/zones/{ZONE}/calibration/1/adopt/",
        {"reason": "our reviewers want the approver named"},
        format="json",
    )
    assert adopted.status_code == 200, adopted.content
    event = TrailEvent.objects.get(kind="calibration.adopted")
    assert (event.actor, event.reason) == ("ada", "our reviewers want the approver named")

    # 4. Later decisions in the zone are graded with it: the report names the version, and
    # the loose claim no longer stands on its own.
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.01)
    later = submit([{"text": LOOSE, "citations": [cite(policy_doc)]}], key="after").json()
    decision = Decision.objects.get(pk=later["id"])
    assert decision.report is not None
    assert decision.report.body["calibration"] == {"zone": ZONE, "version": 1}
    (item,) = decision.report.body["claims"][0]["evidence"]
    assert item["vetoed_by"] == "calibration"
    assert item["signals"]["calibrated_probability"] < 0.5 <= item["signals"]["probability"]
    assert decision.gate in ("required", "blocked")
    # the agent asks again at once: after a refusal, that is a requery
    submit([{"text": CLOSE, "citations": [cite(policy_doc)]}], key="again")

    # 5. The threshold advice finds the tau that meets a target, and the figures behind it
    # are the reviewers' (every loose answer released at a tau is a wrong one).
    reviewed = list(
        Decision.objects.filter(zone=ZONE, claim_verdicts__isnull=False)
        .distinct()
        .values_list("sufficiency", "claim_verdicts__supported")
    )
    advice = admin.get(f"/api/v1/zones/{ZONE}/advice/?target=0.02").json()
    assert advice["reviewed"] == REVIEWED
    assert advice["reviewed_wrong"] == int(REVIEWED * LOOSE_SHARE)
    chosen = advice["advised"]
    assert advice["advised_tau"] == chosen["tau"]
    released = [ok for s, ok in reviewed if s is not None and s >= chosen["tau"]]
    assert released  # the advice releases some answers, not none
    assert chosen["reviewed_released"] == len(released)
    assert chosen["reviewed_wrong"] == sum(not ok for ok in released)
    assert chosen["wrong_auto_share"] <= 0.02
    # and it is the lowest such tau: one step below, a loose answer would go out
    below = [p for p in advice["points"] if p["tau"] < chosen["tau"]]
    assert all(not p["meets_target"] or p["human_share"] >= chosen["human_share"] for p in below)

    # 6. Every KPI equals a count made here.
    kpis = admin.get(f"/api/v1/zones/{ZONE}/kpis/").json()  # the last 30 days
    gates = _gates()
    graded = sum(gates.values())
    assert kpis["decisions"]["total"] == Decision.objects.filter(zone=ZONE).count()
    for gate, n in gates.items():
        assert kpis["decisions"][gate] == n, gate
    assert kpis["auto_ratio"] == pytest.approx((gates["auto"] + gates["flagged"]) / graded)
    assert kpis["human_ratio"] == pytest.approx(gates["required"] / graded)
    approved = int(REVIEWED * (1 - LOOSE_SHARE))
    assert kpis["first_pass_approval_rate"] == pytest.approx(approved / REVIEWED)
    assert kpis["re_review_rate"] == 0
    seconds = sorted(_review_seconds())
    assert len(seconds) == REVIEWED
    assert kpis["mean_review_seconds"] == pytest.approx(sum(seconds) / len(seconds), abs=1e-3)
    rank = math.ceil(0.9 * len(seconds))
    assert kpis["p90_review_seconds"] == pytest.approx(seconds[rank - 1], abs=1e-3)
    for name in ("sla_breaches", "escalations", "overrides"):
        assert kpis[name] == 0, name
    blocked = gates["blocked"]
    assert kpis["refusal_rate"] == pytest.approx(blocked / graded)
    rows = list(Decision.objects.filter(zone=ZONE).values_list("gate", "proposed_by", "created_at"))
    requeried = sum(
        any(who == by and 0 < (then - at).total_seconds() <= 3600 for _, who, then in rows)
        for gate, by, at in rows
        if gate == "blocked"
    )
    assert kpis["requery_rate"] == (pytest.approx(requeried / blocked) if blocked else None)
    # trust from outcomes (the paper's section 7): released or approved is correct, rejected
    # a hallucination, blocked a refusal
    correct = gates["auto"] + gates["flagged"] + approved
    rejected = REVIEWED - approved
    decided = correct + rejected + blocked
    expected = trust(3.0, correct / decided, rejected / decided, blocked / decided)
    assert kpis["trust"] == pytest.approx(expected)
