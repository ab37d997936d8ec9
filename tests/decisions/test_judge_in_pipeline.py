"""The optional LLM judge in the pipeline: asked before the validation's transaction, its
verdict recorded beside the engine's on each claim, never deciding a gate."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from decisions.models import Decision
from tests.decisions.conftest import GOOD, WRONG_NUMBER, cite

pytestmark = pytest.mark.django_db


class _Judge(BaseHTTPRequestHandler):
    supported = True
    asked: list[dict[str, Any]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).asked.append(body)
        verdict = {"supported": type(self).supported, "confidence": 0.9, "reason": "fake"}
        answer = {
            "model": "fake-judge",
            "choices": [{"message": {"role": "assistant", "content": json.dumps(verdict)}}],
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def judge(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Judge]]:
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Judge)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Judge.asked, _Judge.supported = [], True
    settings.MARIA_JUDGE_URL = f"http://127.0.0.1:{server.server_address[1]}/v1"
    settings.MARIA_JUDGE_RETRIES = 0
    settings.MARIA_JUDGE_TIMEOUT = 5.0
    try:
        yield _Judge
    finally:
        server.shutdown()
        server.server_close()


def _report_claim(decision_id: int) -> dict[str, Any]:
    report = Decision.objects.get(pk=decision_id).report
    assert report is not None
    claim: dict[str, Any] = report.body["claims"][0]
    return claim


def test_without_a_judge_url_no_judge_is_asked_or_recorded(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    response = submit([{"text": GOOD, "citations": [cite(policy_doc)]}])
    assert "judge" not in _report_claim(response.json()["id"])


def test_the_judge_verdict_is_recorded_beside_the_engines(
    judge: type[_Judge],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    response = submit([{"text": GOOD, "citations": [cite(policy_doc)]}])
    claim = _report_claim(response.json()["id"])
    assert claim["judge"]["supported"] is True
    assert claim["judge"]["model"] == "fake-judge"
    # the judge read the claim and the paragraph it cites
    [asked] = judge.asked
    assert policy_doc.text[:40] in json.dumps(asked, ensure_ascii=False)


def test_a_judge_that_says_supported_never_lets_a_refuted_answer_through(
    judge: type[_Judge],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    # given a judge that calls everything supported, and a claim whose number is wrong
    judge.supported = True
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    response = submit([{"text": WRONG_NUMBER, "citations": [cite(policy_doc)]}])
    body = response.json()
    # then the engine's verdict stands: the judge is recorded, and the answer is not passed
    assert _report_claim(body["id"])["judge"]["supported"] is True
    assert body["gate"] != "auto"
    assert body["claims"][0]["supported"] is False


def test_a_judge_that_cannot_answer_leaves_the_validation_to_the_engine(
    settings: Any, policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    settings.MARIA_JUDGE_URL = "http://127.0.0.1:9/v1"  # nothing listens there
    settings.MARIA_JUDGE_RETRIES = 0
    settings.MARIA_JUDGE_TIMEOUT = 1.0
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    response = submit([{"text": GOOD, "citations": [cite(policy_doc)]}])
    assert response.json()["gate"] == "auto"
    judged = _report_claim(response.json()["id"])["judge"]
    assert judged["supported"] is None
    assert judged["error"]
