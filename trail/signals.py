"""What the ledger tells the apps that build on it.

`events_committed` is sent after a transaction that appended events commits (never for one
that rolled back), with `kinds`: the frozenset of event kinds it appended. A change's events
written together (`ledger.holding`) are announced once; an event appended on its own, once.
Receivers run in the committing thread: they should only schedule work (the knowledge graph
asks for a run of its feed), never do it.
"""

from __future__ import annotations

from django.dispatch import Signal

events_committed = Signal()
