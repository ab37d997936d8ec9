"""The auditor's pages (under /audit/), the trail export API (`api`, under /api/v1/) and the
zone's governance figures there too (`gates.dashboard`)."""

from django.urls import URLPattern, path

from audit import api, views
from gates import advice_views, conflicts, dashboard, learning_page, learning_views

urlpatterns: list[URLPattern] = [
    path("audit/", views.audit_search, name="audit"),
    path("audit/decisions/<int:pk>/", views.audit_decision, name="audit-decision"),
    path("audit/verify/", views.audit_verify, name="audit-verify"),
    path("audit/checkpoints/", views.audit_checkpoints, name="audit-checkpoints"),
    path("audit/export/", views.audit_export, name="audit-export"),
]

api_urlpatterns: list[URLPattern] = [
    path("trail/", api.TrailExportView.as_view(), name="trail-export"),
    path("trail/public-key/", api.TrailPublicKeyView.as_view(), name="trail-public-key"),
    # The governance dashboard's figures (gates.kpis), read by zone admins and auditors.
    path("zones/<str:coordinate>/kpis/", dashboard.ZoneKpisView.as_view(), name="zone-kpis"),
    # What the zone's answers teach it (gates.learning): hallucination types, agents, gaps.
    path(
        "zones/<str:coordinate>/learning/",
        learning_views.ZoneLearningView.as_view(),
        name="zone-learning",
    ),
    # The requery model of seed 000 §8.1 (gates.requery_model), beside the KPIs it refines.
    path(
        "zones/<str:coordinate>/requery-model/",
        learning_page.ZoneRequeryModelView.as_view(),
        name="zone-requery-model",
    ),
    # The graph gate's tau_c adapted to the reviewers' verdicts (seed 002 §9.4).
    path(
        "zones/<str:coordinate>/graph-tau/",
        learning_page.ZoneGraphTauView.as_view(),
        name="zone-graph-tau",
    ),
    path(
        "zones/<str:coordinate>/graph-tau/adopt/",
        learning_page.ZoneGraphTauAdoptView.as_view(),
        name="zone-graph-tau-adopt",
    ),
    # Threshold advice (gates.advice): tau against its human share and wrong share.
    path(
        "zones/<str:coordinate>/advice/", advice_views.ZoneAdviceView.as_view(), name="zone-advice"
    ),
    # Knowledge-base conflicts (gates.conflicts): the zone admins' work.
    path(
        "zones/<str:coordinate>/conflicts/",
        conflicts.ZoneConflictsView.as_view(),
        name="zone-conflicts-api",
    ),
    path(
        "conflicts/<int:pk>/resolve/",
        conflicts.ConflictResolveView.as_view(),
        name="conflict-resolve-api",
    ),
]
