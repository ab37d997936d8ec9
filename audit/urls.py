"""The auditor's pages (under /audit/), the trail export API (`api`, under /api/v1/) and the
zone's governance figures there too (`gates.dashboard`)."""

from django.urls import URLPattern, path

from audit import api, views
from gates import advice_views, conflicts, dashboard, learning_views

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
