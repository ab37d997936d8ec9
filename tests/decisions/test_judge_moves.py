"""A plug-in judge moves a claim out of `unverified` only where the zone's policy allows it
(issue 27 point 6), end to end through the API with the local NLI judge on a tiny model the
test builds (tests/evidence/test_nli.py): never by default, never over what the rules show,
and a model that cannot serve costs the judge, not the answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from decisions.models import Decision
from evidence import nli
from tests.decisions.conftest import GOOD, WRONG_NUMBER, cite
from tests.evidence.test_nli import NLI3, tiny_model

pytestmark = pytest.mark.django_db

# The rules find every number and most words, but not "large", "need" or "head of the
# division" as the paragraph says them: unverified, a person decides.
LOOSE = "Large expenses above 500,000 yen need prior approval from the head of the division."
LENIENT = {"tau": 0.3, "refusal_floor": 0.2, "floor": 0.05}


@pytest.fixture
def answer(
    settings: Any,
    tmp_path_factory: pytest.TempPathFactory,
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
) -> Iterator[Callable[..., tuple[str, dict[str, Any]]]]:
    """Submit one claim citing the policy paragraph with a tiny NLI model that always says
    `label` as the judge and the zone's policy set to LENIENT plus `policy`: (the gate, the
    report's claim)."""
    keys = iter(range(1000))

    def run(label: str, text: str, **policy: Any) -> tuple[str, dict[str, Any]]:
        root = tmp_path_factory.mktemp(label)
        settings.MARIA_NLI_MODEL = str(tiny_model(root / label, NLI3, label))
        set_policy(**LENIENT, **policy)
        response = submit([{"text": text, "citations": [cite(policy_doc)]}], key=f"k{next(keys)}")
        report = Decision.objects.get(pk=response.json()["id"]).report
        assert report is not None
        return response.json()["gate"], report.body["claims"][0]

    yield run
    nli._load.cache_clear()


def test_by_default_the_judge_is_recorded_and_moves_nothing(answer: Callable[..., Any]) -> None:
    gate, claim = answer("entailment", LOOSE)
    assert (gate, claim["verdict"]) == ("required", "unverified")
    assert claim["judge"]["supported"] is True


def test_a_zone_that_allows_it_lets_the_judge_verify_and_release(
    answer: Callable[..., Any],
) -> None:
    gate, claim = answer("entailment", LOOSE, judge_moves=["verify"], judge_confidence=0.9)
    assert (gate, claim["verdict"]) == ("auto", "verified")
    # and the reviewer and auditor read who verified it
    assert claim["verdict_by"] == "judge"
    assert claim["judge"]["model"] == "nli:entailment"
    assert any("verified by the judge nli:entailment" in r for r in claim["reasons"])


def test_the_judge_must_be_as_sure_as_the_zone_asks(answer: Callable[..., Any]) -> None:
    # softmax(6, 0, 0): 0.995
    gate, claim = answer("entailment", LOOSE, judge_moves=["verify"], judge_confidence=0.999)
    assert (gate, claim["verdict"]) == ("required", "unverified")


def test_a_refutation_needs_its_own_permission(answer: Callable[..., Any]) -> None:
    gate, claim = answer("contradiction", LOOSE, judge_moves=["verify"])
    assert (gate, claim["verdict"]) == ("required", "unverified")
    gate, claim = answer("contradiction", LOOSE, judge_moves=["verify", "refute"])
    assert (gate, claim["verdict"]) == ("blocked", "refuted")


@pytest.mark.parametrize(("label", "text", "gate"), [
    ("entailment", WRONG_NUMBER, "blocked"),  # the rules refute it: no judge releases it
    ("contradiction", GOOD, "auto"),  # the rules verify it: no judge refuses it
])  # fmt: skip
def test_the_judge_never_overrules_what_the_rules_show(
    label: str, text: str, gate: str, answer: Callable[..., Any]
) -> None:
    moves = {"judge_moves": ["verify", "refute"], "judge_confidence": 0.5}
    assert answer(label, text, **moves)[0] == gate


def test_a_model_that_cannot_serve_costs_the_judge_not_the_answer(
    settings: Any,
    tmp_path: Path,
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.MARIA_NLI_MODEL = str(tmp_path / "not-there")
    set_policy(**LENIENT, judge_moves=["verify"])
    response = submit([{"text": GOOD, "citations": [cite(policy_doc)]}])
    assert response.status_code == 201
    assert response.json()["gate"] == "auto"
    assert "judge" not in response.json()["claims"][0]
    assert "MARIA_NLI_MODEL cannot serve" in caplog.text
