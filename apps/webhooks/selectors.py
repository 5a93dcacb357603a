"""Reads of webhook endpoints and deliveries, in the current organization's scope."""

from __future__ import annotations

import uuid
from datetime import datetime

from django.db.models import Prefetch, Q, QuerySet

from apps.platform.errors import NotFound
from apps.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


def webhook_endpoint_list() -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.order_by("created_at", "id")


def webhook_endpoint_get(*, endpoint_id: uuid.UUID) -> WebhookEndpoint:
    endpoint = WebhookEndpoint.objects.filter(id=endpoint_id).first()
    if endpoint is None:
        raise NotFound("Webhook endpoint not found.")
    return endpoint


def _with_attempts(deliveries: QuerySet[WebhookDelivery]) -> QuerySet[WebhookDelivery]:
    return deliveries.select_related("event").prefetch_related(
        Prefetch("attempts", queryset=WebhookAttempt.objects.order_by("number"))
    )


def webhook_delivery_list(
    *, endpoint_id: uuid.UUID, status: str | None = None, before: tuple[datetime, uuid.UUID] | None = None
) -> QuerySet[WebhookDelivery]:
    """The endpoint's deliveries, newest first, each with its attempts."""
    webhook_endpoint_get(endpoint_id=endpoint_id)
    deliveries = WebhookDelivery.objects.filter(endpoint_id=endpoint_id)
    if status:
        deliveries = deliveries.filter(status=status)
    if before is not None:
        created_at, delivery_id = before
        deliveries = deliveries.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=delivery_id))
    return _with_attempts(deliveries).order_by("-created_at", "-id")


def webhook_delivery_get(*, delivery_id: uuid.UUID) -> WebhookDelivery:
    delivery = _with_attempts(WebhookDelivery.objects.filter(id=delivery_id)).first()
    if delivery is None:
        raise NotFound("Webhook delivery not found.")
    return delivery
