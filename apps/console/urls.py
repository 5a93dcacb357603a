"""The console's pages. Every organization page takes ``org_id`` and subclasses
``OrganizationView``; tests/console iterates these patterns to prove none escapes the access check."""

from __future__ import annotations

from django.urls import include, path

from apps.console.views import auth, governance, keys, learning, organizations, subjects, webhooks

app_name = "console"

organization = [
    path("", organizations.OrganizationDetailView.as_view(), name="organization"),
    path("offboard/", organizations.OrganizationOffboardView.as_view(), name="organization-offboard"),
    path("keys/", keys.ApiKeyListView.as_view(), name="api-keys"),
    path("keys/<uuid:api_key_id>/revoke/", keys.ApiKeyRevokeView.as_view(), name="api-key-revoke"),
    path("keys/<uuid:api_key_id>/rotate/", keys.ApiKeyRotateView.as_view(), name="api-key-rotate"),
    path("subjects/", subjects.SubjectListView.as_view(), name="subjects"),
    path("subjects/<uuid:subject_id>/", subjects.SubjectMemoryView.as_view(), name="subject"),
    path("subjects/<uuid:subject_id>/graph/", subjects.SubjectGraphView.as_view(), name="subject-graph"),
    path(
        "subjects/<uuid:subject_id>/graph/frames/<str:frame_id>/",
        subjects.FrameDetailView.as_view(),
        name="subject-frame",
    ),
    path("subjects/<uuid:subject_id>/skills/", learning.SubjectSkillsView.as_view(), name="subject-skills"),
    path(
        "subjects/<uuid:subject_id>/dream-merges/",
        learning.SubjectDreamMergesView.as_view(),
        name="subject-dream-merges",
    ),
    path(
        "subjects/<uuid:subject_id>/dream-merges/<uuid:merge_id>/undo/",
        learning.DreamMergeUndoView.as_view(),
        name="dream-merge-undo",
    ),
    path("subjects/<uuid:subject_id>/consent/", subjects.SubjectConsentView.as_view(), name="subject-consent"),
    path("subjects/<uuid:subject_id>/erase/", subjects.SubjectEraseView.as_view(), name="subject-erase"),
    path("subjects/<uuid:subject_id>/export/", subjects.SubjectExportView.as_view(), name="subject-export"),
    path("consent/", subjects.ConsentRegistryView.as_view(), name="consent"),
    path("audit/", governance.AuditLogView.as_view(), name="audit"),
    path("audit/chain/", governance.AuditChainView.as_view(), name="audit-chain"),
    path("erasure/", governance.ErasureListView.as_view(), name="erasures"),
    path("erasure/<uuid:request_id>/", governance.ErasureDetailView.as_view(), name="erasure-detail"),
    path("erasure/<uuid:request_id>/receipt.json", governance.ErasureReceiptView.as_view(), name="erasure-receipt"),
    path("jobs/", governance.JobListView.as_view(), name="jobs"),
    path("jobs/retry-indexing/", governance.IndexingRetryView.as_view(), name="jobs-retry-indexing"),
    path("jobs/<uuid:job_id>/retry/", governance.JobRetryView.as_view(), name="job-retry"),
    path("webhooks/", webhooks.WebhookEndpointListView.as_view(), name="webhooks"),
    path("webhooks/<uuid:endpoint_id>/", webhooks.WebhookEndpointDetailView.as_view(), name="webhook-endpoint"),
    path(
        "webhooks/<uuid:endpoint_id>/enabled/",
        webhooks.WebhookEndpointEnableView.as_view(),
        name="webhook-endpoint-enabled",
    ),
    path(
        "webhooks/<uuid:endpoint_id>/rotate/",
        webhooks.WebhookEndpointRotateView.as_view(),
        name="webhook-endpoint-rotate",
    ),
    path("webhooks/<uuid:endpoint_id>/ping/", webhooks.WebhookEndpointPingView.as_view(), name="webhook-endpoint-ping"),
    path(
        "webhooks/deliveries/<uuid:delivery_id>/replay/",
        webhooks.WebhookDeliveryReplayView.as_view(),
        name="webhook-delivery-replay",
    ),
]

urlpatterns = [
    path("", organizations.OrganizationListView.as_view(), name="index"),
    path("login/", auth.LoginView.as_view(), name="login"),
    path("logout/", auth.LogoutView.as_view(), name="logout"),
    path("offboarded/", organizations.OffboardedListView.as_view(), name="offboarded"),
    path("offboarded/<uuid:request_id>/", organizations.OffboardedDetailView.as_view(), name="offboarded-detail"),
    path(
        "offboarded/<uuid:request_id>/receipt.json",
        organizations.OffboardedReceiptView.as_view(),
        name="offboarded-receipt",
    ),
    path("orgs/<uuid:org_id>/", include(organization)),
]
