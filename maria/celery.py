"""The Celery app: configured from Django settings (CELERY_*), eager when there is no broker."""

from __future__ import annotations

import os

from celery import Celery, Task
from celery.signals import task_postrun, worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "maria.settings")

app = Celery("maria")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _freeze_startup_objects(**_: object) -> None:
    """Each prefork child, once forked with the tasks loaded (maria.startup)."""
    from maria.startup import freeze_startup_objects

    freeze_startup_objects()


@task_postrun.connect
def _return_connections(sender: Task | None = None, **_: object) -> None:
    """After each task in a worker, its database connections go back to the pool (or are
    closed when broken or past their age): the next task starts on a checked one. Django
    does this after each request; CELERY_DB_REUSE_MAX keeps Celery from closing the pool."""
    if sender is not None and not getattr(sender.request, "is_eager", False):
        from django.db import close_old_connections

        close_old_connections()
