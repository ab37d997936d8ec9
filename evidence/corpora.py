"""Labelled corpora for measuring and fitting the claim verifier, read through small adapters.

Each adapter turns one public corpus into `Example`s: the evidence, the claims that rest on it
(a summary's sentences, an NLI hypothesis) and whether they are supported. `held_out` says
whether an example belongs to the part the shipped model is measured on rather than fitted
on: SummEdits' own "evaluation" split, and JNLI's odd-numbered pairs. The corpora stay
outside the repository; only figures and fitted coefficients derived from them are kept.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

from evidence.text import split_sentences


@dataclass(frozen=True, slots=True)
class Example:
    """One labelled (evidence, claims) pair: supported means every claim should pass."""

    corpus: str
    group: str
    tags: tuple[str, ...]
    evidence: str
    claims: tuple[str, ...]
    supported: bool
    held_out: bool = True


def summedits(path: Path) -> list[Example]:
    """SummEdits (one domain a file): label 1 consistent, 0 inconsistent; `edit_types` names
    the edits (entity swaps, antonyms, negations, inserted facts)."""
    rows = []
    for record in json.loads(path.read_text(encoding="utf-8")):
        edits = record.get("edit_types") or "[]"
        names = ast.literal_eval(edits) if isinstance(edits, str) else list(edits)
        supported = int(record["label"]) == 1
        summary = str(record["summary"])
        rows.append(
            Example(
                corpus="summedits",
                group=path.stem,
                tags=tuple(sorted(names)) or (("consistent",) if supported else ("unnamed",)),
                evidence=str(record["doc"]),
                claims=tuple(split_sentences(summary)) or (summary,),
                supported=supported,
                held_out=record.get("split") == "evaluation",
            )
        )
    return rows


def jnli(path: Path) -> list[Example]:
    """JNLI: sentence1 the premise, sentence2 the hypothesis; entailment = supported."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        label = str(record["label"])
        rows.append(
            Example(
                corpus="jnli",
                group=label,
                tags=(label,),
                evidence=str(record["sentence1"]),
                claims=(str(record["sentence2"]),),
                supported=label == "entailment",
                held_out=int(record["sentence_pair_id"]) % 2 == 1,
            )
        )
    return rows


# The project's own grounding corpus: faithful, opinion and meta claims must be kept.
KEPT_LABELS = frozenset({"faithful", "opinion", "meta"})


def grounding_corpus(path: Path) -> list[Example]:
    data = json.loads(path.read_text(encoding="utf-8"))
    paragraphs = data["paragraphs"]
    return [
        Example(
            corpus="own",
            group=claim["label"],
            tags=(claim["label"],),
            evidence=paragraphs[claim["p"]],
            claims=(claim["claim"],),
            supported=claim["label"] in KEPT_LABELS,
        )
        for claim in data["claims"]
    ]


# The reviews export's lines (GET /api/v1/reviews/export/, decisions.api_reviews) say what
# they are; JNLI's do not.
REVIEW_LINE = "review.claim"
REVIEWS_HELD_OUT_EVERY = 5  # one decision in five is measured on, never fitted on


def reviews(path: Path) -> list[Example]:
    """The reviews export: each reviewed claim against the span it was checked on, labelled
    with the reviewer's verdict. Lines without a span (a claim that cited nothing) teach
    the verifier nothing and are skipped. A decision's claims stay on one side of the split:
    held out when its id is a multiple of REVIEWS_HELD_OUT_EVERY."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if record.get("type") != REVIEW_LINE:
            continue
        claim, span = str(record.get("claim") or ""), str(record.get("span") or "")
        if not claim.strip() or not span.strip():
            continue
        supported = bool(record["reviewer_supported"])
        action = str(record.get("action") or "")
        rows.append(
            Example(
                corpus="reviews",
                group=str(record.get("zone") or ""),
                tags=(action, "supported" if supported else "unsupported"),
                evidence=span,
                claims=(claim,),
                supported=supported,
                held_out=int(record.get("decision") or 0) % REVIEWS_HELD_OUT_EVERY == 0,
            )
        )
    return rows


def _is_reviews_export(path: Path) -> bool:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                try:
                    first = json.loads(line)
                except ValueError:
                    return False
                return isinstance(first, dict) and first.get("type") == REVIEW_LINE
    return False


def read(path: Path) -> list[Example]:
    """Any corpus by its form: a folder of SummEdits files, a .jsonl of JNLI or of the
    reviews export (told apart by their first line), or our JSON."""
    if path.is_dir():
        return [e for p in sorted(path.glob("*.json")) for e in summedits(p)]
    if path.suffix == ".jsonl":
        return reviews(path) if _is_reviews_export(path) else jnli(path)
    if path.name == "grounding_corpus.json":
        return grounding_corpus(path)
    return summedits(path)
