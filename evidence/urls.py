from django.urls import path

from evidence import api

urlpatterns = [
    path("documents/", api.DocumentListView.as_view(), name="documents"),
    path("documents/<int:pk>/", api.DocumentDetailView.as_view(), name="document-detail"),
    path("search/", api.SearchView.as_view(), name="search"),
]
