"""The README's quick start and its "whole path with curl" and "Connect your RAG" steps, run
as written against `make run` started on a free port in a directory of its own
(MARIA_VAR_DIR: its SQLite database and signing key; the shared virtualenv stands in for
`.venv`): the demo queue has work for each reviewer, the curl figures are the ones printed,
the manage.py commands find the signing key, no command prints a system-check warning, and
the client's steps end with the decision the reviewers approved."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BIN = Path(sys.executable).parent
DEFAULT_URL = "http://127.0.0.1:8000"
WAITING = "decisions/?state=approval_required"

pytestmark = pytest.mark.skipif(
    not (BIN / "uvicorn").exists() or not (ROOT / "Makefile").exists(),
    reason="needs the project's virtualenv and make",
)


def code_blocks(section: str) -> list[str]:
    """The fenced code blocks of a README section (## heading up to the next one)."""
    start = README.index(f"\n## {section}\n")
    end = README.find("\n## ", start + 1)
    body = README[start : end if end != -1 else None]
    return re.findall(r"```[a-z]*\n(.*?)```", body, re.S)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Run:
    def __init__(self, var: Path, port: int, process: subprocess.Popen[str], log: Path) -> None:
        self.var, self.port, self.process, self.log = var, port, process, log
        self.url = f"http://127.0.0.1:{port}"

    def env(self) -> dict[str, str]:
        """A reader's shell beside `make run`: no settings of their own."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "REDIS_"))}
        env.pop("MARIA_TRAIL_SIGNING_KEY_FILE", None)
        return env | {"MARIA_VAR_DIR": str(self.var), "PATH": f"{BIN}:{env.get('PATH', '')}"}

    def as_written(self, text: str) -> str:
        """The README's text for this run: its port, the shared virtualenv for `.venv`."""
        text = text.replace(DEFAULT_URL, self.url)
        text = re.sub(r"(?<![\w/])manage\.py", f"{ROOT}/manage.py", text)
        return re.sub(r"(?<![\w/])\.venv/bin/", f"{BIN}/", text)


@pytest.fixture(scope="module")
def make_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    # The quick start's first line, on a free port, its state in a directory of its own.
    quick = README.split("```")[1]  # the first block, before any section
    assert "make run" in quick.splitlines()
    here = tmp_path_factory.mktemp("make-run")
    var, venv = here / "var", here / "venv"
    venv.mkdir()
    (venv / ".installed").touch()  # the shared virtualenv is installed already
    port = _free_port()
    log = here / "make-run.log"
    run = Run(var, port, None, log)  # type: ignore[arg-type]
    command = [
        "make",
        "--no-print-directory",
        "run",
        f"PORT={port}",
        f"VENV={venv}",
        f"BIN={BIN}",
        f"TRAIL_KEY={var / 'trail-signing.key'}",
    ]
    var.mkdir()
    with log.open("w") as out:
        run.process = subprocess.Popen(  # noqa: S603 - make, with the test's own arguments
            command,
            cwd=ROOT,
            env=run.env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: stopped as a whole below
        )
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            assert run.process.poll() is None, log.read_text()
            try:
                if httpx.get(f"{run.url}/accounts/login/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail(f"make run did not serve: {log.read_text()[-3000:]}")
        yield run
    finally:
        os.killpg(run.process.pid, signal.SIGTERM)
        run.process.wait(timeout=30)


def _bash(run: Run, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - the README's own commands
        ["/bin/bash", "-c", script],
        cwd=run.var,
        env=run.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _api(run: Run, token: str, method: str, path: str, **kwargs: Any) -> Any:
    response = httpx.request(
        method,
        f"{run.url}/api/v1/{path}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
        **kwargs,
    )
    response.raise_for_status()
    return response.json()


def _token(run: Run, user: str) -> str:
    done = _bash(run, f"{BIN}/python {ROOT}/manage.py issue_token --user {user}")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_make_run_seeds_work_for_each_demo_reviewer_and_warns_of_nothing(make_run: Run) -> None:
    log = make_run.log.read_text()
    assert "W040" not in log
    assert "System check identified" not in log
    assert "demo answers submitted for review" in log
    # each demo reviewer's queue has work on the first visit
    for reviewer in ("reviewer", "reviewer2"):
        waiting = _api(make_run, _token(make_run, reviewer), "GET", WAITING)
        assert len(waiting["results"] if isinstance(waiting, dict) else waiting) >= 3, reviewer


def test_a_command_run_by_hand_finds_make_runs_signing_key(make_run: Run) -> None:
    shell = _bash(
        make_run,
        f"{BIN}/python {ROOT}/manage.py shell -c "
        "'from trail import signing; print(signing.public_key() is not None)'",
    )
    assert shell.returncode == 0, shell.stderr
    assert "W040" not in shell.stderr
    assert shell.stdout.strip().splitlines()[-1] == "True"


def _printed(comment: str) -> dict[str, Any]:
    """The fields a `# -> 201 {...}` comment says the call prints."""
    fields = re.findall(r'"(\w+)": ("[^"]*"|[\d.]+)', comment)
    return {name: json.loads(value) for name, value in fields}


def _with_events(output: str) -> dict[str, Any]:
    """The last decision printed with its events (curl's bodies end without a newline)."""
    decoder, last, at = json.JSONDecoder(), None, 0
    while (start := output.find("{", at)) != -1:
        try:
            found, at = decoder.raw_decode(output, start)
        except ValueError:
            at = start + 1
            continue
        if isinstance(found, dict) and "events" in found:
            last = found
    assert last is not None, f"no decision with its events in: {output[-2000:]}"
    return last


def _summary(output: str) -> list[Any]:
    """Each JSON body printed, by its state or its error."""
    decoder, seen, at = json.JSONDecoder(), [], 0
    while (start := output.find("{", at)) != -1:
        try:
            found, at = decoder.raw_decode(output, start)
        except ValueError:
            at = start + 1
            continue
        if isinstance(found, dict):
            seen.append({k: found.get(k) for k in ("id", "state", "code", "message", "field")})
    return seen


def test_the_whole_path_with_curl_prints_what_the_readme_says(make_run: Run) -> None:
    (block,) = code_blocks("The whole path with curl")
    lines = block.splitlines()
    # the first call, as written, and the figures its comment says it prints
    first_end = next(i for i, line in enumerate(lines) if line.startswith("# -> 201"))
    submitted = _bash(make_run, make_run.as_written("\n".join(lines[:first_end])))
    assert submitted.returncode == 0, submitted.stderr
    said = _printed(lines[first_end])
    got = json.loads(submitted.stdout)
    shown = {
        name: round(got[name], 2) if isinstance(value, float) else got[name]
        for name, value in said.items()
    }
    assert shown == said
    # the rest of it, as written: the reviewers' approvals complete it and the trail verifies
    rest = _bash(make_run, make_run.as_written(block))
    assert rest.returncode == 0, rest.stderr
    assert "W040" not in rest.stderr
    final = _with_events(rest.stdout)
    assert final["state"] == "completed", _summary(rest.stdout)
    kinds = [event["kind"].removeprefix("decision.") for event in final["events"]]
    listed = re.search(r'"events": \[([^\]]*)\]', block, re.S)
    assert listed is not None
    assert kinds == [k.strip().strip("#").strip() for k in listed.group(1).split(",")]


def test_connect_your_rag_runs_as_written(make_run: Run) -> None:
    block = code_blocks("Connect your RAG")[0]
    steps = block.split("# your webhook endpoint")[0]  # the receiver's line needs a request
    q = re.search(r'q = "([^"]+)"', steps)
    assert q is not None
    reviewers = [_token(make_run, "reviewer"), _token(make_run, "reviewer2")]
    # the two people the README says approve it, from the queue, while the client waits
    approved = threading.Event()

    def review() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not approved.is_set():
            waiting = _api(make_run, reviewers[0], "GET", WAITING)
            rows = waiting["results"] if isinstance(waiting, dict) else waiting
            ours = [row for row in rows if row.get("question") == q.group(1)]
            if ours:
                pk = ours[0]["id"]
                # as the decision page sends it: each claim with the reviewer's verdict (an
                # answer held as a refusal is released only when they vouch for every claim)
                claims = _api(make_run, reviewers[0], "GET", f"decisions/{pk}/")["claims"]
                verdicts = [{"index": i, "supported": True} for i in range(len(claims))]
                for token in reviewers:
                    _api(make_run, token, "POST", f"decisions/{pk}/claim/")
                    _api(
                        make_run,
                        token,
                        "POST",
                        f"decisions/{pk}/approve/",
                        json={"reason": "ok", "claims": verdicts},
                    )
                approved.set()
                return
            time.sleep(0.5)

    people = threading.Thread(target=review, daemon=True)
    people.start()
    scope: dict[str, Any] = {}
    # wait()'s ten minutes are for a person; the test's people act at once
    exec(make_run.as_written(steps).replace("timeout=600", "timeout=90"), scope)  # noqa: S102 - the README's own steps
    people.join(timeout=5)
    assert approved.is_set()
    assert scope["verdict"].state == "completed"
