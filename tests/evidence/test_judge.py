"""The optional LLM judge against a local fake OpenAI-compatible server (127.0.0.1 only)."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from evidence.judge import (
    MAX_EVIDENCE_CHARS,
    JudgeConfig,
    JudgeVerdict,
    judge_claim,
    judge_config,
)

CLAIM = "The warranty lasts two years."
EVIDENCE = "All devices come with a two-year warranty from the date of purchase."


def completion(content: str, *, model: str = "fake-judge-1") -> dict[str, Any]:
    """A chat-completions answer whose message holds `content`."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


def verdict_json(supported: Any, confidence: Any = 0.9, reason: str = "It says so.") -> str:
    return json.dumps({"supported": supported, "confidence": confidence, "reason": reason})


@dataclass
class Reply:
    status: int = 200
    body: bytes | dict[str, Any] = b""
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeJudge:
    """Answers requests with the queued replies in order (the last one repeats)."""

    url: str = ""
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[Seen] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def next_reply(self) -> Reply:
        with self.lock:
            if len(self.replies) > 1:
                return self.replies.popleft()
            return self.replies[0] if self.replies else Reply(500, b"no reply queued")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeJudge

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (the timeout test) leaves a broken pipe behind; not an error.
        pass


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with fake.lock:
            fake.requests.append(Seen(self.path, dict(self.headers.items()), json.loads(raw)))
        reply = fake.next_reply()
        if reply.delay:
            fake.release.wait(reply.delay)
        body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    # urllib honours proxy variables; these tests must talk to 127.0.0.1 directly.
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert "http_proxy" not in os.environ


@pytest.fixture
def fake() -> Iterator[FakeJudge]:
    judge = FakeJudge()
    server = _Server(("127.0.0.1", 0), _Handler)
    server.fake = judge
    judge.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield judge
    finally:
        judge.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def config_for(fake: FakeJudge, **overrides: Any) -> JudgeConfig:
    values: dict[str, Any] = {
        "url": fake.url,
        "model": "gpt-4o-mini",
        "api_key": "",
        "timeout": 2.0,
        "retries": 2,
        "backoff": 0.01,
    }
    values.update(overrides)
    return JudgeConfig(**values)


# --- answers ----------------------------------------------------------------------------


def test_a_supported_verdict(fake: FakeJudge) -> None:
    # given a judge that finds the claim supported
    fake.answer(Reply(body=completion(verdict_json(True, 0.93, "The evidence states it."))))

    # when the claim is judged
    verdict = judge_claim(CLAIM, EVIDENCE, config=config_for(fake))

    # then the verdict is the judge's, with the model that answered
    assert verdict == JudgeVerdict(
        supported=True, confidence=0.93, reason="The evidence states it.", model="fake-judge-1"
    )
    assert verdict.answered
    assert verdict.as_dict()["error"] is None
    assert len(fake.requests) == 1


def test_an_unsupported_verdict(fake: FakeJudge) -> None:
    fake.answer(Reply(body=completion(verdict_json(False, 0.8, "It says one year."))))

    verdict = judge_claim(CLAIM, "The warranty lasts one year.", config=config_for(fake))

    assert verdict.supported is False
    assert verdict.confidence == pytest.approx(0.8)
    assert verdict.reason == "It says one year."
    assert verdict.error is None


@pytest.mark.parametrize(
    "content",
    [
        "```json\n" + verdict_json(True, 0.7) + "\n```",
        "```\n" + verdict_json(True, 0.7) + "\n```",
        "  ```JSON " + verdict_json(True, 0.7) + "```  ",
        "Here is my answer: " + verdict_json(True, 0.7) + " Hope that helps.",
    ],
    ids=["json-fence", "bare-fence", "one-line-fence", "prose-around"],
)
def test_a_fenced_or_wrapped_json_answer(fake: FakeJudge, content: str) -> None:
    fake.answer(Reply(body=completion(content)))

    verdict = judge_claim(CLAIM, EVIDENCE, config=config_for(fake))

    assert verdict.supported is True
    assert verdict.confidence == pytest.approx(0.7)
    assert verdict.error is None


