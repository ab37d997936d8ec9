"""The quarantine: one row per run and subject with the newest reason and a count, a metric
and a log line each time, the subjects a run skips, and the operators' read-only list.
(How each background run uses it: tests/graph/test_feed_quarantine.py,
test_extract_quarantine.py, tests/decisions/test_task_quarantine.py,
tests/evidence/test_task_quarantine.py.)"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.db import transaction

from maria.metrics import QUARANTINED
from trail.models import Quarantine
from trail.quarantine import REASON_CHARS, quarantine, quarantined

pytestmark = pytest.mark.django_db

RUN = "tests.a_run"


def test_a_subject_met_again_updates_its_one_row(caplog: pytest.LogCaptureFixture) -> None:
    before = QUARANTINED.labels(run=RUN)._value.get()

    # when one subject is quarantined twice, with different errors
    with caplog.at_level(logging.WARNING, logger="trail.quarantine"):
        quarantine(run=RUN, subject="version:7", error=ValueError("first"))
        first = Quarantine.objects.get()
        quarantine(run=RUN, subject="version:7", error=KeyError("second"))

    # then one row holds both: the count, the first time, the newest reason and time
    row = Quarantine.objects.get()
    assert (row.run, row.subject, row.count) == (RUN, "version:7", 2)
    assert row.reason == "KeyError: 'second'"
    assert row.created_at == first.created_at
    assert row.last_seen >= first.last_seen
    # and each time was counted and logged with its fields and the traceback
    assert QUARANTINED.labels(run=RUN)._value.get() - before == 2
    logged = [r for r in caplog.records if r.getMessage() == "quarantined"]
    assert [(r.run, r.subject, r.reason) for r in logged] == [  # type: ignore[attr-defined]
        (RUN, "version:7", "ValueError: first"),
        (RUN, "version:7", "KeyError: 'second'"),
    ]
    assert all(r.levelno == logging.WARNING and r.exc_info for r in logged)


def test_a_long_reason_is_cut_and_a_plain_string_is_taken_as_it_is() -> None:
    quarantine(run=RUN, subject="a", error=RuntimeError("x" * 10_000))
    quarantine(run=RUN, subject="b", error="two errors: one; two")
    reasons = dict(Quarantine.objects.values_list("subject", "reason"))
    assert reasons["a"] == ("RuntimeError: " + "x" * 10_000)[:REASON_CHARS]
    assert reasons["b"] == "two errors: one; two"


def test_a_run_skips_only_its_own_quarantined_subjects() -> None:
    quarantine(run=RUN, subject="outbox:1", error="bad")
    quarantine(run="tests.another_run", subject="outbox:2", error="bad")
    wanted = [f"outbox:{i}" for i in range(1, 1200)]  # more than one chunk of the IN list
    assert quarantined(run=RUN, subjects=wanted) == {"outbox:1"}
    assert quarantined(run=RUN, subjects=[]) == set()


def test_a_quarantine_inside_a_transaction_that_rolls_back_leaves_no_row() -> None:
    # The row goes with the caller's work (a cursor moved past the subject, say): all or none.
    def work_that_fails() -> None:
        with transaction.atomic():
            quarantine(run=RUN, subject="trail_event:9", error="bad")
            raise RuntimeError("the caller's work failed")

    with pytest.raises(RuntimeError):
        work_that_fails()
    assert not Quarantine.objects.exists()


def test_the_admin_lists_the_quarantine_read_only(client: Any, django_user_model: Any) -> None:
    quarantine(run=RUN, subject="decision:5", error=ValueError("no such zone"))
    row = Quarantine.objects.get()
    client.force_login(django_user_model.objects.create_superuser("root", password="pw-root-1"))
    listing = client.get("/admin/trail/quarantine/")
    assert listing.status_code == 200
    assert "decision:5" in listing.content.decode()
    assert "ValueError: no such zone" in listing.content.decode()
    assert b"Save" not in client.get(f"/admin/trail/quarantine/{row.pk}/change/").content
    assert client.get("/admin/trail/quarantine/add/").status_code == 403
