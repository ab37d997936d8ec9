"""What the evidence store announces to whoever builds on it.

`version_stored` is sent after the transaction that stored a new document version commits,
with `version_id`. The evidence store's own task embeds its paragraphs (evidence.tasks); the
knowledge graph extracts its entities (graph.tasks). Receivers only schedule work.
"""

from __future__ import annotations

from django.dispatch import Signal

version_stored = Signal()