@pytest.mark.parametrize(
    "body",
    [
        completion("I think the evidence supports it."),
        completion(verdict_json("yes")),
        completion(verdict_json(1)),
        completion(json.dumps({"confidence": 0.9, "reason": "no verdict"})),
        completion(json.dumps([True, 0.9])),
        completion(""),
        {"choices": []},
        {"choices": [{"message": {"role": "assistant", "content": None}}]},
        {"error": "not a completion"},
        b"<html>bad gateway page</html>",
        b'["not", "an", "object"]',
    ],
    ids=[
        "prose",
        "supported-string",
        "supported-number",
        "supported-missing",
        "json-array",
        "empty",
        "no-choices",
        "null-content",
        "no-choices-key",
        "not-json",
        "array-body",
    ],
)
def test_a_malformed_answer_is_an_error_verdict(
    fake: FakeJudge, body: bytes | dict[str, Any]
) -> None:
    # given a judge that answers 200 with something that is not a verdict
    fake.answer(Reply(body=body))

    # when the claim is judged, nothing is raised
    verdict = judge_claim(CLAIM, EVIDENCE, config=config_for(fake))

    # then the verdict says the judge could not answer, and a malformed answer is not retried
    assert verdict.supported is None
    assert verdict.confidence is None
    assert verdict.error
    assert not verdict.answered
    assert len(fake.requests) == 1


@pytest.mark.parametrize(
    ("given", "expected"),
    [(1.7, 1.0), (-0.2, 0.0), (0.25, 0.25), ("0.6", 0.6), ("high", None), (None, None)],
)
def test_confidence_is_clamped_to_the_unit_interval(
    fake: FakeJudge, given: Any, expected: float | None
) -> None:
    fake.answer(Reply(body=completion(verdict_json(True, given))))

    verdict = judge_claim(CLAIM, EVIDENCE, config=config_for(fake))

    assert verdict.supported is True
    assert verdict.confidence == (pytest.approx(expected) if expected is not None else None)


# --- retries and timeouts ---------------------------------------------------------------


def test_http_500_twice_then_success_is_retried(fake: FakeJudge) -> None:
    # given a judge that fails twice with 500 and then answers
    fake.answer(
        Reply(500, b'{"error": "overloaded"}'),
        Reply(500, b'{"error": "overloaded"}'),
        Reply(body=completion(verdict_json(True, 0.9))),
    )

    # when the claim is judged with two retries
    verdict = judge_claim(CLAIM, EVIDENCE, config=config_for(fake, retries=2))

    # then the third attempt's answer is the verdict, and the server saw three requests
    assert verdict.supported is True
    assert verdict.error is None
    assert len(fake.requests) == 3


def test_http_429_is_retried(fake: FakeJudge) -> None:
    fake.answer(Reply(429, b'{"error": "slow down"}'), Reply(body=completion(verdict_json(False))))

    verdict = judge_claim(CLAIM, EVIDENCE, config=config_for(fake, retries=1))

    assert verdict.supported is False
    assert len(fake.requests) == 2


def test_retries_are_bounded(fake: FakeJudge) -> None:
    # given a judge that always fails with 503
    fake.answer(Reply(503, b"unavailable"))

    verdict = judge_claim(CLAIM, EVIDENCE, config=config_for(fake, retries=2))

    # then it was tried retries + 1 times and the verdict carries the status
    assert len(fake.requests) == 3
    assert verdict.supported is None
    assert verdict.error is not None
    assert "HTTP 503" in verdict.error
    assert "3 attempts" in verdict.error


def test_http_400_is_not_retried(fake: FakeJudge) -> None:
    fake.answer(Reply(400, b'{"error": {"message": "unknown parameter"}}'))

    verdict = judge_claim(CLAIM, EVIDENCE, config=config_for(fake, retries=2))

    assert len(fake.requests) == 1
    assert verdict.supported is None
    assert verdict.error is not None
    assert "HTTP 400" in verdict.error
    assert "unknown parameter" in verdict.error


def test_a_slow_judge_gives_an_error_verdict_within_the_bound(fake: FakeJudge) -> None:
    # given a judge that takes far longer than the timeout
    fake.answer(Reply(body=completion(verdict_json(True)), delay=5.0))
    config = config_for(fake, timeout=0.3, retries=1, backoff=0.2)

    # when the claim is judged
    started = time.monotonic()
    verdict = judge_claim(CLAIM, EVIDENCE, config=config)
    elapsed = time.monotonic() - started

    # then it gives up within timeout * (retries + 1) + backoff (and some scheduling slack)
    assert verdict.supported is None
    assert verdict.error is not None
    assert "timed out" in verdict.error
    assert len(fake.requests) == 2
    bound = config.timeout * (config.retries + 1) + config.backoff
    assert elapsed < bound + 0.5


