"""A database migrated at the heads before the trail and the graph got apps of their own
migrates forward with every row intact, on SQLite and on PostgreSQL.

The trail's models (decisions.DecisionEvent, TrailHead, TrailCheckpoint) moved to the trail
app and the knowledge graph's (GraphNode, GraphEdge, GraphState, GraphChange, GraphRiskFlag)
to the graph app, keeping their tables: trail 0001 and decisions 0003, graph 0001 and
evidence 0009 change Django's idea of who owns the tables and nothing in the database.

This test takes the database back to the old heads, writes rows there through the
historical models (the current ones do not exist at that state), migrates forward to the
leaves and then finds: the moves ran no SQL; every table holds exactly the rows it held;
the current models read them under the same ids with the same values; the trail, sealed by
a checkpoint before the move, still verifies (`verify_trail`); and the ledger appends after
the moved head. A move that drops a table (a DeleteModel outside SeparateDatabaseAndState)
or touches its rows fails here, naming the migration's SQL and the table that changed.

The old heads are pinned here: coordinates 0002, decisions 0002, evidence 0008, gates 0001,
the contrib apps at their leaves; trail and graph (and audit, which has no models) had no
migrations yet.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.graph import MigrationGraph

from decisions.models import Decision
from evidence.models import EvidenceBundle
from evidence.services import bundle_hash
from graph.models import GraphChange, GraphEdge, GraphNode, GraphRiskFlag, GraphState
from trail import ledger
from trail.chain import GENESIS, canonical_json, chain_hash, checkpoint_digest
from trail.ledger import BODY_VERSION, CHECKPOINT_TYPE, iso_time, lane_for
from trail.models import TrailCheckpoint, TrailEvent, TrailHead
from trail.verify import verify_database

# The transactional flush at teardown would be refused by the trail's triggers: the autouse
# fixture in tests/conftest.py empties the trail first (triggers bypassed), after the
# `finally` below has brought the schema back to the leaves.
pytestmark = pytest.mark.django_db(transaction=True)

Node = tuple[str, str]

# Today's main before the move, for the project's apps that had migrations then.
OLD_HEADS: dict[str, str] = {
    "coordinates": "0002_token_webhook_secret",
    "decisions": "0002_pipeline",
    "evidence": "0008_graphstate_fed",
    "gates": "0001_saved_filter",
}
NEW_APPS = ("trail", "graph", "audit")
# Back to the old heads: unapplying trail 0001 takes decisions 0003 with it, graph 0001
# takes evidence 0009; coordinates' governance-row triggers (0003) go back by name.
BACK_TO_OLD_HEADS: list[tuple[str, str | None]] = [
    ("coordinates", "0002_token_webhook_secret"),
    ("decisions", "0002_pipeline"),
    ("evidence", "0008_graphstate_fed"),
    ("trail", None),
    ("graph", None),
]
MOVES: set[Node] = {
    ("trail", "0001_initial"),
    ("decisions", "0003_trail_moves_to_its_app"),
    ("graph", "0001_initial"),
    ("evidence", "0009_graph_moves_to_its_app"),
}

ZONE = "G1.U1.P1.Z1"
AGENT = "G1.U1.P1.Z1.A1"
T0 = datetime(2026, 11, 30, 9, 0, 0, 123456, tzinfo=UTC)


def old_state_nodes(graph: MigrationGraph) -> list[Node]:
    """The old heads, and every other app (Django's own) at its leaf."""
    others = [
        (app, name)
        for app, name in graph.leaf_nodes()
        if app not in OLD_HEADS and app not in NEW_APPS
    ]
    return [*others, *OLD_HEADS.items()]


def applied(executor: MigrationExecutor) -> set[Node]:
    return set(executor.recorder.applied_migrations())


def snapshot() -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (django_migrations aside), as the database returns it."""

    def plain(value: Any) -> Any:
        if isinstance(value, memoryview):  # BinaryField on PostgreSQL
            return bytes(value)
        return value.tolist() if hasattr(value, "tolist") else value  # pgvector's arrays

    tables: dict[str, list[tuple[Any, ...]]] = {}
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.table_names(cursor)):
            if table == "django_migrations":
                continue
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")  # noqa: S608
            rows = [tuple(plain(value) for value in row) for row in cursor.fetchall()]
            tables[table] = sorted(rows, key=repr)
    return tables


def schema() -> list[tuple[Any, ...]]:
    """The schema as the database describes it: tables, columns, indexes, constraints and
    triggers (by name and definition)."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master"
                " WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
            )
        else:
            cursor.execute(
                """
                SELECT 'column', table_name::text, column_name::text,
                       concat_ws(' ', data_type, is_nullable, column_default)
                  FROM information_schema.columns WHERE table_schema = current_schema()
                UNION ALL
                SELECT 'index', tablename::text, indexname::text, indexdef
                  FROM pg_indexes WHERE schemaname = current_schema()
                UNION ALL
                SELECT 'constraint', conrelid::regclass::text, conname::text,
                       pg_get_constraintdef(oid)
                  FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
                UNION ALL
                SELECT 'trigger', tgrelid::regclass::text, tgname::text, pg_get_triggerdef(oid)
                  FROM pg_trigger WHERE NOT tgisinternal
                ORDER BY 1, 2, 3
                """
            )
        return cursor.fetchall()


