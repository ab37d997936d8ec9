"""The learned claim verifier: its model file is checked when read, its probabilities are
calibrated numbers in [0, 1], and fitting is reproducible."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidence import corpora, verifier
from evidence.grounding import check_claim
from evidence.verifier import SIGNALS, VerifierModelError, load_model, model_from_json
from evidence.verifier_fit import fit

OWN = Path(__file__).parent / "corpus" / "grounding_corpus.json"


def shipped() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(verifier.DEFAULT_MODEL.read_text(encoding="utf-8"))
    return data


# --- the model file -------------------------------------------------------------------------


def test_the_shipped_model_reads_and_says_what_it_was_fitted_on() -> None:
    model = verifier.model()
    assert set(model.languages) == {"en", "ja"}
    provenance = model.provenance
    assert {c["name"] for c in provenance["corpora"]} == {"summedits-dev", "jnli-valid.jsonl"}
    assert all(len(c["sha256"]) == 64 for c in provenance["corpora"])
    assert provenance["fitted_on"] > 0
    assert provenance["measured_on"] > 0
    assert set(provenance["held_out"]) == {"jnli", "summedits"}


def test_a_missing_model_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.json"
    with pytest.raises(VerifierModelError, match=r"nowhere\.json"):
        load_model(missing)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "cannot read"),
        ("[1, 2]", "not a maria-claim-verifier-v1 file"),
        ('{"format": "something-else"}', "not a maria-claim-verifier-v1 file"),
    ],
)
def test_a_corrupt_model_file_is_named_with_what_is_wrong(
    tmp_path: Path, text: str, says: str
) -> None:
    broken = tmp_path / "model.json"
    broken.write_text(text)
    with pytest.raises(VerifierModelError, match=says) as error:
        load_model(broken)
    assert "model.json" in str(error.value)


def _with(language: str, **changes: Any) -> dict[str, Any]:
    data = shipped()
    data["languages"][language].update(changes)
    return data


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"weights": [1.0]}, "must match the signals"),
        ({"scale": [0.0] * len(SIGNALS)}, "must match the signals"),
        ({"signals": [*SIGNALS[:-1], "telepathy"]}, "does not compute"),
        ({"calibration": {"scores": [0.0, 1.0], "probabilities": [0.9, 0.1]}}, "non-decreasing"),
        ({"calibration": {"scores": [0.0, 1.0], "probabilities": [0.1, 1.5]}}, "non-decreasing"),
        ({"threshold": 2.0}, "non-decreasing"),
        ({"intercept": "high"}, "malformed"),
        ({"intercept": float("nan")}, "not finite"),
    ],
)
def test_a_model_that_cannot_be_right_is_refused(changes: dict[str, Any], says: str) -> None:
    with pytest.raises(VerifierModelError, match=says):
        model_from_json(_with("ja", **changes), source="test")


def test_a_model_without_english_is_refused() -> None:
    data = shipped()
    del data["languages"]["en"]
    with pytest.raises(VerifierModelError, match="English"):
        model_from_json(data)


# --- probabilities --------------------------------------------------------------------------

signal_values = st.fixed_dictionaries(
    {name: st.floats(min_value=-5.0, max_value=50.0, allow_nan=False) for name in SIGNALS}
)


@given(signal_values, st.sampled_from(["en", "ja"]))
def test_probabilities_are_in_zero_one_whatever_the_signals(
    signals: dict[str, float], language: str
) -> None:
    p = verifier.model().languages[language].probability(signals)
    assert 0.0 <= p <= 1.0


@given(signal_values, st.floats(min_value=0.0, max_value=20.0, allow_nan=False))
def test_a_higher_score_never_gets_a_lower_probability(
    signals: dict[str, float], more: float
) -> None:
    # the calibration is monotone: raise the signal with the largest positive weight
    model = verifier.model().languages["en"]
    name = model.signals[int(np.argmax(model.weights))]
    raised = {**signals, name: signals[name] + more}
    assert model.probability(raised) >= model.probability(signals)


PARAGRAPH_EN = (
    "Employees may request to work remotely up to 3 days per week. Requests must be approved "
    "by the line manager in advance."
)
PARAGRAPH_JA = "出張旅費の精算は、帰着後30日以内に行わなければならない。超過分は自己負担とする。"


@pytest.mark.parametrize(
    ("claim", "paragraph", "unrelated"),
    [
        (
            "Employees may request to work remotely up to 3 days per week.",
            PARAGRAPH_EN,
            "The cafeteria serves lunch between noon and two in the afternoon.",
        ),
        (
            "出張旅費の精算は、帰着後30日以内に行わなければならない。",
            PARAGRAPH_JA,
            "社員食堂は正午から午後二時まで昼食を提供している。",
        ),
    ],
)
def test_a_claim_its_evidence_states_is_more_likely_than_against_unrelated_text(
    claim: str, paragraph: str, unrelated: str
) -> None:
    stated, elsewhere = check_claim(claim, paragraph), check_claim(claim, unrelated)
    assert stated.probability is not None
    assert elsewhere.probability is not None
    assert stated.probability > elsewhere.probability


def test_claims_that_assert_no_fact_get_no_probability() -> None:
    assert check_claim("Here is a summary of the policy.", PARAGRAPH_EN).probability is None


# --- fitting --------------------------------------------------------------------------------


def _fittable(examples: list[corpora.Example]) -> list[corpora.Example]:
    # the own corpus is measured, never fitted on: here it stands in as a small fitting set
    return [replace(e, held_out=i % 3 == 0) for i, e in enumerate(examples)]


def test_fitting_twice_on_the_same_corpus_gives_the_same_model() -> None:
    examples = _fittable(corpora.grounding_corpus(OWN))
    first = fit(examples, sources=[OWN]).as_json()
    second = fit(examples, sources=[OWN]).as_json()
    for data in (first, second):
        data["provenance"].pop("fitted")
    assert first == second
    assert first["provenance"]["fitted_on"] == 100
    assert first["provenance"]["measured_on"] == 50
    assert "balanced_accuracy" in first["provenance"]["held_out"]["own"]
    # and what was written reads back as a model
    assert model_from_json(first).languages["en"].threshold == pytest.approx(
        first["languages"]["en"]["threshold"]
    )
