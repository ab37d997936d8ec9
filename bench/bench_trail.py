"""verify_trail speed over 1,000,000 events (target >= 500,000 events/s), on PostgreSQL.

Builds a throwaway database (maria_bench_trail) on the local PostgreSQL, migrates it, loads
1,000,000 events in 100 zone chains with COPY, and measures
  (a) the pure hash check over rows already in memory: the reference walk
      (decisions.chain.verify_chain) and the batched check the PostgreSQL path uses;
  (b) end to end from PostgreSQL: `verify_trail` (rows read, hashed, heads and the latest
      checkpoint compared), and the reference walk over the same rows for comparison.
Prints the machine's core count and the figures; the database is dropped at the end.

Run: .venv/bin/python bench/bench_trail.py   (BENCH_PG=postgres://user@host:port to override)
"""

from __future__ import annotations

import io
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SERVER = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
DATABASE = "maria_bench_trail"
N_EVENTS = 1_000_000
N_CHAINS = 100
RUNS = 3
TARGET_PER_S = 500_000

os.environ["DATABASE_URL"] = f"{SERVER}/{DATABASE}"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "maria.settings")


def _recreate_database() -> None:
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DATABASE}")


def _drop_database() -> None:
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _line(label: str, seconds: float, *, target: bool = True) -> None:
    rate = N_EVENTS / seconds
    verdict = ("OK" if rate >= TARGET_PER_S else "MISS") if target else "for comparison"
    print(
        f"  {label:<52} {rate / 1e6:5.2f} M events/s ({seconds:5.2f} s)"
        f"  target >= {TARGET_PER_S / 1e6:.2f} M/s: {verdict}"
    )


def main() -> None:
    cores = os.cpu_count() or 1
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"cores: {cores}; load average (1, 5, 15 min): {load}")
    print(f"events: {N_EVENTS:,} in {N_CHAINS} chains; median of {RUNS} runs")
    _recreate_database()
    try:
        _run()
    finally:
        from django.db import connections

        connections.close_all()
        if not os.environ.get("BENCH_KEEP"):  # keep it to profile by hand
            _drop_database()


