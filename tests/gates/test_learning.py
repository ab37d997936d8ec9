"""What a zone's answers teach it (`gates.learning`, seed 000 §6.1, §10.3, §13.2): wrong answers
labelled by hallucination type, agent-level accuracy, knowledge gaps and overconfident
sources, through the real pipeline and reviewers; scoped like the dashboard; the page too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from coordinates.models import Role
from decisions import services
from gates import learning
from tests.decisions.conftest import GOOD, UNVERIFIABLE, WRONG_NUMBER, cite

ZONE = "G1.U1.P1.Z1"
OTHER = "G1.U1.P1.Z2"
GOOD_AGENT = f"{ZONE}.A1"
BAD_AGENT = f"{ZONE}.A2"


# --- the pure part ---------------------------------------------------------------------------


def _claim(verdict: str, *fabricated: bool) -> dict[str, Any]:
    return {"verdict": verdict, "evidence": [{"fabricated": f} for f in fabricated]}


def test_a_claim_that_cites_nothing_real_is_a_fabrication() -> None:
    assert learning.claim_type(_claim("refuted", True)) == "fabrication"
    assert learning.claim_type(_claim("unverified")) == "fabrication"  # no citation at all
    assert learning.claim_type(_claim("refuted", True, True)) == "fabrication"


def test_a_claim_refuted_against_real_text_is_a_distortion() -> None:
    assert learning.claim_type(_claim("refuted", False)) == "distortion"
    assert learning.claim_type(_claim("refuted", True, False)) == "distortion"


def test_a_wrong_claim_on_real_unrefuting_text_is_an_extrapolation() -> None:
    assert learning.claim_type(_claim("unverified", False)) == "extrapolation"
    # a reviewer may find a claim the engine verified wrong: still real evidence, read too far
    assert learning.claim_type(_claim("verified", False)) == "extrapolation"


def test_an_answer_takes_the_type_of_its_worst_wrong_claim() -> None:
    claims = [_claim("unverified", False), _claim("refuted", False), _claim("refuted", True)]
    assert learning.answer_type(claims, [0]) == "extrapolation"
    assert learning.answer_type(claims, [0, 1]) == "distortion"
    assert learning.answer_type(claims, [1, 2, 0]) == "fabrication"
    assert learning.answer_type(claims, []) is None
    assert learning.answer_type(claims, [7]) is None  # an index the report does not hold


def test_the_models_expected_split_at_the_papers_completeness_is_mostly_extrapolation() -> None:
    # §6.5 at §6.3's BC 0.865: 1.5% + 1.7% + 2.8% of answers (docs/math.md, 000 §6.5)
    shares = learning.expected_type_shares(0.865)
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares["extrapolation"] == pytest.approx(0.46, abs=0.01)
    assert shares["fabrication"] < shares["distortion"] < shares["extrapolation"]
    # with no bundle at all the split is the raw one of §6.1
    raw = learning.expected_type_shares(0.0)
    assert raw["fabrication"] > raw["distortion"] > raw["extrapolation"]


def test_an_agent_underperforms_at_twice_the_zones_wrong_share_over_enough_answers() -> None:
    answers = [("A1", 0.9, False, False)] * 9 + [("A1", 0.9, False, True)]
    answers += [("A2", 0.4, True, True)] * 3 + [("A2", 0.5, False, False)] * 2
    answers += [("A3", 0.1, True, True)] * 2  # worst share, too few answers to judge
    rows = learning.agent_rows(answers)
    assert [r["agent"] for r in rows] == ["A3", "A2", "A1"]
    by = {r["agent"]: r for r in rows}
    # zone: 6 wrong of 17 = 0.353; A2 0.6 < 0.706: not yet twice the zone's
    assert not by["A2"]["underperforming"]
    assert not by["A3"]["underperforming"]
    assert by["A2"]["mean_sufficiency"] == pytest.approx(0.44)
    assert by["A2"]["blocked_share"] == pytest.approx(0.6)
    more = answers + [("A1", 0.9, False, False)] * 20
    # zone: 6 of 37 = 0.162; A2 0.6 >= 0.324 over 5 answers: underperforming; A3 too few
    by = {r["agent"]: r for r in learning.agent_rows(more)}
    assert by["A2"]["underperforming"]
    assert not by["A3"]["underperforming"]
    assert not by["A1"]["underperforming"]


def test_a_question_s_topics_are_its_content_words_as_written() -> None:
    topics = learning.question_topics("What is the per diem for travel to Osaka?")
    assert "osaka" in topics.values()
    assert not {"what", "is", "the"} & set(topics.values())


# --- through the pipeline --------------------------------------------------------------------


@pytest.fixture
def world(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> dict[str, Any]:
    """In ZONE: the good agent's 6 answers the engine verified, the bad agent's 5 (3 wrong
    numbers, 2 citing a paragraph that does not exist: all blocked), and 6 more of the good
    agent's that a reviewer rejects: 5 the engine verified against the travel policy, one it
    could not verify (whose evidence is too weak to be kept)."""
    set_policy(ZONE, tau=0.99, refusal_floor=0.0, floor=0.01)
    set_policy(OTHER, tau=0.99, refusal_floor=0.0, floor=0.01)
    reviewer = person("rhea", Role.REVIEWER, ZONE)
    made: dict[str, list[int]] = {"required": [], "blocked": []}

    def answer(text: str, agent: str, citation: dict[str, Any], zone: str = ZONE) -> dict[str, Any]:
        body = submit(
            [{"text": text, "citations": [citation]}], agent=agent, token_of=agent, zone=zone
        ).json()
        made.setdefault(body["gate"], []).append(int(body["id"]))
        return dict(body)

    for _ in range(6):
        answer(GOOD, GOOD_AGENT, cite(policy_doc))
    for _ in range(3):
        assert answer(WRONG_NUMBER, BAD_AGENT, cite(policy_doc))["gate"] == "blocked"
    invented = {"document": policy_doc.version.document_id, "paragraph": 999}
    for _ in range(2):
        assert answer(GOOD, BAD_AGENT, invented)["gate"] == "blocked"
    # what the engine verified and reviewers still find wrong: the source claims too much
    rejected = [answer(GOOD, GOOD_AGENT, cite(policy_doc))["id"] for _ in range(5)]
    rejected.append(answer(UNVERIFIABLE, GOOD_AGENT, cite(policy_doc))["id"])
    for pk in rejected:
        with django_capture_on_commit_callbacks(execute=True):
            services.decision_reject(
                decision_id=pk,
                user=reviewer,
                reason="not what the policy says",
                claims=[{"index": 0, "supported": False}],
            )
    return {"rejected": rejected, "doc": policy_doc.version.document_id}


def _client(person: Callable[..., Any], name: str, role: str | None, *scopes: str) -> APIClient:
    client = APIClient()
    client.force_authenticate(person(name, role, *scopes))
    return client


def test_the_zones_wrong_answers_are_counted_by_type_and_by_who_caught_them(
    world: dict[str, Any], person: Callable[..., Any]
) -> None:
    response = _client(person, "zed", Role.ZONE_ADMIN, ZONE).get(f"/api/v1/zones/{ZONE}/learning/")
    assert response.status_code == 200, response.json()
    report = response.json()
    assert report["answers"] == 17
    found = report["hallucinations"]
    # 2 invented paragraphs, 3 wrong numbers, 6 claims a reviewer found unsupported
    assert found["by_type"] == {"fabrication": 2, "distortion": 3, "extrapolation": 6}
    assert found["caught_by"] == {"engine": 5, "reviewer": 6}
    assert found["answers"] == 11
    assert found["shares"]["extrapolation"] == pytest.approx(6 / 11)
    assert sum(found["model_shares"].values()) == pytest.approx(1.0, abs=1e-5)


def test_the_agent_whose_answers_are_blocked_is_listed_first_and_underperforming(
    world: dict[str, Any], person: Callable[..., Any]
) -> None:
    report = (
        _client(person, "aud", Role.AUDITOR, ZONE).get(f"/api/v1/zones/{ZONE}/learning/").json()
    )
    bad, good = report["agents"]
    assert (bad["agent"], bad["answers"], bad["blocked_share"], bad["wrong_share"]) == (
        BAD_AGENT,
        5,
        1.0,
        1.0,
    )
    # zone 11 of 17 wrong (0.65): 1.0 is not twice it, so nobody stands out yet
    assert not bad["underperforming"]
    assert (good["agent"], good["answers"]) == (GOOD_AGENT, 12)
    assert good["wrong_share"] == pytest.approx(6 / 12)


def test_a_source_the_reviewers_keep_rejecting_is_overconfident(
    world: dict[str, Any], person: Callable[..., Any]
) -> None:
    report = (
        _client(person, "zed", Role.ZONE_ADMIN, ZONE).get(f"/api/v1/zones/{ZONE}/learning/").json()
    )
    (source,) = report["overconfident_sources"]
    assert source["document"] == world["doc"]
    assert source["title"] == "Travel policy"
    # five verified claims rejected; the unverifiable one's evidence was never kept
    assert source["verdicts"] == 5
    assert source["accuracy"] == 0.0
    assert source["mean_confidence"] >= 0.5


def test_refusals_that_cluster_on_a_topic_are_a_knowledge_gap(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any], person: Any
) -> None:
    # Answers under a refusal floor no answer reaches are refusals (mode "refusal"); the
    # rest answer under a floor of 0. Four refused questions on Osaka, six answered on other
    # topics: Osaka's refusal rate (1.0) is at least twice the zone's (0.4).
    set_policy(ZONE, tau=0.999, delta=0.01, refusal_floor=0.999)
    for city in ("Osaka", "Osaka", "Osaka", "Osaka"):
        body = submit(
            [{"text": GOOD, "citations": [cite(policy_doc)]}],
            question=f"Who approves expenses for a trip to {city}?",
        ).json()
        assert body["mode"] == "refusal", body
    set_policy(ZONE, tau=0.2, delta=0.05, refusal_floor=0.0)
    for city in ("Nagoya", "Sapporo", "Fukuoka", "Kobe", "Sendai", "Kyoto"):
        body = submit(
            [{"text": GOOD, "citations": [cite(policy_doc)]}],
            question=f"Who approves expenses for a trip to {city}?",
        ).json()
        assert body["mode"] != "refusal", body
    report = (
        _client(person, "zed", Role.ZONE_ADMIN, ZONE).get(f"/api/v1/zones/{ZONE}/learning/").json()
    )
    (gap,) = report["knowledge_gaps"]
    assert (gap["topic"], gap["refused"], gap["asked"]) == ("osaka", 4, 4)


def test_another_zones_admin_and_a_reviewer_get_404_and_a_bad_window_400(
    world: dict[str, Any], person: Callable[..., Any]
) -> None:
    stranger = _client(person, "sid", Role.ZONE_ADMIN, OTHER)
    assert stranger.get(f"/api/v1/zones/{ZONE}/learning/").status_code == 404
    reviewer = _client(person, "rex", Role.REVIEWER, ZONE)
    assert reviewer.get(f"/api/v1/zones/{ZONE}/learning/").status_code == 404
    admin = _client(person, "zed", Role.ZONE_ADMIN, ZONE)
    bad = admin.get(f"/api/v1/zones/{ZONE}/learning/?since=yesterday")
    assert bad.status_code == 400
    assert bad.json()["error"]["field"] == "since"
    # the sister zone's own admin sees nothing of ZONE's answers
    assert stranger.get(f"/api/v1/zones/{OTHER}/learning/").json()["answers"] == 0


def test_the_page_shows_the_types_the_agents_and_the_sources(
    world: dict[str, Any], person: Callable[..., Any]
) -> None:
    client = Client()
    client.force_login(person("zed", Role.ZONE_ADMIN, ZONE))
    page = client.get(f"/zones/{ZONE}/learning/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-type="distortion"' in html
    assert f'data-agent="{BAD_AGENT}"' in html
    assert f'data-document="{world["doc"]}"' in html
    assert "Travel policy" in html
    assert client.get(f"/zones/{ZONE}/dashboard/").content.decode().count("learning-link") == 1
    client.force_login(person("sid", Role.ZONE_ADMIN, OTHER))
    assert client.get(f"/zones/{ZONE}/learning/").status_code == 404


# --- §10.2 the learning curve, §6.6 drift ------------------------------------------------------


def test_a_learning_curve_fitted_to_its_own_points_gives_back_its_parameters() -> None:
    from evidence.dynamics import fit_learning_curve, learning_curve, time_to_converge

    weeks = list(range(12))
    fit = fit_learning_curve(weeks, [learning_curve(0.6, 0.9, 0.15, t) for t in weeks])
    assert fit is not None
    assert (fit.a_0, fit.a_max, fit.rate) == pytest.approx((0.6, 0.9, 0.15), abs=1e-4)
    # the paper's §10.4: at lambda 0.15, 95% of the way in about 20 weeks
    assert time_to_converge(fit.rate) == pytest.approx(20.0, abs=0.1)


def test_too_few_weeks_fit_no_curve_and_bad_input_is_refused_by_name() -> None:
    from evidence.dynamics import fit_learning_curve

    assert fit_learning_curve([0, 1, 2], [0.5, 0.6, 0.7]) is None
    with pytest.raises(ValueError, match="accuracy"):
        fit_learning_curve([0, 1, 2, 3], [0.5, 0.6, 1.7, 0.8])
    with pytest.raises(ValueError, match="weights"):
        fit_learning_curve([0, 1, 2, 3], [0.5, 0.6, 0.7, 0.8], [1, 1, 0, 1])


def test_weeks_with_too_few_answers_are_shown_but_not_fitted() -> None:
    rows = [(w, wrong) for w in range(5) for wrong in [True] * (4 - w % 4) + [False] * 6]
    rows += [(5, True), (5, False)]  # two answers: shown, not fitted
    weeks = learning.weekly_accuracy(rows)
    assert [w["week"] for w in weeks] == [0, 1, 2, 3, 4, 5]
    assert weeks[0] == {"week": 0, "answers": 10, "accuracy": 0.6}
    fitted = learning.learning_fit(weeks)
    assert fitted["weeks_used"] == 5
    assert learning.learning_fit(weeks[:3] + weeks[5:])["fit"] is None


def test_drift_carries_completeness_up_when_updates_outpace_staleness() -> None:
    growing = learning.drift_projection(
        versions_added=8, went_stale=2, documents=10, weeks=4.0, completeness=0.8
    )
    assert (growing["mu"], growing["nu"]) == (0.2, 0.05)
    later = [row["completeness"] for row in growing["projected"]]
    assert later == sorted(later)
    assert later[0] > 0.8
    assert later[-1] == 1.0
    decaying = learning.drift_projection(
        versions_added=0, went_stale=4, documents=10, weeks=4.0, completeness=0.8
    )
    later = [row["completeness"] for row in decaying["projected"]]
    assert later == sorted(later, reverse=True)
    assert later[0] < 0.8
    assert (
        learning.drift_projection(
            versions_added=0, went_stale=0, documents=0, weeks=4.0, completeness=0.8
        )["mu"]
        is None
    )


def test_the_zones_drift_counts_its_new_versions_and_its_documents(
    world: dict[str, Any], ingest: Callable[..., Any], person: Callable[..., Any]
) -> None:
    from decisions.models import Decision
    from tests.samples import POLICY_EN

    # one answer released by a reviewer: the completeness carried forward is its
    waiting = Decision.objects.filter(state="approval_required").order_by("pk").first()
    assert waiting is not None
    services.decision_approve(
        decision_id=waiting.pk, user=person("ria", Role.REVIEWER, ZONE), reason="right"
    )
    ingest(POLICY_EN.replace("500,000", "600,000"), title="Travel policy", key="travel")
    report = (
        _client(person, "zed", Role.ZONE_ADMIN, ZONE).get(f"/api/v1/zones/{ZONE}/learning/").json()
    )
    drift = report["drift"]
    assert drift["documents"] == 1
    weeks = 30 / 7  # the default window
    assert drift["mu"] == pytest.approx(1 / weeks, abs=1e-3)  # one new version
    assert drift["nu"] == 0.0  # nothing passed a year since its current version
    assert [row["weeks"] for row in drift["projected"]] == [4, 13, 26, 52]
    waiting.refresh_from_db()
    assert waiting.completeness is not None
    # mu > nu: the completeness of what was released only grows (capped at 1)
    assert drift["projected"][0]["completeness"] > waiting.completeness
    curve = report["learning_curve"]
    assert curve["weeks"][-1]["answers"] == 17  # every answer of the world in this week
    assert curve["fit"] is None  # one week
