from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from apps.graph.api import AnchorListApi, FrameDetailApi, FrameListApi, GraphCheckApi
from apps.platform import health
from apps.providers.api.views import ProviderConfigApi
from apps.retrieval.answer_api import AnswerApi
from apps.retrieval.api import MemoryTypeSearchApi, SearchApi

v1 = [
    path("", include("apps.tenancy.api.urls")),
    path("", include("apps.jobs.api.urls")),
    path("", include("apps.memory.api.urls")),
    path("", include("apps.webhooks.api.urls")),
    path("", include("apps.consent.api.urls")),
    path("", include("apps.erasure.api.urls")),
    path("", include("apps.audit.api.urls")),
    path("", include("apps.dream.urls")),
    path("", include("apps.procedural.api.urls")),
    path("", include("apps.usage.api.urls")),
    path("graph/check", GraphCheckApi.as_view(), name="graph-check"),
    path("subjects/<str:external_id>/graph/anchors", AnchorListApi.as_view(), name="graph-anchors"),
    path("subjects/<str:external_id>/graph/frames", FrameListApi.as_view(), name="graph-frames"),
    path("subjects/<str:external_id>/graph/frames/<str:frame_id>", FrameDetailApi.as_view(), name="graph-frame"),
    path("provider-config", ProviderConfigApi.as_view(), name="provider-config"),
    path("subjects/<str:external_id>/search", SearchApi.as_view(), name="subject-search"),
    path(
        "subjects/<str:external_id>/memories/<str:memory_type>/search",
        MemoryTypeSearchApi.as_view(),
        name="memories-search",
    ),
    path("subjects/<str:external_id>/answer", AnswerApi.as_view(), name="subject-answer"),
    path("schema", SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]), name="schema"),
    path(
        "docs",
        SpectacularRedocView.as_view(
            url_name="schema", template_name="platform/redoc.html", authentication_classes=[], permission_classes=[]
        ),
        name="docs",
    ),
    path(
        "docs/swagger",
        SpectacularSwaggerView.as_view(url_name="schema", authentication_classes=[], permission_classes=[]),
        name="docs-swagger",
    ),
]

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("v1/", include(v1)),
    path("console/", include("apps.console.urls")),
]

handler404 = "apps.platform.exception_handler.json_not_found"
handler500 = "apps.platform.exception_handler.json_server_error"
