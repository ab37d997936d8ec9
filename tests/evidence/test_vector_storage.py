"""Paragraph vectors stored inside their rows on PostgreSQL (migration 0007)."""

from __future__ import annotations

import importlib
import random
import string
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from django.db import connection

from evidence.models import Paragraph

storage = importlib.import_module("evidence.migrations.0007_paragraph_vector_storage")


@pytest.mark.parametrize(
    ("rows", "megabytes"),
    [(0, 64), (10_000, 64), (100_000, 172), (1_000_000, 1_717), (2_000_000, 2_048)],
)
def test_the_index_build_gets_the_graph_size_and_a_half_within_bounds(
    rows: int, megabytes: int
) -> None:
    assert storage.build_memory_mb(rows) == megabytes


def vector_chunks() -> int:
    """TOAST chunks of vector size (1,540 bytes: 384 floats and the dimension header)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltoastrelid::regclass::text FROM pg_class "
            "WHERE oid = 'evidence_paragraph'::regclass"
        )
        toast = cursor.fetchone()[0]
        cursor.execute(f"SELECT count(*) FROM {toast} WHERE octet_length(chunk_data) = 1540")  # noqa: S608
        return int(cursor.fetchone()[0])


def storage_of_embedding() -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attstorage FROM pg_attribute "
            "WHERE attrelid = 'evidence_paragraph'::regclass AND attname = 'embedding'"
        )
        return str(cursor.fetchone()[0])


@pytest.mark.postgres
@pytest.mark.django_db
def test_vectors_stay_in_their_rows(ingest: Callable[..., Any]) -> None:
    # Given a paragraph long enough, and incompressible enough, to pass the TOAST threshold
    noise = "".join(random.Random(7).choices(string.ascii_letters, k=900))
    ingest(f"Noise\n\nThe code is {noise}.\n")
    # Then its vector is in the row, as the migrations leave the column
    assert storage_of_embedding() == "p"
    assert Paragraph.objects.filter(embedding__isnull=False).exists()
    assert vector_chunks() == 0


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_hnsw_graph_is_half_precision_inner_product_with_ef_construction_200() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.reloptions, pg_get_indexdef(c.oid) FROM pg_class c "
            "WHERE c.relname = 'paragraph_embedding_hnsw'"
        )
        options, definition = cursor.fetchone()
    assert sorted(options) == ["ef_construction=200", "m=16"]
    assert "USING hnsw (((embedding)::halfvec(384)) halfvec_ip_ops)" in definition


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_migration_moves_vectors_stored_out_of_line_into_their_rows(
    ingest: Callable[..., Any],
) -> None:
    # Given vectors written while the column still had pgvector's EXTERNAL storage
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE evidence_paragraph ALTER COLUMN embedding SET STORAGE EXTERNAL")
    noise = random.Random(7)
    for n in range(3):
        text = "".join(noise.choices(string.ascii_letters, k=900))
        ingest(f"Noise {n}\n\nThe code is {text}.\n", key=f"noise-{n}")
    before = dict(Paragraph.objects.values_list("id", "embedding"))
    assert vector_chunks() == 3
    # When the migration runs (foreign keys checked first: ALTER TABLE refuses pending ones)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with connection.schema_editor() as editor:
        storage.forwards(None, editor)
    # Then the vectors are in their rows, unchanged, and the HNSW index is back
    assert storage_of_embedding() == "p"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'paragraph_embedding_hnsw'"
        )
        assert cursor.fetchone()[0] == 1
    after = dict(Paragraph.objects.values_list("id", "embedding"))
    assert set(after) == set(before)
    for pid, vector in before.items():
        np.testing.assert_array_equal(np.asarray(after[pid]), np.asarray(vector))
    assert vector_chunks() == 0
