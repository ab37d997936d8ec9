"""The LangChain adapter (`pip install 'maria-client[langchain]'`).

`MariaRetriever` is a `BaseRetriever` over the engine's search: each `Document` carries its
citation in `metadata` (document, version, paragraph, start, end) with what the engine knows
of it (section, title, kind, status, effective_date, zone, superseded, score).
`submit_answer` / `decision_submitter` hand a chain's answer and the documents it was given
to the engine as a plain-answer decision, `[n]` markers pointing into them in order, and
return the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda
from pydantic import ConfigDict

from maria_client.client import Maria
from maria_client.models import Decision, Passage

CITATION_KEYS = ("document", "version", "paragraph")


def passage_document(passage: Passage) -> Document:
    """A search passage as a LangChain document, its citation in the metadata."""
    return Document(
        page_content=passage.text,
        metadata={
            "document": passage.document,
            "version": passage.version,
            "paragraph": passage.paragraph,
            "start": passage.start,
            "end": passage.end,
            "section": passage.section,
            "title": passage.title,
            "kind": passage.kind,
            "status": passage.status,
            "effective_date": (
                passage.effective_date.isoformat() if passage.effective_date else None
            ),
            "zone": passage.zone,
            "superseded": passage.superseded,
            "score": passage.score,
            "retrieved_at": passage.retrieved_at.isoformat() if passage.retrieved_at else None,
            "source": f"maria:{passage.document}/v{passage.version}#{passage.paragraph}",
        },
    )


class MariaRetriever(BaseRetriever):
    """Passages from the engine's own documents: what the agent may cite."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Maria
    zone: str | None = None
    k: int = 15
    include_superseded: bool = False

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        passages = self.client.search(
            query, zone=self.zone, k=self.k, include_superseded=self.include_superseded
        )
        return [passage_document(passage) for passage in passages]


def format_documents(documents: Sequence[Document]) -> str:
    """The documents numbered `[1]`, `[2]`, ... for a prompt, so that the answer's markers
    point into them in the order `submit_answer` sends them as sources."""
    return "\n\n".join(f"[{n}] {doc.page_content}" for n, doc in enumerate(documents, 1))


def _citation(document: Document) -> dict[str, Any]:
    # The version is optional (the latest is meant); document and paragraph are not.
    missing = [key for key in ("document", "paragraph") if document.metadata.get(key) is None]
    if missing:
        raise ValueError(
            f"a source document lacks {', '.join(missing)} in its metadata: "
            "use documents from MariaRetriever"
        )
    cited: dict[str, Any] = {
        key: int(document.metadata[key])
        for key in CITATION_KEYS
        if document.metadata.get(key) is not None
    }
    # When the engine retrieved it (the sealed bundle records it; default: the submission).
    if isinstance(document.metadata.get("retrieved_at"), str):
        cited["retrieved_at"] = document.metadata["retrieved_at"]
    return cited


def _text(answer: str | BaseMessage) -> str:
    """A chat model's answer as text (a message's content may be a list of parts)."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer.content, str):
        return answer.content
    parts = (
        part if isinstance(part, str) else str(part.get("text", "")) for part in answer.content
    )
    return "".join(parts)


def submit_answer(
    client: Maria,
    *,
    question: str,
    answer: str | BaseMessage,
    documents: Sequence[Document],
    zone: str,
    agent: str,
    timeout: float = 30.0,
) -> Decision:
    """Submit the answer with `documents` as its sources and return the verdict: the
    decision once the engine has graded it (gate set; an answer a reviewer must see is
    returned waiting, `state == "approval_required"`)."""
    decision = client.submit(
        question=question,
        answer=_text(answer),
        zone=zone,
        agent=agent,
        sources=[_citation(document) for document in documents],
    )
    return client.graded(decision.id, timeout) if decision.gate is None else decision


def decision_submitter(
    client: Maria, *, zone: str, agent: str, timeout: float = 30.0
) -> RunnableLambda[Mapping[str, Any], Decision]:
    """A runnable for the end of a chain: from `{"question" (or "input"), "answer",
    "documents" (or "context")}` to the verdict (`submit_answer`)."""

    def run(state: Mapping[str, Any]) -> Decision:
        question = state.get("question", state.get("input"))
        documents = state.get("documents", state.get("context"))
        if not isinstance(question, str) or documents is None or "answer" not in state:
            raise ValueError("needs question (or input), answer and documents (or context)")
        return submit_answer(
            client,
            question=question,
            answer=state["answer"],
            documents=list(documents),
            zone=zone,
            agent=agent,
            timeout=timeout,
        )

    return RunnableLambda(run, name="maria_decision")


__all__ = [
    "MariaRetriever",
    "decision_submitter",
    "format_documents",
    "passage_document",
    "submit_answer",
]
