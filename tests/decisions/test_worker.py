"""Validation under Celery: a real worker on PostgreSQL and Redis, a worker killed mid-task,
and retries that run out.

The real-worker tests start `celery -A maria worker --pool solo` as a child process on the
live test database (transactional tests: the data is committed, so another process sees
it), consuming a queue of their own on the broker so that nothing else takes their tasks.
Every wait is bounded. The retry tests run in eager mode on every backend.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from rest_framework.test import APIClient

from decisions import services, tasks
from decisions.models import Decision
from evidence.models import ValidationReport
from maria.metrics import TASK_RETRIES
from tests.decisions.conftest import AGENT, GOOD, WRONG_NUMBER, ZONE, cite
from tests.decisions.helpers import (
    Worker,
    answer_queue,
    kinds,
    retry_inline,
    second_session,
    sessions,
    tasks_to_broker,
    wait_until,
)
from tests.evidence.memo import MEMO_PARAGRAPHS, memo_text
from trail.models import TrailEvent

OTHER_ZONE, OTHER_AGENT = "G1.U1.P1.Z2", "G1.U1.P1.Z2.A1"
OLDER_MEMO_PARAGRAPHS = 20_000
SCAN = "evidence.tasks.scan_version_conflicts"
SCAN_SECONDS = 20
COMPLETED_PATH = [
    "decision.proposed",
    "decision.validated",
    "decision.approved",
    "decision.executed",
    "decision.completed",
]


# --- a real worker ---------------------------------------------------------------------------


@pytest.fixture
def broker_queue(
    transactional_db: None,
) -> Iterator[str]:
    """This test's own queue: tasks sent from here go to the broker, into it."""
    if not settings.REDIS_URL:
        pytest.skip("needs Redis (set REDIS_URL)")

    queue = f"maria-test-{uuid.uuid4().hex[:10]}"
    with tasks_to_broker(task_default_queue=queue):
        yield queue
    import redis

    # The queue and kombu's binding keys for it: only keys that carry this test's own name.
    client = redis.Redis.from_url(settings.REDIS_URL)
    for key in list(client.scan_iter(match=f"*{queue}*")):
        client.delete(key)
    client.close()


