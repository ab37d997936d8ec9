"""`/healthz`: is the database, the channel layer and the task broker reachable? 200 or 503."""

from __future__ import annotations

import uuid
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from maria.celery import app as celery_app


def _database() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"ok": True, "vendor": connection.vendor}


async def _layer_round_trip() -> None:
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer is configured")
    channel = await layer.new_channel("healthz.")
    token = uuid.uuid4().hex
    await layer.send(channel, {"type": "healthz.ping", "token": token})
    message = await layer.receive(channel)
    if message.get("token") != token:
        raise RuntimeError("the channel layer returned another message")


def _channel_layer() -> dict[str, Any]:
    async_to_sync(_layer_round_trip)()
    backend = str(settings.CHANNEL_LAYERS["default"]["BACKEND"])
    return {"ok": True, "backend": backend.rsplit(".", 1)[-1]}


def _broker() -> dict[str, Any]:
    url = settings.CELERY_BROKER_URL
    if url.startswith("memory://"):
        return {"ok": True, "mode": "eager (no broker configured)"}
    with celery_app.connection_for_write(url) as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
    return {"ok": True, "mode": "broker", "transport": conn.transport_cls}


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, dict[str, Any]] = {}
    for name, check in (
        ("database", _database),
        ("channel_layer", _channel_layer),
        ("broker", _broker),
    ):
        try:
            checks[name] = check()
        except Exception as error:  # a health check reports every failure, whatever it is
            checks[name] = {"ok": False, "error": f"{type(error).__name__}: {error}"}
    healthy = all(check["ok"] for check in checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "fail", "checks": checks}, status=200 if healthy else 503
    )
