"""The LangChain adapter against the live test server: a retrieval chain whose model is a
fake chat model from langchain-core's own test utilities (no network, no real LLM), its
answer and source documents handed to the engine as a plain-answer decision."""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableParallel, RunnablePassthrough

from maria_client import Decision, Maria
from maria_client.langchain import MariaRetriever, decision_submitter, format_documents
from tests.clients.conftest import AGENT, ZONE, Keys

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Who must approve expenses above 500,000 yen?"


def rag_chain(maria: Maria, llm: FakeListChatModel) -> Runnable[dict[str, Any], Decision]:
    """The README's chain ("Connect your RAG"), line for line: question -> retrieve (the
    token's zone) -> prompt -> model -> answer, then the engine's verdict."""
    prompt = ChatPromptTemplate.from_template("Cite as [n] only from:\n{context}\n\n{question}")
    question = itemgetter("question")
    context = {"context": lambda s: format_documents(s["documents"]), "question": question}
    return (
        RunnableParallel(question=question, documents=question | MariaRetriever(client=maria, k=5))
        | RunnablePassthrough.assign(answer=context | prompt | llm)
        | decision_submitter(maria, zone=ZONE, agent=AGENT)
    )


def marker_of(documents: list[Document], words: str) -> int:
    """The [n] of the first document containing `words`."""
    return next(n for n, doc in enumerate(documents, 1) if words in doc.page_content)


def test_the_retriever_gives_documents_whose_metadata_is_their_citation(
    keys: Keys, connect: Callable[[str], Maria], policy_doc: Any
) -> None:
    documents = MariaRetriever(client=connect(keys.agent), zone=ZONE, k=3).invoke(QUESTION)

    assert documents
    top = documents[0]
    assert "500,000 yen require prior approval" in top.page_content
    assert {
        key: top.metadata[key] for key in ("document", "version", "paragraph", "start", "end")
    } == {
        "document": policy_doc.version.document_id,
        "version": policy_doc.version.version,
        "paragraph": policy_doc.number,
        "start": 0,
        "end": len(policy_doc.text),
    }
    assert (top.metadata["kind"], top.metadata["status"]) == ("policy", "approved")
    assert isinstance(top.metadata["score"], float)


@pytest.mark.parametrize(
    ("amount", "gate", "state"),
    [("500,000", "auto", "completed"), ("300,000", "blocked", "failed")],
)
def test_a_chains_answer_and_its_sources_come_back_as_the_engines_verdict(
    keys: Keys,
    connect: Callable[[str], Maria],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    amount: str,
    gate: str,
    state: str,
) -> None:
    # given a lenient zone and a chain whose model cites the approval passage as [n]
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    client = connect(keys.agent)
    found = MariaRetriever(client=client, zone=ZONE, k=5).invoke(QUESTION)
    n = marker_of(found, "500,000 yen require")
    model = FakeListChatModel(
        responses=[
            f"Expenses above {amount} yen require prior approval by the division head [{n}]."
        ]
    )

    # when the chain runs
    verdict = rag_chain(client, model).invoke({"question": QUESTION})

    # then the engine graded the answer against the cited passage
    assert isinstance(verdict, Decision)
    assert (verdict.gate, verdict.state) == (gate, state)
    assert verdict.question == QUESTION
    assert f"{amount} yen" in verdict.answer
    if gate == "blocked":
        assert verdict.refusal is not None
