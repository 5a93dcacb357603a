"""Webhook delivery tasks: the beat drain, the per-organization drain, one send, the prune.

Tasks take ids and run the delivery services in the organization's scope. Idempotency lives
in the services (unique deliveries, ``SKIP LOCKED`` claims guarded by state and
``next_attempt_at``); retries of failed sends follow the stored schedule through the drain,
never Celery ETAs (which the broker would redeliver past its visibility timeout).
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.audit.services import acting_as
from apps.jobs import task_names
from apps.tenancy.scope import organization_scope
from apps.webhooks import delivery
from apps.webhooks.models import WebhookEvent, WebhookSecret
from mirix_saas.celery import app
from workers.base import RECOVERABLE_ERRORS

logger = logging.getLogger(__name__)


@app.task(name=task_names.WEBHOOKS_DRAIN, acks_late=True, soft_time_limit=50, time_limit=60)
def drain_outbox() -> int:
    """Beat, every few seconds: kick the drain of every organization with work (a kick lost
    between a commit and its publish is found here)."""
    organization_ids = delivery.organizations_with_due_work()
    for organization_id in organization_ids:
        delivery.drain_publish(organization_id=organization_id)
    return len(organization_ids)


@app.task(
    name=task_names.WEBHOOKS_DRAIN_ORGANIZATION,
    acks_late=True,
    soft_time_limit=100,
    time_limit=120,
    autoretry_for=RECOVERABLE_ERRORS,
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=3,
)
def drain_organization(*, organization_id: str) -> int:
    with organization_scope(uuid.UUID(organization_id)), acting_as(f"task:{task_names.WEBHOOKS_DRAIN_ORGANIZATION}"):
        result = delivery.outbox_drain(organization_id=uuid.UUID(organization_id))
    if result.events_dispatched or result.deliveries_queued:
        logger.info(
            "webhook outbox drained",
            extra={
                "organization_id": organization_id,
                "events_dispatched": result.events_dispatched,
                "deliveries_queued": result.deliveries_queued,
            },
        )
    return result.deliveries_queued


@app.task(
    name=task_names.WEBHOOKS_SEND,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.WEBHOOKS_TIMEOUT_SECONDS + 30,
    time_limit=settings.WEBHOOKS_TIMEOUT_SECONDS + 60,
    autoretry_for=RECOVERABLE_ERRORS,
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=3,
)
def send_delivery(*, organization_id: str, delivery_id: str) -> str | None:
    org_id = uuid.UUID(organization_id)
    log = {"organization_id": organization_id, "delivery_id": delivery_id}
    with organization_scope(org_id), acting_as(f"task:{task_names.WEBHOOKS_SEND}"):
        claim = delivery.delivery_claim(delivery_id=uuid.UUID(delivery_id))
    if claim is None:
        logger.info("webhook delivery not due or taken", extra=log)
        return None
    result = delivery.attempt_send(claim)
    with organization_scope(org_id), acting_as(f"task:{task_names.WEBHOOKS_SEND}"):
        verdict = delivery.delivery_record(claim=claim, result=result)
    logger.info(
        "webhook attempt",
        extra={
            **log,
            "attempt": claim.number,
            "status_code": result.status_code,
            "error": result.error,
            "latency_ms": result.latency_ms,
            "verdict": verdict,
        },
    )
    return verdict


@app.task(name=task_names.WEBHOOKS_PRUNE, acks_late=True, soft_time_limit=500, time_limit=600)
def prune_events() -> int:
    """Beat, hourly, a platform operation: events (and their payloads, content, deliveries and
    attempts) past the retention period and secrets past their overlap are deleted."""
    now = timezone.now()
    cutoff = now - timedelta(days=settings.WEBHOOKS_EVENT_RETENTION_DAYS)
    deleted, _ = WebhookEvent.objects.dangerously_across_organizations().filter(created_at__lt=cutoff).delete()
    WebhookSecret.objects.dangerously_across_organizations().filter(expires_at__lt=now).delete()
    return deleted
