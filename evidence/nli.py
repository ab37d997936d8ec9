"""An optional local NLI judge: a cross-encoder the operator has on disk (``MARIA_NLI_MODEL``,
a Hugging Face model directory: HHEM, MiniCheck, a DeBERTa-MNLI ...), loaded with
sentence-transformers' `CrossEncoder` (the `nli` extra; ``MARIA_NLI_BACKEND`` onnx or
openvino where the directory holds such weights). Never part of the default install, never
a download: the directory must hold the model (``local_files_only``).

Like the LLM judge (evidence.judge) it answers with a `JudgeVerdict`; what it may change is
the zone's to say (`policy.judge_moves`, applied by evidence.validation): on its own word a
claim the rules could not verify may become verified (entailment) or refuted
(contradiction), never the other way round.

Labels come from the directory's config.json (``id2label``): a three-way NLI head
(entailment / neutral / contradiction, in any order and case), or a two-way faithfulness head
(consistent / supported / entailment against the rest, as HHEM and MiniCheck name them). A
head with other names is refused at load, with the names it has.

Long evidence is read in windows of whole sentences (`WINDOW_CHARACTERS`), as the model's
input is bounded: entailment is the best window's (the claim needs one place that says it),
contradiction is that of the window that matches the claim best (a window about something
else contradicting it proves nothing).
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings

from evidence.judge import JudgeVerdict
from evidence.text import check_form, split_sentences

logger = logging.getLogger(__name__)

# Characters of evidence per window: about 300 tokens of English, within a 512-token model
# with the claim beside it.
WINDOW_CHARACTERS = 1_200
MAX_WINDOWS = 64  # a longer source is read in its first 64 windows
BACKENDS = ("torch", "onnx", "openvino")

_ENTAIL = ("entail", "consistent", "support", "faithful", "true")
_CONTRADICT = ("contradict", "refute")


class NliModelError(ValueError):
    """The model directory cannot serve as a judge (missing, unreadable, unknown labels)."""


@dataclass(frozen=True)
class Labels:
    """Which output of the head is which: `entail` always, `contradict` for a 3-way head."""

    entail: int
    contradict: int | None
    count: int

    @classmethod
    def read(cls, directory: Path) -> Labels:
        try:
            config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise NliModelError(f"{directory}: no readable config.json ({exc})") from exc
        raw = config.get("id2label") if isinstance(config, dict) else None
        if not isinstance(raw, dict) or len(raw) < 2:
            raise NliModelError(f"{directory}: config.json names no labels (id2label)")
        names = {int(k): str(v).lower() for k, v in raw.items()}
        # "not_supported", "unsupported", "inconsistent", "non_entailment" name the other side.
        negated = {i for i, name in names.items() if name.startswith(("not", "non", "un", "in"))}
        found = {
            kind: [
                i
                for i, name in names.items()
                if i not in negated and any(cue in name for cue in cues)
            ]
            for kind, cues in (("entail", _ENTAIL), ("contradict", _CONTRADICT))
        }
        if len(found["entail"]) != 1 or len(found["contradict"]) > 1:
            raise NliModelError(
                f"{directory}: labels {sorted(names.values())} name no single entailment "
                "(entailment, consistent, supported) and at most one contradiction"
            )
        contradict = found["contradict"][0] if found["contradict"] else None
        if contradict is None and len(names) > 2:
            raise NliModelError(
                f"{directory}: {len(names)} labels {sorted(names.values())} without a "
                "contradiction: a three-way head must name one"
            )
        return cls(entail=found["entail"][0], contradict=contradict, count=len(names))


class NliJudge:
    """A cross-encoder over (evidence, claim): `judge(claim, evidence)` -> JudgeVerdict."""

    def __init__(self, path: str | Path, *, backend: str = "torch", device: str = "cpu") -> None:
        directory = Path(path)
        if not directory.is_dir():
            raise NliModelError(f"MARIA_NLI_MODEL {str(path)!r} is not a directory")
        if backend not in BACKENDS:
            raise NliModelError(f"MARIA_NLI_BACKEND must be one of {', '.join(BACKENDS)}")
        self.labels = Labels.read(directory)
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise NliModelError(
                "the local NLI judge needs the nli extra: pip install -e '.[nli]'"
            ) from exc
        self.name = f"nli:{directory.name}"
        # local_files_only: a directory that lacks the weights fails here, never downloads.
        try:
            self._model: Any = CrossEncoder(
                str(directory), device=device, local_files_only=True, backend=backend
            )
        except (OSError, ValueError, RuntimeError) as exc:
            raise NliModelError(f"{directory}: cannot load the model ({exc})") from exc
        self._lock = threading.Lock()  # one forward pass at a time per process

    def probabilities(self, pairs: list[tuple[str, str]]) -> list[list[float]]:
        """Softmax over the head's labels for each (premise, hypothesis) pair."""
        with self._lock:
            scores = self._model.predict(pairs, apply_softmax=True, show_progress_bar=False)
        return [[float(x) for x in row] for row in scores]

    def judge(self, claim: str, evidence: str) -> JudgeVerdict:
        """Whether the evidence entails, contradicts or neither the claim. Never raises for
        an input: an empty claim or evidence is an error verdict."""
        # The form every check reads (evidence.text.check_form): no hidden characters.
        claim, windows = check_form(claim).strip(), _windows(check_form(evidence))
        if not claim or not windows:
            return JudgeVerdict(None, None, "", self.name, error="nothing to judge")
        try:
            rows = self.probabilities([(window, claim) for window in windows])
        except Exception as exc:  # the model's own failure costs the signal, not the answer
            logger.warning("NLI judge %s failed: %s", self.name, exc)
            return JudgeVerdict(None, None, "", self.name, error=f"the model failed: {exc}")
        return verdict_from(rows, self.labels, self.name)


