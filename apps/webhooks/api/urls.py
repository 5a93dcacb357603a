from django.urls import path

from apps.webhooks.api import views

urlpatterns = [
    path("webhook-event-types", views.WebhookEventTypesApi.as_view(), name="webhook-event-types"),
    path("webhook-endpoints", views.WebhookEndpointListCreateApi.as_view(), name="webhook-endpoints"),
    path("webhook-endpoints/<uuid:endpoint_id>", views.WebhookEndpointDetailApi.as_view(), name="webhook-endpoint"),
    path(
        "webhook-endpoints/<uuid:endpoint_id>/rotate-secret",
        views.WebhookEndpointRotateSecretApi.as_view(),
        name="webhook-endpoint-rotate-secret",
    ),
    path(
        "webhook-endpoints/<uuid:endpoint_id>/ping",
        views.WebhookEndpointPingApi.as_view(),
        name="webhook-endpoint-ping",
    ),
    path(
        "webhook-endpoints/<uuid:endpoint_id>/deliveries",
        views.WebhookEndpointDeliveriesApi.as_view(),
        name="webhook-endpoint-deliveries",
    ),
    path("webhook-deliveries/<uuid:delivery_id>", views.WebhookDeliveryDetailApi.as_view(), name="webhook-delivery"),
    path(
        "webhook-deliveries/<uuid:delivery_id>/replay",
        views.WebhookDeliveryReplayApi.as_view(),
        name="webhook-delivery-replay",
    ),
]
