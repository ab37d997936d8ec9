from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from audit import urls as audit_urls
from graph import urls as graph_urls
from maria import errors, health, metrics, views

api_v1: list[URLPattern | URLResolver] = [
    path("", include("coordinates.urls")),
    path("", include("evidence.urls")),
    path("", include("decisions.urls")),
    path("", include(audit_urls.api_urlpatterns)),
    path("graph/", include("graph.urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
]

# A page no URL matches is Django's 404 page (JSON under /api/ when a view raises Http404).
handler404 = "maria.errors.page_not_found"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("api/v1/", include(api_v1)),
    # Last under /api/: a path no API URL matches is a JSON 404 in every mode (DEBUG too).
    re_path(r"^api/", errors.api_not_found, name="api-not-found"),
    path("graph/", include(graph_urls.pages)),
    path("", include("gates.urls")),
    path("", include("audit.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
]
