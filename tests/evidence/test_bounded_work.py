"""Bounded work per input (issue 28): every task has time limits, and the work on a version
that fails, times out or is killed twice is set aside and shown to the zone's admins."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from billiard.exceptions import SoftTimeLimitExceeded

from coordinates.models import Role
from evidence import knowledge
from evidence import tasks as evidence_tasks
from maria.celery import app
from tests.decisions.helpers import retry_inline
from tests.samples import POLICY_EN
from trail.models import Quarantine

pytestmark = pytest.mark.django_db

SCAN = "evidence.tasks.scan_version_conflicts"
ZONE = "G1.U1.P1.Z1"


class Killed(BaseException):
    """What a worker process killed mid-task looks like to the code that ran: nothing after
    it runs (no except Exception, no retry)."""


def test_every_task_has_a_soft_and_a_hard_time_limit() -> None:
    app.loader.import_default_modules()
    ours = {name: task for name, task in app.tasks.items() if not name.startswith("celery.")}
    assert SCAN in ours
    assert "decisions.tasks.validate_decision" in ours
    for name, task in ours.items():
        soft = task.soft_time_limit or app.conf.task_soft_time_limit
        hard = task.time_limit or app.conf.task_time_limit
        assert soft, name
        assert hard, name
        assert soft < hard, name


def test_a_version_whose_scan_times_out_twice_is_set_aside_and_shown_to_its_zone_admin(
    ingest: Callable[..., Any],
    person: Callable[..., Any],
    client: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a scan that reaches the soft time limit on one document's versions, every time
    tries: list[int] = []

    def scan(*, version_id: int) -> int:
        tries.append(version_id)
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(knowledge, "conflicts_scan_version", scan)
    retry_inline(monkeypatch)

    # when a zone admin's document is stored (scanned after commit)
    stored = ingest(POLICY_EN, title="Travel policy", key="travel")

    # then it was tried twice, then set aside, saying why
    assert tries == [stored.version.pk, stored.version.pk]
    row = Quarantine.objects.get(run=SCAN)
    assert row.subject == f"version:{stored.version.pk}"
    assert row.reason.startswith("SoftTimeLimitExceeded")

    # and sent again, it is not tried a third time
    assert evidence_tasks.scan_version_conflicts.apply(args=(stored.version.pk,)).result == 0
    assert len(tries) == 2

    # and the zone admin sees it on the document's page; a reviewer does not
    client.force_login(person("ada", Role.ZONE_ADMIN, ZONE))
    page = client.get(f"/documents/{stored.document.pk}/").content.decode()
    assert 'id="set-aside"' in page
    assert "knowledge-conflict scan" in page
    assert "SoftTimeLimitExceeded" in page
    client.force_login(person("rui", Role.REVIEWER, ZONE))
    assert 'id="set-aside"' not in client.get(f"/documents/{stored.document.pk}/").content.decode()


def test_a_scan_killed_twice_is_set_aside_unrun_when_delivered_again(
    ingest: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a stored version, and a scan of it that takes its worker down every time (the
    # hard time limit, or the kernel for its memory): the broker delivers it again
    stored = ingest(POLICY_EN, title="Travel policy", key="travel")
    tries: list[int] = []

    def scan(*, version_id: int) -> int:
        tries.append(version_id)
        raise Killed

    monkeypatch.setattr(knowledge, "conflicts_scan_version", scan)
    for _ in range(2):
        with pytest.raises(Killed):
            evidence_tasks.scan_version_conflicts.apply(args=(stored.version.pk,), throw=True)

    # when it is delivered a third time
    result = evidence_tasks.scan_version_conflicts.apply(args=(stored.version.pk,)).result

    # then it is set aside without running, saying why
    assert (result, len(tries)) == (0, 2)
    row = Quarantine.objects.get(run=SCAN)
    assert row.subject == f"version:{stored.version.pk}"
    assert "did not finish in 2 attempts" in row.reason


def test_the_answers_have_a_queue_of_their_own_and_the_scans_stay_on_the_default() -> None:
    from django.conf import settings

    def queue_of(task: str) -> str:
        return str(app.amqp.router.route({}, task)["queue"].name)

    answers = settings.MARIA_ANSWER_QUEUE
    assert answers != settings.CELERY_TASK_DEFAULT_QUEUE
    assert queue_of("decisions.tasks.validate_decision") == answers
    assert queue_of("decisions.tasks.deliver_webhook") == answers
    for background in (SCAN, "evidence.tasks.embed_version", "graph.tasks.extract_graph"):
        assert queue_of(background) == settings.CELERY_TASK_DEFAULT_QUEUE
