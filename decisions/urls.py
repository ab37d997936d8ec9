from django.urls import path

from decisions import api_decisions

urlpatterns = [
    path("decisions/", api_decisions.DecisionListView.as_view(), name="decisions"),
    path("decisions/<int:pk>/", api_decisions.DecisionDetailView.as_view(), name="decision"),
    path("ask/", api_decisions.AskView.as_view(), name="ask"),
    *[
        path(
            f"decisions/<int:pk>/{action}/",
            api_decisions.DecisionActionView.as_view(action=action),
            name=f"decision-{action}",
        )
        for action in ("claim", "release", "approve", "reject", "override")
    ],
]
