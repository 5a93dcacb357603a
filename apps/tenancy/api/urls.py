from django.urls import path

from apps.tenancy.api import views

urlpatterns = [
    path("organization", views.OrganizationSettingsApi.as_view(), name="organization"),
    path("subjects", views.SubjectListCreateApi.as_view(), name="subjects"),
    path("api-keys", views.ApiKeyListCreateApi.as_view(), name="api-keys"),
    path("api-keys/<uuid:api_key_id>/revoke", views.ApiKeyRevokeApi.as_view(), name="api-key-revoke"),
    path("api-keys/<uuid:api_key_id>/rotate", views.ApiKeyRotateApi.as_view(), name="api-key-rotate"),
]
