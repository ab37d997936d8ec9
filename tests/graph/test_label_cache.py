"""Node-label embeddings are computed once per process: a query after the first embeds only
nodes that are new or relabelled, even across a full reload of the index (an import)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from graph import store as graph_store
from graph.models import GraphNode
from tests.graph.conftest import ZONE, edge

pytestmark = pytest.mark.django_db


class CountingEmbedder:
    """The configured embedder, remembering every text it was asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.texts: list[str] = []

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingEmbedder:
    from evidence import services

    model = CountingEmbedder(services.embedder())
    monkeypatch.setattr(services, "embedder", lambda: model)
    graph_store.index_forget()
    return model


def test_labels_are_embedded_once_even_across_a_reload(
    import_lines: Callable[..., Any], counting: CountingEmbedder
) -> None:
    # given a graph whose labels the first query embedded
    import_lines([edge("decision:a", "person:p", "approved_by", target_label="Pat")])
    first = graph_store.snapshot(embed=True)
    assert sorted(counting.texts) == ["decision decision:a", "person Pat"]
    # when an import (a full reload of the index) adds a node, and a node is relabelled
    counting.texts.clear()
    import_lines([edge("decision:b", "person:p", "approved_by", target_label="Pat")])
    graph_store.node_ensure(
        key="decision:a", node_type="decision", label="Pick a vendor", zone=ZONE
    )
    second = graph_store.snapshot(embed=True)
    # then only the new node and the relabelled one are embedded again
    assert sorted(counting.texts) == ["decision Pick a vendor", "decision decision:b"]
    assert second.generation > first.generation
    # and every row holds the embedding of its current label
    model = counting.inner
    assert second.vectors is not None
    for row, key in enumerate(second.keys):
        node = GraphNode.objects.get(key=key)
        expected = model.embed([f"{node.node_type} {node.label}"])[0]
        assert np.allclose(second.vectors[row], expected), key
    # and a query with nothing changed embeds nothing
    counting.texts.clear()
    graph_store.snapshot(embed=True)
    assert counting.texts == []
