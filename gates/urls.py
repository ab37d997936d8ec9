from django.urls import path

from gates import dashboard, views

urlpatterns = [
    path("queue/", views.queue, name="queue"),
    path("queue/rows/", views.queue_rows, name="queue-rows"),
    path("queue/filters/", views.filter_save, name="queue-filter-save"),
    path("queue/filters/<int:pk>/delete/", views.filter_delete, name="queue-filter-delete"),
    path("queue/decisions/<int:pk>/", views.decision_page, name="decision-page"),
    path(
        "queue/decisions/<int:pk>/<slug:action>/",
        views.decision_action,
        name="decision-action",
    ),
    path("queue/risk-flags/<int:pk>/resolve/", views.risk_flag_resolve, name="risk-flag-resolve"),
    path("zones/", views.zone_tree, name="zone-tree-page"),
    path("zones/<str:coordinate>/", views.zone_edit, name="zone-edit"),
    path("zones/<str:coordinate>/dashboard/", dashboard.zone_dashboard, name="zone-dashboard"),
    path("zones/<str:coordinate>/preview/", views.zone_preview, name="zone-preview"),
    path("zones/<str:coordinate>/roles/", views.zone_grant, name="zone-grant"),
    path("zones/<str:coordinate>/roles/<int:pk>/revoke/", views.zone_revoke, name="zone-revoke"),
]
