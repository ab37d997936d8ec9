"""The knowledge graph's own announcement, so its store and feed need not import its tasks.

`risk_scan_wanted` is sent after a change to a zone's edges commits, with `zone` and
`debounced`: the feed, changing zones at the pace of decisions, asks for one scan within
a few seconds (debounced=True); a change by hand asks for a scan at once.
"""

from __future__ import annotations

from django.dispatch import Signal

risk_scan_wanted = Signal()