@pytest.fixture
def workers(broker_queue: str, tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """Start workers on the test database; all are gone, with their database sessions,
    before the database is flushed."""
    started: list[Worker] = []

    def start(
        name: str, pool: str = "solo", queues: str | None = None, **transport_options: Any
    ) -> Worker:
        worker = Worker(
            name=name,
            queue=broker_queue,
            redis_url=settings.REDIS_URL,
            log_path=tmp_path / f"{name}.log",
            transport_options=transport_options,
            pool=pool,
            queues=queues,
        )
        started.append(worker.start())
        return worker

    yield start
    for worker in started:
        worker.stop()
    wait_until(
        lambda: not any(sessions(worker.application_name) for worker in started),
        timeout=20,
        what="the workers' database sessions to end",
    )


def _settled(decision_id: int) -> bool:
    return Decision.objects.filter(pk=decision_id).exclude(state="proposed").exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_validates_grades_and_routes_submissions(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    workers: Callable[..., Worker],
) -> None:
    # given a lenient zone and a worker
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    worker = workers("w1")

    # when the agent submits a supported answer and a contradicted one
    good = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).response
    bad = submit([{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}]).response
    assert (good.status_code, bad.status_code) == (201, 201)

    # then the worker validates both: the first is carried to completed, the second blocked
    ids = [good.json()["id"], bad.json()["id"]]
    wait_until(
        lambda: all(_settled(decision_id) for decision_id in ids),
        timeout=60,
        what=f"the worker to validate decisions {ids}",
        detail=worker.log,
    )
    first = Decision.objects.get(pk=good.json()["id"])
    assert (first.state, first.gate) == ("completed", "auto")
    assert kinds(first.pk) == COMPLETED_PATH
    second = Decision.objects.get(pk=bad.json()["id"])
    assert (second.state, second.gate) == ("failed", "blocked")
    assert second.refusal is not None
    assert kinds(second.pk) == ["decision.proposed", "decision.validated", "decision.failed"]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_worker_drops_unrun_the_task_of_a_decision_a_batch_validated(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    workers: Callable[..., Worker],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a worker that is listening (it has done a task)
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    worker = workers("w1")
    claims = [{"text": GOOD, "citations": [cite(policy_doc)]}]
    _after_one_task(worker, submit, claims)
    # and two answers whose tasks are held back
    send = services._schedule_validation
    held: list[tuple[int, str]] = []
    monkeypatch.setattr(services, "_schedule_validation", lambda d, b: held.append((d, b)))
    ids = [submit(claims).response.json()["id"] for _ in range(2)]

    # when the first one's run validates both in one batch, here
    services.decision_validate(decision_id=ids[0], bundle_hash=held[0][1], others=1)
    assert [Decision.objects.get(pk=i).state for i in ids] == ["completed", "completed"]

    # then the worker is asked to drop the second one's task
    second = tasks.validation_task_id(ids[1])
    wait_until(
        lambda: "flagged as revoked" in worker.log() and second in worker.log(),
        timeout=30,
        what="the worker to hear which tasks to drop",
        detail=worker.log,
    )
    # and when that task arrives, it is discarded unrun
    send(*held[1])
    wait_until(
        lambda: (
            f"Discarding revoked task: decisions.tasks.validate_decision[{second}]" in worker.log()
        ),
        timeout=30,
        what="the worker to discard the task",
        detail=worker.log,
    )
    assert f"validate_decision[{second}] succeeded" not in worker.log()
    assert kinds(ids[1]) == COMPLETED_PATH


def _after_one_task(worker: Worker, submit: Callable[..., Any], claims: list[Any]) -> None:
    """Wait until `worker` has validated one submission: it is up and listening."""
    first = submit(claims).response.json()["id"]
    wait_until(lambda: _settled(first), timeout=60, what="the first task", detail=worker.log)


def _sessions_opened() -> int:
    """How many sessions PostgreSQL has opened on the test database so far."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_prefork_worker_keeps_its_database_sessions_from_task_to_task(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    workers: Callable[..., Worker],
) -> None:
    # given a prefork worker (its pool process has a connection pool) that has done a task
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    worker = workers("w1", pool="prefork")
    claims = [{"text": GOOD, "citations": [cite(policy_doc)]}]
    _after_one_task(worker, submit, claims)

    # when twelve more answers are validated one after another
    before = _sessions_opened()
    ids = []
    for _ in range(12):
        ids.append(submit(claims).response.json()["id"])
        wait_until(lambda: _settled(ids[-1]), timeout=60, what="a task", detail=worker.log)

    # then the tasks ran on the sessions the worker had (Celery's own Django fixup would
    # close the pool around every task: two new sessions per task)
    assert _sessions_opened() - before < 4


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_validation_leaves_the_decision_and_a_new_worker_finishes_it(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    workers: Callable[..., Worker],
) -> None:
    # given a submitted answer whose validation task waits in the queue
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    decision_id = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).response.json()["id"]
    bundle = Decision.objects.get(pk=decision_id).bundle

    # and a test session that holds back new validation reports, so a worker that has
    # locked the decision and graded the bundle blocks on writing its report
    blocker = second_session("maria-test-blocker")
    try:
        blocker.execute("LOCK TABLE evidence_validationreport IN SHARE MODE")
        first = workers("w1", visibility_timeout=3)

        def writing_its_report() -> bool:
            waiting = sessions(first.application_name, waiting=True)
            return any("evidence_validationreport" in query for query in waiting)

        wait_until(
            writing_its_report,
            timeout=60,
            what="the first worker to block inside the validation",
            detail=first.log,
        )

        # when the worker is killed there, mid-validation
        first.kill()
    finally:
        blocker.rollback()
        blocker.close()
    wait_until(
        lambda: not sessions(first.application_name),
        timeout=20,
        what="the killed worker's transaction to be rolled back",
    )

    # then the decision is where it was: proposed, with no report and no trail of the attempt
    decision = Decision.objects.get(pk=decision_id)
    assert decision.state == "proposed"
    assert decision.report is None
    assert not ValidationReport.objects.filter(bundle=bundle).exists()
    assert kinds(decision_id) == ["decision.proposed"]

    # when a new worker starts, the unacknowledged task is delivered to it again
    second = workers(
        "w2", visibility_timeout=3, unacked_restore_interval=1, unacked_restore_throttle=1
    )
    wait_until(
        lambda: Decision.objects.get(pk=decision_id).state == "completed",
        timeout=60,
        what="the task to be redelivered and completed",
        detail=second.log,
    )

    # then it was validated exactly once
    assert kinds(decision_id) == COMPLETED_PATH
    assert ValidationReport.objects.filter(bundle=bundle).count() == 1
    assert Decision.objects.get(pk=decision_id).attempts == 1


# --- retries that run out (eager, every backend) ---------------------------------------------


def _retries(task: str) -> float:
    return TASK_RETRIES.labels(task=task)._value.get()


@pytest.mark.django_db
def test_a_validation_that_keeps_failing_ends_in_failed_with_the_reason(
    policy_doc: Any, submit: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a validation that raises every time it runs
    calls: list[int] = []

    def broken(*, decision_id: int, bundle_hash: str, others: int = 0) -> Decision:
        calls.append(decision_id)
        raise RuntimeError("the embedding service is unreachable")

    monkeypatch.setattr(tasks, "decision_validate", broken)
    waits = retry_inline(monkeypatch)
    retries_before = _retries("validate_decision")

    # when an answer is submitted
    response = submit([{"text": GOOD, "citations": [cite(policy_doc)]}])

    # then it was tried 1 + the configured number of retries, backing off before each retry
    assert response.status_code == 201
    decision = Decision.objects.get(pk=response.response.json()["id"])
    assert len(calls) == tasks.validate_decision.max_retries + 1 == tasks.VALIDATION_RETRIES + 1
    assert waits == list(range(tasks.VALIDATION_RETRIES))
    assert _retries("validate_decision") - retries_before == tasks.VALIDATION_RETRIES
    # and the decision failed, saying why, on the trail too
    assert decision.state == "failed"
    assert "the embedding service is unreachable" in decision.outcome_reason
    assert f"after {tasks.VALIDATION_RETRIES + 1} attempts" in decision.outcome_reason
    failed = TrailEvent.objects.get(decision_id=decision.pk, kind="decision.failed")
    assert failed.reason == decision.outcome_reason
    assert kinds(decision.pk) == ["decision.proposed", "decision.failed"]


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_a_failing_validation_still_answers_201_and_ends_failed(
    policy_doc: Any, agent_client: Callable[[str], APIClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given the embedded mode's eager tasks, as configured, and a validation that raises
    def broken(*, decision_id: int, bundle_hash: str, others: int = 0) -> Decision:
        raise RuntimeError("the embedding service is unreachable")

    monkeypatch.setattr(tasks, "decision_validate", broken)

    # when an answer is submitted and really commits
    response = agent_client(AGENT).post(
        "/api/v1/decisions/",
        {
            "question": "Who approves travel expenses above 500,000 yen?",
            "answer": GOOD,
            "zone": ZONE,
            "agent": AGENT,
            "claims": [{"text": GOOD, "citations": [cite(policy_doc)]}],
        },
        format="json",
    )

    # then the agent is told its answer was taken (not a 500 for a committed change), and
    # the decision did not stay proposed: the retries ran and it failed with the reason
    assert response.status_code == 201
    decision = Decision.objects.get(pk=response.json()["id"])
    assert decision.state == "failed"
    assert "the embedding service is unreachable" in decision.outcome_reason


@pytest.mark.django_db
def test_a_validation_that_fails_for_a_while_is_retried_and_judged_normally(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a validation that fails twice, then works
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    failures = iter([RuntimeError("database restarting"), RuntimeError("still restarting")])

    def flaky(*, decision_id: int, bundle_hash: str, others: int = 0) -> Decision:
        error = next(failures, None)
        if error is not None:
            raise error
        return services.decision_validate(decision_id=decision_id, bundle_hash=bundle_hash)

    monkeypatch.setattr(tasks, "decision_validate", flaky)
    retry_inline(monkeypatch)

    # when an answer is submitted
    body = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()

    # then the third attempt judged it, and the trail shows one validation only
    assert next(failures, None) is None
    assert body["state"] == "completed"
    assert body["outcome_reason"] is None
    assert kinds(body["id"]) == COMPLETED_PATH


def test_backoff_is_jittered_below_a_ceiling_that_doubles_up_to_the_cap() -> None:
    for retries in range(12):
        ceiling = min(300.0, 2.0 * 2**retries)
        waits = [tasks.backoff(retries) for _ in range(200)]
        assert all(0.0 <= wait <= ceiling for wait in waits)
        assert max(waits) > ceiling / 2  # the ceiling is reached for, not just obeyed
        assert len(set(waits)) > 1  # jittered, so retries of many tasks spread out


# --- bounded work per input (issue 28): a huge memo does not hold up another zone's answer ----


def _peak_rss_bytes(pid: int) -> int:
    """The most memory the process has held resident since it started (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def _task_line(workers: list[Worker], task: str, what: str) -> bool:
    """Whether a worker's whole log has the line of `task` being `what` ("received")."""
    return any(
        f"Task {task}[" in line and f"] {what}" in line
        for worker in workers
        for line in worker.log_path.read_text(errors="replace").splitlines()
    )


@pytest.fixture
def older_memo(org: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The memo's earlier version in the other zone, stored before any worker runs and with
    its own background work left out: the scan of the new version has it to compare with."""
    from coordinates.coordinate import parse
    from coordinates.selectors import zone_get
    from evidence import services as evidence_services

    with monkeypatch.context() as quiet:
        quiet.setattr(evidence_services, "_announce_version_stored", lambda version_id: None)
        return evidence_services.document_ingest(
            zone=zone_get(parse(OTHER_ZONE)),
            raw=memo_text(OLDER_MEMO_PARAGRAPHS, seed=7),
            kind="policy",
            status="approved",
            title="Memo",
            key="memo",
        )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_huge_memo_in_one_zone_holds_up_no_answer_in_another(
    policy_doc: Any,
    older_memo: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    agent_client: Callable[[str], APIClient],
    broker_queue: str,
    workers: Callable[..., Worker],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given two workers for the background work (the memo's embedding takes one, its
    # conflict scan the other) and one for the answers, as README "Production" has them; the
    # scan's time budget shortened to keep this test short
    monkeypatch.setenv("MARIA_CONFLICT_SCAN_SECONDS", str(SCAN_SECONDS))
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    background = [workers(f"background{n}", queues=broker_queue) for n in (1, 2)]
    answers = workers("answers", queues=answer_queue(broker_queue))
    _after_one_task(answers, submit, [{"text": GOOD, "citations": [cite(policy_doc)]}])

    # when another zone's agent uploads the 1.9 MB memo of 43,687 short paragraphs, a new
    # version of the one there (every paragraph a candidate against the older ones)
    memo = agent_client(OTHER_AGENT).post(
        "/api/v1/documents/",
        {"zone": OTHER_ZONE, "key": "memo", "title": "Memo", "kind": "policy",
         "status": "approved", "text": memo_text()},
        format="json",
    )  # fmt: skip
    assert memo.status_code == 201, memo.content[:500]
    assert (memo.json()["version"], memo.json()["paragraphs"]) == (2, MEMO_PARAGRAPHS)
    wait_until(
        lambda: _task_line(background, SCAN, "received"),
        timeout=90,
        what="the background worker to start the memo's conflict scan",
        detail=lambda: "\n".join(worker.log() for worker in background),
    )
    started = time.monotonic()

    # then an answer in the first zone is graded within 10 s while the scan runs
    sent = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).response.json()["id"]
    wait_until(
        lambda: _settled(sent), timeout=10, what="the answer to be graded", detail=answers.log
    )
    assert Decision.objects.get(pk=sent).gate == "auto"
    assert not _task_line(background, SCAN, "succeeded")  # (it was graded during the scan)

    # and the scan ends within its budget, the background worker under 1 GB all along
    wait_until(
        lambda: _task_line(background, SCAN, "succeeded"),
        timeout=SCAN_SECONDS + 30,
        what="the memo's conflict scan to end",
        detail=lambda: "\n".join(worker.log() for worker in background),
    )
    peaks = [_peak_rss_bytes(worker.process.pid) for worker in background if worker.process]
    print(f"memo scan: {time.monotonic() - started:.1f} s, workers' peak RSS (MiB):", end=" ")
    print(", ".join(f"{peak / 2**20:.0f}" for peak in peaks))
    assert len(peaks) == 2
    assert max(peaks) < 1024**3