def verdict_from(rows: list[list[float]], labels: Labels, model: str) -> JudgeVerdict:
    """The verdict from each window's probabilities (see the module's docstring)."""
    best = max(range(len(rows)), key=lambda i: rows[i][labels.entail])
    entail = rows[best][labels.entail]
    if labels.contradict is None:
        # A two-way head: "not consistent" is not a contradiction, only no support.
        return JudgeVerdict(
            entail >= 0.5,
            entail if entail >= 0.5 else 1 - entail,
            f"P(entailment) {entail:.2f} in window {best + 1} of {len(rows)}",
            model,
        )
    against = labels.contradict
    # The window the claim is most about: the one that least says "neutral".
    about = max(range(len(rows)), key=lambda i: rows[i][labels.entail] + rows[i][against])
    contradict = rows[about][against]
    reason = (
        f"P(entailment) {entail:.2f} in window {best + 1}, P(contradiction) {contradict:.2f} "
        f"in window {about + 1}, of {len(rows)}"
    )
    if entail >= contradict and entail >= 0.5:
        return JudgeVerdict(True, entail, reason, model)
    if contradict > entail and contradict >= 0.5:
        return JudgeVerdict(False, contradict, reason, model, refutes=True)
    return JudgeVerdict(False, 1 - max(entail, contradict), reason, model)


def _windows(evidence: str) -> list[str]:
    """The evidence in windows of whole sentences of at most WINDOW_CHARACTERS (a longer
    sentence is a window of its own, cut)."""
    windows: list[str] = []
    current = ""
    for sentence in split_sentences(evidence):
        sentence = sentence.strip()[:WINDOW_CHARACTERS]
        if current and len(current) + 1 + len(sentence) > WINDOW_CHARACTERS:
            windows.append(current)
            current = ""
        current = f"{current} {sentence}".strip()
    if current:
        windows.append(current)
    return windows[:MAX_WINDOWS]


_loading = threading.Lock()


def nli_judge() -> NliJudge | None:
    """The judge ``MARIA_NLI_MODEL`` names (read at call time), loaded once per process and
    path; None when the setting is empty. A directory that cannot serve raises
    NliModelError."""
    path = str(getattr(settings, "MARIA_NLI_MODEL", "") or "").strip()
    if not path:
        return None
    backend = str(getattr(settings, "MARIA_NLI_BACKEND", "") or "torch")
    with _loading:
        return _load(path, backend)


@lru_cache(maxsize=2)
def _load(path: str, backend: str) -> NliJudge:
    return NliJudge(path, backend=backend)


__all__ = [
    "BACKENDS",
    "Labels",
    "NliJudge",
    "NliModelError",
    "nli_judge",
    "verdict_from",
]
