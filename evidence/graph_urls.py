"""URLs of the knowledge graph: the REST API (under /api/v1/graph/) and the explorer pages
(under /graph/, `pages`)."""

from django.urls import URLPattern, path

from evidence import graph_api, graph_views

urlpatterns: list[URLPattern] = [
    path("query/", graph_api.GraphQueryView.as_view(), name="graph-query"),
    path("paths/", graph_api.GraphPathsView.as_view(), name="graph-paths"),
    path("risk/", graph_api.GraphRiskView.as_view(), name="graph-risk"),
    path("risk/flags/", graph_api.GraphRiskFlagsView.as_view(), name="graph-risk-flags"),
    path(
        "risk/flags/<int:pk>/resolve/",
        graph_api.GraphRiskFlagResolveView.as_view(),
        name="graph-risk-flag-resolve",
    ),
    path(
        "decisions/<int:pk>/responsibility/",
        graph_api.ResponsibilityView.as_view(),
        name="graph-responsibility",
    ),
    path("nodes/", graph_api.NodeListView.as_view(), name="graph-nodes"),
    path("nodes/<int:pk>/", graph_api.NodeDetailView.as_view(), name="graph-node"),
    path("edges/", graph_api.EdgeListView.as_view(), name="graph-edges"),
    path("edges/<int:pk>/", graph_api.EdgeDetailView.as_view(), name="graph-edge"),
    path("import/", graph_api.GraphImportView.as_view(), name="graph-import"),
]

pages: list[URLPattern] = [
    path("", graph_views.explorer, name="graph-explorer"),
    path(
        "decisions/<int:pk>/responsibility/",
        graph_views.responsibility_fragment,
        name="graph-responsibility-fragment",
    ),
]
