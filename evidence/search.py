"""Hybrid retrieval over the document store: dense (on PostgreSQL pgvector's HNSW index, or
an exact scan for small scopes; exact numpy elsewhere) weighted 0.7 plus BM25 weighted 0.3,
filtered by zone scope and currency.

Each process keeps its BM25 index (and, without PostgreSQL, its vector matrix) in memory and
rebuilds it when `CorpusState.generation` says the paragraphs changed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from django.db import connection, transaction
from numpy.typing import NDArray

from coordinates.coordinate import Coordinate
from evidence.models import EMBEDDING_DIM, CorpusState, Paragraph
from evidence.retrieval import (
    DEFAULT_DENSE_WEIGHT,
    DEFAULT_K,
    DEFAULT_SPARSE_WEIGHT,
    BM25Index,
    DenseIndex,
    HybridHit,
    Ranked,
    fuse,
)
from evidence.services import embedder

HNSW_EF_SEARCH = 80  # candidates the HNSW scan keeps; 2k=30 would cost recall under filters
# Up to this many candidate paragraphs (current, in scope) the dense leg reads them all and
# sorts: exact, and faster than an HNSW scan that has to step past the other zones'
# neighbours. Measured among 100,000 paragraphs (bench/bench_retrieval_pg.py), exact beats
# HNSW up to about 7,500 candidates while the vectors sit in TOAST (the column's default), and
# up to about 15,000 when stored inline (ALTER COLUMN embedding SET STORAGE PLAIN).
EXACT_MAX_ROWS = 7_500


@dataclass(frozen=True, slots=True)
class Corpus:
    """Everything retrieval needs in memory, for one state of the store."""

    generation: int
    stamp: object  # with the generation, names the state it was loaded from (see _store_state)
    ids: NDArray[np.int64]
    zone_names: list[str]  # the distinct zones ...
    zone_codes: NDArray[np.intp]  # ... and each row's index into them
    current: NDArray[np.bool_]
    embedded: NDArray[np.bool_]  # rows with a vector (always all on PostgreSQL)
    sparse: BM25Index
    dense: DenseIndex | None  # None on PostgreSQL, where the HNSW index answers


_lock = threading.Lock()
_cached: Corpus | None = None


def corpus_generation() -> int:
    return CorpusState.objects.filter(pk=1).values_list("generation", flat=True).first() or 0


def _store_state() -> tuple[int, object]:
    """(generation, stamp): equal pairs mean the same paragraphs, as this connection sees them.

    The generation alone can come round twice: a transaction bumps it, loads the corpus and
    rolls back, then the next bump reaches the same number with other paragraphs (every test
    does this). On PostgreSQL the stamp is the CorpusState row's xmin, the transaction that
    wrote it, which never repeats. SQLite has no row versions: outside a transaction the
    generation is committed and the stamp None; inside one, a corpus read there stays valid
    only while this connection writes nothing more (sqlite3's total_changes, which a rollback
    never lowers).
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT generation, xmin::text FROM evidence_corpusstate WHERE id = 1")
            row = cursor.fetchone()
        return (int(row[0]), row[1]) if row else (0, None)
    generation = corpus_generation()
    if not connection.in_atomic_block:
        return generation, None
    raw = connection.connection
    return generation, (raw, getattr(raw, "total_changes", object()))


def _is_current(cached: Corpus, generation: int, stamp: object) -> bool:
    if cached.generation != generation:
        return False
    # On SQLite a corpus read outside any transaction holds committed paragraphs, which a
    # transaction that has not bumped the generation since sees too.
    committed = connection.vendor != "postgresql" and cached.stamp is None
    return committed or cached.stamp == stamp


def _load(generation: int, stamp: object) -> Corpus:
    on_postgres = connection.vendor == "postgresql"
    # PostgreSQL answers the dense leg itself, so its vectors never need to leave it.
    fields = ["id", "zone", "current", "text"] + ([] if on_postgres else ["embedding"])
    rows = list(Paragraph.objects.order_by("id").values_list(*fields))
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    dense = None
    embedded = np.ones(len(rows), dtype=bool)
    if not on_postgres:
        vectors = np.zeros((len(rows), EMBEDDING_DIM), dtype=np.float32)
        for i, row in enumerate(rows):
            if row[4] is None:
                embedded[i] = False
            else:
                vectors[i] = row[4]
        dense = DenseIndex(ids.tolist(), vectors)
    zone_names, zone_codes = np.unique(
        np.asarray([r[1] for r in rows], dtype=str), return_inverse=True
    )
    return Corpus(
        generation=generation,
        stamp=stamp,
        ids=ids,
        zone_names=[str(z) for z in zone_names],
        zone_codes=zone_codes.astype(np.intp),
        current=np.fromiter((r[2] for r in rows), dtype=bool, count=len(rows)),
        embedded=embedded,
        sparse=BM25Index(ids.tolist(), [r[3] for r in rows]),
        dense=dense,
    )


