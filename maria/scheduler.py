"""The periodic work of settings.CELERY_BEAT_SCHEDULE for the embedded default (`make run`):
what `celery -A maria beat` does in production, in one small process beside the server.

Each entry runs when its interval has passed since its last run, or at once when it never ran;
the last runs are kept in a file, so a restart neither repeats the weekly job nor waits a
new hour for a checkpoint. One scheduler at a time holds a lock on a file; a second one
started beside it runs nothing. Under eager Celery a task runs here, in this process; with a
broker it is queued for the workers.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# How long the loop sleeps at most between looks, so a stop request is heeded quickly.
LONGEST_NAP = 5.0


class SchedulerBusy(RuntimeError):
    """Another scheduler holds the lock."""


def intervals_of(schedule: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str, float]]:
    """Each entry's task name and interval in seconds. Only plain intervals (seconds or a
    timedelta) run here; anything else (a crontab) is refused, to be run by celery beat."""
    intervals: dict[str, tuple[str, float]] = {}
    for name, entry in schedule.items():
        every = entry["schedule"]
        if isinstance(every, timedelta):
            every = every.total_seconds()
        if isinstance(every, bool) or not isinstance(every, int | float) or every <= 0:
            raise ValueError(f"{name}: only an interval in seconds can run here, not {every!r}")
        intervals[name] = (str(entry["task"]), float(every))
    return intervals


def due(
    intervals: Mapping[str, tuple[str, float]], last: Mapping[str, float], now: float
) -> list[str]:
    """The entries whose interval has passed since their last run (never run: due now)."""
    return [
        name
        for name, (_, every) in intervals.items()
        if name not in last or now - last[name] >= every
    ]


def seconds_to_next(
    intervals: Mapping[str, tuple[str, float]], last: Mapping[str, float], now: float
) -> float:
    """How long until the next entry is due (0 when one is due already)."""
    waits = [
        (last[name] + every - now) if name in last else 0.0
        for name, (_, every) in intervals.items()
    ]
    return max(0.0, min(waits, default=LONGEST_NAP))


def read_last_runs(path: Path) -> dict[str, float]:
    """The last runs kept in `path`; a missing or unreadable file is no runs yet."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, int | float)}


def write_last_runs(path: Path, last: Mapping[str, float]) -> None:
    # Written beside and renamed over: a crash mid-write leaves the previous file whole.
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(dict(last), sort_keys=True))
    os.replace(partial, path)


@contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    """Hold the scheduler's lock for the block; SchedulerBusy when another process holds it.
    The operating system lets go of it when this process ends, however it ends."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as error:
            raise SchedulerBusy(f"another scheduler holds {lock_path}") from error
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run(
    intervals: Mapping[str, tuple[str, float]],
    *,
    state: Path,
    send: Callable[[str], None],
    stop: threading.Event,
    clock: Callable[[], float],
    once: bool = False,
) -> int:
    """Run the due entries with `send(task name)` until `stop` is set (or one round when
    `once`); the number of runs. A task that fails is logged and waits for its next turn:
    one job's trouble never stops the others."""
    last = read_last_runs(state)
    runs = 0
    while not stop.is_set():
        for name in due(intervals, last, clock()):
            task = intervals[name][0]
            try:
                send(task)
            except Exception:
                log.exception("scheduled task failed", extra={"entry": name, "task": task})
            last[name] = clock()
            write_last_runs(state, last)
            runs += 1
        if once:
            break
        stop.wait(min(LONGEST_NAP, seconds_to_next(intervals, last, clock())))
    return runs