def _bodies(chain: str, per_chain: int, start: datetime) -> list[bytes]:
    """Canonical bodies as trail.append writes them: nine transitions (~330 B) to one
    bundle event carrying its content hash, built from templates (json.dumps a million
    times would take most of the bench)."""
    from decisions.chain import canonical_json

    def template(kind: str, payload: dict[str, object]) -> bytes:
        body = canonical_json(
            {
                "v": 1,
                "kind": kind,
                "chain": chain,
                "seq": 999_000_001,
                "decision": 999_000_002,
                "actor": "system",
                "reason": "gate required",
                "at": "AT",
                "payload": payload,
            }
        )
        return (
            body.replace(b"999000001", b"%(seq)d")
            .replace(b"999000002", b"%(decision)d")
            .replace(b'"AT"', b'"%(at)s"')
        )

    transition = template(
        "decision.queued",
        {"from": "validated", "to": "approval_required", "gate": "required", "policy": "G1@3"},
    )
    bundle = template(
        "decision.proposed",
        {"bundle": "ab" * 32, "claims": 4, "citations": 11, "agent": f"{chain}.A1"},
    )
    out = []
    for seq in range(1, per_chain + 1):
        at = (start + timedelta(seconds=seq)).isoformat(timespec="microseconds").encode()
        values = {b"seq": seq, b"decision": seq // 10 + 1, b"at": at}
        out.append((bundle if seq % 10 == 1 else transition) % values)
    return out


def _run() -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from decisions import trail
    from decisions.chain import link_events, verify_chain
    from decisions.models import DecisionEvent, TrailHead

    t0 = time.perf_counter()
    call_command("migrate", verbosity=0)
    print(f"migrated the throwaway database in {time.perf_counter() - t0:.1f} s")

    t0 = time.perf_counter()
    per_chain = N_EVENTS // N_CHAINS
    start = datetime(2025, 6, 1, tzinfo=UTC)
    chains = [f"G1.U{1 + c // 20}.P{1 + c // 5 % 4}.Z{1 + c % 5}" for c in range(N_CHAINS)]
    links_by_chain = {chain: link_events(_bodies(chain, per_chain, start)) for chain in chains}
    sizes = [len(link.canonical) for links in links_by_chain.values() for link in links]
    print(
        f"built and hashed the events in {time.perf_counter() - t0:.1f} s; "
        f"mean body {sum(sizes) / len(sizes):.0f} B"
    )

    t0 = time.perf_counter()
    connection.ensure_connection()
    raw = connection.connection
    table = DecisionEvent._meta.db_table
    with connection.cursor() as cursor:
        # A throwaway table: no write-ahead log for the load (reads are unaffected).
        cursor.execute(f"ALTER TABLE {table} SET UNLOGGED")
    columns = "chain, seq, kind, decision_id, actor, reason, created_at, prev_hash, hash, canonical"
    types = ["varchar", "int8", "varchar", "int8", "varchar", "text", "timestamptz"]
    types += ["varchar", "varchar", "bytea"]
    with (
        raw.cursor() as cursor,
        cursor.copy(f"COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.set_types(types)
        # Zones' events interleave in time, as they do in production (ids in that order).
        for position in range(per_chain):
            for chain, links in links_by_chain.items():
                link = links[position]
                copy.write_row(
                    (
                        chain,
                        link.seq,
                        "decision.queued",
                        link.seq // 10 + 1,
                        "system",
                        "gate required",
                        start + timedelta(seconds=link.seq),
                        link.prev_hash,
                        link.hash,
                        link.canonical,
                    )
                )
    raw.commit()
    TrailHead.objects.bulk_create(
        TrailHead(chain=chain, seq=links[-1].seq, hash=links[-1].hash)
        for chain, links in links_by_chain.items()
    )
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {table}")
    print(f"loaded with COPY in {time.perf_counter() - t0:.1f} s")

    print("(a) pure hash check over rows in memory")

    def reference_in_memory() -> None:
        for links in links_by_chain.values():
            assert verify_chain(links).intact

    _line("verify_chain over ChainLink objects (reference)", _median(reference_in_memory))
    # The tuples the PostgreSQL path receives, in id order: (chain, seq, hash, prev + body).
    rows: list[tuple[str, int, bytes, bytes]] = []
    for position in range(per_chain):
        for chain, links in links_by_chain.items():
            link = links[position]
            rows.append(
                (chain, link.seq, link.hash.encode(), link.prev_hash.encode() + link.canonical)
            )

    def rows_in_memory() -> None:
        states: dict[str, trail._FastChain] = {}
        for first in range(0, len(rows), 5000):
            trail._check_rows(states, rows[first : first + 5000], {}, digests=False)
        assert not any(state.failed for state in states.values())

    _line("the fast path's check over row tuples", _median(rows_in_memory))
    rows.clear()  # free the memory before the database runs

    print("(b) end to end from PostgreSQL")

    def verify_command() -> None:
        out = io.StringIO()
        call_command("verify_trail", stdout=out)
        assert "trail intact" in out.getvalue()

    _line("verify_trail (no checkpoint yet)", _median(verify_command))
    t0 = time.perf_counter()
    checkpoint = trail.checkpoint_create()
    print(
        f"  trail_checkpoint (verify + digest every chain): {time.perf_counter() - t0:.2f} s, "
        f"{checkpoint.events:,} events sealed"
    )
    _line("verify_trail (against the checkpoint)", _median(verify_command))
    cpu = time.process_time()
    wall = _time(verify_command)
    cpu = time.process_time() - cpu
    # Wall time depends on what else runs on the machine; this process's CPU time much less
    # (PostgreSQL's share, ~0.8 s per million rows, runs on another core meanwhile).
    print(
        f"  one more run: {wall:.2f} s wall, {cpu:.2f} s CPU in this process = "
        f"{N_EVENTS / cpu / 1e6:.2f} M events per CPU-second"
    )

    def reference_from_database() -> None:
        assert trail.verify_database(fast=False).intact

    _line("reference walk from the database", _time(reference_from_database), target=False)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load average now (1, 5, 15 min): {load}")


def _median(fn: Callable[[], object]) -> float:
    return statistics.median(_time(fn) for _ in range(RUNS))


if __name__ == "__main__":
    main()
