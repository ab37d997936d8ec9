from django.urls import path

from gates import (
    calibration_page,
    conflicts,
    dashboard,
    documents_views,
    learning_page,
    learning_views,
    periodic_views,
    rereview_views,
    reviews_download,
    views,
)

urlpatterns = [
    path("queue/", views.queue, name="queue"),
    path("queue/rows/", views.queue_rows, name="queue-rows"),
    path("queue/bulk/", views.queue_bulk, name="queue-bulk"),
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
    path(
        "zones/<str:coordinate>/learning/",
        learning_views.zone_learning_page,
        name="zone-learning-page",
    ),
    path("zones/<str:coordinate>/preview/", views.zone_preview, name="zone-preview"),
    path(
        "zones/<str:coordinate>/reviews/download/",
        reviews_download.zone_reviews_download,
        name="zone-reviews-download",
    ),
    path("zones/<str:coordinate>/conflicts/", conflicts.zone_conflicts, name="zone-conflicts"),
    path(
        "zones/<str:coordinate>/conflicts/<int:pk>/resolve/",
        conflicts.conflict_resolve_page,
        name="zone-conflict-resolve",
    ),
    path(
        "zones/<str:coordinate>/calibration/",
        calibration_page.zone_calibration,
        name="zone-calibration",
    ),
    path(
        "zones/<str:coordinate>/calibration/propose/",
        calibration_page.zone_calibration_propose,
        name="zone-calibration-propose-page",
    ),
    path(
        "zones/<str:coordinate>/calibration/<int:version>/preview/",
        calibration_page.zone_calibration_preview,
        name="zone-calibration-preview-page",
    ),
    path(
        "zones/<str:coordinate>/calibration/<int:version>/adopt/",
        calibration_page.zone_calibration_adopt,
        name="zone-calibration-adopt-page",
    ),
    path("zones/<str:coordinate>/learned/", learning_page.zone_learned, name="zone-learned"),
    path(
        "zones/<str:coordinate>/learned/weights/adopt/",
        learning_page.zone_weights_adopt,
        name="zone-weights-adopt-page",
    ),
    path(
        "zones/<str:coordinate>/learned/weights/rollback/",
        learning_page.zone_weights_rollback,
        name="zone-weights-rollback-page",
    ),
    path(
        "zones/<str:coordinate>/learned/graph-tau/adopt/",
        learning_page.zone_graph_tau_adopt,
        name="zone-graph-tau-adopt-page",
    ),
    path("zones/<str:coordinate>/roles/", views.zone_grant, name="zone-grant"),
    path("zones/<str:coordinate>/roles/<int:pk>/revoke/", views.zone_revoke, name="zone-revoke"),
    path("reviews/periodic/", periodic_views.periodic_list, name="periodic-reviews-page"),
    path("reviews/periodic/<int:pk>/", periodic_views.periodic_item, name="periodic-review"),
    path(
        "reviews/periodic/<int:pk>/<slug:action>/",
        periodic_views.periodic_action,
        name="periodic-review-action",
    ),
    path("reviews/changed/", rereview_views.rereview_list, name="rereviews-page"),
    path(
        "reviews/changed/<int:pk>/close/",
        rereview_views.rereview_close,
        name="rereview-close-page",
    ),
    path("documents/", documents_views.document_list, name="documents-page"),
    path("documents/<int:pk>/", documents_views.document_page, name="document-page"),
]
