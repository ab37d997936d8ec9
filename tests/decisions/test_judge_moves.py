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
def judge_says(
    settings: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str], None]]:
    def use(label: str) -> None:
        root = tmp_path_factory.mktemp(label)
        settings.MARIA_NLI_MODEL = str(tiny_model(root / label, NLI3, label))

    yield use
    nli._load.cache_clear()


def _claim(response: Any) -> dict[str, Any]:
    claims: list[dict[str, Any]] = response.json()["claims"]
    return claims[0]


def test_by_default_the_judge_is_recorded_and_moves_nothing(
    judge_says: Callable[[str], None],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    judge_says("entailment")
    set_policy(**LENIENT)
    response = submit([{"text": LOOSE, "citations": [cite(policy_doc)]}])
    assert response.json()["gate"] == "required"
    assert _claim(response)["verdict"] == "unverified"


def test_a_zone_that_allows_it_lets_the_judge_verify_and_release(
    judge_says: Callable[[str], None],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    judge_says("entailment")
    set_policy(**LENIENT, judge_moves=["verify"], judge_confidence=0.9)
    response = submit([{"text": LOOSE, "citations": [cite(policy_doc)]}])
    assert response.json()["gate"] == "auto"
    assert _claim(response)["verdict"] == "verified"
    # and the reviewer and auditor read who verified it
    report = Decision.objects.get(pk=response.json()["id"]).report
    assert report is not None
    claim = report.body["claims"][0]
    assert claim["verdict_by"] == "judge"
    assert claim["judge"]["model"] == "nli:entailment"
    assert any("verified by the judge nli:entailment" in r for r in claim["reasons"])


def test_the_judge_must_be_as_sure_as_the_zone_asks(
    judge_says: Callable[[str], None],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    judge_says("entailment")  # softmax(6, 0, 0): 0.995
    set_policy(**LENIENT, judge_moves=["verify"], judge_confidence=0.999)
    response = submit([{"text": LOOSE, "citations": [cite(policy_doc)]}])
    assert (response.json()["gate"], _claim(response)["verdict"]) == ("required", "unverified")


def test_a_refutation_needs_its_own_permission(
    judge_says: Callable[[str], None],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    judge_says("contradiction")
    set_policy(**LENIENT, judge_moves=["verify"])
    kept = submit([{"text": LOOSE, "citations": [cite(policy_doc)]}], key="verify-only")
    assert (kept.json()["gate"], _claim(kept)["verdict"]) == ("required", "unverified")
    set_policy(**LENIENT, judge_moves=["verify", "refute"])
    refused = submit([{"text": LOOSE, "citations": [cite(policy_doc)]}], key="both")
    assert (refused.json()["gate"], _claim(refused)["verdict"]) == ("blocked", "refuted")


@pytest.mark.parametrize(("label", "text", "gate"), [
    ("entailment", WRONG_NUMBER, "blocked"),  # the rules refute it: no judge releases it
    ("contradiction", GOOD, "auto"),  # the rules verify it: no judge refuses it
])  # fmt: skip
def test_the_judge_never_overrules_what_the_rules_show(
    label: str,
    text: str,
    gate: str,
    judge_says: Callable[[str], None],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    judge_says(label)
    set_policy(**LENIENT, judge_moves=["verify", "refute"], judge_confidence=0.5)
    response = submit([{"text": text, "citations": [cite(policy_doc)]}])
    assert response.json()["gate"] == gate


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
    assert "judge" not in _claim(response)
    assert "MARIA_NLI_MODEL cannot serve" in caplog.text
