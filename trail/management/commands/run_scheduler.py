"""`manage.py run_scheduler`: the periodic work (checkpoints, escalations, the outbox sweep
that sends webhook retries, ...) for the embedded default, which `make run` starts beside the
server and stops with it (maria/scheduler.py). It lives beside the trail's commands because
the checkpoint is what it is for first; it runs every app's tasks by name only."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections, connection

from maria import scheduler
from maria.celery import app


class Command(BaseCommand):
    help = (
        "Run settings.CELERY_BEAT_SCHEDULE in this process until stopped (SIGTERM or Ctrl-C): "
        "for `make run`; production runs `celery -A maria beat`. A second one started beside "
        "it exits at once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        var = Path(settings.VAR_DIR)
        parser.add_argument("--once", action="store_true", help="run what is due, then exit")
        parser.add_argument("--state", type=Path, default=var / "scheduler.json")
        parser.add_argument("--lock", type=Path, default=var / "scheduler.lock")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            intervals = scheduler.intervals_of(settings.CELERY_BEAT_SCHEDULE)
        except ValueError as error:
            raise CommandError(f"CELERY_BEAT_SCHEDULE: {error}") from error
        app.loader.import_default_modules()
        unknown = sorted({task for task, _ in intervals.values()} - set(app.tasks))
        if unknown:
            raise CommandError(f"CELERY_BEAT_SCHEDULE names unknown tasks: {', '.join(unknown)}")
        stop = threading.Event()
        if not options["once"]:
            for number in (signal.SIGTERM, signal.SIGINT):
                signal.signal(number, lambda *_: stop.set())
        try:
            with scheduler.exclusive(options["lock"]):
                self.stderr.write(f"scheduler: {len(intervals)} periodic tasks")
                runs = scheduler.run(
                    intervals,
                    state=options["state"],
                    send=_send,
                    stop=stop,
                    clock=time.time,
                    once=options["once"],
                )
        except scheduler.SchedulerBusy as error:
            # Not an error: `make run` twice shares one scheduler, and no task runs twice.
            self.stderr.write(f"scheduler not started: {error}")
            return
        self.stdout.write(f"scheduler stopped after {runs} runs")


def _send(task: str) -> None:
    """Run (eager) or queue (with a broker) one periodic task. Its database connection is
    handed back after it, as after a request: this process lives as long as the server."""
    try:
        app.tasks[task].apply_async()
    finally:
        if not connection.in_atomic_block:  # a caller's transaction (a test) keeps its own
            close_old_connections()
