"""The local NLI judge (evidence.nli) on tiny models each test builds and saves itself (a
one-layer BERT whose head always favours one label): loading through sentence-transformers,
reading the labels from config.json, windows over long evidence, and the verdict it gives.
No download: the model directory is all there is."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from evidence import nli
from evidence.nli import Labels, NliJudge, NliModelError, verdict_from

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

NLI3 = ("entailment", "neutral", "contradiction")
WORDS = (
    "expenses", "above", "yen", "require", "prior", "approval", "by", "the", "division", "head",
    "finance",
)  # fmt: skip
CLAIM = "Expenses above 500,000 yen require prior approval by the division head."


def tiny_model(directory: Path, labels: tuple[str, ...], favours: str) -> Path:
    """A one-layer BERT cross-encoder whose head answers `favours` for every pair."""
    directory.mkdir(parents=True, exist_ok=True)
    vocab = directory / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(vocab))
    config = transformers.BertConfig(
        vocab_size=5 + len(WORDS),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=128,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={name: i for i, name in enumerate(labels)},
    )
    model = transformers.BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(
            torch.tensor([6.0 if name == favours else 0.0 for name in labels])
        )
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nli")
    return {
        "entails": tiny_model(root / "entails", NLI3, "entailment"),
        "contradicts": tiny_model(root / "contradicts", NLI3, "contradiction"),
        "neutral": tiny_model(root / "neutral", NLI3, "neutral"),
        "consistent": tiny_model(root / "hhem", ("hallucinated", "consistent"), "consistent"),
    }


def test_an_entailing_model_supports_the_claim_with_its_confidence(
    models: dict[str, Path],
) -> None:
    found = NliJudge(models["entails"]).judge(CLAIM, CLAIM)
    assert (found.supported, found.refutes, found.error) == (True, False, None)
    # softmax of the head's (6, 0, 0)
    assert found.confidence == pytest.approx(math.exp(6) / (math.exp(6) + 2), abs=1e-4)
    assert found.model == "nli:entails"


def test_a_contradicting_model_refutes_and_a_neutral_one_only_withholds(
    models: dict[str, Path],
) -> None:
    against = NliJudge(models["contradicts"]).judge(CLAIM, CLAIM)
    assert (against.supported, against.refutes) == (False, True)
    assert against.confidence is not None
    assert against.confidence > 0.99
    unsure = NliJudge(models["neutral"]).judge(CLAIM, CLAIM)
    assert (unsure.supported, unsure.refutes) == (False, False)


def test_a_two_way_faithfulness_head_supports_and_never_refutes(models: dict[str, Path]) -> None:
    judge = NliJudge(models["consistent"])
    assert (judge.labels.entail, judge.labels.contradict) == (1, None)
    found = judge.judge(CLAIM, CLAIM)
    assert (found.supported, found.refutes) == (True, False)


def test_labels_are_read_by_name_in_any_order_and_unknown_heads_are_refused(
    tmp_path: Path,
) -> None:
    def labels(names: dict[str, str]) -> Labels:
        (tmp_path / "config.json").write_text(json.dumps({"id2label": names}))
        return Labels.read(tmp_path)

    assert labels({"0": "CONTRADICTION", "1": "NEUTRAL", "2": "ENTAILMENT"}) == Labels(2, 0, 3)
    assert labels({"0": "not_supported", "1": "supported"}).entail == 1
    assert labels({"0": "inconsistent", "1": "consistent"}) == Labels(1, None, 2)
    with pytest.raises(NliModelError, match="positive"):
        labels({"0": "negative", "1": "positive"})
    with pytest.raises(NliModelError, match="without a contradiction"):
        labels({"0": "entailment", "1": "neutral", "2": "other"})
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(NliModelError, match=r"config\.json"):
        Labels.read(tmp_path)


def test_a_missing_directory_or_an_empty_setting_is_said_plainly(
    settings: Any, tmp_path: Path
) -> None:
    settings.MARIA_NLI_MODEL = ""
    assert nli.nli_judge() is None
    settings.MARIA_NLI_MODEL = str(tmp_path / "nowhere")
    with pytest.raises(NliModelError, match="not a directory"):
        nli.nli_judge()
    # a directory without weights fails at load and never reaches for a download
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text('{"id2label": {"0": "entailment", "1": "x"}}')
    with pytest.raises(NliModelError, match="cannot load"):
        NliJudge(tmp_path / "empty")


def test_nothing_to_judge_is_an_error_verdict_not_an_exception(models: dict[str, Path]) -> None:
    judge = NliJudge(models["entails"])
    for claim, evidence in (("", CLAIM), (CLAIM, "   "), ("\u200b", CLAIM)):
        found = judge.judge(claim, evidence)
        assert found.supported is None
        assert found.error


def test_long_evidence_is_read_in_windows_of_whole_sentences() -> None:
    sentence = "The division head approves expenses above 500,000 yen in advance. "
    windows = nli._windows(sentence * 200)
    assert len(windows) > 1
    assert all(len(w) <= nli.WINDOW_CHARACTERS for w in windows)
    assert all(w.endswith("advance.") for w in windows)
    assert len(nli._windows(sentence * 5000)) == nli.MAX_WINDOWS


def test_entailment_is_the_best_windows_and_contradiction_the_matching_windows() -> None:
    labels = Labels(entail=0, contradict=2, count=3)
    # window 1 is about something else and "contradicts"; window 2 is about the claim
    rows = [[0.05, 0.35, 0.60], [0.10, 0.05, 0.85], [0.02, 0.97, 0.01]]
    found = verdict_from(rows, labels, "m")
    assert (found.supported, found.refutes, found.confidence) == (False, True, 0.85)
    # one window that entails it is enough
    rows.append([0.92, 0.05, 0.03])
    found = verdict_from(rows, labels, "m")
    assert (found.supported, found.refutes, found.confidence) == (True, False, 0.92)
    # neither side sure: no support, no refutation
    found = verdict_from([[0.40, 0.20, 0.40]], labels, "m")
    assert (found.supported, found.refutes) == (False, False)
