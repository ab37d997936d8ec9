"""Validation in batches: one task takes the other waiting decisions of its zone along.

Each decision still has its own task (retries, redelivery and the exactly-once guarantee are
per decision), but under load a zone's decisions wait side by side, and one run validates
them together in one transaction. These tests hold the decisions' tasks back, then run them
by hand in the order a busy queue would.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any
from unittest.mock import Mock

import pytest
from django.db import connection

from decisions import services, tasks
from decisions.models import Decision
from evidence.models import ValidationReport
from tests.decisions.conftest import GOOD, WRONG_NUMBER, cite
from tests.decisions.helpers import kinds, second_session, wait_until
from trail import verify

OTHER_ZONE = "G1.U1.P1.Z2"
COMPLETED = [
    "decision.proposed",
    "decision.validated",
    "decision.approved",
    "decision.executed",
    "decision.completed",
]
BLOCKED = ["decision.proposed", "decision.validated", "decision.failed"]

Task = tuple[int, str]  # a validation task's arguments: decision id, bundle hash


@pytest.fixture
def held_tasks(monkeypatch: pytest.MonkeyPatch) -> list[Task]:
    """The validation tasks submissions send, held back instead of run."""
    held: list[Task] = []
    monkeypatch.setattr(services, "_schedule_validation", lambda d, b: held.append((d, b)))
    return held


@pytest.fixture
def waiting(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    held_tasks: list[Task],
) -> Callable[[int], list[int]]:
    """Submit `count` answers to a lenient zone whose tasks wait; every third one cites a
    wrong number. Their ids, oldest first."""
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)

    def run(count: int) -> list[int]:
        ids = []
        for n in range(count):
            text = WRONG_NUMBER if n % 3 == 2 else GOOD
            ids.append(submit([{"text": text, "citations": [cite(policy_doc)]}]).json()["id"])
        return ids

    return run


def run_task(task: Task) -> str:
    """A first delivery of the task, as a worker runs it."""
    decision_id, bundle_hash = task
    return str(tasks.validate_decision.apply(args=(decision_id, bundle_hash)).get())


def states(ids: list[int]) -> list[str]:
    by_id = dict(Decision.objects.filter(pk__in=ids).values_list("pk", "state"))
    return [by_id[decision_id] for decision_id in ids]


def reports_per_decision(ids: list[int]) -> list[int]:
    return [
        ValidationReport.objects.filter(bundle__decision__pk=decision_id).count()
        for decision_id in ids
    ]


def judged_alone(ids: list[int]) -> list[tuple[str, str]]:
    """The state and gate each decision gets when validated by itself (the reference)."""
    outcome = []
    for decision in Decision.objects.filter(pk__in=ids).order_by("pk"):
        report = decision.report
        assert report is not None
        outcome.append((decision.state, report.gate))
    return outcome


@pytest.mark.django_db
def test_one_task_validates_the_waiting_decisions_of_its_zone_and_theirs_change_nothing(
    waiting: Callable[[int], list[int]], submit: Callable[..., Any], held_tasks: list[Task]
) -> None:
    # given five answers waiting in the zone, and one in another zone
    ids = waiting(5)
    other_agent = f"{OTHER_ZONE}.A1"
    elsewhere = submit(
        [{"text": GOOD, "citations": []}], zone=OTHER_ZONE, agent=other_agent, token_of=other_agent
    ).json()["id"]
    assert states([*ids, elsewhere]) == ["proposed"] * 6

    # when the first one's task runs
    assert run_task(held_tasks[0]) == "completed"

    # then every waiting decision of its zone was validated and routed, each on its own
    # terms (the wrong number is blocked), each once, with a trail that verifies
    assert states(ids) == ["completed", "completed", "failed", "completed", "completed"]
    assert [kinds(i) for i in ids] == [COMPLETED, COMPLETED, BLOCKED, COMPLETED, COMPLETED]
    assert reports_per_decision(ids) == [1] * 5
    assert set(Decision.objects.filter(pk__in=ids).values_list("attempts", flat=True)) == {1}
    assert Decision.objects.get(pk=ids[2]).refusal is not None
    # and the other zone's decision still waits for its own task
    assert states([elsewhere]) == ["proposed"]

    # when the other tasks arrive
    for task in held_tasks[1:]:
        run_task(task)

    # then they change nothing of what was validated, and the other zone's is validated too
    assert [kinds(i) for i in ids] == [COMPLETED, COMPLETED, BLOCKED, COMPLETED, COMPLETED]
    assert reports_per_decision(ids) == [1] * 5
    assert states([elsewhere]) != ["proposed"]
    assert verify.verify_database().intact


@pytest.mark.django_db
def test_a_batch_gives_each_decision_the_report_it_gets_alone(
    waiting: Callable[[int], list[int]],
    held_tasks: list[Task],
    settings: Any,
) -> None:
    # given six waiting answers, three validated one at a time and three together
    ids = waiting(6)
    settings.MARIA_VALIDATION_BATCH = 1
    for task in held_tasks[:3]:
        run_task(task)
    settings.MARIA_VALIDATION_BATCH = 16
    run_task(held_tasks[3])

    # then the same answers got the same verdicts and the same scores either way
    alone, together = judged_alone(ids[:3]), judged_alone(ids[3:])
    assert alone == together
    scores = list(
        Decision.objects.filter(pk__in=ids)
        .order_by("pk")
        .values_list("sufficiency", "completeness", "cohesion", "mode")
    )
    # (recency decays with the seconds between the two runs: equal but for that)
    for one, two in zip(scores[:3], scores[3:], strict=True):
        assert one[3] == two[3]
        assert one[:3] == pytest.approx(two[:3], rel=1e-6)


@pytest.mark.django_db
def test_a_batch_takes_no_more_than_the_setting_oldest_first(
    waiting: Callable[[int], list[int]], held_tasks: list[Task], settings: Any
) -> None:
    # given five waiting answers and batches of three
    settings.MARIA_VALIDATION_BATCH = 3
    ids = waiting(5)

    # when the newest one's task runs first
    run_task(held_tasks[4])

    # then it took the two oldest along, and the two between still wait
    assert states(ids) == ["completed", "completed", "proposed", "proposed", "completed"]


@pytest.mark.django_db
def test_the_workers_are_asked_to_drop_the_tasks_a_batch_made_needless_once_it_commits(
    waiting: Callable[[int], list[int]],
    held_tasks: list[Task],
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given three waiting answers, and a first run that fails
    ids = waiting(3)
    asked: list[list[int]] = []
    monkeypatch.setattr(tasks, "validations_skip", asked.append)
    real = services.evaluate_bundle
    monkeypatch.setattr(services, "evaluate_bundle", Mock(side_effect=RuntimeError("down")))
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError):
        services.decision_validate(decision_id=ids[0], bundle_hash=held_tasks[0][1], others=15)

    # then no task is dropped for a batch that rolled back
    assert asked == []

    # when a run validates them all
    monkeypatch.setattr(services, "evaluate_bundle", real)
    with django_capture_on_commit_callbacks(execute=True):
        services.decision_validate(decision_id=ids[0], bundle_hash=held_tasks[0][1], others=15)

    # then, after its commit, the workers are asked to drop every one's task
    assert asked == [ids]
    assert [tasks.validation_task_id(i) for i in ids] == [f"validate-decision-{i}" for i in ids]


@pytest.mark.django_db
def test_a_retry_validates_its_decision_alone(
    waiting: Callable[[int], list[int]],
    held_tasks: list[Task],
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    # given three waiting answers, and a first try of the first one's task that fails
    ids = waiting(3)
    tries: list[int] = []
    real = services.decision_validate

    def flaky(*, decision_id: int, bundle_hash: str, others: int = 0) -> Decision:
        tries.append(others)
        if len(tries) == 1:
            raise RuntimeError("database restarting")
        return real(decision_id=decision_id, bundle_hash=bundle_hash, others=others)

    monkeypatch.setattr(tasks, "decision_validate", flaky)
    monkeypatch.setattr(tasks, "backoff", lambda retries: 0)

    # when its task runs and is retried
    run_task(held_tasks[0])

    # then the first try would have taken the others along, the retry took none of them:
    # a decision whose trouble is not theirs cannot fail them
    assert tries == [settings.MARIA_VALIDATION_BATCH - 1, 0]
    assert states(ids) == ["completed", "proposed", "proposed"]


@pytest.mark.django_db
def test_a_bundle_that_cannot_be_evaluated_is_left_to_its_own_task(
    waiting: Callable[[int], list[int]],
    held_tasks: list[Task],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given three waiting answers, and an evaluation that breaks on the second one's bundle
    ids = waiting(3)
    broken = Decision.objects.get(pk=ids[1]).bundle_id
    real = services.evaluate_bundle

    def evaluate(bundle: Any, *args: Any, **kwargs: Any) -> Any:
        if bundle.pk == broken:
            raise RuntimeError("the embedder choked on this bundle")
        return real(bundle, *args, **kwargs)

    monkeypatch.setattr(services, "evaluate_bundle", evaluate)

    # when the first one's task runs
    run_task(held_tasks[0])

    # then the others were validated and the broken one still waits for its own task
    assert states(ids) == ["completed", "proposed", "failed"]
    assert reports_per_decision(ids) == [1, 0, 1]

    # when the broken one's own run meets the same trouble, it fails and writes nothing
    with pytest.raises(RuntimeError, match="choked"):
        services.decision_validate(decision_id=ids[1], bundle_hash=held_tasks[1][1], others=15)
    assert states(ids) == ["completed", "proposed", "failed"]
    assert kinds(ids[1]) == ["decision.proposed"]

    # and once the trouble is gone its task validates it
    monkeypatch.setattr(services, "evaluate_bundle", real)
    assert run_task(held_tasks[1]) == "completed"


# --- runs side by side (PostgreSQL row locks) ------------------------------------------------


class OtherRun:
    """Another run's transaction, holding decisions' rows as a run validating them does,
    until it rolls back (as a run that failed would)."""

    def __init__(self) -> None:
        self.session = second_session("maria-test-other-run")

    def hold(self, decision_id: int) -> None:
        self.session.execute(
            "SELECT 1 FROM decisions_decision WHERE id = %s FOR UPDATE", [decision_id]
        )

    def fail(self) -> None:
        self.session.rollback()


@pytest.fixture
def other_run() -> Iterator[OtherRun]:
    run = OtherRun()
    try:
        yield run
    finally:
        run.fail()
        run.session.close()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_decision_another_run_holds_is_not_waited_for_but_left_to_it(
    waiting: Callable[[int], list[int]], held_tasks: list[Task], other_run: OtherRun
) -> None:
    # given three waiting answers, the second held by another run
    ids = waiting(3)
    other_run.hold(ids[1])

    # when the first one's task runs
    run_task(held_tasks[0])

    # then it validated the first and the third without waiting for the second
    assert states(ids) == ["completed", "proposed", "failed"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_task_whose_decision_another_run_holds_does_the_others_then_waits_for_it(
    waiting: Callable[[int], list[int]], held_tasks: list[Task], other_run: OtherRun
) -> None:
    # given three waiting answers, the first held by another run
    ids = waiting(3)
    other_run.hold(ids[0])

    # when the first one's task runs
    outcome: list[str] = []

    def work() -> None:
        try:
            outcome.append(run_task(held_tasks[0]))
        finally:
            connection.close()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()

    # then it validates the other two meanwhile, and waits for the held one
    wait_until(
        lambda: states(ids)[1:] == ["completed", "failed"],
        timeout=30,
        what="the others to be validated while the first is held",
    )
    thread.join(0.5)
    assert thread.is_alive()
    assert states(ids)[0] == "proposed"

    # when the other run fails and lets go of it
    other_run.fail()
    thread.join(30)

    # then the task validated its own decision, exactly once
    assert not thread.is_alive()
    assert outcome == ["completed"]
    assert kinds(ids[0]) == COMPLETED
    assert reports_per_decision(ids) == [1, 1, 1]
