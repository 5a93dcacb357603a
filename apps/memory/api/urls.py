from django.urls import path

from apps.memory.api import views

prefix = "subjects/<str:external_id>"
urlpatterns = [
    path(f"{prefix}/memories", views.MemoryCollectionApi.as_view(), name="memories"),
    path(f"{prefix}/memories/batch", views.MemoryBatchApi.as_view(), name="memories-batch"),
    # memories/<type>/<id> itself is served by apps.erasure.api (it adds DELETE).
    path(
        f"{prefix}/memories/<str:memory_type>/<uuid:record_id>/history",
        views.MemoryHistoryApi.as_view(),
        name="memory-history",
    ),
    path(f"{prefix}/core", views.CoreBlocksApi.as_view(), name="core-blocks"),
    path(f"{prefix}/resources/<uuid:record_id>/content", views.ResourceContentApi.as_view(), name="resource-content"),
    path(f"{prefix}/vault", views.VaultListApi.as_view(), name="vault-list"),
    path(f"{prefix}/vault/<uuid:entry_id>", views.VaultEntryApi.as_view(), name="vault-entry"),
]
