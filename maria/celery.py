"""The Celery app: configured from Django settings (CELERY_*), eager when there is no broker."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "maria.settings")

app = Celery("maria")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
