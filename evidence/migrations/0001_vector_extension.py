"""Enable pgvector on PostgreSQL (a no-op elsewhere), before any vector column exists."""

from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    initial = True
    dependencies: list[tuple[str, str]] = []
    operations = [VectorExtension()]
