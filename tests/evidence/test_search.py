"""Hybrid retrieval over the document store (evidence.search), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import pytest
from django.db import connection, transaction

from coordinates.coordinate import parse
from coordinates.selectors import zone_get
from coordinates.services import zone_add
from evidence import search as search_module
from evidence.models import Paragraph
from evidence.retrieval import HybridHit
from evidence.search import corpus, search_paragraphs
from evidence.services import document_ingest, embedder, version_embed
from evidence.text import tokenize
from tests.samples import CONTRACT_JA, POLICY_EN

pytestmark = pytest.mark.django_db

MEMO_EN = """Contract Review Memo

1. Review
Contracts above 10 million yen require review by the legal department before signature.

2. Retention
Signed contracts are kept for seven years after they expire.
"""

TRAVEL_JA = """出張旅費規程

第1条 精算
出張旅費は出張の終了後二週間以内に精算する。

第2条 承認
海外出張には事前に部長の承認を得なければならない。
"""

# zone -> (text, kind): every zone of the org fixture holds one document.
DOCUMENTS = {
    "G1.U1.P1.Z1": (POLICY_EN, "policy"),
    "G1.U1.P1.Z2": (CONTRACT_JA, "contract"),
    "G1.U1.P2.Z1": (MEMO_EN, "memo"),
    "G2.U1.P1.Z1": (TRAVEL_JA, "policy"),
}


@pytest.fixture
def store(ingest: Callable[..., Any]) -> None:
    """One English or Japanese document in each of four zones, embedded."""
    for zone, (text, kind) in DOCUMENTS.items():
        ingest(text, zone=zone, kind=kind)


def search(query: str, scopes: Sequence[str] | None = None, **options: Any) -> list[HybridHit]:
    return search_paragraphs(
        query, scopes=None if scopes is None else [parse(s) for s in scopes], **options
    )


def paragraphs_of(hits: list[HybridHit]) -> list[Paragraph]:
    """The stored paragraphs the hits name, in hit order; every hit must name one."""
    found = Paragraph.objects.in_bulk([hit.id for hit in hits])
    assert set(found) == {hit.id for hit in hits}, "a hit names a paragraph that does not exist"
    return [found[hit.id] for hit in hits]  # type: ignore[index]


def top_text(query: str, scopes: Sequence[str] | None = None) -> str:
    hits = search(query, scopes)
    assert hits, f"nothing found for {query!r}"
    return paragraphs_of(hits)[0].text


# --- the fusion weights -------------------------------------------------------------------


def test_the_search_weighs_the_dense_leg_0_7_and_bm25_0_3(store: None) -> None:
    # DESIGN.md: hybrid retrieval, dense cosine weighted 0.7 plus BM25 weighted 0.3, each
    # leg min-max normalised; the search as the API runs it (no weights passed)
    hits = search("Who must approve expenses above 500,000 yen?")
    assert any(h.dense != h.sparse for h in hits)  # the two legs disagree somewhere
    for hit in hits:
        assert hit.fused == pytest.approx(0.7 * hit.dense + 0.3 * hit.sparse)


# --- relevance ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Who must approve expenses above 500,000 yen?", "prior approval by the division head"),
        ("When are approved expenses reimbursed?", "reimbursed within 30 days"),
        ("How long are signed contracts kept?", "kept for seven years"),
    ],
)
def test_an_english_question_ranks_the_paragraph_that_answers_it_first(
    store: None, query: str, expected: str
) -> None:
    assert expected in top_text(query)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("委託料の月額はいくらですか", "月額120万円"),
        ("委託料の支払期日はいつですか", "翌月末日までに支払う"),
        ("海外出張の承認", "部長の承認"),
    ],
)
def test_a_japanese_question_ranks_the_paragraph_that_answers_it_first(
    store: None, query: str, expected: str
) -> None:
    assert expected in top_text(query)


def test_hits_are_best_first_and_carry_both_legs(store: None) -> None:
    hits = search("division head approval of expenses")
    fused = [hit.fused for hit in hits]
    assert fused == sorted(fused, reverse=True)
    best = hits[0]
    assert best.cosine is not None  # found by both legs
    assert best.bm25 is not None
    assert 0.0 <= best.fused <= 1.0


# --- zone scope ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scopes", "zones"),
    [
        (["G1.U1.P1.Z1"], {"G1.U1.P1.Z1"}),
        (["G1.U1.P1.Z2"], {"G1.U1.P1.Z2"}),
        (["G1.U1.P1"], {"G1.U1.P1.Z1", "G1.U1.P1.Z2"}),  # a planet covers its zones
        (["G1"], {"G1.U1.P1.Z1", "G1.U1.P1.Z2", "G1.U1.P2.Z1"}),
        (["G1.U1.P2.Z1", "G2"], {"G1.U1.P2.Z1", "G2.U1.P1.Z1"}),
        (None, set(DOCUMENTS)),  # no scope: every zone
    ],
)
def test_a_scope_returns_its_own_zones_and_no_others(
    store: None, scopes: list[str] | None, zones: set[str]
) -> None:
    # The store is small enough that k=50 reaches every paragraph in scope.
    for query in ("approval of contracts and expenses", "委託料の承認"):
        hits = search(query, scopes, k=50)
        assert {p.zone for p in paragraphs_of(hits)} == zones


def test_a_zone_whose_name_only_starts_like_the_scope_is_outside_it(
    store: None, ingest: Callable[..., Any]
) -> None:
    zone_add(coordinate=parse("G1.U1.P1.Z10"))
    ingest(
        "Zone ten\n\nExpenses of zone ten are approved by the zone ten manager.\n",
        zone="G1.U1.P1.Z10",
    )
    hits = search("expenses approved by the manager", ["G1.U1.P1.Z1"], k=50)
    assert {p.zone for p in paragraphs_of(hits)} == {"G1.U1.P1.Z1"}


def test_a_scope_without_documents_finds_nothing(ingest: Callable[..., Any]) -> None:
    ingest(POLICY_EN, zone="G1.U1.P1.Z1")
    assert search("expenses", ["G1.U1.P1.Z2"]) == []
    assert search("expenses", ["G2"]) == []


def test_an_empty_corpus_finds_nothing(org: Any) -> None:
    assert search("expenses above 500,000 yen") == []
    assert search("委託料", ["G1.U1.P1.Z1"]) == []


def test_a_query_without_a_searchable_term_finds_nothing(store: None) -> None:
    assert search("?!") == []


def test_a_scope_mask_is_worked_out_once_per_corpus_state_and_never_written(store: None) -> None:
    loaded = corpus()
    first = search_module.candidate_mask(loaded, [parse("G1")], False)

    assert search_module.candidate_mask(loaded, [parse("G1")], False) is first
    assert not first.flags.writeable  # a search cannot narrow it for the next one
    with_old = search_module.candidate_mask(loaded, [parse("G1")], True)
    assert with_old is not first
    assert (with_old >= first).all()
    zones = {loaded.zone_names[c] for c in loaded.zone_codes[first]}
    assert zones == {"G1.U1.P1.Z1", "G1.U1.P1.Z2", "G1.U1.P2.Z1"}


# --- versions -----------------------------------------------------------------------------


def test_superseded_versions_are_left_out_unless_asked_for(ingest: Callable[..., Any]) -> None:
    # Given a policy, searched once so that this process has its index loaded
    first = ingest(POLICY_EN, key="travel").version
    assert "30 days" in top_text("reimbursed within days of submission")
    # When a new version replaces it
    second = ingest(POLICY_EN.replace("30 days", "14 days"), key="travel").version
    # Then only the new version is found
    hits = search("reimbursed within days of submission", k=50)
    assert {p.version_id for p in paragraphs_of(hits)} == {second.pk}
    assert "14 days" in paragraphs_of(hits)[0].text
    # And the old one comes back for whoever asks for superseded text (the audit view)
    with_old = paragraphs_of(search("reimbursed within 30 days", k=50, include_superseded=True))
    assert {p.version_id for p in with_old} == {first.pk, second.pk}
    assert with_old[0].version_id == first.pk


# --- the in-memory index follows the store ------------------------------------------------


def test_a_document_ingested_after_a_search_is_found_by_the_next_one(
    store: None, ingest: Callable[..., Any]
) -> None:
    query = "whistleblower hotline for reporting fraud"
    before = corpus().generation
    assert all("whistleblower" not in p.text for p in paragraphs_of(search(query)))
    ingest("Ethics\n\nReport fraud through the whistleblower hotline.\n", zone="G1.U1.P1.Z2")
    assert corpus().generation > before  # CorpusState told this process to reload
    assert "whistleblower hotline" in top_text(query)


def test_an_unchanged_store_keeps_the_loaded_index(store: None) -> None:
    search("expenses")
    loaded = corpus()
    search("委託料")
    assert corpus() is loaded


def test_a_paragraph_waiting_for_its_embedding_is_found_by_its_words(store: None) -> None:
    # Given a document whose embedding task has not run yet (it runs after commit)
    version = document_ingest(
        zone=zone_get(parse("G1.U1.P1.Z1")),
        raw="Gifts\n\nGifts from suppliers must be declared to compliance.\n",
        kind="policy",
        status="approved",
    ).version
    assert not version.paragraphs.filter(embedding__isnull=False).exists()
    # Then BM25 finds it all the same, and the dense leg has not scored it
    hits = search("gifts from suppliers")
    waiting = [
        hit for hit in hits if hit.id in set(version.paragraphs.values_list("id", flat=True))
    ]
    assert len(waiting) == 1
    assert waiting[0].bm25 is not None
    assert waiting[0].cosine is None
    assert waiting[0] == max(hits, key=lambda hit: hit.sparse)  # the best BM25 match


def test_a_search_inside_a_rolled_back_transaction_leaves_no_stale_index(
    org: Any, ingest: Callable[..., Any]
) -> None:
    # Given a search that loaded a document which its transaction then rolled back
    with transaction.atomic():
        ingest("Zebras\n\nZebra crossings are painted every spring.\n")
        assert "Zebra crossings" in top_text("zebra crossings")
        rolled_back = corpus().generation
        transaction.set_rollback(True)
    # When another document brings the store back to the same generation number
    ingest(
        "Yaks\n\n1. Wool\nYak wool blankets are issued in winter.\n\n2. Milk\nYak milk is "
        "served at breakfast.\n"
    )
    assert corpus().generation == rolled_back
    # Then the search sees the store as it is, not the rolled-back one
    hits = search("yak milk at breakfast")
    assert len(hits) == 2
    assert "Yak milk" in paragraphs_of(hits)[0].text
    assert hits[0].bm25 is not None
    assert all(hit.bm25 is None for hit in search("zebra crossings"))


# --- growing the in-memory index without a reload ----------------------------------------
# Transactional: on SQLite only a corpus read from committed rows can be extended (a
# rolled-back insert's id comes back there), so these tests commit as production does.


@pytest.mark.django_db(transaction=True)
def test_a_new_document_is_added_to_the_loaded_index_not_reloaded(
    store: None, ingest: Callable[..., Any]
) -> None:
    # Given a process that has loaded its index
    search("expenses")
    loaded = corpus()
    # When one document is ingested
    version = ingest(
        "Ethics\n\nReport fraud through the whistleblower hotline.\n\nGifts are declared.\n",
        zone="G1.U1.P1.Z2",
    ).version
    # Then the next search indexes only its two paragraphs, on top of the same BM25 base
    hits = search("whistleblower hotline for reporting fraud")
    grown = corpus()
    assert grown.generation > loaded.generation
    assert grown.sparse.bm25 is loaded.sparse.bm25  # bm25s's matrix was not built again
    assert grown.sparse.tail_size == loaded.sparse.tail_size + 2
    new_ids = set(version.paragraphs.values_list("id", flat=True))
    assert set(grown.ids[-2:].tolist()) == new_ids
    # And finds the new paragraph by both legs, first
    assert hits[0].id in new_ids
    assert hits[0].bm25 is not None
    assert hits[0].cosine is not None


@pytest.mark.django_db(transaction=True)
def test_a_new_version_replaces_the_old_one_in_the_loaded_index(
    org: Any, ingest: Callable[..., Any]
) -> None:
    # Given a policy that a search has loaded
    first = ingest(POLICY_EN, key="travel").version
    assert "30 days" in top_text("reimbursed within days of submission")
    loaded = corpus()
    # When a new version supersedes it
    second = ingest(POLICY_EN.replace("30 days", "14 days"), key="travel").version
    # Then, without a reload, only the new version answers
    hits = search("reimbursed within days of submission", k=50)
    assert corpus().sparse.bm25 is loaded.sparse.bm25
    assert {p.version_id for p in paragraphs_of(hits)} == {second.pk}
    # And the old one still answers whoever asks for superseded text
    with_old = paragraphs_of(search("reimbursed within 30 days", k=50, include_superseded=True))
    assert {p.version_id for p in with_old} == {first.pk, second.pk}


@pytest.mark.django_db(transaction=True)
def test_a_paragraph_embedded_after_it_was_indexed_reaches_the_dense_leg(
    store: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a document indexed before its embedding task ran
    monkeypatch.setattr("evidence.services._announce_version_stored", lambda version_id: None)
    version = document_ingest(
        zone=zone_get(parse("G1.U1.P1.Z1")),
        raw="Gifts\n\nGifts from suppliers must be declared to compliance.\n",
        kind="policy",
        status="approved",
    ).version
    (waiting,) = [hit for hit in search("gifts from suppliers") if hit.bm25 and not hit.cosine]
    loaded = corpus()
    # When the embedding task runs
    version_embed(version_id=version.pk)
    # Then the next search scores it by cosine too, still on the same BM25 base
    (embedded,) = [hit for hit in search("gifts from suppliers") if hit.id == waiting.id]
    assert embedded.cosine == pytest.approx(exact_cosines("gifts from suppliers")[waiting.id])
    assert corpus().sparse.bm25 is loaded.sparse.bm25


@pytest.mark.django_db(transaction=True)
def test_a_big_tail_is_rebuilt_in_the_background_with_the_same_answers(
    store: None, ingest: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an index whose tail is rebuilt as soon as it holds anything
    search("expenses")
    monkeypatch.setattr(search_module, "REBUILD_TAIL_ROWS", 0)
    monkeypatch.setattr(search_module, "REBUILD_TAIL_SHARE", 0.0)
    ingest("Ethics\n\nReport fraud through the whistleblower hotline.\n", zone="G1.U1.P1.Z2")
    query = "whistleblower hotline approval of expenses"
    before = search(query, k=50)
    # When the background rebuild has finished
    assert search_module.wait_for_rebuild(timeout=60)
    rebuilt = corpus()
    # Then the same paragraphs are indexed, with no tail, in the same order
    assert rebuilt.sparse.tail_size == 0
    after = search(query, k=50)
    assert [hit.id for hit in after] == [hit.id for hit in before]
    # And the BM25 scores are those of an index built from scratch
    fresh = search_module._load(rebuilt.generation, rebuilt.stamp)
    expected = dict(zip(fresh.ids.tolist(), fresh.sparse.scores(query).tolist(), strict=True))
    for hit in after:
        assert (hit.bm25 or 0.0) == pytest.approx(expected[hit.id], rel=1e-6)


# --- fusion weights -----------------------------------------------------------------------


def exact_cosines(query: str) -> dict[Hashable, float]:
    """Cosine of the query with every current paragraph, computed with numpy."""
    vector = embedder().embed([query])[0]
    rows = list(Paragraph.objects.filter(current=True).values_list("id", "embedding"))
    matrix = np.vstack([np.asarray(r[1], dtype=np.float32) for r in rows])
    return {r[0]: float(score) for r, score in zip(rows, matrix @ vector, strict=True)}


@pytest.mark.parametrize("query", ["approval of expenses", "委託料の支払期日", "signed contracts"])
@pytest.mark.parametrize("exact_scan_limit", [0, search_module.EXACT_MAX_ROWS])
def test_with_no_sparse_weight_the_order_is_the_exact_dense_order(
    store: None, query: str, exact_scan_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On PostgreSQL: through the HNSW index (limit 0) and by the exact scan of small scopes.
    monkeypatch.setattr(search_module, "EXACT_MAX_ROWS", exact_scan_limit)
    if connection.vendor == "postgresql" and exact_scan_limit == 0:
        # Every test before this one rolled its paragraphs back, and no vacuum ran since:
        # their dead entries crowd the HNSW graph's neighbour lists, and a scan that must
        # skip them can miss a live neighbour. Rebuilt in this transaction, the index holds
        # this test's rows only, as a vacuumed production index would.
        with connection.cursor() as cursor:
            cursor.execute("REINDEX INDEX paragraph_embedding_hnsw")
    hits = search(query, k=8, dense_weight=1.0, sparse_weight=0.0)
    exact = exact_cosines(query)
    # The same cosines in the same order as exact search (paragraphs that tie may swap).
    best = sorted(exact.values(), reverse=True)[:8]
    assert [hit.cosine for hit in hits] == pytest.approx(best, abs=1e-5)
    for hit in hits:
        assert hit.cosine == pytest.approx(exact[hit.id], abs=1e-5)


def test_with_no_dense_weight_the_order_is_the_bm25_order(store: None) -> None:
    query = "contracts above 10 million yen"
    hits = search(query, k=50, dense_weight=0.0, sparse_weight=1.0)
    matched = [hit for hit in hits if hit.bm25 is not None]
    assert hits[: len(matched)] == matched  # paragraphs sharing a term come first
    scores = [hit.bm25 for hit in matched if hit.bm25 is not None]
    assert scores == sorted(scores, reverse=True)
    # exactly the current paragraphs that share a term with the query
    terms = set(tokenize(query))
    sharing = {
        p.id for p in Paragraph.objects.filter(current=True) if terms & set(tokenize(p.text))
    }
    assert {hit.id for hit in matched} == sharing
    assert "10 million yen" in paragraphs_of(hits)[0].text


@pytest.mark.parametrize(("dense_weight", "sparse_weight"), [(0.7, 0.3), (0.5, 0.5), (0.2, 0.8)])
def test_fused_scores_are_the_weighted_sum_of_the_legs(
    store: None, dense_weight: float, sparse_weight: float
) -> None:
    hits = search(
        "contracts above 10 million yen",
        k=50,
        dense_weight=dense_weight,
        sparse_weight=sparse_weight,
    )
    for hit in hits:
        assert hit.fused == pytest.approx(dense_weight * hit.dense + sparse_weight * hit.sparse)
    assert [hit.fused for hit in hits] == sorted((hit.fused for hit in hits), reverse=True)


# --- PostgreSQL: HNSW index scan, or an exact scan for small scopes -----------------------


def dense_statement(query: str, scopes: list[str] | None) -> tuple[str, Any]:
    """The one statement a search sends for its dense leg (settings and query together)."""
    statements: list[tuple[str, Any]] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    search(query, scopes)  # the corpus is loaded: what follows is the search alone
    with connection.execute_wrapper(record):
        search(query, scopes)
    dense = [(sql, params) for sql, params in statements if "<#>" in sql]
    assert len(dense) == 1, statements
    assert not any("set_config" in sql for sql, _ in statements if "<#>" not in sql)
    return dense[0]


def plan_of(statement: tuple[str, Any], *settings: str) -> str:
    """EXPLAIN of the dense query under the settings sent with it, plus `settings`."""
    sql, params = statement  # named parameters: each statement takes the ones it names
    setup, _, query = sql.rpartition("; ")
    with transaction.atomic(), connection.cursor() as cursor:
        if setup:
            cursor.execute(setup, params)
        for extra in settings:
            cursor.execute(extra)
        cursor.execute("EXPLAIN " + query, params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.postgres
@pytest.mark.parametrize("scopes", [None, ["G1.U1.P1"], ["G1.U1.P1.Z2"]])
def test_past_the_exact_scan_limit_the_dense_query_is_an_hnsw_index_scan(
    store: None, scopes: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a scope larger than what the dense leg scans exactly
    monkeypatch.setattr(search_module, "EXACT_MAX_ROWS", 0)
    statement = dense_statement("委託料の支払期日", scopes)
    # When PostgreSQL plans the query it sends. On a dozen rows the planner rightly prefers
    # sorting them all (it picks HNSW by itself at 100,000, see bench/bench_retrieval_pg.py),
    # so sorting is priced out: the only plan left that yields rows in distance order is an
    # HNSW scan, and only if the query is written so that the index can answer it.
    plan = plan_of(statement, "SET LOCAL enable_sort = off", "SET LOCAL enable_seqscan = off")
    # Then it scans the HNSW index, with the zone and currency filters applied on the way
    assert "Index Scan using paragraph_embedding_hnsw" in plan, plan
    assert "Sort" not in plan, plan


@pytest.mark.postgres
def test_a_small_scope_is_searched_exactly_without_the_hnsw_index(store: None) -> None:
    plan = plan_of(dense_statement("委託料の支払期日", ["G1.U1.P1.Z2"]))
    assert "paragraph_embedding_hnsw" not in plan, plan
    assert "Sort" in plan, plan  # every candidate scored, the best kept


@pytest.mark.postgres
@pytest.mark.parametrize("exact_scan_limit", [0, search_module.EXACT_MAX_ROWS])
def test_the_dense_leg_changes_no_setting_beyond_hnsw_scans(
    store: None, exact_scan_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a search inside a transaction of the caller's, by HNSW (limit 0) or exactly
    monkeypatch.setattr(search_module, "EXACT_MAX_ROWS", exact_scan_limit)
    with transaction.atomic(), connection.cursor() as cursor:
        assert search("委託料の支払期日", ["G1.U1.P1.Z2"])
        # Then the rest of that transaction still plans with index scans and sorts
        cursor.execute("SELECT current_setting('enable_indexscan'), current_setting('enable_sort')")
        assert cursor.fetchone() == ("on", "on")
