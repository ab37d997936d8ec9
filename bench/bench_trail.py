"""verify_trail speed over 1,000,000 events (target >= 500,000 events/s), on PostgreSQL.

Builds a throwaway database (maria_bench_trail) on the local PostgreSQL, migrates it, loads
1,000,000 events in 100 zone chains with COPY, and measures
  (a) the checks over rows already in memory: the reference walk (trail.chain.
      verify_chain) and the batched check the PostgreSQL path uses (chain.BatchChecker);
  (b) end to end from PostgreSQL: `verify_trail` (rows read, hashed, heads and the latest
      checkpoint compared), each run with the CPU time spent here and by the server;
  (c) the same with the server hashing 0 to 8 events in 8, and the reference walk from the
      database for comparison.
Prints the machine's core count and load average beside the figures (on a shared machine
the wall time follows the load; the CPU times much less); the database is dropped at the end.

Run: .venv/bin/python bench/bench_trail.py   (BENCH_PG=postgres://user@host:port to override;
BENCH_QUIET=600 waits up to 10 minutes before each end-to-end run for the machine to be quiet)
"""

from __future__ import annotations

import hashlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SERVER = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
DATABASE = "maria_bench_trail"
N_EVENTS = 1_000_000
N_CHAINS = 100
RUNS = 5
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


def _load() -> str:
    return "load " + "/".join(f"{value:.1f}" for value in os.getloadavg())


def _line(label: str, seconds: float, *, target: bool = True, note: str = "") -> None:
    rate = N_EVENTS / seconds
    verdict = ("OK" if rate >= TARGET_PER_S else "MISS") if target else "for comparison"
    print(
        f"  {label:<44} {rate / 1e6:5.2f} M events/s ({seconds:5.2f} s)"
        f"  >= {TARGET_PER_S / 1e6:.2f}: {verdict:<4}  {note or _load()}",
        flush=True,
    )


def main() -> None:
    cores = os.cpu_count() or 1
    print(f"cores: {cores}; {_load()} (1/5/15 min; above {cores} the cores are shared)")
    print(f"events: {N_EVENTS:,} in {N_CHAINS} chains; end to end: {RUNS} runs each")
    _recreate_database()
    try:
        _run()
    finally:
        from django.db import connections

        connections.close_all()
        if not os.environ.get("BENCH_KEEP"):  # keep it to profile by hand
            _drop_database()


def _bodies(chain: str, per_chain: int, start: datetime) -> list[bytes]:
    """Canonical bodies as ledger.append writes them: nine transitions (~330 B) to one
    bundle event carrying its content hash, built from templates (json.dumps a million
    times would take most of the bench)."""
    from trail.chain import canonical_json

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

    from trail import checkpoints, verify
    from trail.chain import link_events, verify_chain
    from trail.models import TrailEvent, TrailHead

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
    table = TrailEvent._meta.db_table
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
                        # the columns as ledger.append writes them: what the body says
                        "decision.proposed" if link.seq % 10 == 1 else "decision.queued",
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

    print("(a) the checks over rows already in memory (no database)")

    def reference_in_memory() -> None:
        for links in links_by_chain.values():
            assert verify_chain(links).intact

    _line("verify_chain over ChainLink objects (reference)", _median(reference_in_memory))
    # The rows the fast path receives, in id order: (chain, seq, hash, hashed, digest), text
    # as bytes; `hashed` is prev_hash + canonical, or prev_hash alone with the digest where
    # the server hashed the event.
    stored = [
        (chain.encode(), link.seq, link.prev_hash.encode(), link.hash.encode(), link.canonical)
        for position in range(per_chain)
        for chain, links in links_by_chain.items()
        for link in (links[position],)
    ]
    shares = [
        (0, "every event hashed here"),
        (verify._SERVER_EIGHTHS, f"{verify._SERVER_EIGHTHS} in 8 digests from the server"),
        (8, "every digest from the server"),
    ]
    for eighths, label in shares:
        rows: list[tuple[Any, ...]] = [
            (chain, seq, event_hash, prev, hashlib.sha256(prev + body).digest())
            if index % 8 < eighths
            else (chain, seq, event_hash, prev + body, None)
            for index, (chain, seq, prev, event_hash, body) in enumerate(stored)
        ]
        _line(f"BatchChecker, {label}", _median(partial(_check_batches, rows)))
    del stored, rows  # free the memory before the database runs

    print(
        f"(b) end to end from PostgreSQL, blocks of {verify._FAST_BLOCK} ids; the server hashes "
        f"{verify._SERVER_EIGHTHS} events in 8"
    )

    def verify_command() -> None:
        # The trail's part of `verify_trail` (chains, heads, checkpoint, and every event's
        # columns against its body); the bench's events name no real evidence, so the
        # evidence re-hash (audit.integrity) is not part of this figure.
        report = verify.verify_database()
        assert report.intact, report.summary()

    _runs("verify_trail (no checkpoint yet)", verify_command)
    _runs(
        "  of which the columns-against-bodies check (server side)",
        verify._columns_differing,
    )
    t0 = time.perf_counter()
    checkpoint = checkpoints.checkpoint_create()
    print(
        f"  trail_checkpoint (verify + digest every chain): {time.perf_counter() - t0:.2f} s, "
        f"{checkpoint.events:,} events sealed"
    )
    _runs("verify_trail (against the checkpoint)", verify_command)

    print("(c) how the share the server hashes changes it (one run each)")
    chosen = verify._SERVER_EIGHTHS
    for eighths in (0, 1, 2, 3, 4, 8):
        verify._SERVER_EIGHTHS = eighths
        _runs(f"verify_trail, server hashes {eighths} in 8", verify_command, runs=1)
    verify._SERVER_EIGHTHS = chosen

    def reference_from_database() -> None:
        assert verify.verify_database(fast=False).intact

    _line("reference walk from the database", _time(reference_from_database), target=False)
    print(f"cores: {os.cpu_count()}; {_load()} at the end")


