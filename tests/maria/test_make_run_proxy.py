"""`make run` as it serves (uvicorn, the Makefile's own flags) with a client that writes its
own X-Forwarded-For: the login lockout and the address limit still see the socket's address.
uvicorn trusts that header from 127.0.0.1 unless told not to, and every local client is there."""

from __future__ import annotations

import http.client
import os
import re
import shlex
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from django.db import connection

from tests.decisions.helpers import ROOT, database_url, wait_until


def make_run_uvicorn_arguments(port: int) -> list[str]:
    """The arguments `make run` gives uvicorn, as make itself expands them (dry run)."""
    recipe = subprocess.run(  # noqa: S603 - make, fixed arguments
        ["make", "--dry-run", "--silent", "run", f"PORT={port}", "HOST=127.0.0.1"],  # noqa: S607
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(line for line in recipe.splitlines() if "maria.asgi:application" in line)
    words = shlex.split(line)
    return words[words.index("maria.asgi:application") :]


def _test_database_url() -> str:
    if connection.vendor == "sqlite":
        return f"sqlite:///{connection.settings_dict['NAME']}"
    return database_url("maria-test-make-run")


@contextmanager
def served_as_make_run(port: int, log: Path, **environment: str) -> Iterator[None]:
    with served(
        [sys.executable, "-m", "uvicorn", *make_run_uvicorn_arguments(port)],
        port,
        log,
        **environment,
    ):
        yield


@contextmanager
def served(command: list[str], port: int, log: Path, **environment: str) -> Iterator[None]:
    env = {**os.environ, "DATABASE_URL": _test_database_url(), **environment}
    with log.open("wb") as output:
        server = subprocess.Popen(  # noqa: S603 - our interpreter, the Makefile's arguments
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    try:

        def answering() -> bool:
            if server.poll() is not None:
                raise AssertionError(f"{command[2]} exited {server.returncode}\n{log.read_text()}")
            try:
                probe = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                probe.request("GET", "/healthz")
                return probe.getresponse().status in (200, 503)
            except OSError:
                return False

        wait_until(answering, timeout=60, what=f"{command[2]} to answer", detail=log.read_text)
        yield
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _request(
    port: int, method: str, path: str, body: str | None = None, **headers: str
) -> tuple[int, str, http.client.HTTPResponse]:
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    client.request(method, path, body, {key.replace("_", "-"): v for key, v in headers.items()})
    response = client.getresponse()
    return response.status, response.read().decode(), response


@pytest.mark.django_db(transaction=True)
def test_make_run_ignores_a_forwarded_for_written_by_the_client(
    person: Callable[..., Any], tmp_path: Path, unused_tcp_port: int
) -> None:
    # Given rita, and the engine served as `make run` serves it, with small limits
    person("rita")  # password "pw-rita"
    port = unused_tcp_port
    with served_as_make_run(
        port,
        tmp_path / "uvicorn.log",
        MARIA_LOGIN_FAILURES="3",
        MARIA_RATE_PER_ADDRESS="2/min",
        CACHE_PREFIX=f"maria-test-{uuid.uuid4().hex}",  # a fresh count in a shared Redis
    ):
        # When a local client fails rita's password, a new X-Forwarded-For each time
        status, page, response = _request(port, "GET", "/accounts/login/")
        assert status == 200
        cookie = response.getheader("Set-Cookie", "").split(";")[0]
        match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert match
        assert cookie.startswith("csrftoken=")
        token = match.group(1)

        def log_in(password: str, forged: str) -> int:
            form = {"username": "rita", "password": password}
            body = urlencode({**form, "csrfmiddlewaretoken": token})
            return _request(
                port,
                "POST",
                "/accounts/login/",
                body,
                Cookie=cookie,
                Content_Type="application/x-www-form-urlencoded",
                X_Forwarded_For=forged,
            )[0]

        codes = [log_in(f"guess-{i}", f"10.0.0.{i}") for i in range(3)]
        # Then the third failure locks rita out from that socket's address, and the right
        # password under yet another forged address does not reset it
        assert codes == [200, 200, 429]
        assert log_in("pw-rita", "10.9.9.9") == 429

        # And the address limit counts the socket, not what the client says it is
        public = [
            _request(port, "GET", "/api/v1/trail/public-key/", X_Forwarded_For=f"10.1.0.{i}")[0]
            for i in range(3)
        ]
        assert public[2] == 429


@pytest.mark.django_db(transaction=True)
def test_gunicorn_as_production_runs_it_ignores_a_forwarded_for_too(
    tmp_path: Path, unused_tcp_port: int
) -> None:
    # Given the API under gunicorn (README, Production), no proxy configured, 2 a minute
    port = unused_tcp_port
    command = [
        sys.executable, "-m", "gunicorn", "maria.wsgi:application", "--bind",
        f"127.0.0.1:{port}", "--workers", "1", "--worker-class", "gthread", "--threads", "4",
    ]  # fmt: skip
    with served(
        command,
        port,
        tmp_path / "gunicorn.log",
        MARIA_RATE_PER_ADDRESS="2/min",
        CACHE_PREFIX=f"maria-test-{uuid.uuid4().hex}",
    ):
        # When a local client sends a new X-Forwarded-For with each request
        codes = [
            _request(port, "GET", "/api/v1/trail/public-key/", X_Forwarded_For=f"10.2.0.{i}")[0]
            for i in range(3)
        ]
    # Then the third is over the address limit all the same
    assert codes[2] == 429


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("behind_proxy", ["", "1"])
def test_gunicorn_believes_a_forwarded_proto_only_behind_a_named_proxy(
    behind_proxy: str, tmp_path: Path, unused_tcp_port: int
) -> None:
    # Given the API under gunicorn as README's Production runs it (from the repository,
    # gunicorn.conf.py), with and without DJANGO_BEHIND_PROXY
    port = unused_tcp_port
    command = [
        sys.executable, "-m", "gunicorn", "maria.wsgi:application", "--bind",
        f"127.0.0.1:{port}", "--workers", "1", "--worker-class", "gthread", "--threads", "2",
    ]  # fmt: skip
    environment = {
        "CACHE_PREFIX": f"maria-test-{uuid.uuid4().hex}",
        "MARIA_LOGIN_FAILURES": "0",
        "DJANGO_BEHIND_PROXY": behind_proxy,
    }
    with served(command, port, tmp_path / "gunicorn.log", **environment):
        status, page, response = _request(port, "GET", "/accounts/login/")
        assert status == 200
        cookie = response.getheader("Set-Cookie", "").split(";")[0]
        match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert match
        body = urlencode({"username": "nobody", "password": "x", "csrfmiddlewaretoken": match[1]})
        # When a local client posts the login form from the plain-HTTP page it was served,
        # claiming HTTPS with X-Forwarded-Proto
        status = _request(
            port,
            "POST",
            "/accounts/login/",
            body,
            Cookie=cookie,
            Content_Type="application/x-www-form-urlencoded",
            Origin=f"http://127.0.0.1:{port}",
            X_Forwarded_Proto="https",
        )[0]
    # Then without a proxy the request is judged by its socket (plain HTTP, the Origin
    # matches: the form is checked, 200); behind the named proxy the header is believed, so
    # the plain-HTTP Origin no longer matches and CSRF refuses it
    assert status == (403 if behind_proxy else 200)
