"""What a validation asks the database, pinned: the pipeline's throughput is bounded by the
worker's CPU per decision (bench/bench_pipeline.py), and most of that goes to building,
sending and reading queries, not to judging claims. A change that adds a query to every
validation fails here, listing what was asked; one that removes some may lower the pins.

Each count is what a worker asks for one task: the validation's transaction and the work
after its commit (a reviewers' queue push), with the savepoints of the test's own outer
transaction, and without the graph's following of the trail (a run of its own).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from decisions import services, tasks
from decisions.models import Decision, Outbox
from decisions.signals import queue_event
from graph import tasks as graph_tasks
from tests.decisions.conftest import GOOD, UNVERIFIABLE, cite

Task = tuple[int, str]  # a validation task's arguments: decision id, bundle hash

# Most queries one task may ask, by backend. SQLite takes the zone's chain first (its write
# lock) and has no row locks, so it asks a little differently.
RELEASED = {"postgresql": 13, "sqlite": 17}
QUEUED = {"postgresql": 15, "sqlite": 19}
BATCH_OF_FOUR = {"postgresql": 25, "sqlite": 35}


@pytest.fixture
def held_tasks(monkeypatch: pytest.MonkeyPatch) -> list[Task]:
    """The validation tasks submissions send, held back instead of run; the graph does not
    follow the trail (its runs are counted apart, bench/bench_pipeline.py)."""
    held: list[Task] = []
    monkeypatch.setattr(services, "_schedule_validation", lambda d, b: held.append((d, b)))
    monkeypatch.setattr(graph_tasks, "trail_follow_soon", lambda: None)
    return held


@pytest.fixture
def lenient(set_policy: Callable[..., Any]) -> None:
    """A zone whose thresholds a well-cited answer passes: it goes the whole auto path."""
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)


@pytest.fixture
def worker(django_capture_on_commit_callbacks: Any) -> Callable[[Task], list[str]]:
    """Run a held task as a worker does, with its after-commit work: the queries asked."""

    def run(task: Task) -> list[str]:
        with (
            CaptureQueriesContext(connection) as asked,
            django_capture_on_commit_callbacks(execute=True),
        ):
            tasks.validate_decision.apply(args=task).get()
        return [q["sql"] for q in asked.captured_queries]

    return run


def answer(text: str, paragraph: Any) -> list[dict[str, Any]]:
    return [{"text": text, "citations": [cite(paragraph)]}]


def at_most(pins: dict[str, int], asked: list[str]) -> None:
    pin = pins[connection.vendor]
    listed = "\n".join(sql[:160] for sql in asked)
    assert len(asked) <= pin, f"{len(asked)} queries, at most {pin} pinned:\n{listed}"


@pytest.mark.django_db
def test_an_answer_released_at_once_is_validated_in_a_pinned_number_of_queries(
    policy_doc: Any,
    lenient: None,
    submit: Callable[..., Any],
    held_tasks: list[Task],
    worker: Callable[[Task], list[str]],
) -> None:
    # given a well-cited answer waiting in a lenient zone
    submit(answer(GOOD, policy_doc))
    # when a worker validates it
    asked = worker(held_tasks[-1])
    # then it is released, and the worker asked no more than the pin
    assert Decision.objects.get(pk=held_tasks[-1][0]).state == "completed"
    at_most(RELEASED, asked)


@pytest.mark.django_db
def test_an_answer_sent_to_reviewers_is_validated_and_pushed_in_a_pinned_number_of_queries(
    policy_doc: Any,
    lenient: None,
    submit: Callable[..., Any],
    held_tasks: list[Task],
    worker: Callable[[Task], list[str]],
) -> None:
    # given an answer its paragraph neither supports nor refutes
    submit(answer(UNVERIFIABLE, policy_doc))
    # when a worker validates it
    asked = worker(held_tasks[-1])
    # then it waits for a reviewer, the reviewers' screens were told, and the worker asked
    # no more than the pin: no webhook token (nothing is sent to the agent yet), no
    # knowledge conflict (its paragraph has none), the push claimed without a reread
    assert Decision.objects.get(pk=held_tasks[-1][0]).state == "approval_required"
    assert not any("coordinates_apitoken" in sql for sql in asked)
    assert not any(sql.startswith('SELECT "evidence_knowledgeconflict"') for sql in asked)
    assert sum(sql.startswith('UPDATE "decisions_outbox"') for sql in asked) == 2
    assert not any(sql.startswith('SELECT "decisions_outbox"') for sql in asked)
    at_most(QUEUED, asked)


@pytest.mark.django_db
def test_four_waiting_answers_validated_together_cost_little_more_than_one(
    policy_doc: Any,
    lenient: None,
    submit: Callable[..., Any],
    held_tasks: list[Task],
    worker: Callable[[Task], list[str]],
    settings: Any,
) -> None:
    # given four answers waiting in one zone, one of them for a reviewer
    settings.MARIA_VALIDATION_BATCH = 4
    for text in (GOOD, GOOD, UNVERIFIABLE, GOOD):
        submit(answer(text, policy_doc))
    # when the first one's task runs, taking the others along
    asked = worker(held_tasks[-4])
    # then all four are routed, in one read of their policy and cited paragraphs
    ids = [decision_id for decision_id, _ in held_tasks[-4:]]
    states = dict(Decision.objects.filter(pk__in=ids).values_list("pk", "state"))
    assert [states[i] for i in ids] == ["completed", "completed", "approval_required", "completed"]
    assert sum('FROM "evidence_paragraph"' in sql for sql in asked) == 1
    at_most(BATCH_OF_FOUR, asked)


@pytest.mark.django_db
def test_a_batch_tells_the_reviewers_of_each_answer_it_queues_in_one_claim_and_one_sent(
    policy_doc: Any,
    lenient: None,
    submit: Callable[..., Any],
    held_tasks: list[Task],
    worker: Callable[[Task], list[str]],
    settings: Any,
) -> None:
    # given four answers waiting in one zone, each for a reviewer, and the zone's screens
    settings.MARIA_VALIDATION_BATCH = 4
    heard: list[dict[str, Any]] = []

    def listen(sender: Any, zone: Any, event: dict[str, Any], **kwargs: Any) -> None:
        heard.append(event)

    queue_event.connect(listen, dispatch_uid="test-heard")
    try:
        for _ in range(4):
            submit(answer(UNVERIFIABLE, policy_doc))
        ids = [decision_id for decision_id, _ in held_tasks[-4:]]
        heard.clear()
        # when the first one's task runs, taking the others along
        asked = worker(held_tasks[-4])
    finally:
        queue_event.disconnect(dispatch_uid="test-heard")
    # then the screens heard of each queued answer once, and every push row is sent
    assert sorted(e["decision"]["id"] for e in heard) == ids
    assert {e["type"] for e in heard} == {"decision.added"}
    assert not Outbox.objects.filter(decision_id__in=ids, sent_at__isnull=True).exists()
    # in one insert, one claim and one "sent" for the four, not four of each
    outbox = [sql for sql in asked if '"decisions_outbox"' in sql.split("(")[0]]
    assert [sql.split()[0] for sql in outbox] == ["INSERT", "UPDATE", "UPDATE"]
