from __future__ import annotations

import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db


def test_healthz_reports_each_part_and_200_when_all_are_up() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "channel_layer", "broker"}
    assert all(check["ok"] for check in body["checks"].values())


def test_healthz_is_503_naming_the_broker_when_it_is_unreachable() -> None:
    # Port 9 (discard) on loopback: nothing listens, so the connection is refused at once.
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:9/0"):
        response = Client().get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "fail"
    assert body["checks"]["broker"]["ok"] is False
    assert body["checks"]["database"]["ok"] is True
