from django.urls import path

from coordinates import api

urlpatterns = [
    path("zones/", api.ZoneTreeView.as_view(), name="zone-tree"),
    path("zones/<str:coordinate>/policy/", api.ZonePolicyView.as_view(), name="zone-policy"),
]
