"""The governance dashboard's KPIs for a zone with 100,000 decisions (target <= 200 ms).

Builds a throwaway database, on PostgreSQL when BENCH_PG or DATABASE_URL names a server
(database maria_bench_kpis, dropped at the end) and on a temporary SQLite file otherwise,
migrates it and bulk-loads 30 days of one zone's decisions with their trail events as the
pipeline writes them (70% auto, 8% flagged, 14% for a person: claims, some given back, two
approvals or a rejection, some escalated; 8% blocked, some overridden; refused asks and
requeries from 20 agents), plus a sibling zone's 20,000 the scope must leave out. Then times
`GET /api/v1/zones/{zone}/kpis/` over the 30 days (an auditor's session, through the whole
Django stack) and `gates.kpis.zone_kpis` alone: median and p95 of RUNS calls, beside the
target, with the machine's load (on a shared machine the wall time follows the load). The
first read counts every day from the decisions and the trail and keeps the settled ones
(`gates.models.KpiDay`); later reads count only the open day and the overrides. The cold
figure (nothing kept) is printed too, for comparison.

Run: .venv/bin/python bench/bench_kpis.py   (BENCH_PG=postgres://user@host:port for
PostgreSQL; BENCH_KEEP=1 keeps the database)
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ZONE = "G1.U1.P1.Z1"
SIBLING = "G1.U1.P1.Z2"
N_DECISIONS = 100_000
N_SIBLING = 20_000
N_AGENTS = 20
DAYS = 30
RUNS = int(os.environ.get("BENCH_RUNS", "15"))
TARGET_MS = 200.0
START = datetime(2026, 11, 1, tzinfo=UTC)

_pg_url = os.environ.get("BENCH_PG") or os.environ.get("DATABASE_URL", "")
POSTGRES = _pg_url.startswith("postgres")
if POSTGRES:
    parts = urlsplit(_pg_url)
    SERVER = f"{parts.scheme}://{parts.netloc}"
    DATABASE = "maria_bench_kpis"
    os.environ["DATABASE_URL"] = f"{SERVER}/{DATABASE}"
else:
    SQLITE_FILE = Path(tempfile.mkdtemp(prefix="maria-bench-kpis-")) / "bench.sqlite3"
    os.environ["DATABASE_URL"] = f"sqlite:///{SQLITE_FILE}"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "maria.settings")


def _load() -> str:
    return "load " + "/".join(f"{value:.1f}" for value in os.getloadavg())


def _admin_sql(*statements: str) -> None:
    import psycopg

    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        for statement in statements:
            admin.execute(statement)


# --- the data -----------------------------------------------------------------------------


class Rows:
    """The decisions and trail events to load, generated as the pipeline would write them."""

    def __init__(self, adapt: Callable[[datetime], Any], seq: dict[str, int]) -> None:
        self.adapt = adapt
        self.decisions: list[tuple[Any, ...]] = []
        self.events: list[tuple[Any, ...]] = []
        self.seq = seq  # each chain's last seq: the zones' own events came first

    def event(self, chain: str, kind: str, decision: int | None, actor: str, at: datetime) -> None:
        seq = self.seq[chain] = self.seq.get(chain, 0) + 1
        number = len(self.events) + 1
        self.events.append(
            (
                chain,
                seq,
                kind,
                decision,
                actor,
                "",
                self.adapt(at),
                "0" * 64,
                f"{number:064x}",
                b"{}",
            )
        )

    def decision(
        self, pk: int, zone: str, agent: int, user: int, bundle: int, gate: str, state: str,
        at: datetime,
        due: datetime | None, escalated: str,
    ) -> None:  # fmt: skip
        self.decisions.append(
            (
                pk, "Who approves?", "An answer.", zone, f"{zone}.A{agent}", user, bundle, None,
                state, gate, "full", 0.5, 0.5, 0.5, "G1@1", "", "ab" * 32,
                self.adapt(due) if due else None, escalated, None, None, "", None, 1,
                self.adapt(at), self.adapt(at),
            )
        )  # fmt: skip


DECISION_COLUMNS = (
    "id, question, answer, zone, agent, proposed_by_id, bundle_id, report_id, state, gate, mode, "
    "sufficiency, completeness, cohesion, policy_label, idempotency_key, request_hash, due_at, "
    "escalated_to, claimed_by_id, claimed_until, outcome_reason, refusal, attempts, created_at, "
    "updated_at"
)
EVENT_COLUMNS = (
    "chain, seq, kind, decision_id, actor, reason, created_at, prev_hash, hash, canonical"
)


def _generate(
    rows: Rows,
    users: Sequence[int],
    sibling_users: Sequence[int],
    reviewers: Sequence[str],
    bundle: int,
) -> None:
    rng = random.Random(16)
    span = DAYS * 86400.0
    total = N_DECISIONS + N_SIBLING
    times = sorted(START + timedelta(seconds=rng.uniform(0, span)) for _ in range(total))
    zones = [SIBLING if rng.random() < N_SIBLING / total else ZONE for _ in range(total)]
    second = timedelta(seconds=1)
    for pk, (at, zone) in enumerate(zip(times, zones, strict=True), start=1):
        agent = rng.randrange(N_AGENTS)
        user = (users if zone == ZONE else sibling_users)[agent]
        who = f"agent:{zone}.A{agent}"
        lane = f"{zone}/{pk % 8}"
        rows.event(lane, "decision.proposed", pk, who, at)
        rows.event(lane, "decision.validated", pk, "system", at + second)
        roll = rng.random()
        due = None
        escalated = ""
        if roll < 0.78:
            gate, state = ("auto" if roll < 0.70 else "flagged"), "completed"
            rows.event(lane, "decision.approved", pk, "system", at + second)
            rows.event(lane, "decision.executed", pk, "system", at + second)
            rows.event(lane, "decision.completed", pk, "system", at + second)
        elif roll < 0.92:
            gate = "required"
            queued = at + second
            due = queued + timedelta(hours=8)
            rows.event(lane, "decision.queued", pk, "system", queued)
            moment = queued + timedelta(minutes=rng.expovariate(1 / 90))
            if rng.random() < 0.1:  # past the SLA: up a level
                escalated = "G1.U1.P1"
                moment = max(moment, due + timedelta(minutes=5))
                rows.event(lane, "decision.escalated", pk, "system", due + timedelta(minutes=1))
                due = due + timedelta(hours=8)
            first, other = rng.sample(list(reviewers), 2)
            rows.event(lane, "decision.claimed", pk, first, moment)
            if rng.random() < 0.1:  # given back, then taken up again
                rows.event(lane, "decision.released", pk, first, moment + timedelta(minutes=3))
                moment += timedelta(minutes=20)
                rows.event(lane, "decision.claimed", pk, first, moment)
            if at > START + timedelta(days=DAYS - 1) and rng.random() < 0.5:
                state = "approval_required"  # still waiting
            elif rng.random() < 0.15:
                state = "failed"
                rows.event(lane, "decision.failed", pk, first, moment + timedelta(minutes=4))
            else:
                state = "completed"
                verdict = moment + timedelta(minutes=4)
                rows.event(lane, "decision.approval_recorded", pk, first, verdict)
                rows.event(lane, "decision.claimed", pk, other, verdict + timedelta(minutes=9))
                rows.event(lane, "decision.approved", pk, other, verdict + timedelta(minutes=12))
                rows.event(lane, "decision.executed", pk, "system", verdict + timedelta(minutes=12))
                rows.event(
                    lane, "decision.completed", pk, "system", verdict + timedelta(minutes=12)
                )
        else:
            gate, state = "blocked", "failed"
            rows.event(lane, "decision.failed", pk, "system", at + second)
            if rng.random() < 0.03:
                state = "completed"
                later = at + timedelta(hours=2)
                rows.event(lane, "decision.overridden", pk, "zed", later)
                rows.event(lane, "decision.executed", pk, "system", later)
                rows.event(lane, "decision.completed", pk, "system", later)
        rows.decision(pk, zone, agent, user, bundle, gate, state, at, due, escalated)
    for _ in range(3000):  # refused asks on the zone's own chain
        at = START + timedelta(seconds=rng.uniform(0, span))
        rows.event(ZONE, "ask.refused", None, f"agent:{ZONE}.A{rng.randrange(N_AGENTS)}", at)


def _insert(table: str, columns: str, rows: list[tuple[Any, ...]]) -> None:
    from django.db import connection

    if POSTGRES:
        raw = connection.connection
        with raw.cursor() as cursor, cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        return
    marks = ", ".join(["%s"] * (columns.count(",") + 1))
    with connection.cursor() as cursor:
        for start in range(0, len(rows), 20_000):
            cursor.executemany(
                f"INSERT INTO {table} ({columns}) VALUES ({marks})",  # noqa: S608 - constants
                rows[start : start + 20_000],
            )


def _build() -> None:
    from django.contrib.auth.models import User
    from django.db import connection, transaction
    from django.db.models import Max

    from coordinates.coordinate import parse
    from coordinates.services import role_grant, user_ensure, zone_add
    from evidence.models import EvidenceBundle
    from trail.models import TrailEvent

    for zone in (ZONE, SIBLING):
        zone_add(coordinate=parse(zone))
    auditor = user_ensure(username="bench-auditor")
    role_grant(user=auditor, role="auditor", scope=parse(ZONE))
    users = [user_ensure(username=f"agent:{ZONE}.A{n}").pk for n in range(N_AGENTS)]
    sibling = [user_ensure(username=f"agent:{SIBLING}.A{n}").pk for n in range(N_AGENTS)]
    reviewers = [f"reviewer-{n}" for n in range(8)]
    bundle = EvidenceBundle.objects.create(content_hash="ab" * 32, zone=ZONE, claims=[])
    adapt: Callable[[datetime], Any] = (
        (lambda moment: moment) if POSTGRES else connection.ops.adapt_datetimefield_value
    )
    t0 = time.perf_counter()
    heads = TrailEvent.objects.values_list("chain").annotate(last=Max("seq"))
    rows = Rows(adapt, dict(heads))
    _generate(rows, users, sibling, reviewers, bundle.pk)
    print(
        f"generated {len(rows.decisions):,} decisions and {len(rows.events):,} trail events "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    t0 = time.perf_counter()
    with transaction.atomic():
        _insert("decisions_decision", DECISION_COLUMNS, rows.decisions)
        _insert("decisions_decisionevent", EVENT_COLUMNS, rows.events)
    with connection.cursor() as cursor:
        if POSTGRES:
            cursor.execute("SELECT setval('decisions_decision_id_seq', %s)", [len(rows.decisions)])
            cursor.execute("VACUUM ANALYZE decisions_decision")
            cursor.execute("VACUUM ANALYZE decisions_decisionevent")
        else:
            cursor.execute("ANALYZE")
    in_zone = sum(1 for row in rows.decisions if row[3] == ZONE)
    print(f"loaded in {time.perf_counter() - t0:.1f} s; {in_zone:,} decisions in {ZONE}")
    assert User.objects.filter(username="bench-auditor").exists()


def _timed(fn: Callable[[], object], runs: int = RUNS) -> list[float]:
    for _ in range(2):
        fn()  # warm: the first call loads code and the server's caches
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def _line(label: str, millis: list[float]) -> None:
    ordered = sorted(millis)
    median = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    verdict = "OK" if p95 <= TARGET_MS else ("MISS (p95)" if median <= TARGET_MS else "MISS")
    print(
        f"  {label:<40} median {median:6.1f} ms  p95 {p95:6.1f} ms  "
        f"(<= {TARGET_MS:.0f} ms: {verdict})  {_load()}",
        flush=True,
    )


def _run() -> None:
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    from coordinates.coordinate import parse
    from gates import kpis
    from gates.models import KpiDay

    setup_test_environment()
    t0 = time.perf_counter()
    call_command("migrate", verbosity=0)
    print(
        f"migrated the throwaway {connection.vendor} database in {time.perf_counter() - t0:.1f} s"
    )
    _build()
    client = Client()
    client.force_login(User.objects.get(username="bench-auditor"))
    since, until = START.date().isoformat(), (START + timedelta(days=DAYS - 1)).date().isoformat()
    url = f"/api/v1/zones/{ZONE}/kpis/?since={since}&until={until}"
    start = time.perf_counter()
    response = client.get(url)
    cold = (time.perf_counter() - start) * 1000
    assert response.status_code == 200, response.content
    print(
        f"first read, every day counted from the decisions and the trail: {cold:.0f} ms; it "
        f"kept {KpiDay.objects.count()} settled days of {DAYS} (the last has decisions still "
        f"waiting: counted at every read)  {_load()}"
    )
    body = response.json()
    print(
        f"the figures: {body['decisions']['total']:,} decisions {body['decisions']}, "
        f"auto {body['auto_ratio']:.3f}, first pass {body['first_pass_approval_rate']:.3f}, "
        f"p90 review {body['p90_review_seconds']:.0f} s, breaches {body['sla_breaches']}, "
        f"requery {body['requery_rate']:.3f}, trust {body['trust']:.3f}"
    )
    print(f"{RUNS} calls each (the planet: 5), 30 days of {ZONE} (one value a day):")
    _line("GET /api/v1/zones/{zone}/kpis/", _timed(lambda: client.get(url)))
    window = kpis.window_from({"since": since, "until": until})
    coordinate = parse(ZONE)
    _line("gates.kpis.zone_kpis (no HTTP)", _timed(lambda: kpis.zone_kpis(coordinate, window)))
    planet = parse("G1.U1.P1")
    _line("zone_kpis of the planet (120,000)", _timed(lambda: kpis.zone_kpis(planet, window), 5))

    def counted_every_time() -> None:
        KpiDay.objects.all().delete()
        kpis.zone_kpis(coordinate, window)

    _line("zone_kpis, no day kept (every read cold)", _timed(counted_every_time, 5))


def main() -> None:
    cores = os.cpu_count() or 1
    print(f"cores: {cores}; {_load()} (1/5/15 min; above {cores} the cores are shared)")
    if POSTGRES:
        _admin_sql(
            f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)", f"CREATE DATABASE {DATABASE}"
        )
    try:
        _run()
    finally:
        from django.db import connections

        connections.close_all()
        if not os.environ.get("BENCH_KEEP"):
            if POSTGRES:
                _admin_sql(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
            else:
                for path in SQLITE_FILE.parent.glob("*"):
                    path.unlink()
                SQLITE_FILE.parent.rmdir()


if __name__ == "__main__":
    main()