def sql_of(executor: MigrationExecutor, node: Node) -> list[str]:
    """The SQL migration `node` runs forward (as sqlmigrate shows it), comments aside."""
    migration = executor.loader.graph.nodes[node]
    state = executor.loader.project_state(node, at_end=False)
    with connection.schema_editor(collect_sql=True, atomic=migration.atomic) as editor:
        migration.apply(state, editor, collect_sql=True)
    return [
        line
        for statement in editor.collected_sql
        for line in statement.splitlines()
        if line.strip() and not line.lstrip().startswith("--")
    ]


def sealed(
    chain: str, decision_id: int, steps: list[tuple[str, str, str, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Trail rows for `steps` (kind, actor, reason, payload) linked from GENESIS, exactly as
    the ledger's `_seal` builds them: the canonical body, and the hash over prev_hash + body."""
    rows, prev = [], GENESIS
    for seq, (kind, actor, reason, payload) in enumerate(steps, start=1):
        at = T0 + timedelta(minutes=seq)
        body = canonical_json(
            {
                "v": BODY_VERSION,
                "kind": kind,
                "chain": chain,
                "seq": seq,
                "decision": decision_id,
                "actor": actor,
                "reason": reason,
                "at": iso_time(at),
                "payload": payload,
            }
        )
        event_hash = chain_hash(prev, body)
        rows.append(
            {
                "chain": chain,
                "seq": seq,
                "kind": kind,
                "decision_id": decision_id,
                "actor": actor,
                "reason": reason,
                "created_at": at,
                "prev_hash": prev,
                "hash": event_hash,
                "canonical": body,
            }
        )
        prev = event_hash
    return rows


def checkpoint_over(chain: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The first checkpoint, sealing `events` (one chain's first events), as
    trail.checkpoints.checkpoint_create builds it."""
    at = T0 + timedelta(hours=1)
    last = events[-1]
    body = canonical_json(
        {
            "type": CHECKPOINT_TYPE,
            "seq": 1,
            "at": iso_time(at),
            "events": last["seq"],
            "chains": {
                chain: {
                    "seq": last["seq"],
                    "hash": last["hash"],
                    "digest": checkpoint_digest(event["hash"] for event in events),
                }
            },
        }
    )
    return {
        "seq": 1,
        "created_at": at,
        "prev_hash": GENESIS,
        "hash": chain_hash(GENESIS, body),
        "chains": 1,
        "events": last["seq"],
        "canonical": body,
    }


def write_at_the_old_heads(old: Any) -> dict[str, Any]:
    """A decision with its bundle, its trail (checkpointed, then one more event) and head, and
    a corner of the graph, through the historical models of the old heads; what was written."""
    user_model = old.get_model("auth", "User")
    alice = user_model.objects.create(username="alice", password="!")
    bob = user_model.objects.create(username="bob", password="!")
    claims = [{"text": "The budget allows it.", "citations": ["policy:travel#3"]}]
    bundle = old.get_model("evidence", "EvidenceBundle").objects.create(
        content_hash=bundle_hash(ZONE, claims),  # verify_trail re-hashes it after the move
        zone=ZONE,
        claims=claims,
    )
    decision = old.get_model("decisions", "Decision").objects.create(
        question="May the team fly to Lisbon?",
        answer="Yes, within the travel policy.",
        zone=ZONE,
        agent=AGENT,
        proposed_by=alice,
        bundle=bundle,
        state="approved",
        gate="required",
        mode="strict",
        sufficiency=0.9,
        policy_label="travel v3",
        request_hash="r" * 64,
    )

    chain = lane_for(ZONE, decision.pk)
    events = sealed(
        chain,
        decision.pk,
        [
            ("decision.proposed", f"agent:{AGENT}", "", {"bundle": bundle.content_hash}),
            ("decision.validated", "system", "", {"gate": "required"}),
            ("decision.approved", "bob", "within budget", {"reviewer": "bob"}),
        ],
    )
    event_model = old.get_model("decisions", "DecisionEvent")
    event_ids = [event_model.objects.create(**event).pk for event in events]
    checkpoint = checkpoint_over(chain, events[:2])
    checkpoint_id = old.get_model("decisions", "TrailCheckpoint").objects.create(**checkpoint).pk
    old.get_model("decisions", "TrailHead").objects.create(
        chain=chain,
        seq=events[-1]["seq"],
        hash=events[-1]["hash"],
        updated_at=events[-1]["created_at"],
    )

    node_model = old.get_model("evidence", "GraphNode")
    decision_node = node_model.objects.create(
        key=f"decision:{decision.pk}",
        node_type="decision",
        label="May the team fly to Lisbon?",
        zone=ZONE,
        attributes={"state": "approved"},
    )
    agent_node = node_model.objects.create(
        key=f"agent:{AGENT}", node_type="person", label=AGENT, zone=ZONE
    )
    edge = old.get_model("evidence", "GraphEdge").objects.create(
        source=decision_node,
        target=agent_node,
        edge_type="proposed_by",
        weight=0.8,
        confidence=0.9,
        occurred_at=T0,
        zone=ZONE,
        origin="pipeline",
    )
    old.get_model("evidence", "GraphState").objects.create(
        pk=1, generation=2, token="t" * 32, fed={chain: 3}
    )
    old.get_model("evidence", "GraphChange").objects.create(
        generation=2, token="t" * 32, op="edge", data={"id": edge.pk}
    )
    flag = old.get_model("evidence", "GraphRiskFlag").objects.create(
        zone=ZONE,
        key=decision_node.key,
        threshold=0.5,
        share=0.75,
        review_by="G1.U1.P1",
        event=f"{ZONE}#7",
        status="acknowledged",
        resolved_by=bob,
        resolved_at=T0 + timedelta(days=1),
        note="expected for a trip this size",
    )
    return {
        "alice": alice.pk,
        "bob": bob.pk,
        "bundle": bundle.pk,
        "decision": decision.pk,
        "chain": chain,
        "events": list(zip(event_ids, events, strict=True)),
        "checkpoint": (checkpoint_id, checkpoint),
        "nodes": (decision_node.pk, agent_node.pk),
        "edge": edge.pk,
        "flag": flag.pk,
    }


@pytest.fixture
def at_the_old_heads(transactional_db: None) -> Iterator[MigrationExecutor]:
    """The database migrated back to the old heads; at the leaves again afterwards, whatever
    the test did, with the very schema it had, so the tests after it find today's."""
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    today = schema()
    try:
        executor.migrate(BACK_TO_OLD_HEADS)
        yield MigrationExecutor(connection)
    finally:
        MigrationExecutor(connection).migrate(leaves)
        # A new executor: one's loader keeps what was applied when it was made.
        assert not MigrationExecutor(connection).migration_plan(leaves)
        assert schema() == today


def test_rows_written_at_the_old_heads_survive_the_moves_intact(
    at_the_old_heads: MigrationExecutor,
) -> None:
    executor = at_the_old_heads
    # given a database at the old heads (the moves unapplied, trail and graph unknown) ...
    now_applied = applied(executor)
    assert not MOVES & now_applied
    assert not any(app in NEW_APPS for app, _ in now_applied)
    for app, old_head in OLD_HEADS.items():
        assert max(name for label, name in now_applied if label == app) == old_head
    # ... holding a decision, its trail and a corner of the graph written by the old models
    old = executor.loader.project_state(old_state_nodes(executor.loader.graph)).apps
    written = write_at_the_old_heads(old)
    before = snapshot()
    # (Today's verifier reads the checkpoints' signature columns, which only trail 0004 adds:
    # it checks these rows after the move, below, as verify_trail would.)

    # when it migrates forward to the leaves
    leaves = executor.loader.graph.leaf_nodes()
    plan = {
        (migration.app_label, migration.name) for migration, _ in executor.migration_plan(leaves)
    }
    assert plan >= MOVES
    sql = {node: sql_of(executor, node) for node in sorted(MOVES)}
    assert not any(sql.values()), f"the moves are to be state only, but run SQL: {sql}"
    executor.migrate(leaves)
    executor = MigrationExecutor(connection)
    assert not executor.migration_plan(leaves)

    # then every table holds exactly the rows it held (no table dropped, renamed or added) ...
    after = snapshot()
    # (Later migrations add tables of their own; none of the old ones may go.)
    added_since = {
        "trail_quarantine",
        "gates_kpiday",
        "decisions_claimverdict",
        "decisions_rereview",
        "decisions_comment",
        "evidence_zonecalibration",
        "evidence_knowledgeconflict",
    }
    assert set(after) - added_since == set(before), "tables were dropped or added"
    for table, rows in before.items():
        if table in ("decisions_trailcheckpoint", "decisions_decision"):
            # trail 0004 adds the signature columns, empty on old checkpoints; decisions 0008
            # the assignee, empty on old decisions: the old columns are as they were
            assert [row[: len(rows[0])] for row in after[table]] == rows or not rows
            assert all(value is None for row in after[table] for value in row[len(rows[0]) :])
        elif table == "evidence_graphriskflag":
            # graph 0004 adds the flagged node's own zone, filled from the node it names
            assert [row[: len(rows[0])] for row in after[table]] == rows
            assert {row[len(rows[0]) :] for row in after[table]} == {(ZONE,)}
        elif table != "django_content_type":
            assert after[table] == rows, f"{table} changed in the move"
    # ... except the moved models' content types, which now name their new apps under the
    # same ids (so permissions granted on them still hold)
    moved = {
        ("decisions", "decisionevent"): ("trail", "trailevent"),
        ("decisions", "trailhead"): ("trail", "trailhead"),
        ("decisions", "trailcheckpoint"): ("trail", "trailcheckpoint"),
        **{("evidence", m): ("graph", m) for m in ("graphnode", "graphedge", "graphstate")},
        **{("evidence", m): ("graph", m) for m in ("graphchange", "graphriskflag")},
    }
    expected = sorted(
        (
            (pk, *moved.get((app, model), (app, model)))
            for pk, app, model in before["django_content_type"]
        ),
        key=repr,
    )
    assert after["django_content_type"] == expected

    # ... the current models find them under the same ids with the same values ...
    decision = Decision.objects.get(pk=written["decision"])
    assert (decision.state, decision.zone, decision.agent) == ("approved", ZONE, AGENT)
    assert decision.proposed_by_id == written["alice"]
    assert decision.bundle_id == written["bundle"]
    assert EvidenceBundle.objects.get(pk=written["bundle"]).claims[0]["citations"] == [
        "policy:travel#3"
    ]
    chain = written["chain"]
    for event_id, row in written["events"]:
        event = TrailEvent.objects.get(pk=event_id)
        assert (event.chain, event.seq, event.kind) == (chain, row["seq"], row["kind"])
        assert (event.decision_id, event.actor, event.reason) == (
            written["decision"],
            row["actor"],
            row["reason"],
        )
        assert event.created_at == row["created_at"]
        assert (event.prev_hash, event.hash) == (row["prev_hash"], row["hash"])
        assert bytes(event.canonical) == row["canonical"]
    assert TrailEvent.objects.filter(decision_id=written["decision"]).count() == 3
    head = TrailHead.objects.get(chain=chain)
    last = written["events"][-1][1]
    assert (head.seq, head.hash, head.updated_at) == (3, last["hash"], last["created_at"])
    checkpoint_id, sealed_checkpoint = written["checkpoint"]
    checkpoint = TrailCheckpoint.objects.get(pk=checkpoint_id)
    assert (checkpoint.seq, checkpoint.hash) == (1, sealed_checkpoint["hash"])
    assert checkpoint.body["chains"][chain]["seq"] == 2

    decision_node_id, agent_node_id = written["nodes"]
    node = GraphNode.objects.get(pk=decision_node_id)
    assert (node.key, node.node_type, node.zone) == (
        f"decision:{written['decision']}",
        "decision",
        ZONE,
    )
    assert node.attributes == {"state": "approved"}
    edge = GraphEdge.objects.get(pk=written["edge"])
    assert (edge.source_id, edge.target_id, edge.edge_type) == (
        decision_node_id,
        agent_node_id,
        "proposed_by",
    )
    assert list(node.out_edges.values_list("pk", flat=True)) == [written["edge"]]
    assert GraphState.objects.get(pk=1).fed == {chain: 3}
    assert GraphChange.objects.get(generation=2).data == {"id": written["edge"]}
    flag = GraphRiskFlag.objects.get(pk=written["flag"])
    assert (flag.key, flag.status, flag.share) == (node.key, "acknowledged", 0.75)
    assert flag.node_zone == node.zone  # graph 0004 found the node the flag stands for
    assert flag.resolved_by == get_user_model().objects.get(pk=written["bob"])

    # ... the trail verifies: chains, head row and checkpoint (verify_trail exits 0) ...
    out = io.StringIO()
    call_command("verify_trail", stdout=out)
    assert "trail intact: 1 chains, 3 events" in out.getvalue()
    report = verify_database(deep=True)  # the columns agree with the hashed bodies too
    assert report.intact, report.lines()
    assert report.events == 3
    assert report.checkpoint.startswith("#1 ")
    assert all(result.checkpoint_checked for result in report.chains)

    # ... still append-only (the triggers came along with the tables) ...
    for refused in (
        "UPDATE decisions_decisionevent SET actor = 'mallory'",
        "DELETE FROM decisions_decisionevent",
    ):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(refused)

    # ... and the ledger goes on from the moved head
    with transaction.atomic():
        appended = ledger.append(kind="audit.migrated", chain=chain, actor="system", payload={})
    assert (appended.seq, appended.prev_hash) == (4, last["hash"])
    assert appended.pk > max(event_id for event_id, _ in written["events"])
    assert verify_database().intact
