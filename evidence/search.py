"""Hybrid retrieval over the document store: dense (on PostgreSQL pgvector's HNSW index, or
an exact scan for small scopes; exact numpy elsewhere) weighted 0.7 plus BM25 weighted 0.3,
filtered by scope and currency. A scope sees the documents of its subtree and those of the
levels above it, less the ancestors' documents that a nearer level's document of the same
title overrides (evidence.retrieval.overrides; docs/architecture.md, "Documents at every
level").

Each process keeps its BM25 index (and, without PostgreSQL, its vector matrix) in memory.
When `CorpusState.generation` says the paragraphs changed, it reads every paragraph's id and
currency (and, on SQLite, embedder) and indexes only the paragraphs it has not seen: a
paragraph's text and zone never change once written. New paragraphs go to the BM25 index's
small tail (see `BM25Index.added`); when the tail outgrows REBUILD_TAIL_ROWS or
REBUILD_TAIL_SHARE of the index, a background thread rebuilds the index from its stored
terms and swaps it in, so no query waits for a full rebuild. Only the first load of a
process tokenises every paragraph.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from django.db import connection
from numpy.typing import NDArray

from coordinates.coordinate import Coordinate
from coordinates.selectors import in_scopes
from evidence.models import EMBEDDING_DIM, CorpusState, DocumentVersion, Paragraph
from evidence.retrieval import (
    DEFAULT_DENSE_WEIGHT,
    DEFAULT_K,
    DEFAULT_SPARSE_WEIGHT,
    BM25Index,
    DenseIndex,
    HybridHit,
    PlacedDocument,
    Ranked,
    fuse,
    in_view,
    overrides,
)
from evidence.services import embedder

logger = logging.getLogger(__name__)

# Candidates the HNSW scan keeps (pgvector's hnsw.ef_search). On MiniLM vectors of 100,000
# paragraphs (bench/bench_retrieval_pg.py, ef_construction 200), recall@15 against exact
# search for a search of every zone: ~0.96 at 60, ~0.97 at 80, ~0.98 at 100, each step
# ~0.4 ms. Under a scope the iterative scan looks well past the list anyway (~0.98).
HNSW_EF_SEARCH = 80
# The expression migration 0007 indexes: the vector in half precision.
HNSW_INDEXED = f"(embedding::halfvec({EMBEDDING_DIM}))"
# Up to this many candidate paragraphs (current, in scope) the dense leg reads them all and
# sorts: exact, and as fast as an HNSW scan that has to step past the other zones'
# neighbours (each row it skips costs it more graph search), and far steadier. Measured
# among 100,000 paragraphs, vectors in the rows (migration 0007), LIMIT 30, p50 / p95: exact
# 5.6 / 7.4 ms against HNSW 21 / 44 at 4,600 candidates, 12 / 16 against 20 / 25 at 7,550,
# 22 / 29 against 14 / 18 at 13,950 (bench/bench_retrieval_pg.py).
EXACT_MAX_ROWS = 10_000
# The BM25 tail is folded into a rebuilt index, in the background, once it holds more than
# both of these (tail paragraphs score exactly; the base's statistics drift as it grows).
REBUILD_TAIL_ROWS = 2_000
REBUILD_TAIL_SHARE = 0.02
_FETCH_BATCH = 500  # ids per IN (...) when reading new paragraphs (SQLite caps parameters)
_MASKS_KEPT = 256  # candidate masks kept per corpus state (100 kB each at 100,000 rows)


@dataclass(frozen=True, slots=True)
class Corpus:
    """Everything retrieval needs in memory, for one state of the store.

    Rows are in the indexes' order: by id as first loaded, then the paragraphs added since.
    """

    generation: int
    stamp: object  # with the generation, names the state it was loaded from (see _store_state)
    ids: NDArray[np.int64]
    versions: NDArray[np.int64]  # each row's document version, to hide overridden documents
    zone_names: list[str]  # the distinct zones (tree nodes, G to G.U.P.Z) ...
    zone_codes: NDArray[np.intp]  # ... and each row's index into them
    current: NDArray[np.bool_]
    live: NDArray[np.bool_]  # still in the store (a rolled-back paragraph is not)
    embedded: NDArray[np.bool_]  # rows with a vector (always all on PostgreSQL)
    embedders: list[str] | None  # each row's embedder name, to see re-embedding (SQLite)
    sparse: BM25Index
    dense: DenseIndex | None  # None on PostgreSQL, where the HNSW index answers
    # candidate_mask's results for this state, by scope.
    masks: dict[object, NDArray[np.bool_]] = dataclasses.field(
        default_factory=dict, compare=False, repr=False
    )
    # hidden_versions' results for this state, by scope.
    hidden: dict[object, tuple[int, ...]] = dataclasses.field(
        default_factory=dict, compare=False, repr=False
    )


_lock = threading.Lock()
_cached: Corpus | None = None
_rebuilding: threading.Thread | None = None


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


def _can_extend(cached: Corpus, generation: int) -> bool:
    """Whether every id `cached` holds still names the paragraph it held when read, and it
    is worth extending.

    PostgreSQL never hands out a sequence value twice, even after a rollback. SQLite's
    AUTOINCREMENT does, for rows whose insert was rolled back: only a corpus read outside
    any transaction (committed rows only) is safe to extend there. A generation that went
    back means a rollback or an emptied store (whose sequences may restart): load afresh.
    Rows that left the store stay in the indexes, masked out, until they are too many.
    """
    if generation < cached.generation:
        return False
    gone = len(cached.live) - int(np.count_nonzero(cached.live))
    if gone > max(REBUILD_TAIL_ROWS, REBUILD_TAIL_SHARE * len(cached.live)):
        return False
    return connection.vendor == "postgresql" or cached.stamp is None


def _paragraph_rows(ids: Sequence[int], fields: list[str]) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    for start in range(0, len(ids), _FETCH_BATCH):
        batch = ids[start : start + _FETCH_BATCH]
        rows += Paragraph.objects.filter(id__in=batch).order_by("id").values_list(*fields)
    return rows


def _vectors(
    rows: Sequence[tuple[object, ...]], at: int
) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
    """The vectors in column `at` of `rows` (zero where none yet) and which rows have one."""
    vectors = np.zeros((len(rows), EMBEDDING_DIM), dtype=np.float32)
    embedded = np.ones(len(rows), dtype=bool)
    for i, row in enumerate(rows):
        if row[at] is None:
            embedded[i] = False
        else:
            vectors[i] = np.asarray(row[at], dtype=np.float32)
    return vectors, embedded


def _load(generation: int, stamp: object) -> Corpus:
    on_postgres = connection.vendor == "postgresql"
    # PostgreSQL answers the dense leg itself, so its vectors never need to leave it.
    fields = ["id", "zone", "current", "text"] + ([] if on_postgres else ["embedder", "embedding"])
    rows = list(Paragraph.objects.order_by("id").values_list(*fields, "version"))
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    dense = None
    embedders = None
    embedded = np.ones(len(rows), dtype=bool)
    if not on_postgres:
        vectors, embedded = _vectors(rows, 5)
        dense = DenseIndex(ids.tolist(), vectors)
        embedders = [str(r[4]) for r in rows]
    zone_names, zone_codes = np.unique(
        np.asarray([r[1] for r in rows], dtype=str), return_inverse=True
    )
    return Corpus(
        generation=generation,
        stamp=stamp,
        ids=ids,
        versions=np.fromiter((r[-1] for r in rows), dtype=np.int64, count=len(rows)),
        zone_names=[str(z) for z in zone_names],
        zone_codes=zone_codes.astype(np.intp),
        current=np.fromiter((r[2] for r in rows), dtype=bool, count=len(rows)),
        live=np.ones(len(rows), dtype=bool),
        embedded=embedded,
        embedders=embedders,
        sparse=BM25Index(ids.tolist(), [str(r[3]) for r in rows]),
        dense=dense,
    )


def _refresh(cached: Corpus, generation: int, stamp: object) -> Corpus:
    """`cached` brought up to the store: every row's currency read again, and only the
    paragraphs it lacks (and, on SQLite, vectors that changed) read and indexed."""
    on_postgres = connection.vendor == "postgresql"
    columns = "id, current" + ("" if on_postgres else ", embedder")
    with connection.cursor() as cursor:
        # A fixed statement: the table name comes from the model, no value is joined in.
        cursor.execute(f"SELECT {columns} FROM {Paragraph._meta.db_table} ORDER BY id")  # noqa: S608
        state = cursor.fetchall()
    store_ids = np.fromiter((r[0] for r in state), dtype=np.int64, count=len(state))
    store_current = np.fromiter((bool(r[1]) for r in state), dtype=bool, count=len(state))
    # Where each stored id sits among the cached rows, if it does.
    order = np.argsort(cached.ids, kind="stable")
    known_ids = cached.ids[order]
    at = np.minimum(np.searchsorted(known_ids, store_ids), max(len(known_ids) - 1, 0))
    known = (known_ids[at] == store_ids) if len(known_ids) else np.zeros(len(state), dtype=bool)
    rows_of_known = order[at[known]]
    new_ids = store_ids[~known]
    if len(new_ids) > max(len(cached.ids), REBUILD_TAIL_ROWS):
        return _load(generation, stamp)  # mostly new: indexing it all at once is no slower

    fields = ["id", "zone", "text"] + ([] if on_postgres else ["embedder", "embedding"])
    new_rows = _paragraph_rows(new_ids.tolist(), [*fields, "version"])
    if len(new_rows) != len(new_ids):  # deleted between the two reads: try again next time
        return _load(generation, stamp)
    n_old, n_new = len(cached.ids), len(new_rows)
    ids = np.concatenate([cached.ids, new_ids])
    current = np.zeros(n_old + n_new, dtype=bool)
    current[rows_of_known] = store_current[known]
    current[n_old:] = store_current[~known]
    live = np.zeros(n_old + n_new, dtype=bool)
    live[rows_of_known] = True
    live[n_old:] = True
    code_of = {name: i for i, name in enumerate(cached.zone_names)}  # new zones go last
    new_codes = [code_of.setdefault(str(r[1]), len(code_of)) for r in new_rows]
    sparse = cached.sparse
    if n_new:
        sparse = sparse.added(new_ids.tolist(), [str(r[2]) for r in new_rows])
    dense, embedders = cached.dense, cached.embedders
    embedded = np.ones(n_old + n_new, dtype=bool)
    if dense is not None and embedders is not None:
        dense, embedders, embedded = _refresh_vectors(
            cached, dense, embedders, state, known, rows_of_known, new_rows, ids
        )
    return Corpus(
        generation=generation,
        stamp=stamp,
        ids=ids,
        versions=np.concatenate(
            [cached.versions, np.fromiter((r[-1] for r in new_rows), dtype=np.int64)]
        ),
        zone_names=list(code_of),
        zone_codes=np.concatenate([cached.zone_codes, np.asarray(new_codes, dtype=np.intp)]),
        current=current,
        live=live,
        embedded=embedded,
        embedders=embedders,
        sparse=sparse,
        dense=dense,
    )


def _refresh_vectors(
    cached: Corpus,
    dense: DenseIndex,
    embedders: list[str],
    state: Sequence[tuple[object, ...]],
    known: NDArray[np.bool_],
    rows_of_known: NDArray[np.intp],
    new_rows: Sequence[tuple[object, ...]],
    ids: NDArray[np.int64],
) -> tuple[DenseIndex, list[str], NDArray[np.bool_]]:
    """SQLite: the vector matrix with the new rows appended and re-embedded rows read again."""
    embedders = list(embedders)
    store_embedders = [str(r[2]) for r in state]
    changed: list[int] = []  # rows whose embedder differs from the one their vector came from
    for row, position in zip(rows_of_known.tolist(), np.flatnonzero(known).tolist(), strict=True):
        if embedders[row] != store_embedders[position]:
            changed.append(row)
            embedders[row] = store_embedders[position]
    new_vectors, new_embedded = _vectors(new_rows, 4)
    matrix = np.concatenate([dense.vectors, new_vectors])
    embedded = np.concatenate([cached.embedded, new_embedded])
    if changed:
        fetched = _paragraph_rows(cached.ids[changed].tolist(), ["id", "embedding"])
        vector_of = dict(zip((r[0] for r in fetched), _vectors(fetched, 1)[0], strict=True))
        has = {r[0] for r in fetched if r[1] is not None}
        for row in changed:
            pid = int(cached.ids[row])
            matrix[row] = vector_of.get(pid, 0.0)
            embedded[row] = pid in has
    embedders += [str(r[3]) for r in new_rows]
    return DenseIndex(ids.tolist(), matrix), embedders, embedded


def corpus() -> Corpus:
    """The in-memory corpus of this process, brought up to date when the store has changed."""
    global _cached
    generation, stamp = _store_state()
    with _lock:
        if _cached is None or not _is_current(_cached, generation, stamp):
            if _cached is not None and _can_extend(_cached, generation):
                _cached = _refresh(_cached, generation, stamp)
            else:
                _cached = _load(generation, stamp)
            _maybe_rebuild(_cached.sparse)
        return _cached


def _maybe_rebuild(sparse: BM25Index) -> None:
    """Start rebuilding `sparse` in the background once its tail is big (lock held)."""
    global _rebuilding
    threshold = max(REBUILD_TAIL_ROWS, REBUILD_TAIL_SHARE * (len(sparse) - sparse.tail_size))
    if sparse.tail_size <= threshold or (_rebuilding is not None and _rebuilding.is_alive()):
        return
    _rebuilding = threading.Thread(
        target=_rebuild, args=(sparse,), name="maria-bm25-rebuild", daemon=True
    )
    _rebuilding.start()


def _rebuild(sparse: BM25Index) -> None:
    """Rebuild `sparse` (no database work), then put it under whatever the cache holds now."""
    global _cached
    try:
        fresh = sparse.rebuilt()
        with _lock:
            # Paragraphs indexed while this ran stay in the tail; a corpus loaded afresh
            # meanwhile (other rows, or a newer base) is left alone.
            cached = _cached
            if cached is None:
                return
            held = cached.sparse
            if len(fresh) >= len(held) - held.tail_size and held.ids[: len(fresh)] == fresh.ids:
                _cached = dataclasses.replace(cached, sparse=held.rebased(fresh))
    except Exception:
        # The tail keeps answering correctly; the next change tries again.
        logger.exception("rebuilding the BM25 index failed")


def wait_for_rebuild(timeout: float | None = None) -> bool:
    """Wait for a background BM25 rebuild to finish; False if one is still running."""
    thread = _rebuilding
    if thread is not None:
        thread.join(timeout)
        return not thread.is_alive()
    return True


def in_scope(zone: str, scopes: list[Coordinate] | None) -> bool:
    """A zone is in scope when a scope equals it or is a dotted prefix of it."""
    return in_scopes(zone, scopes)


def _names(scopes: list[Coordinate] | None) -> list[str] | None:
    return None if scopes is None else [str(scope) for scope in scopes]


def scope_mask(loaded: Corpus, scopes: list[Coordinate] | None) -> NDArray[np.bool_]:
    """Rows in the store whose tree node is in view of the scopes (evidence.retrieval.in_view:
    in scope, or on a level above one); decided once per node, not once per row."""
    names = _names(scopes)
    allowed = np.fromiter(
        (in_view(z, names) for z in loaded.zone_names), dtype=bool, count=len(loaded.zone_names)
    )
    return allowed[loaded.zone_codes] & loaded.live


def hidden_versions(loaded: Corpus, scopes: list[Coordinate] | None) -> tuple[int, ...]:
    """The versions of the documents that a nearer level's document of the same title
    overrides for `scopes` (evidence.retrieval.overrides), sorted.

    One query over the documents on the scopes' lineages, once per corpus state and scope
    (a document's title and place change only with a new version, which bumps the state),
    and none when no level above a scope holds a paragraph.
    """
    if scopes is None:
        return ()
    key = tuple(sorted(map(str, scopes)))
    found = loaded.hidden.get(key)
    if found is not None:
        return found
    lineage = {str(c) for scope in scopes for c in scope.lineage() if c.depth <= 4}
    above = lineage - set(key)
    found = ()
    if above & set(loaded.zone_names):
        rows = list(
            DocumentVersion.objects.filter(document__zone__coordinate__in=sorted(lineage))
            .order_by()
            .values_list("pk", "document_id", "document__title", "document__zone__coordinate")
        )
        placed = {doc: PlacedDocument(doc, title, node) for _, doc, title, node in rows}
        gone = overrides(placed.values(), list(key))
        found = tuple(sorted(pk for pk, doc, _, _ in rows if doc in gone))
    if len(loaded.hidden) >= _MASKS_KEPT:
        loaded.hidden.clear()
    loaded.hidden[key] = found
    return found


def candidate_mask(
    loaded: Corpus, scopes: list[Coordinate] | None, include_superseded: bool
) -> NDArray[np.bool_]:
    """Rows a search may return: in view of the scopes and not overridden there, in the
    store, current unless superseded ones are asked for. Kept per corpus for the scopes seen
    last (a scope is asked again and again)."""
    key = (None if scopes is None else tuple(sorted(map(str, scopes))), include_superseded)
    mask = loaded.masks.get(key)
    if mask is None:
        mask = scope_mask(loaded, scopes)
        hidden = hidden_versions(loaded, scopes)
        if hidden:
            # kind="sort": ~0.1 ms over 100,000 rows; numpy's default picks a lookup table
            # spanning the ids' range here, ~2 ms.
            mask &= ~np.isin(loaded.versions, np.asarray(hidden, dtype=np.int64), kind="sort")
        if not include_superseded:
            mask &= loaded.current
        mask.flags.writeable = False  # shared by every search of this scope
        if len(loaded.masks) >= _MASKS_KEPT:
            loaded.masks.clear()
        loaded.masks[key] = mask
    return mask


def scope_zones(loaded: Corpus, scopes: list[Coordinate] | None) -> list[str] | None:
    """The tree nodes of the corpus in view of the scopes (None: no scope, every node)."""
    names = _names(scopes)
    if names is None:
        return None
    return [z for z in loaded.zone_names if in_view(z, names)]


def dense_leg_postgres(
    vector: NDArray[np.float32],
    zones: list[str] | None,
    include_superseded: bool,
    k: int,
    *,
    exact: bool,
    ef_search: int = HNSW_EF_SEARCH,
    hidden: Sequence[int] = (),
) -> Ranked:
    """The k paragraphs nearest to `vector` by cosine, among `zones` (None: all) and not of
    the versions `hidden` (overridden documents: `hidden_versions`), by an HNSW index scan
    or, when `exact`, by reading every candidate and sorting.

    Stored vectors are unit length (the Embedder contract), so cosine is the inner product,
    which pgvector computes in a third of the work (`<#>` is its negative). The HNSW index
    (migration 0007) holds the vectors in half precision; the similarities returned are
    computed from the rows' full-precision vectors.

    One round trip: the HNSW settings and the query go as one simple-protocol message (Django
    binds parameters client-side), which PostgreSQL runs as one transaction, so the settings
    are local to it. Inside an outer transaction they last until its end; they touch HNSW
    scans only.
    """
    conditions = ["embedding IS NOT NULL"]
    if not include_superseded:
        conditions.append("current")
    if zones is not None:
        # The zones themselves, not prefix patterns: the planner then knows how many rows
        # they hold, and the (current, zone) index can fetch them.
        conditions.append("zone = ANY(%(zones)s)")
    if hidden:
        # A few versions at most (same-title documents above the scope): checked per row.
        conditions.append("NOT (version_id = ANY(%(hidden)s))")
    params = {
        "vector": "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]",
        "zones": zones,
        "hidden": list(hidden),
        "k": k,
        "ef_search": str(ef_search),
    }
    # Only fixed strings are joined in; every value travels as a parameter.
    select = (
        "SELECT id, (embedding <#> %(vector)s::vector) * -1 AS similarity "
        "FROM evidence_paragraph WHERE " + " AND ".join(conditions)
    )
    if exact:
        # HNSW can only yield its indexed expression's distance ascending; ordering by the
        # similarity leaves the planner reading the candidates (the (current, zone) index)
        # and keeping the top k in a heap sort, with no setting to change.
        sql = select + " ORDER BY similarity DESC LIMIT %(k)s"
    else:
        # Iterative scans keep looking past filtered-out neighbours (pgvector >= 0.8).
        sql = (
            "SELECT set_config('hnsw.ef_search', %(ef_search)s, true), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', true); "
            + select
            + f" ORDER BY {HNSW_INDEXED} <#> %(vector)s::halfvec({EMBEDDING_DIM}) LIMIT %(k)s"
        )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if not exact:
            cursor.nextset()  # past the settings' row
        rows = cursor.fetchall()
    rows.sort(key=lambda r: -r[1])  # relaxed order, half precision: re-sort the few rows
    return Ranked([r[0] for r in rows], np.asarray([r[1] for r in rows], dtype=np.float32))


def search_paragraphs(
    query: str,
    *,
    scopes: list[Coordinate] | None,
    k: int = DEFAULT_K,
    include_superseded: bool = False,
    dense_weight: float = DEFAULT_DENSE_WEIGHT,
    sparse_weight: float = DEFAULT_SPARSE_WEIGHT,
    vector: NDArray[np.float32] | None = None,
) -> list[HybridHit]:
    """The k best paragraphs for `query` among those in view of `scopes` (None: every zone):
    their subtrees and the levels above them, overridden documents left out.

    `vector` is the query's embedding by the configured embedder, for a caller that has it
    already; without it the query is embedded here.
    """
    loaded = corpus()
    mask = candidate_mask(loaded, scopes, include_superseded)
    candidates = int(np.count_nonzero(mask))
    if candidates == 0:
        return []
    pool = 2 * k
    if vector is None:
        vector = embedder().embed([query])[0]
    if not np.any(vector):
        # A query without a single feature is equally far from everything: the dense leg
        # would rank arbitrary paragraphs (or NaN distances on PostgreSQL) as its best.
        dense = Ranked([], np.zeros(0, dtype=np.float32))
    elif loaded.dense is None:
        # BM25 runs in memory while PostgreSQL answers the dense leg: waiting on the socket
        # releases the GIL, so the two overlap instead of adding up.
        sparse_leg = _sparse_executor().submit(loaded.sparse.search, query, pool, mask=mask)
        zones = scope_zones(loaded, scopes)
        exact = candidates <= EXACT_MAX_ROWS
        dense = dense_leg_postgres(
            vector,
            zones,
            include_superseded,
            pool,
            exact=exact,
            hidden=hidden_versions(loaded, scopes),
        )
        sparse = sparse_leg.result()
        return fuse(dense, sparse, dense_weight=dense_weight, sparse_weight=sparse_weight, k=k)
    else:
        dense = loaded.dense.search(vector, pool, mask=mask & loaded.embedded)
    sparse = loaded.sparse.search(query, pool, mask=mask)
    return fuse(dense, sparse, dense_weight=dense_weight, sparse_weight=sparse_weight, k=k)


_executor_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


def _sparse_executor() -> ThreadPoolExecutor:
    """Threads for BM25 legs (pure computation, no database), made on first use."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="maria-bm25")
        return _executor
