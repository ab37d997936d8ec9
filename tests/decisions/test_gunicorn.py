"""The API under gunicorn as the README's Production section runs it (maria.wsgi, threads),
on the test database: an agent's submission over real HTTP."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from decisions.models import Decision
from tests.decisions.conftest import GOOD, answer_body, cite
from tests.decisions.helpers import ROOT, database_url, wait_until


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_gunicorn_as_the_readme_runs_it_takes_a_submission(
    policy_doc: Any, tmp_path: Path, unused_tcp_port: int
) -> None:
    # given gunicorn serving maria.wsgi with threads, on the test database
    from coordinates.coordinate import parse
    from coordinates.services import token_issue

    _, key = token_issue(agent=parse("G1.U1.P1.Z1.A1"))
    port = unused_tcp_port
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url("maria-test-gunicorn"),
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        CELERY_TASK_ALWAYS_EAGER="1",
    )
    log = tmp_path / "gunicorn.log"
    command = [
        sys.executable, "-m", "gunicorn", "maria.wsgi:application", "--bind",
        f"127.0.0.1:{port}", "--workers", "1", "--worker-class", "gthread", "--threads", "4",
    ]  # fmt: skip
    with log.open("wb") as output:
        server = subprocess.Popen(  # noqa: S603 - our interpreter, fixed arguments
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    try:

        def healthy() -> bool:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                connection.request("GET", "/healthz")
                return connection.getresponse().status == 200
            except OSError:
                return False

        wait_until(healthy, timeout=60, what="gunicorn to answer", detail=log.read_text)

        # when an agent submits an answer over HTTP
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        body = answer_body([{"text": GOOD, "citations": [cite(policy_doc)]}])
        connection.request(
            "POST",
            "/api/v1/decisions/",
            json.dumps(body),
            {"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        response = connection.getresponse()

        # then it is taken, and validated on the same path as ever
        answer = json.loads(response.read())
        assert response.status == 201, answer
        assert answer["zone"] == "G1.U1.P1.Z1"
        assert Decision.objects.get(pk=answer["id"]).gate != ""  # eager: validated already

        # and a chunked body (no Content-Length), which WSGI would read as empty, is a 411
        chunked = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        chunked.request(
            "POST",
            "/api/v1/decisions/",
            iter([json.dumps(body).encode()]),
            {"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
            encode_chunked=True,
        )
        refused = chunked.getresponse()
        assert refused.status == 411
        assert json.loads(refused.read())["error"]["code"] == "length_required"
        assert Decision.objects.count() == 1
    finally:
        server.terminate()
        server.wait(20)
