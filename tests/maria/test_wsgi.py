"""HTTP through the WSGI application, as production serves pages and the API (gunicorn,
README: Production): every middleware applies. A real gunicorn taking a submission is in
tests/decisions/test_gunicorn.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest


@pytest.mark.django_db(transaction=True)
def test_a_request_through_wsgi_gets_every_middleware_s_headers() -> None:
    from maria.wsgi import application

    environ: dict[str, Any] = {"PATH_INFO": "/healthz", "HTTP_HOST": "localhost"}
    setup_testing_defaults(environ)
    answered: list[tuple[str, list[tuple[str, str]]]] = []

    def start_response(
        status: str, headers: list[tuple[str, str]], exc_info: Any = None, /
    ) -> Callable[[bytes], object]:
        answered.append((status, headers))
        return lambda data: None

    body = b"".join(application(environ, start_response))

    status, headers = answered[0]
    named = {name.lower(): value for name, value in headers}
    assert status.startswith("200"), body
    assert "nonce-" in named["content-security-policy"]  # ours
    assert named["x-frame-options"] == "DENY"  # Django's clickjacking middleware
    assert named["x-content-type-options"] == "nosniff"  # SecurityMiddleware
