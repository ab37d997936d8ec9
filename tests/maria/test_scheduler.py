"""The embedded default's scheduler (maria/scheduler.py, `manage.py run_scheduler`): what
`celery beat` runs in production happens under `make run` too (issue 29, item 9)."""

from __future__ import annotations

import subprocess
import threading
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from celery.schedules import crontab
from django.conf import settings
from django.core.management import call_command

from maria import scheduler

EVERY = {"checkpoint": ("trail.checkpoint", 3600.0), "sweep": ("sweep", 30.0)}


def test_an_entry_is_due_when_it_never_ran_or_its_interval_has_passed() -> None:
    assert scheduler.due(EVERY, {}, now=1000.0) == ["checkpoint", "sweep"]
    assert scheduler.due(EVERY, {"checkpoint": 1000.0, "sweep": 1000.0}, now=1029.0) == []
    assert scheduler.due(EVERY, {"checkpoint": 1000.0, "sweep": 1000.0}, now=1030.0) == ["sweep"]
    assert scheduler.seconds_to_next(EVERY, {"checkpoint": 1000.0, "sweep": 1000.0}, 1010.0) == 20.0
    assert scheduler.seconds_to_next(EVERY, {"checkpoint": 1000.0}, 1010.0) == 0.0


def test_only_intervals_run_here() -> None:
    assert scheduler.intervals_of({"a": {"task": "t", "schedule": timedelta(minutes=1)}}) == {
        "a": ("t", 60.0)
    }
    with pytest.raises(ValueError, match="b: only an interval"):
        scheduler.intervals_of({"b": {"task": "t", "schedule": crontab(minute=0)}})


def test_a_failing_task_waits_for_its_turn_and_the_others_still_run(tmp_path: Path) -> None:
    sent: list[str] = []

    def send(task: str) -> None:
        sent.append(task)
        if task == "trail.checkpoint":
            raise RuntimeError("database away")

    runs = scheduler.run(
        EVERY,
        state=tmp_path / "s.json",
        send=send,
        stop=threading.Event(),
        clock=lambda: 1000.0,
        once=True,
    )
    assert (runs, sent) == (2, ["trail.checkpoint", "sweep"])
    assert scheduler.read_last_runs(tmp_path / "s.json") == {"checkpoint": 1000.0, "sweep": 1000.0}


def _scheduler(tmp_path: Path) -> str:
    out = StringIO()
    call_command(
        "run_scheduler",
        "--once",
        "--state",
        str(tmp_path / "scheduler.json"),
        "--lock",
        str(tmp_path / "scheduler.lock"),
        stdout=out,
        stderr=StringIO(),
    )
    return out.getvalue()


@pytest.mark.django_db
def test_the_scheduler_makes_a_checkpoint_and_a_restart_does_not_repeat_it(
    tmp_path: Path, org: Any
) -> None:
    from trail.models import TrailCheckpoint

    assert not TrailCheckpoint.objects.exists()
    # Every periodic task of production runs, the checkpoint among them.
    assert f"after {len(settings.CELERY_BEAT_SCHEDULE)} runs" in _scheduler(tmp_path)
    assert TrailCheckpoint.objects.count() == 1
    # Restarted within the hour: nothing is due yet.
    assert "after 0 runs" in _scheduler(tmp_path)
    assert TrailCheckpoint.objects.count() == 1


@pytest.mark.django_db
def test_a_second_scheduler_beside_the_first_runs_nothing(tmp_path: Path, org: Any) -> None:
    from trail.models import TrailCheckpoint

    with scheduler.exclusive(tmp_path / "scheduler.lock"):
        assert "stopped" not in _scheduler(tmp_path)
    assert not TrailCheckpoint.objects.exists()
    assert not (tmp_path / "scheduler.json").exists()


def test_make_run_starts_the_scheduler_and_stops_it_with_the_server() -> None:
    """Also: the webhooks' `data.url` (MARIA_PUBLIC_URL) names the port it serves on, and a
    reachable address when it listens on every interface (issue 29, item 10)."""
    plan = subprocess.run(
        ["make", "-n", "run", "PORT=8123", "HOST=0.0.0.0"],  # noqa: S607 - as a newcomer runs it
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "manage.py run_scheduler &" in plan
    assert "trap 'kill $scheduler" in plan
    assert "--host 0.0.0.0 --port 8123" in plan
    assert "MARIA_PUBLIC_URL=${MARIA_PUBLIC_URL:-http://127.0.0.1:8123}" in plan
