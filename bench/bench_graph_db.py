"""Graph build time from the database, beside the in-memory build of bench_graph.py (not a test).

Creates a scratch test database (DATABASE_URL names the server; SQLite without it), loads
random nodes and typed edges into the graph tables, then times the cold build of the cached
index from the rows (graph_store.graph_load), its parts, an incremental replay, the first
query's label embeddings and what later queries still embed (after a full reload, a relabel),
and a risk scan of one zone. Run:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/maria \
        .venv/bin/python bench/bench_graph_db.py [--nodes 100000 --edges 1000000] [--dag]
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "maria.settings")

import django

django.setup()

from django.db import connection, transaction  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from graph import store as graph_store  # noqa: E402
from graph.core.matrix import GraphIndex  # noqa: E402
from graph.core.types import EDGE_TYPES, NodeType  # noqa: E402
from graph.models import EdgeOrigin, GraphEdge, GraphNode  # noqa: E402


def report(name: str, value: str) -> None:
    print(f"{name:<52} {value:>14}")


def random_graph(n: int, m: int, *, dag: bool = False) -> tuple[np.ndarray, ...]:
    """bench_graph.py's generator (seed 42), minus self-loops and repeated (src, dst, type);
    with `dag`, every edge points from the lower to the higher node number (no cycles, so
    risk concentration has paths to count; a random digraph this dense is one big cycle)."""
    rng = np.random.default_rng(42)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    if dag:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    types = rng.integers(0, len(EDGE_TYPES), m)
    weight = rng.uniform(0.05, 1.0, m)
    stamp = rng.uniform(1.6e9, 1.7e9, m)
    keys = (src * n + dst) * len(EDGE_TYPES) + types
    _, first = np.unique(keys, return_index=True)
    keep = np.sort(first[src[first] != dst[first]])
    return src[keep], dst[keep], types[keep], weight[keep], stamp[keep]


def insert_postgres(n: int, src: np.ndarray, dst: np.ndarray, types: np.ndarray,
                    weight: np.ndarray, stamp: np.ndarray) -> None:  # fmt: skip
    now = datetime.now(UTC).isoformat()
    zones = ["G1.U1.P1.Z1", "G1.U1.P1.Z2"]
    kinds = [str(t) for t in NodeType]
    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy(
            "COPY evidence_graphnode (id, key, node_type, label, zone, attributes, created_at, "
            "updated_at) FROM STDIN"
        ) as copy:
            buffer = io.StringIO()
            for i in range(n):
                buffer.write(
                    f"{i + 1}\tnode:{i}\t{kinds[i % len(kinds)]}\tentity {i}\t{zones[i % 2]}\t{{}}"
                    f"\t{now}\t{now}\n"
                )
            copy.write(buffer.getvalue())
        names = [str(t) for t in EDGE_TYPES]
        with raw.copy(
            "COPY evidence_graphedge (source_id, target_id, edge_type, weight, confidence, "
            "occurred_at, stale, zone, origin, created_at, updated_at) FROM STDIN"
        ) as copy:
            moments = np.datetime_as_string(stamp.astype("datetime64[s]"), timezone="UTC")
            tail = f"\tf\tG1.U1.P1.Z1\timport\t{now}\t{now}\n"
            for start in range(0, src.size, 200_000):
                stop = min(src.size, start + 200_000)
                copy.write(
                    "".join(
                        f"{s + 1}\t{d + 1}\t{names[t]}\t{w:.6f}\t1.0\t{when}{tail}"
                        for s, d, t, w, when in zip(
                            src[start:stop].tolist(),
                            dst[start:stop].tolist(),
                            types[start:stop].tolist(),
                            weight[start:stop].tolist(),
                            moments[start:stop].tolist(),
                            strict=True,
                        )
                    )
                )
        cursor.execute("SELECT setval(pg_get_serial_sequence('evidence_graphnode', 'id'), %s)", [n])
        cursor.execute("ANALYZE evidence_graphnode; ANALYZE evidence_graphedge")


def insert_orm(n: int, src: np.ndarray, dst: np.ndarray, types: np.ndarray,
               weight: np.ndarray, stamp: np.ndarray) -> None:  # fmt: skip
    kinds = [str(t) for t in NodeType]
    GraphNode.objects.bulk_create(
        (
            GraphNode(
                pk=i + 1,
                key=f"node:{i}",
                node_type=kinds[i % len(kinds)],
                label=f"entity {i}",
                zone="G1.U1.P1.Z1",
            )
            for i in range(n)
        ),
        batch_size=5000,
    )
    names = [str(t) for t in EDGE_TYPES]
    GraphEdge.objects.bulk_create(
        (
            GraphEdge(
                source_id=int(src[k]) + 1,
                target_id=int(dst[k]) + 1,
                edge_type=names[types[k]],
                weight=float(weight[k]),
                confidence=1.0,
                occurred_at=datetime.fromtimestamp(float(stamp[k]), UTC),
                zone="G1.U1.P1.Z1",
                origin=EdgeOrigin.IMPORT,
            )
            for k in range(src.size)
        ),
        batch_size=5000,
    )


def label_queries(first_query: float) -> None:
    """What the queries after the first still pay for node-label embeddings."""
    start = time.perf_counter()
    graph_store.snapshot(embed=True)
    report("next query, graph unchanged", f"{(time.perf_counter() - start) * 1e3:.1f} ms")

    # An import ends in a "reload" change: every process rebuilds its index from the rows.
    # Before the label cache survived reloads, that rebuild embedded every label again
    # (about the first query's cost).
    graph_store.record_changes([("reload", {})])
    start = time.perf_counter()
    graph_store.loaded_graph()
    rebuild = time.perf_counter() - start
    start = time.perf_counter()
    graph_store.snapshot(embed=True)
    after_reload = time.perf_counter() - start
    report("query after a full reload (an import): rebuild", f"{rebuild:.2f} s")
    report("  then embed labels (was: all of them again)", f"{after_reload:.2f} s")
    report("  saved against embedding every label again", f"{first_query - after_reload:.1f} s")

    graph_store.node_ensure(
        key="node:3", node_type="decision", label="renamed entity", zone="G1.U1.P1.Z1"
    )
    start = time.perf_counter()
    graph_store.snapshot(embed=True)
    report("query after one node is relabelled", f"{(time.perf_counter() - start) * 1e3:.1f} ms")


def risk_scan() -> None:
    """Risk concentration of one zone (a read), then a scan that raises its flags."""
    from coordinates.coordinate import parse
    from graph.queries import risk
    from graph.services import graph_risk_scan

    zone = parse("G1.U1.P1.Z1")
    start = time.perf_counter()
    reading = risk(zone=zone, scopes=None)
    report("risk concentration of one zone (read)", f"{time.perf_counter() - start:.2f} s")
    body = reading.body
    report(
        "  causal paths / cyclic edges dropped",
        f"{body['paths']:.0f} / {body['cyclic_edges_dropped']}",
    )
    start = time.perf_counter()
    _, scan = graph_risk_scan(zone=zone)
    raised = len(scan.raised) if scan else 0
    report(f"risk scan of the zone ({raised} flags raised)", f"{time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    graph_risk_scan(zone=zone)
    report("  the same scan again (nothing to write)", f"{time.perf_counter() - start:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--dag", action="store_true", help="acyclic edges (for the risk scan)")
    args = parser.parse_args()
    n = args.nodes
    src, dst, types, weight, stamp = random_graph(n, args.edges, dag=args.dag)
    m = int(src.size)
    print(f"database: {connection.vendor}; graph: {n:,} nodes, {m:,} typed edges\n")

    start = time.perf_counter()
    plain = GraphIndex.from_edges(src, dst, weight, edge_type=types, time=stamp, node_ids=None)
    plain.adjacency  # noqa: B018
    report(
        "in-memory build, ids from the edges (bench_graph.py)",
        f"{time.perf_counter() - start:.2f} s",
    )
    start = time.perf_counter()
    memory = GraphIndex.from_edges(
        src, dst, weight, edge_type=types, time=stamp, node_ids=list(range(n))
    )
    memory.adjacency  # noqa: B018
    in_memory = time.perf_counter() - start
    report("in-memory build, given node ids (as graph_load)", f"{in_memory:.2f} s")

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    # Its own scratch database: test runs of the suite may be using test_<name> right now.
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_graph_db_{os.getpid()}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        start = time.perf_counter()
        with transaction.atomic():
            if connection.vendor == "postgresql":
                insert_postgres(n, src, dst, types, weight, stamp)
            else:
                insert_orm(n, src, dst, types, weight, stamp)
        report("load rows into the graph tables (setup)", f"{time.perf_counter() - start:.1f} s")

        graph_store.index_forget()
        start = time.perf_counter()
        rows = graph_store._edge_rows()
        read = time.perf_counter() - start
        report("  of which: read the edge rows (one SELECT)", f"{read:.2f} s")
        del rows
        start = time.perf_counter()
        loaded = graph_store.graph_load(0, "")
        loaded.index.adjacency  # noqa: B018
        from_db = time.perf_counter() - start
        report("graph build from the database (graph_load)", f"{from_db:.2f} s")
        report("  ratio database / in-memory build", f"{from_db / in_memory:.1f}x")
        same = abs(loaded.index.adjacency.sum() - memory.adjacency.sum()) < 1e-6 * m
        report("  same total weight as the in-memory index", "yes" if same else "NO")

        # One change after a warm start: replayed, not rebuilt.
        with transaction.atomic():
            graph_store.loaded_graph()
            a = GraphNode.objects.get(pk=1)
            b = GraphNode.objects.get(pk=2)
            start = time.perf_counter()
            graph_store.edge_upsert(
                source=a,
                target=b,
                edge_type="mitigates",
                zone="G1.U1.P1.Z1",
                origin=EdgeOrigin.MANUAL,
            )
            before = graph_store.loaded_graph()
            rebuilds = before.index.full_rebuilds
            before.index.adjacency  # noqa: B018
            replay = time.perf_counter() - start
            report("one edge written + index replay (incremental)", f"{replay * 1e3:.1f} ms")
            report("  ratio full build / incremental update", f"{from_db / replay:,.0f}x")
            report(
                "  full CSR rebuilds during the replay", str(before.index.full_rebuilds - rebuilds)
            )
            start = time.perf_counter()
            graph_store.snapshot(embed=True)
            first_query = time.perf_counter() - start
            report("first query: embed every node label", f"{first_query:.2f} s")
            label_queries(first_query)
            risk_scan()
            transaction.set_rollback(True)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
