"""`ask` by the paper's pipeline (seed 000 §3.2): the hybrid top k = 15 (§11.6), reranked,
and an answer iff the evidence's sufficiency S reaches the zone's tau (§4.2); below it, the
paper's refusal: no answer text, the evidence that is missing named."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from coordinates.coordinate import parse
from decisions.models import Decision
from evidence.models import Paragraph
from evidence.search import search_paragraphs
from tests.decisions.conftest import AGENT, ZONE
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

QUESTION = "How many days per week may employees work remotely?"
THREE_DAYS = "Employees may work remotely up to three days per week."
# Paragraphs that share every key term of the question and state no number of days: the
# hybrid search ranks them above the one that answers.
DECOYS = [
    "Employees who work remotely record each remote work day of the week in the attendance system.",
    "Remote work days per week are reported by employees to the payroll team.",
    "Employees working remotely keep their remote work days per week visible in the calendar.",
    "The week's remote work days of employees are reviewed by the office manager.",
    "Employees may ask how remote work days per week are counted at the help desk.",
    "Remote employees log in to the virtual private network on remote work days each week.",
    "Employees' remote work days per week appear on the monthly attendance report.",
    "Work remotely days per week: employees see the intranet page on remote work.",
    "Employees on remote work days per week answer calls within the working hours.",
    "Remote work weekly days of employees are part of the team's planning meeting.",
    "Employees remotely working several days per week keep their laptop updated.",
    "Days per week of remote work by employees are counted by the attendance system each month.",
]
# The answer, last in a paragraph about other things: far down the hybrid order.
BURIED = (
    "The canteen opens at eight and closes at three. Parking permits are issued by the "
    f"facilities desk. Visitors sign in at reception and wear a badge. {THREE_DAYS}"
)


def post_ask(agent_client: Callable[[str], Any], question: str) -> Any:
    return agent_client(AGENT).post(
        "/api/v1/ask/", {"question": question, "zone": ZONE}, format="json"
    )


def test_an_answer_the_search_ranks_twelfth_is_found_and_reranked_first(
    ingest: Callable[..., Any],
    agent_client: Callable[[str], Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given rules whose answering paragraph the hybrid search ranks below eight others
    rules = [f"{i + 1}. Rule\n{text}" for i, text in enumerate([*DECOYS, BURIED])]
    ingest("Remote work rules\n\n" + "\n\n".join(rules) + "\n", title="Rules", key="rules")
    hits = search_paragraphs(QUESTION, scopes=[parse(ZONE)], k=15)
    texts: dict[Any, str] = dict(Paragraph.objects.values_list("id", "text"))
    ranked = [texts[hit.id] for hit in hits]
    assert ranked.index(BURIED) >= 8  # outside a top 8

    # when an agent asks what the buried sentence answers
    with django_capture_on_commit_callbacks(execute=True):
        response = post_ask(agent_client, QUESTION)

    # then the top 15, reranked, yield it, and it alone is the answer
    assert response.status_code == 201, response.json()
    assert response.json()["answer"] == THREE_DAYS
    assert [c["text"] for c in response.json()["claims"]] == [THREE_DAYS]


@pytest.fixture
def weak_memo(ingest: Callable[..., Any]) -> None:
    """The answering sentence in an archived email two years old: it addresses the question
    (above the addressing pass mark), and its confidence, so S, is about
    0.40 + 0.30 + 0.15 * 0.25 (recency) + 0.15 * 0.09 (authority) = 0.75."""
    ingest(
        f"Remote work\n\n{THREE_DAYS}\n",
        title="Remote work",
        key="remote-mail",
        kind="email",
        status="archived",
        effective_date=timezone.now().date() - timedelta(days=730),
    )


def test_the_same_evidence_answers_under_tau_050_and_is_refused_under_tau_085(
    weak_memo: None,
    agent_client: Callable[[str], Any],
    set_policy: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Seed 000 §13.2: a compliance zone may require tau = 0.85 where customer support
    # accepts tau = 0.50. Given a zone that accepts 0.50, the evidence (S about 0.75) answers
    set_policy(tau=0.50)
    with django_capture_on_commit_callbacks(execute=True):
        answered = post_ask(agent_client, QUESTION)
    assert answered.status_code == 201, answered.json()
    assert answered.json()["answer"] == THREE_DAYS
    s = Decision.objects.get(pk=answered.json()["id"]).report.sufficiency
    assert 0.70 < s < 0.85

    # when the zone requires 0.85, the same question over the same evidence
    set_policy(tau=0.85)
    response = post_ask(agent_client, QUESTION)

    # then it is refused: nothing decided, no answer text, S against tau, and the missing
    # evidence named: the part, the sentence that was found for it, and how far it reached
    assert response.status_code == 200
    body = response.json()
    assert body["decision"] is None
    refusal = body["refusal"]
    assert "answer" not in refusal
    assert Decision.objects.count() == 1  # only the earlier answer
    assert refusal["score"] == round(s, 3)
    assert refusal["threshold"] == 0.85
    [missing] = refusal["missing"]
    assert "days per week" in missing["asks"]
    assert missing["sentence"] == THREE_DAYS
    assert missing["sufficiency"] == round(s, 3)
    assert missing["asks"] in refusal["reason"]
    assert "0.85" in refusal["reason"]
    # and the refusal is on the zone's trail with S and tau
    event = TrailEvent.objects.get(kind="ask.refused")
    assert (event.payload["score"], event.payload["threshold"]) == (round(s, 3), 0.85)


def test_the_default_tau_answers_evidence_of_sufficiency_075(
    weak_memo: None, agent_client: Callable[[str], Any]
) -> None:
    # tau = 0.70 by default (docs/math.md §6): S about 0.75 is enough
    response = post_ask(agent_client, QUESTION)
    assert response.status_code == 201, response.json()
    assert response.json()["answer"] == THREE_DAYS