def corpus() -> Corpus:
    """The in-memory corpus of this process, reloaded when the store has changed."""
    global _cached
    generation, stamp = _store_state()
    with _lock:
        if _cached is None or not _is_current(_cached, generation, stamp):
            _cached = _load(generation, stamp)
        return _cached


def in_scope(zone: str, scopes: list[Coordinate] | None) -> bool:
    """A zone is in scope when a scope equals it or is a dotted prefix of it."""
    if scopes is None:
        return True
    return any(zone == str(s) or zone.startswith(f"{s}.") for s in scopes)


def scope_mask(loaded: Corpus, scopes: list[Coordinate] | None) -> NDArray[np.bool_]:
    """Rows whose zone is in scope; decided once per distinct zone, not once per row."""
    allowed = np.fromiter(
        (in_scope(z, scopes) for z in loaded.zone_names), dtype=bool, count=len(loaded.zone_names)
    )
    return allowed[loaded.zone_codes]


def scope_zones(loaded: Corpus, scopes: list[Coordinate] | None) -> list[str] | None:
    """The zones of the corpus that are in scope (None: no scope, every zone)."""
    if scopes is None:
        return None
    return [z for z in loaded.zone_names if in_scope(z, scopes)]


def dense_leg_postgres(
    vector: NDArray[np.float32],
    zones: list[str] | None,
    include_superseded: bool,
    k: int,
    *,
    exact: bool,
) -> Ranked:
    """The k paragraphs nearest to `vector` by cosine, among `zones` (None: all), by an
    HNSW index scan or, when `exact`, by reading every candidate and sorting."""
    conditions = ["embedding IS NOT NULL"]
    params: list[list[str]] = []
    if not include_superseded:
        conditions.append("current")
    if zones is not None:
        # The zones themselves, not prefix patterns: the planner then knows how many rows
        # they hold, and the (current, zone) index can fetch them.
        conditions.append("zone = ANY(%s)")
        params.append(zones)
    literal = "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"
    # Only fixed condition strings are joined in; every value travels as a parameter.
    where = " AND ".join(conditions)
    sql = (
        "SELECT id, 1 - (embedding <=> %s::vector) FROM evidence_paragraph "  # noqa: S608
        "WHERE " + where + " ORDER BY embedding <=> %s::vector LIMIT %s"
    )
    if exact:
        # HNSW answers only through an index scan; without one the planner reads the
        # candidates (a bitmap scan of their zones) and keeps the top k in a heap sort.
        options = {"enable_indexscan": "off"}
    else:
        # Iterative scans keep looking past filtered-out neighbours (pgvector >= 0.8).
        options = {"hnsw.ef_search": str(HNSW_EF_SEARCH), "hnsw.iterative_scan": "relaxed_order"}
    with transaction.atomic(), connection.cursor() as cursor:
        # set_config(..., true) is SET LOCAL: undone at the end of this transaction. One
        # statement for all of them saves round trips.
        cursor.execute(
            "SELECT " + ", ".join(["set_config(%s, %s, true)"] * len(options)),
            [value for pair in options.items() for value in pair],
        )
        arguments: list[str | int | list[str]] = [literal, *params, literal, k]
        cursor.execute(sql, arguments)
        rows = cursor.fetchall()
    rows.sort(key=lambda r: -r[1])  # relaxed order: re-sort the few rows returned
    return Ranked([r[0] for r in rows], np.asarray([r[1] for r in rows], dtype=np.float32))


def search_paragraphs(
    query: str,
    *,
    scopes: list[Coordinate] | None,
    k: int = DEFAULT_K,
    include_superseded: bool = False,
    dense_weight: float = DEFAULT_DENSE_WEIGHT,
    sparse_weight: float = DEFAULT_SPARSE_WEIGHT,
) -> list[HybridHit]:
    """The k best paragraphs for `query` among those in `scopes` (None: every zone)."""
    loaded = corpus()
    mask = scope_mask(loaded, scopes)
    if not include_superseded:
        mask &= loaded.current
    candidates = int(np.count_nonzero(mask))
    if candidates == 0:
        return []
    pool = 2 * k
    vector = embedder().embed([query])[0]
    if not np.any(vector):
        # A query without a single feature is equally far from everything: the dense leg
        # would rank arbitrary paragraphs (or NaN distances on PostgreSQL) as its best.
        dense = Ranked([], np.zeros(0, dtype=np.float32))
    elif loaded.dense is None:
        zones = scope_zones(loaded, scopes)
        exact = candidates <= EXACT_MAX_ROWS
        dense = dense_leg_postgres(vector, zones, include_superseded, pool, exact=exact)
    else:
        dense = loaded.dense.search(vector, pool, mask=mask & loaded.embedded)
    sparse = loaded.sparse.search(query, pool, mask=mask)
    return fuse(dense, sparse, dense_weight=dense_weight, sparse_weight=sparse_weight, k=k)
