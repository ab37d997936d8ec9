"""Keep paragraph vectors inside their table rows, and build a smaller, faster and better
HNSW graph, on PostgreSQL only.

pgvector's `vector` type is stored EXTERNAL by default: a row of a 384-dimension vector and
a paragraph of a few hundred characters passes PostgreSQL's TOAST threshold (~2 kB), so the
vector moves out of line and an exact scan (the dense leg of a small scope) fetches every
vector from the TOAST table: about 4x slower. PLAIN keeps the 1.5 kB vector in the row; the
text, still compressible and movable, goes out of line instead. Vectors stored before are
rewritten.

The HNSW index is built again (bench/bench_retrieval_pg.py, 100,000 MiniLM vectors):
- on inner product instead of cosine distance: every stored vector is L2-normalised (the
  Embedder contract), so both order neighbours alike, and inner product is one accumulation
  per dimension where cosine takes three; scans ran ~1.7x faster at the same recall;
- over the vectors cast to half precision (pgvector's halfvec): 111 MiB instead of 195, so
  it fits PostgreSQL's default 128 MB of shared buffers; scans ~1.3x faster again, recall
  unchanged (0.974 against 0.971); the rows keep full precision, and so do the
  similarities the query returns;
- with ef_construction 200 instead of 64: with 64, recall@15 stayed at ~0.94-0.95 whatever
  the ef_search (the graph, not the search, limited it), and one build to the next varied by
  a few points; 200 gives ~0.96-0.98 at ef_search 80 and builds in about three times as long.
The build gets a maintenance_work_mem large enough to hold the whole graph (pgvector builds
~3x slower once it spills).
"""

from __future__ import annotations

import importlib
import math
from typing import Any

from django.db import migrations

# Bytes the HNSW graph needs per vector: 2 per dimension (half precision), plus neighbour
# lists and tuple headers (m = 16); measured 111 MiB for 100,000 vectors of 384 dimensions.
_BYTES_PER_VECTOR = 1_200
_BUILD_MEMORY_MB = (64, 2_048)  # bounds of the memory granted to the build
_HNSW = importlib.import_module("evidence.migrations.0003_paragraph_hnsw")
DIMENSIONS = 384  # evidence.models.EMBEDDING_DIM when this migration was written
# The expression dense_leg_postgres orders by, so that the planner matches this index.
INDEXED = f"(embedding::halfvec({DIMENSIONS}))"
CREATE = (
    "CREATE INDEX IF NOT EXISTS paragraph_embedding_hnsw ON evidence_paragraph "
    f"USING hnsw ({INDEXED} halfvec_ip_ops) WITH (m = 16, ef_construction = 200)"
)


def build_memory_mb(rows: int) -> int:
    """maintenance_work_mem for building the HNSW index over `rows` vectors: the graph's size
    and a half, within _BUILD_MEMORY_MB."""
    low, high = _BUILD_MEMORY_MB
    return max(low, min(high, math.ceil(rows * _BYTES_PER_VECTOR * 1.5 / 2**20)))


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM evidence_paragraph WHERE embedding IS NOT NULL")
        rows = int(cursor.fetchone()[0])
    schema_editor.execute(_HNSW.DROP)
    schema_editor.execute("ALTER TABLE evidence_paragraph ALTER COLUMN embedding SET STORAGE PLAIN")
    if rows:
        # A new value (not the old TOAST pointer) is stored by the column's new rule: inline.
        schema_editor.execute(
            "UPDATE evidence_paragraph SET embedding = embedding::real[]::vector "
            "WHERE embedding IS NOT NULL"
        )
    # Local to the migration's transaction, then back to the server's value.
    schema_editor.execute(
        "SELECT set_config('maintenance_work_mem', %s, true)", [f"{build_memory_mb(rows)}MB"]
    )
    schema_editor.execute(CREATE)
    schema_editor.execute("SET LOCAL maintenance_work_mem TO DEFAULT")


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        # Rows keep their inline vectors until rewritten; new ones go out of line again.
        schema_editor.execute(
            "ALTER TABLE evidence_paragraph ALTER COLUMN embedding SET STORAGE EXTERNAL"
        )
        schema_editor.execute(_HNSW.DROP)
        schema_editor.execute(_HNSW.CREATE)


class Migration(migrations.Migration):
    # After the other 0006 so the graph keeps one leaf (two leaves stop `migrate`).
    dependencies = [("evidence", "0006_graph_risk_review")]
    operations = [migrations.RunPython(forwards, backwards)]
