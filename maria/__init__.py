"""The MARIA Governance Engine project: settings, routing, the Celery app."""

from maria.celery import app as celery_app

__all__ = ["celery_app"]
