"""Webhook events and endpoints: what the product, the API and the console call.

``webhook_event_emit`` is the one way a capability reports an event. Call it inside the
transaction of the change it reports: it writes an outbox row in that transaction and kicks
the organization's drain after commit (never a publish inside the transaction); the beat
drain finds whatever a lost kick missed.

Endpoint services take the organization explicitly and run in its scope, so the API and the
console call them the same way. A secret is returned once, at creation or rotation, and
stored only sealed by the organization's vault data key.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from apps.platform import netpolicy
from apps.platform.errors import Conflict, MissingTenantScope, NotFound, ValidationFailed
from apps.tenancy.scope import current_organization_id, organization_scope
from apps.vault.services import vault_encrypt
from apps.webhooks import events, signing
from apps.webhooks.delivery import drain_on_commit, endpoint_disable
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookSecret


def webhook_event_emit(
    *,
    organization_id: uuid.UUID,
    event_type: str,
    payload: dict[str, Any],
    content: dict[str, Any] | None = None,
    subject_id: uuid.UUID | None = None,
) -> WebhookEvent | None:
    """Record an event in the outbox, in the caller's transaction and organization scope.

    ``payload`` carries ids and summaries; ``content`` (memory text) is kept only if an
    endpoint opted in to it for this event type, and only such endpoints receive it.
    ``subject_id`` names the subject whose data the event carries: erasing the subject
    deletes the event. Nothing is written when no enabled endpoint subscribes.
    """
    if not events.is_known(event_type):
        raise ValueError(f"unknown webhook event type {event_type!r}")
    if "content" in payload:
        raise ValueError("memory text goes in `content`, not in the payload")
    if current_organization_id() != organization_id:
        raise MissingTenantScope("webhook_event_emit runs inside organization_scope(organization_id)")
    opted_in = list(
        WebhookEndpoint.objects.filter(enabled=True, event_types__overlap=[event_type, events.ALL]).values_list(
            "include_content_for", flat=True
        )
    )
    if not opted_in:
        return None
    keep_content = content is not None and any(events.matches(filters, event_type) for filters in opted_in)
    event = WebhookEvent.objects.create(
        organization_id=organization_id,
        event_type=event_type,
        subject_id=subject_id,
        payload=payload,
        content=content if keep_content else None,
    )
    drain_on_commit(organization_id=organization_id)
    return event


@dataclass(frozen=True)
class IssuedSecret:
    endpoint: WebhookEndpoint
    secret: str  # shown once; stored only sealed
    previous_secret_expires_at: datetime | None = None


def _checked_url(url: str) -> str:
    try:
        netpolicy.target_parse(url, allow_loopback=settings.WEBHOOKS_ALLOW_LOOPBACK)
    except netpolicy.OutboundError as exc:
        raise ValidationFailed(str(exc), details={"url": [str(exc)]}) from exc
    return url


def _checked_filter(field: str, values: Sequence[str], *, required: bool) -> list[str]:
    if required and not values:
        raise ValidationFailed(f"{field} must list at least one event type, or '*'.", details={field: ["empty"]})
    unknown = sorted({v for v in values if v != events.ALL and not events.is_known(v)})
    if unknown:
        raise ValidationFailed(
            f"{field} names unknown event types {unknown}; known: {sorted(events.EVENT_TYPES)} or '*'.",
            details={field: unknown},
        )
    return [events.ALL] if events.ALL in values else sorted(set(values))


def _secret_create(*, endpoint: WebhookEndpoint) -> str:
    secret = signing.secret_generate()
    row = WebhookSecret(organization_id=endpoint.organization_id, endpoint=endpoint)
    sealed = vault_encrypt(organization_id=endpoint.organization_id, entry_id=row.id, plaintext=secret)
    row.ciphertext, row.nonce, row.data_key_version = sealed.ciphertext, sealed.nonce, sealed.data_key_version
    row.save(force_insert=True)
    return secret


def _endpoint_locked(endpoint_id: uuid.UUID) -> WebhookEndpoint:
    endpoint = WebhookEndpoint.objects.select_for_update().filter(id=endpoint_id).first()
    if endpoint is None:
        raise NotFound("Webhook endpoint not found.")
    return endpoint


def webhook_endpoint_create(
    *,
    organization_id: uuid.UUID,
    url: str,
    event_types: Sequence[str],
    include_content_for: Sequence[str] = (),
    description: str = "",
    enabled: bool = True,
) -> IssuedSecret:
    endpoint = WebhookEndpoint(
        organization_id=organization_id,
        url=_checked_url(url),
        event_types=_checked_filter("event_types", event_types, required=True),
        include_content_for=_checked_filter("include_content_for", include_content_for, required=False),
        description=description,
        enabled=enabled,
    )
    with organization_scope(organization_id):
        limit = settings.WEBHOOKS_MAX_ENDPOINTS_PER_ORGANIZATION
        if WebhookEndpoint.objects.count() >= limit:
            raise Conflict(f"An organization has at most {limit} webhook endpoints; delete one first.")
        endpoint.save(force_insert=True)
        secret = _secret_create(endpoint=endpoint)
    return IssuedSecret(endpoint=endpoint, secret=secret)


def webhook_endpoint_update(
    *,
    organization_id: uuid.UUID,
    endpoint_id: uuid.UUID,
    url: str | None = None,
    event_types: Sequence[str] | None = None,
    include_content_for: Sequence[str] | None = None,
    description: str | None = None,
    enabled: bool | None = None,
) -> WebhookEndpoint:
    """Change what is given. Enabling clears the disabled reason; disabling fails the
    endpoint's pending deliveries (replay them once it is enabled again)."""
    checked_url = _checked_url(url) if url is not None else None
    checked_types = _checked_filter("event_types", event_types, required=True) if event_types is not None else None
    checked_content = (
        _checked_filter("include_content_for", include_content_for, required=False)
        if include_content_for is not None
        else None
    )
    with organization_scope(organization_id):
        endpoint = _endpoint_locked(endpoint_id)
        endpoint.url = checked_url or endpoint.url
        endpoint.event_types = checked_types or endpoint.event_types
        endpoint.include_content_for = checked_content if checked_content is not None else endpoint.include_content_for
        endpoint.description = description if description is not None else endpoint.description
        if enabled and not endpoint.enabled:
            endpoint.enabled, endpoint.disabled_reason, endpoint.disabled_at = True, "", None
        endpoint.save()
        if enabled is False and endpoint.enabled:
            endpoint_disable(endpoint=endpoint, reason="Disabled by the organization.")
    return endpoint


