"""An HNSW index for cosine search over paragraph embeddings, on PostgreSQL only.

SQLite keeps no vector index: retrieval there is an exact numpy search in memory.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

CREATE = (
    "CREATE INDEX IF NOT EXISTS paragraph_embedding_hnsw ON evidence_paragraph "
    "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
)
DROP = "DROP INDEX IF EXISTS paragraph_embedding_hnsw"


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("evidence", "0002_documents_and_bundles")]
    operations = [migrations.RunPython(forwards, backwards)]
