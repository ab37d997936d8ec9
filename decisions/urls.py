from django.urls import path

from decisions import (
    api_calibration,
    api_decisions,
    api_discussion,
    api_periodic,
    api_rereview,
    api_reviews,
    api_weights,
)

urlpatterns = [
    path("decisions/", api_decisions.DecisionListView.as_view(), name="decisions"),
    path("decisions/<int:pk>/", api_decisions.DecisionDetailView.as_view(), name="decision"),
    path("ask/", api_decisions.AskView.as_view(), name="ask"),
    path("reviews/export/", api_reviews.ReviewsExportView.as_view(), name="reviews-export"),
    *[
        path(
            f"decisions/<int:pk>/{action}/",
            api_decisions.DecisionActionView.as_view(action=action),
            name=f"decision-{action}",
        )
        for action in ("claim", "release", "approve", "reject", "override", "send-back")
    ],
    path(
        "periodic-reviews/",
        api_periodic.PeriodicReviewListView.as_view(),
        name="periodic-reviews",
    ),
    *[
        path(
            f"periodic-reviews/<int:pk>/{action}/",
            api_periodic.ACTION_VIEWS[action].as_view(),
            name=f"periodic-review-{action}",
        )
        for action in ("claim", "release", "close")
    ],
    path(
        "zones/<str:coordinate>/confidence-weights/",
        api_weights.ConfidenceWeightsView.as_view(),
        name="zone-confidence-weights",
    ),
    path(
        "zones/<str:coordinate>/confidence-weights/adopt/",
        api_weights.ConfidenceWeightsAdoptView.as_view(),
        name="zone-confidence-weights-adopt",
    ),
    path(
        "zones/<str:coordinate>/confidence-weights/rollback/",
        api_weights.ConfidenceWeightsRollbackView.as_view(),
        name="zone-confidence-weights-rollback",
    ),
    path(
        "zones/<str:coordinate>/calibration/",
        api_calibration.ZoneCalibrationListView.as_view(),
        name="zone-calibrations",
    ),
    path(
        "zones/<str:coordinate>/calibration/<int:version>/preview/",
        api_calibration.ZoneCalibrationPreviewView.as_view(),
        name="zone-calibration-preview",
    ),
    path(
        "zones/<str:coordinate>/calibration/<int:version>/adopt/",
        api_calibration.ZoneCalibrationAdoptView.as_view(),
        name="zone-calibration-adopt",
    ),
    path("rereviews/", api_rereview.ReReviewListView.as_view(), name="rereviews"),
    path(
        "rereviews/<int:pk>/close/", api_rereview.ReReviewCloseView.as_view(), name="rereview-close"
    ),
    path(
        "decisions/<int:pk>/comments/",
        api_discussion.DecisionCommentsView.as_view(),
        name="decision-comments",
    ),
    path(
        "decisions/<int:pk>/assign/",
        api_discussion.DecisionAssignView.as_view(),
        name="decision-assign",
    ),
    path("decisions/bulk/", api_discussion.DecisionsBulkView.as_view(), name="decisions-bulk"),
]