def _check_batches(rows: list[tuple[Any, ...]]) -> None:
    from trail import verify
    from trail.chain import BatchChecker

    checker = BatchChecker({}, digest_all=False)
    for first in range(0, len(rows), verify._FAST_BATCH):
        checker.feed(rows[first : first + verify._FAST_BATCH])
    assert not any(progress.failed for progress in checker.chains.values())


def _runs(label: str, fn: Callable[[], object], *, runs: int = RUNS) -> None:
    """Each run's rate; the CPU time spent here, by the PostgreSQL backend, and by everything
    else on the machine meanwhile (other people's work competes for the same cores)."""
    times: list[float] = []
    for _ in range(runs):
        _wait_for_quiet()
        server, machine, client = _backend_cpu(), _machine_cpu(), time.process_time()
        times.append(_time(fn))
        client = time.process_time() - client
        spent = f"CPU {client:.2f} s here"
        server_after, machine_after = _backend_cpu(), _machine_cpu()
        if server is not None and server_after is not None:
            spent += f" + {server_after - server:.2f} s server"
            if machine is not None and machine_after is not None:
                others = machine_after - machine - client - (server_after - server)
                spent += f", others {max(others, 0):.2f} s"
        _line(label, times[-1], note=f"{spent}; {_load()}")
    if runs > 1:
        rates = sorted(N_EVENTS / seconds / 1e6 for seconds in times)
        print(
            f"  {label}: slowest {rates[0]:.2f}, median {statistics.median(rates):.2f}, "
            f"fastest {rates[-1]:.2f} M events/s"
        )


def _wait_for_quiet() -> None:
    """With BENCH_QUIET=SECONDS, wait up to that long before a run until everything else on
    the machine uses under a tenth of a core (over 3 s): figures for a quiet machine."""
    patience = float(os.environ.get("BENCH_QUIET", "0"))
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        before = _machine_cpu()
        time.sleep(3)
        after = _machine_cpu()
        if before is None or after is None or (after - before) / 3 < 0.1:
            return
    if patience:
        print(f"  (still busy after waiting {patience:.0f} s; measuring anyway)")


def _machine_cpu() -> float | None:
    """CPU seconds all cores have spent busy since boot (Linux)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    # user nice system idle iowait irq softirq steal (guest time is counted in user already)
    busy = sum(int(value) for index, value in enumerate(fields[:8]) if index not in (3, 4))
    return busy / os.sysconf("SC_CLK_TCK")


def _backend_cpu() -> float | None:
    """CPU seconds of this connection's PostgreSQL backend, when it runs on this machine."""
    from django.db import connection

    connection.ensure_connection()
    proc = Path("/proc") / str(connection.connection.info.backend_pid)
    try:
        if (proc / "comm").read_text().strip() != "postgres":
            return None
        fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _median(fn: Callable[[], object]) -> float:
    return statistics.median(_time(fn) for _ in range(RUNS))


if __name__ == "__main__":
    main()
