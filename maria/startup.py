"""What a long-lived process does once it has loaded: take its startup objects out of the
garbage collector's way."""

from __future__ import annotations

import gc

from django.urls import get_resolver


def freeze_startup_objects() -> None:
    """Import every view (the URL patterns), then move every object alive now to the
    collector's permanent generation (`gc.freeze`). Modules, models and URL patterns live as
    long as the process; without this each full collection scans them all again, which cost
    about 2 ms per decision here (bench/bench_pipeline.py)."""
    get_resolver().url_patterns  # noqa: B018 - the attribute access imports the views
    gc.collect()
    gc.freeze()
