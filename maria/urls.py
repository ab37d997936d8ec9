from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from audit import urls as audit_urls
from graph import urls as graph_urls
from maria import health, metrics, views

api_v1: list[URLPattern | URLResolver] = [
    path("", include("coordinates.urls")),
    path("", include("evidence.urls")),
    path("", include("decisions.urls")),
    path("", include(audit_urls.api_urlpatterns)),
    path("graph/", include("graph.urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
]

# A path no URL matches answers JSON under /api/ (maria.errors.page_not_found).
handler404 = "maria.errors.page_not_found"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("api/v1/", include(api_v1)),
    path("graph/", include(graph_urls.pages)),
    path("", include("gates.urls")),
    path("", include("audit.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
]
