"""The reranker after the hybrid top k (seed 000 §11.6: "top k = 15 candidates before
reranking"; the paper names no reranker).

Ours is the calibrated "does this answer the question" model (evidence/questions.py,
addressing_model.json): a retrieved paragraph ranks by how well its best sentence answers
the part of the question it answers best, read beside the paragraph's other sentences, as
a multiple of the reader's pass mark. That is the relevance r_j the sufficiency S will give
the evidence (docs/math.md §2), uncapped, so `ask` puts first the paragraphs that will count
toward S >= tau. The hybrid (fused) order breaks ties. Chosen over the other candidates the
project already has by bench/bench_rerank.py (recall@k and MRR on the held-out JSQuAD
relevance pairs); a cross-encoder would need model weights fetched at run time.
"""

from __future__ import annotations

from collections.abc import Sequence

from evidence.questions import AddressingModel, Question, answering


def answering_score(asked: Question, text: str, *, fitted: AddressingModel | None = None) -> float:
    """The paragraph's best addressing probability over the reader's pass mark (1 = just
    answers; summaries are answered by any paragraph, so all score 1)."""
    if any(part.kind == "summary" for part in asked.parts):
        return 1.0
    best, threshold = answering(asked, text, fitted=fitted)
    return best / threshold if threshold > 0 else best


def rerank(
    asked: Question, texts: Sequence[str], *, fitted: AddressingModel | None = None
) -> list[int]:
    """The indices of `texts` (given in the hybrid order, best first) best answering first;
    equal scores keep the hybrid order."""
    scores = [answering_score(asked, text, fitted=fitted) for text in texts]
    return sorted(range(len(texts)), key=lambda i: (-scores[i], i))
