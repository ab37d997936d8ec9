"""The graph gate's tau_c adapted to a zone's reviewed graph-gated answers (issue 30, seed 002
§9.4): answers let through above tau_c that reviewers keep rejecting raise the proposed
tau_c; answers held back below it that reviewers keep approving lower it; too few verdicts
propose nothing and say why; a zone admin adopts the proposal as a new policy version, and
the next answer is gated on it. Nothing adapts on its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role, ZonePolicyVersion
from decisions.models import Decision
from tests.decisions.conftest import UNVERIFIABLE, ZONE, cite
from tests.decisions.test_graph_gate_on_answers import CHAIN, CHAIN_KEYS, graph_of  # noqa: F401
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

URL = f"/api/v1/zones/{ZONE}/graph-tau/"


@pytest.fixture
def admin(person: Callable[..., Any], client_for: Callable[[Any], Any]) -> Any:
    return client_for(person("zadmin", Role.ZONE_ADMIN, ZONE))


@pytest.fixture
def reviewed(
    policy_doc: Any,
    submit: Callable[..., Any],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> Callable[..., list[int]]:
    """`n` answers naming the chain's nodes (Cohesion 0.1875) that a person must review (the
    answer gate cannot verify their claim), each approved or rejected by a reviewer at the
    level the answer waits at."""
    reviewers: dict[str, Any] = {}

    def run(n: int, *, approve: bool) -> list[int]:
        ids = []
        for i in range(n):
            body = submit(
                [{"text": UNVERIFIABLE, "citations": [cite(policy_doc)]}],
                graph_evidence=CHAIN_KEYS,
                question=f"Who approves business class flights? ({approve} {i})",
            ).json()
            assert body["state"] == "approval_required", body
            at = body.get("escalated_to") or ZONE
            if at not in reviewers:
                reviewers[at] = client_for(person(f"rev-{at}", Role.REVIEWER, at))
            url = f"/api/v1/decisions/{body['id']}/"
            if approve:
                # the claim marked supported: the reviewer takes the answer over as it stands
                done = reviewers[at].post(
                    f"{url}approve/",
                    {"reason": "right", "claims": [{"index": 0, "supported": True}]},
                    format="json",
                )
            else:
                done = reviewers[at].post(
                    f"{url}reject/",
                    {"reason": "wrong", "claims": [{"index": 0, "supported": False}]},
                    format="json",
                )
            assert done.status_code == 200, done.json()
            ids.append(body["id"])
        return ids

    return run


def test_answers_above_tau_that_reviewers_reject_raise_the_proposed_tau(
    graph_of: Any,  # noqa: F811
    set_policy: Any,
    reviewed: Any,
    admin: Any,
) -> None:
    # given a medium-risk zone (tau_c 0.15) whose graph answers (0.1875 >= 0.15) pass the
    # graph gate, and reviewers who reject every one of them
    graph_of(CHAIN)
    set_policy(graph_risk="medium")
    reviewed(10, approve=False)
    # when its admin reads the proposal
    body = admin.get(URL).json()
    # then tau_c should rise above the chain's cohesion, and the error average says why
    assert body["current"] == pytest.approx(0.15)
    assert body["verdicts"] == 10
    assert body["adapted"] > 0.1875
    assert body["adapted"] <= 0.50
    assert body["error_above"] > 0.10
    assert body["why_not"] is None


def test_answers_below_tau_that_reviewers_approve_lower_the_proposed_tau(
    graph_of: Any,  # noqa: F811
    set_policy: Any,
    reviewed: Any,
    admin: Any,
) -> None:
    # given a zone that set tau_c 0.30 outright: the chain (0.1875) is held back, qualified,
    # and a reviewer finds every one of those answers right
    graph_of(CHAIN)
    set_policy(cohesion_tau=0.30)
    reviewed(25, approve=True)
    body = admin.get(URL).json()
    assert body["current"] == pytest.approx(0.30)
    assert body["verdicts"] == 25
    assert body["adapted"] < 0.30
    assert body["agreement_below"] >= 0.90


def test_too_few_verdicts_propose_nothing_and_say_why(
    graph_of: Any,  # noqa: F811
    set_policy: Any,
    reviewed: Any,
    admin: Any,
) -> None:
    graph_of(CHAIN)
    set_policy(graph_risk="medium")
    reviewed(3, approve=False)
    body = admin.get(URL).json()
    assert body["adapted"] is None
    assert body["verdicts"] == 3
    assert "too few verdicts" in body["why_not"]
    refused = admin.post(
        f"{URL}adopt/", {"reason": "try", "fingerprint": body["fingerprint"]}, format="json"
    )
    assert refused.status_code == 400, refused.json()
    assert not ZonePolicyVersion.objects.filter(overrides__has_key="cohesion_tau").exists()


def test_adopting_writes_a_policy_version_and_the_next_answer_is_gated_on_it(
    graph_of: Any,  # noqa: F811
    set_policy: Any,
    reviewed: Any,
    admin: Any,
    policy_doc: Any,
    submit: Callable[..., Any],
) -> None:
    graph_of(CHAIN)
    set_policy(graph_risk="medium")
    reviewed(10, approve=False)
    proposal = admin.get(URL).json()
    # a reason is required
    blank = admin.post(
        f"{URL}adopt/", {"reason": " ", "fingerprint": proposal["fingerprint"]}, format="json"
    )
    assert blank.status_code == 400
    assert blank.json()["error"]["field"] == "reason"
    adopted = admin.post(
        f"{URL}adopt/",
        {"reason": "reviewers keep rejecting", "fingerprint": proposal["fingerprint"]},
        format="json",
    )
    assert adopted.status_code == 200, adopted.json()
    assert adopted.json()["overrides"]["cohesion_tau"] == pytest.approx(proposal["adapted"])
    # on the trail, as any policy change
    event = TrailEvent.objects.filter(kind="policy.changed").latest("seq")
    assert "reviewers keep rejecting" in event.reason
    # the next answer naming the same nodes is judged under the adopted tau_c
    nxt = submit(
        [{"text": UNVERIFIABLE, "citations": [cite(policy_doc)]}],
        graph_evidence=CHAIN_KEYS,
        question="And economy class?",
    ).json()
    gate = Decision.objects.get(pk=nxt["id"]).report.body["graph_gate"]
    assert gate["cohesion_tau"] == pytest.approx(proposal["adapted"])
    assert gate["gate"] == "qualified"  # 0.1875 is now below tau_c
    # rolled back as any policy change: the earlier version's values again, with a reason
    back = admin.put(
        f"/api/v1/zones/{ZONE}/policy/",
        {"reason": "too strict after all", "graph_risk": "medium"},
        format="json",
    )
    assert back.status_code == 200, back.json()
    assert admin.get(URL).json()["current"] == pytest.approx(0.15)


def test_another_zones_admin_reads_nothing(
    graph_of: Any,  # noqa: F811
    set_policy: Any,
    reviewed: Any,
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    graph_of(CHAIN)
    set_policy(graph_risk="medium")
    neighbour = client_for(person("nadmin", Role.ZONE_ADMIN, "G1.U1.P1.Z2"))
    assert neighbour.get(URL).status_code == 404
    assert (
        neighbour.post(
            f"{URL}adopt/", {"reason": "x", "fingerprint": "x"}, format="json"
        ).status_code
        == 404
    )
    auditor = client_for(person("aud", Role.AUDITOR, ZONE))
    assert auditor.get(URL).status_code == 200
    assert (
        auditor.post(f"{URL}adopt/", {"reason": "x", "fingerprint": "x"}, format="json").status_code
        == 403
    )


def test_the_learned_models_page_shows_the_adapted_tau_and_adopts_it(
    graph_of: Any,  # noqa: F811
    set_policy: Any,
    reviewed: Any,
    person: Callable[..., Any],
) -> None:
    from django.test import Client

    from coordinates.models import Zone
    from coordinates.selectors import effective_policy

    graph_of(CHAIN)
    set_policy(graph_risk="medium")
    browser = Client()
    browser.force_login(person("pada", Role.ZONE_ADMIN, ZONE))
    page = f"/zones/{ZONE}/learned/"
    # too few verdicts: the section says why, in the reader's language
    empty = browser.get(page, HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert empty.count('id="graph-tau-why-not"') == 1  # one section, not two with one id
    assert "判定が少なすぎます" in empty
    reviewed(10, approve=False)
    shown = browser.get(page)
    assert shown.content.decode().count('id="graph-tau-table"') == 1
    proposal = shown.context["graph_tau"]
    response = browser.post(
        f"{page}graph-tau/adopt/", {"reason": "too loose", "fingerprint": proposal.fingerprint}
    )
    assert response.status_code == 302
    tau = effective_policy(Zone.objects.get(coordinate=ZONE).coord).values.graph_tau
    assert tau == pytest.approx(proposal.adapted)
