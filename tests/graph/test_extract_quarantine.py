"""A document version whose graph extraction keeps failing is quarantined after its retries;
the other versions are extracted, and the task sent again skips it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from evidence.models import DocumentVersion
from graph import tasks as graph_tasks
from graph.models import GraphNode
from maria.metrics import QUARANTINED
from tests.decisions.helpers import retry_inline
from tests.samples import CONTRACT_JA, POLICY_EN
from trail.models import Quarantine

pytestmark = pytest.mark.django_db

EXTRACT = "graph.tasks.extract_graph"


def test_a_version_whose_extraction_keeps_failing_is_quarantined_after_its_retries(
    ingest: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # given an extractor that chokes on one document's text, every time
    real = graph_tasks.version_extract
    tries: list[int] = []

    def extract(*, version_id: int) -> int:
        if "業務委託" in DocumentVersion.objects.get(pk=version_id).text:
            tries.append(version_id)
            raise ValueError("the extractor choked")
        return real(version_id=version_id)

    monkeypatch.setattr(graph_tasks, "version_extract", extract)
    retry_inline(monkeypatch)  # retried inline, as a worker would, whatever the settings say
    counted = QUARANTINED.labels(run=EXTRACT)._value.get()

    # when that document and another are stored (each extracted after commit)
    with caplog.at_level(logging.WARNING, logger="trail.quarantine"):
        bad = ingest(CONTRACT_JA, kind="contract", title="Contract", key="contract")
        good = ingest(POLICY_EN, title="Travel policy", key="travel")

    # then the good one has its graph, and the bad one was tried 1 + its retries, then set
    # aside once, saying why, counted and logged
    assert GraphNode.objects.filter(key=f"document:{good.document.pk}").exists()
    assert not GraphNode.objects.filter(key=f"document:{bad.document.pk}").exists()
    assert len(tries) == graph_tasks.extract_graph.max_retries + 1
    row = Quarantine.objects.get()
    assert (row.run, row.subject) == (EXTRACT, f"version:{bad.version.pk}")
    assert row.reason == "ValueError: the extractor choked"
    assert QUARANTINED.labels(run=EXTRACT)._value.get() - counted == 1
    logged = [r for r in caplog.records if r.getMessage() == "quarantined"]
    assert [r.subject for r in logged] == [f"version:{bad.version.pk}"]  # type: ignore[attr-defined]

    # when its task is delivered again
    result = graph_tasks.extract_graph.apply(args=(bad.version.pk,))

    # then it is skipped, not tried and failed again
    assert result.successful()
    assert result.result == 0
    assert len(tries) == graph_tasks.extract_graph.max_retries + 1
    assert Quarantine.objects.get().count == 1
