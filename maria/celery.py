"""The Celery app: configured from Django settings (CELERY_*), eager when there is no broker."""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "maria.settings")

app = Celery("maria")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _freeze_startup_objects(**_: object) -> None:
    """Each prefork child, once forked with the tasks loaded (maria.startup)."""
    from maria.startup import freeze_startup_objects

    freeze_startup_objects()
