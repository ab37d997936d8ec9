"""A document version whose embedding keeps failing is quarantined after its retries; the
other versions are embedded, and the task sent again skips it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from evidence import tasks as evidence_tasks
from evidence.models import DocumentVersion
from maria.metrics import QUARANTINED
from tests.decisions.helpers import retry_inline
from tests.samples import CONTRACT_JA, POLICY_EN
from trail.models import Quarantine

pytestmark = pytest.mark.django_db

EMBED = "evidence.tasks.embed_version"


def test_a_version_whose_embedding_keeps_failing_is_quarantined_after_its_retries(
    ingest: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given an embedder that fails on one document's version, every time
    real = evidence_tasks.version_embed
    tries: list[int] = []

    def embed(*, version_id: int) -> int:
        if "業務委託" in DocumentVersion.objects.get(pk=version_id).text:
            tries.append(version_id)
            raise RuntimeError("the embedding service answered 500")
        return real(version_id=version_id)

    monkeypatch.setattr(evidence_tasks, "version_embed", embed)
    retry_inline(monkeypatch)  # retried inline, as a worker would, whatever the settings say
    counted = QUARANTINED.labels(run=EMBED)._value.get()

    # when that document and another are stored (each embedded after commit)
    bad = ingest(CONTRACT_JA, kind="contract", title="Contract", key="contract")
    good = ingest(POLICY_EN, title="Travel policy", key="travel")

    # then the good one is embedded, and the bad one was tried 1 + its retries, then set
    # aside once, saying why, and counted
    assert DocumentVersion.objects.get(pk=good.version.pk).embedded_at is not None
    assert DocumentVersion.objects.get(pk=bad.version.pk).embedded_at is None
    assert len(tries) == evidence_tasks.embed_version.max_retries + 1
    row = Quarantine.objects.get()
    assert (row.run, row.subject) == (EMBED, f"version:{bad.version.pk}")
    assert row.reason == "RuntimeError: the embedding service answered 500"
    assert QUARANTINED.labels(run=EMBED)._value.get() - counted == 1

    # and its task delivered again skips it instead of failing on it again
    assert evidence_tasks.embed_version.apply(args=(bad.version.pk,)).result == 0
    assert len(tries) == evidence_tasks.embed_version.max_retries + 1