def test_an_unreachable_judge_gives_an_error_verdict() -> None:
    # given a port on 127.0.0.1 that nothing listens on
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = JudgeConfig(url=f"http://127.0.0.1:{port}/v1", model="m", retries=1, backoff=0.01)

    verdict = judge_claim(CLAIM, EVIDENCE, config=config)

    assert verdict.supported is None
    assert verdict.error is not None
    assert "unreachable" in verdict.error
    assert verdict.model == "m"


# --- the request ------------------------------------------------------------------------


def test_the_request_carries_the_key_the_model_and_the_prompt(fake: FakeJudge) -> None:
    fake.answer(Reply(body=completion(verdict_json(True))))

    judge_claim(CLAIM, EVIDENCE, config=config_for(fake, api_key="sk-test-123", model="judge-x"))

    (seen,) = fake.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["Authorization"] == "Bearer sk-test-123"
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.body["model"] == "judge-x"
    assert seen.body["temperature"] == 0
    assert seen.body["response_format"] == {"type": "json_object"}
    system, user = seen.body["messages"]
    assert system["role"] == "system"
    assert '"supported"' in system["content"]
    assert '"confidence"' in system["content"]
    assert user["role"] == "user"
    assert CLAIM in user["content"]
    assert EVIDENCE in user["content"]


def test_no_authorization_header_without_a_key(fake: FakeJudge) -> None:
    fake.answer(Reply(body=completion(verdict_json(True))))

    judge_claim(CLAIM, EVIDENCE, config=config_for(fake, api_key=""))

    assert "Authorization" not in fake.requests[0].headers


def test_long_evidence_is_truncated(fake: FakeJudge) -> None:
    fake.answer(Reply(body=completion(verdict_json(True))))
    evidence = "a" * MAX_EVIDENCE_CHARS + "TAIL-NOT-SENT" + "b" * 20_000

    judge_claim(CLAIM, evidence, config=config_for(fake))

    user = fake.requests[0].body["messages"][1]["content"]
    assert "TAIL-NOT-SENT" not in user
    assert "truncated" in user
    assert len(user) < MAX_EVIDENCE_CHARS + 1_000


def test_a_trailing_slash_in_the_url_is_fine(fake: FakeJudge) -> None:
    fake.answer(Reply(body=completion(verdict_json(True))))

    judge_claim(CLAIM, EVIDENCE, config=config_for(fake, url=fake.url + "/"))

    assert fake.requests[0].path == "/v1/chat/completions"


# --- configuration ----------------------------------------------------------------------


def test_judge_config_is_none_when_the_url_is_empty(settings: Any) -> None:
    settings.MARIA_JUDGE_URL = ""

    assert judge_config() is None


def test_judge_config_reads_the_settings_at_call_time(settings: Any) -> None:
    settings.MARIA_JUDGE_URL = "http://127.0.0.1:8099/v1"
    settings.MARIA_JUDGE_MODEL = "judge-model"
    settings.MARIA_JUDGE_API_KEY = "sk-secret"
    settings.MARIA_JUDGE_TIMEOUT = 1.5
    settings.MARIA_JUDGE_RETRIES = 4

    config = judge_config()

    assert config is not None
    assert config.endpoint == "http://127.0.0.1:8099/v1/chat/completions"
    assert (config.model, config.api_key, config.timeout, config.retries) == (
        "judge-model",
        "sk-secret",
        1.5,
        4,
    )
    assert "sk-secret" not in repr(config)

    settings.MARIA_JUDGE_URL = ""
    assert judge_config() is None


def test_the_judge_is_off_by_default() -> None:
    from django.conf import global_settings

    from maria import settings as project_settings

    assert not hasattr(global_settings, "MARIA_JUDGE_URL")
    if not os.environ.get("MARIA_JUDGE_URL"):
        assert project_settings.MARIA_JUDGE_URL == ""
    assert isinstance(project_settings.MARIA_JUDGE_TIMEOUT, float)
    assert isinstance(project_settings.MARIA_JUDGE_RETRIES, int)


@pytest.mark.parametrize(
    "overrides",
    [
        {"url": "ftp://127.0.0.1/v1"},
        {"url": "127.0.0.1:8099/v1"},
        {"model": ""},
        {"timeout": 0},
        {"timeout": float("inf")},
        {"retries": -1},
    ],
)
def test_a_bad_config_is_refused(overrides: dict[str, Any]) -> None:
    values: dict[str, Any] = {"url": "http://127.0.0.1:8099/v1", "model": "m"}
    values.update(overrides)
    with pytest.raises(ValueError, match="judge"):
        JudgeConfig(**values)
