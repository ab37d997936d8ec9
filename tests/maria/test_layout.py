"""The layout has no import loop between the project's modules (the layers and forbidden
imports of pyproject.toml are checked by `lint-imports`, in CI and `make lint`)."""

from __future__ import annotations

import grimp
import networkx as nx

APPS = ("maria", "coordinates", "trail", "evidence", "decisions", "graph", "gates", "audit")


def test_no_module_imports_itself_through_others() -> None:
    # Every import counts, at module level or inside a function (a late import that breaks a
    # loop at run time is still a loop); imports for type checking only run nothing.
    graph = grimp.build_graph(*APPS, exclude_type_checking_imports=True)
    imports = nx.DiGraph()
    for module in graph.modules:
        imports.add_node(module)
        for imported in graph.find_modules_directly_imported_by(module):
            imports.add_edge(module, imported)
    loops = [sorted(c) for c in nx.strongly_connected_components(imports) if len(c) > 1]
    assert loops == []
