"""Shared fixtures: an organisation built through the real services, clients, and a header
that says which backends the run used."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings

# Django-dependent imports live inside the fixtures: the pure-core tests run without Django
# (`pytest -p no:django tests/evidence/test_scoring.py`) and must not need settings.


def backend_summary() -> str:
    if not settings.configured:
        return "backend: none (Django not loaded)"
    database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    layer = str(settings.CHANNEL_LAYERS["default"]["BACKEND"]).rsplit(".", 1)[-1]
    celery = "eager" if settings.CELERY_TASK_ALWAYS_EAGER else "broker"
    return f"backend: database={database} channel_layer={layer} celery={celery}"


def pytest_configure(config: pytest.Config) -> None:
    # Tasks run inline in tests even when a broker is configured; the tests that need a real
    # worker start one themselves.
    if settings.configured:
        from maria.celery import app

        settings.CELERY_TASK_ALWAYS_EAGER = True
        app.conf.task_always_eager = True
        # Connections made in worker threads (websocket consumers) must close after use, or
        # PostgreSQL refuses to drop the test database at the end.
        settings.DATABASES["default"]["CONN_MAX_AGE"] = 0
        # `make run`'s local signing key (var/trail-signing.key) is the demo's, not the
        # tests': a test that wants a key sets one.
        if str(getattr(settings, "LOCAL_TRAIL_KEY", "")) == settings.MARIA_TRAIL_SIGNING_KEY_FILE:
            settings.MARIA_TRAIL_SIGNING_KEY_FILE = ""


def pytest_report_header(config: pytest.Config) -> str:
    return backend_summary()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(backend_summary())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not settings.configured:
        return
    on_postgres = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    skip = pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL)")
    for item in items:
        if "postgres" in item.keywords and not on_postgres:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _trail_emptied_before_flush(request: pytest.FixtureRequest) -> Any:
    """Transactional tests end with Django's flush, which the trail's append-only triggers
    refuse once events exist (zones, roles and policies all write some): empty the trail
    first, triggers bypassed. Set up after the database fixture, so torn down before it."""
    marker = request.node.get_closest_marker("django_db")
    transactional = bool(marker and marker.kwargs.get("transaction")) or any(
        name in request.fixturenames for name in ("transactional_db", "live_server")
    )
    if transactional:
        request.getfixturevalue("transactional_db")
    yield
    if transactional:
        from tests.trail_support import empty_database

        empty_database()


ORG = ["G1.U1.P1.Z1", "G1.U1.P1.Z2", "G1.U1.P2.Z1", "G2.U1.P1.Z1"]


@pytest.fixture
def org(db: None) -> dict[str, Any]:
    """Two galaxies; G1 has a finance planet with two zones and a legal planet with one."""
    from coordinates.coordinate import parse
    from coordinates.services import zone_add
    from tests.trail_support import empty_trail

    zones = {coordinate: zone_add(coordinate=parse(coordinate)) for coordinate in ORG}
    # The organisation is the stage, not the play: tests see only the trail events they
    # cause themselves (zone_add's own events are tested in tests/decisions).
    empty_trail()
    return zones


@pytest.fixture
def person(db: None) -> Callable[..., Any]:
    """Make a user holding `role` on each of `scopes`."""

    from coordinates.coordinate import parse
    from coordinates.services import role_grant, user_ensure

    def make(username: str, role: str | None = None, *scopes: str) -> Any:
        user = user_ensure(username=username, password="pw-" + username)
        for scope in scopes:
            assert role is not None
            role_grant(user=user, role=role, scope=parse(scope))
        return user

    return make


@pytest.fixture
def client_for() -> Callable[[Any], Any]:
    from rest_framework.test import APIClient

    def make(user: Any) -> APIClient:
        client = APIClient()
        client.force_authenticate(user=user)
        return client

    return make


@pytest.fixture
def agent_client(org: dict[str, Any]) -> Callable[[str], Any]:
    """An API client that sends an agent's bearer token."""
    from rest_framework.test import APIClient

    from coordinates.coordinate import parse
    from coordinates.services import token_issue

    def make(agent: str = "G1.U1.P1.Z1.A1") -> APIClient:
        _, key = token_issue(agent=parse(agent))
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        return client

    return make


@pytest.fixture
def ingest(org: dict[str, Any], django_capture_on_commit_callbacks: Any) -> Callable[..., Any]:
    """Ingest through the real service, running the after-commit embedding task."""
    from coordinates.coordinate import parse
    from coordinates.selectors import zone_get
    from evidence.services import document_ingest

    def run(text: str, *, zone: str = "G1.U1.P1.Z1", kind: str = "policy", **options: Any) -> Any:
        options.setdefault("status", "approved")
        with django_capture_on_commit_callbacks(execute=True):
            return document_ingest(zone=zone_get(parse(zone)), raw=text, kind=kind, **options)

    return run
