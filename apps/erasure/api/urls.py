from django.urls import path

from apps.erasure.api import views

urlpatterns = [
    path("subjects/<str:external_id>", views.SubjectDetailApi.as_view(), name="subject-detail"),
    path("erasure-requests/<uuid:erasure_request_id>", views.ErasureRequestDetailApi.as_view(), name="erasure-request"),
    path("subjects/<str:external_id>/export", views.SubjectExportApi.as_view(), name="subject-export"),
    path("subjects/<str:external_id>/memories/delete", views.MemoryDeleteApi.as_view(), name="memories-delete"),
    path(
        "subjects/<str:external_id>/memories/<str:memory_type>/<uuid:record_id>",
        views.MemoryRowApi.as_view(),
        name="memory-detail",
    ),
]