def webhook_endpoint_delete(*, organization_id: uuid.UUID, endpoint_id: uuid.UUID) -> None:
    """Delete the endpoint with its secrets, deliveries and attempts."""
    with organization_scope(organization_id):
        deleted, _ = WebhookEndpoint.objects.filter(id=endpoint_id).delete()
    if not deleted:
        raise NotFound("Webhook endpoint not found.")


def webhook_endpoint_rotate_secret(
    *, organization_id: uuid.UUID, endpoint_id: uuid.UUID, overlap: timedelta | None = None
) -> IssuedSecret:
    """Issue a new secret; the current ones keep signing (alongside it) for ``overlap`` only."""
    overlap = overlap if overlap is not None else timedelta(seconds=settings.WEBHOOKS_ROTATION_OVERLAP_SECONDS)
    with organization_scope(organization_id):
        endpoint = _endpoint_locked(endpoint_id)
        now = timezone.now()
        cutoff = now + overlap
        secrets = WebhookSecret.objects.filter(endpoint=endpoint)
        secrets.filter(expires_at__lte=now).delete()
        secrets.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=cutoff)).update(expires_at=cutoff)
        secret = _secret_create(endpoint=endpoint)
    return IssuedSecret(endpoint=endpoint, secret=secret, previous_secret_expires_at=cutoff)


def webhook_endpoint_ping(*, organization_id: uuid.UUID, endpoint_id: uuid.UUID) -> WebhookDelivery:
    """A ``webhook.ping`` event delivered to this endpoint only, signed and retried like any other."""
    with organization_scope(organization_id):
        endpoint = WebhookEndpoint.objects.filter(id=endpoint_id).first()
        if endpoint is None:
            raise NotFound("Webhook endpoint not found.")
        if not endpoint.enabled:
            raise Conflict("The endpoint is disabled; enable it before pinging it.")
        now = timezone.now()
        event = WebhookEvent.objects.create(
            organization_id=organization_id,
            event_type=events.PING,
            payload={"endpoint_id": str(endpoint.id)},
            dispatched_at=now,
        )
        delivery = WebhookDelivery.objects.create(
            organization_id=organization_id, event=event, endpoint=endpoint, next_attempt_at=now
        )
        drain_on_commit(organization_id=organization_id)
    return delivery


def webhook_delivery_replay(*, organization_id: uuid.UUID, delivery_id: uuid.UUID) -> WebhookDelivery:
    """Send a finished delivery again, now, with a fresh retry schedule and the same webhook-id."""
    with organization_scope(organization_id):
        delivery = (
            WebhookDelivery.objects.select_for_update(of=("self",))
            .select_related("endpoint", "event")
            .filter(id=delivery_id)
            .first()
        )
        if delivery is None:
            raise NotFound("Webhook delivery not found.")
        if delivery.status == WebhookDelivery.Status.PENDING:
            raise Conflict("The delivery is still scheduled; replay it once it has succeeded or failed.")
        if not delivery.endpoint.enabled:
            raise Conflict("The endpoint is disabled; enable it before replaying its deliveries.")
        delivery.status = WebhookDelivery.Status.PENDING
        delivery.attempts_in_round = 0
        delivery.next_attempt_at = timezone.now()
        delivery.queued_until = None
        delivery.failure_reason = ""
        delivery.delivered_at = None
        delivery.save(
            update_fields=[
                "status",
                "attempts_in_round",
                "next_attempt_at",
                "queued_until",
                "failure_reason",
                "delivered_at",
            ]
        )
        drain_on_commit(organization_id=organization_id)
    return delivery
