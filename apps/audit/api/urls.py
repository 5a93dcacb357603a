from django.urls import path

from apps.audit.api import views

urlpatterns = [
    path("audit-log", views.AuditLogApi.as_view(), name="audit-log"),
    path("audit-log/verify", views.AuditLogVerifyApi.as_view(), name="audit-log-verify"),
]
