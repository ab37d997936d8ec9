"""URLs of the knowledge graph: the REST API (under /api/v1/graph/) and the explorer pages
(under /graph/, `pages`)."""

from django.urls import URLPattern, path

from graph import api, views

urlpatterns: list[URLPattern] = [
    path("query/", api.GraphQueryView.as_view(), name="graph-query"),
    path("paths/", api.GraphPathsView.as_view(), name="graph-paths"),
    path("risk/", api.GraphRiskView.as_view(), name="graph-risk"),
    path("risk/flags/", api.GraphRiskFlagsView.as_view(), name="graph-risk-flags"),
    path(
        "risk/flags/<int:pk>/resolve/",
        api.GraphRiskFlagResolveView.as_view(),
        name="graph-risk-flag-resolve",
    ),
    path(
        "decisions/<int:pk>/responsibility/",
        api.ResponsibilityView.as_view(),
        name="graph-responsibility",
    ),
    path("nodes/", api.NodeListView.as_view(), name="graph-nodes"),
    path("nodes/<int:pk>/", api.NodeDetailView.as_view(), name="graph-node"),
    path("edges/", api.EdgeListView.as_view(), name="graph-edges"),
    path("edges/<int:pk>/", api.EdgeDetailView.as_view(), name="graph-edge"),
    path("import/", api.GraphImportView.as_view(), name="graph-import"),
]

pages: list[URLPattern] = [
    path("", views.explorer, name="graph-explorer"),
    path(
        "decisions/<int:pk>/responsibility/",
        views.responsibility_fragment,
        name="graph-responsibility-fragment",
    ),
]
