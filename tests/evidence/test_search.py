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
from evidence.services import document_ingest, embedder
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


def dense_statements(query: str, scopes: list[str] | None) -> list[tuple[str, Any]]:
    """The statements a search sends for its dense leg: its settings, then the query."""
    statements: list[tuple[str, Any]] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if "set_config" in sql or "<=>" in sql:
            statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        search(query, scopes)
    assert sum("<=>" in sql for sql, _ in statements) == 1
    return statements


def plan_of(statements: list[tuple[str, Any]], *settings: str) -> str:
    """EXPLAIN of the dense query under the search's own settings plus `settings`."""
    *setup, (sql, params) = statements
    with transaction.atomic(), connection.cursor() as cursor:
        for statement, arguments in setup:
            cursor.execute(statement, arguments)
        for statement in settings:
            cursor.execute(statement)
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.postgres
@pytest.mark.parametrize("scopes", [None, ["G1.U1.P1"], ["G1.U1.P1.Z2"]])
def test_past_the_exact_scan_limit_the_dense_query_is_an_hnsw_index_scan(
    store: None, scopes: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a scope larger than what the dense leg scans exactly
    monkeypatch.setattr(search_module, "EXACT_MAX_ROWS", 0)
    statements = dense_statements("委託料の支払期日", scopes)
    # When PostgreSQL plans the query it sends. On a dozen rows the planner rightly prefers
    # sorting them all (it picks HNSW by itself at 100,000, see bench/bench_retrieval_pg.py),
    # so sorting is priced out: the only plan left that yields rows in distance order is an
    # HNSW scan, and only if the query is written so that the index can answer it.
    plan = plan_of(statements, "SET LOCAL enable_sort = off", "SET LOCAL enable_seqscan = off")
    # Then it scans the HNSW index, with the zone and currency filters applied on the way
    assert "Index Scan using paragraph_embedding_hnsw" in plan, plan
    assert "Sort" not in plan, plan


@pytest.mark.postgres
def test_a_small_scope_is_searched_exactly_without_the_hnsw_index(store: None) -> None:
    plan = plan_of(dense_statements("委託料の支払期日", ["G1.U1.P1.Z2"]))
    assert "paragraph_embedding_hnsw" not in plan, plan
    assert "Sort" in plan, plan  # every candidate scored, the best kept
