"""Webhook endpoints, their secrets, the event outbox, deliveries and attempts.

An event row is the outbox: it commits in the transaction of the change it reports, and the
drain fans it out into one delivery per subscribed endpoint (unique per event and endpoint).
Each try of a delivery appends an attempt row.
"""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from apps.tenancy.models import Subject, TenantModel


class WebhookEndpoint(TenantModel):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    url = models.CharField(max_length=2000)
    description = models.CharField(max_length=500, blank=True, default="")
    event_types = ArrayField(models.CharField(max_length=64))  # event types, or ["*"]
    include_content_for = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    enabled = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=300, blank=True, default="")
    disabled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "webhooks_endpoint"
        indexes = [models.Index(fields=["organization", "created_at", "id"], name="whendpoint_org_created")]

    def __str__(self) -> str:
        return f"{self.url} ({'enabled' if self.enabled else 'disabled'})"


class WebhookSecret(TenantModel):
    """A signing secret, sealed with the organization's vault data key (bound to this row's id).
    A rotated-out secret keeps signing until ``expires_at``."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="secrets")
    ciphertext = models.BinaryField()
    nonce = models.BinaryField()
    data_key_version = models.PositiveIntegerField()
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "webhooks_secret"

    def __str__(self) -> str:
        return f"secret {self.id} of {self.endpoint_id}"


class WebhookEvent(TenantModel):
    """The outbox row. ``content`` (memory text) is kept only when an endpoint opted in to it;
    erasing the subject deletes the event, its deliveries and attempts."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    event_type = models.CharField(max_length=64)
    subject = models.ForeignKey(Subject, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    payload = models.JSONField(encoder=DjangoJSONEncoder)
    content = models.JSONField(encoder=DjangoJSONEncoder, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "webhooks_event"
        indexes = [
            models.Index(
                fields=["created_at"], condition=models.Q(dispatched_at__isnull=True), name="whevent_undispatched"
            ),
            models.Index(fields=["organization", "created_at"], name="whevent_org_created"),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.id}"


class WebhookDelivery(TenantModel):
    class Status(models.TextChoices):
        PENDING = "pending"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempt_count = models.PositiveIntegerField(default=0)
    # Attempts since the delivery was (re)armed: the position in the retry schedule.
    attempts_in_round = models.PositiveIntegerField(default=0)
    # When the next attempt may start; while an attempt runs, the end of its lease.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # Set when a send task is published, so the next drain tick does not publish it again.
    queued_until = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    failure_reason = models.CharField(max_length=300, blank=True, default="")
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "webhooks_delivery"
        constraints = [
            models.UniqueConstraint(fields=["event", "endpoint"], name="whdelivery_event_endpoint_unique"),
        ]
        indexes = [
            models.Index(fields=["next_attempt_at"], condition=models.Q(status="pending"), name="whdelivery_due"),
            models.Index(fields=["endpoint", "created_at", "id"], name="whdelivery_endpoint_created"),
        ]

    def __str__(self) -> str:
        return f"delivery {self.id} ({self.status})"


class WebhookAttempt(TenantModel):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    latency_ms = models.PositiveIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_snippet = models.CharField(max_length=500, blank=True, default="")
    error = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        db_table = "webhooks_attempt"
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="whattempt_number_unique")]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}"
