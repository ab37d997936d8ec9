"""What the evidence store announces to whoever builds on it.

`version_stored` is sent after the transaction that stored a new document version commits,
with `version_id`. The evidence store's own task embeds its paragraphs (evidence.tasks); the
knowledge graph extracts its entities (graph.tasks). Receivers only schedule work.

`conflict_resolved` is sent after the transaction that resolved a knowledge-base conflict
commits, with `conflict_id`: the answers that rested on the side that lost are reviewed again
(decisions.tasks).
"""

from __future__ import annotations

from django.dispatch import Signal

version_stored = Signal()
conflict_resolved = Signal()
