"""Delivering webhook events: outbox fan-out, claim, send, record. Called by ``workers.webhooks``.

- Commits kick the organization's drain after commit; a burst of commits shares one queued
  drain. Beat publishes a drain for every organization with work, whatever was kicked.
- ``outbox_drain`` (in the organization's scope) fans undispatched events out into one
  delivery per subscribed, enabled endpoint (unique per event and endpoint, so a second
  drain creates nothing) and publishes a send task, after commit, for every due delivery
  not already queued.
- ``delivery_claim`` locks a due delivery with ``SELECT … FOR UPDATE SKIP LOCKED`` (only when
  pending and due), moves ``next_attempt_at`` to the end of a lease, signs the message and
  commits; ``attempt_send`` POSTs it outside any transaction; ``delivery_record`` appends the
  attempt and decides what comes next. A redelivered message, a duplicate publish or a second beat
  tick finds the delivery locked or not due and sends nothing. A worker that dies mid-attempt
  leaves the lease to expire and the attempt is made again (at least once; receivers dedupe
  by ``webhook-id``, the event id).
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db.models import Q

from apps.audit.services import audit_record
from apps.jobs import task_names
from apps.jobs.services import publish_on_commit
from apps.platform import netpolicy
from apps.platform.clock import SYSTEM_CLOCK, Clock
from apps.vault.services import EncryptedValue, vault_decrypt
from apps.webhooks import events, schedule, signing, ssrf
from apps.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookSecret

logger = logging.getLogger(__name__)

DRAIN_BATCH = 500
# A published task that has not run by then expires; a drain after the lease publishes it again.
QUEUE_LEASE = timedelta(seconds=60)
ATTEMPT_LEASE_MARGIN = timedelta(seconds=30)
# How long a queued drain suppresses further kicks should it be lost (beat covers the gap).
DRAIN_MARK_SECONDS = 10
USER_AGENT = "MIRIX-Webhooks/1.0"
# What is due, attempt times and latencies are read from this clock (tests install one that
# skips the waits of the retry schedule).
clock: Clock = SYSTEM_CLOCK


def _publish(task_name: str, kwargs: dict[str, str], *, coalesce_key: str | None = None) -> None:
    """After commit (at once outside a transaction), on the webhooks queue; a message that has
    not run within the lease expires (a drain after the lease publishes it again)."""
    publish_on_commit(
        task_name,
        kwargs=kwargs,
        queue=settings.WEBHOOKS_QUEUE,
        expires=QUEUE_LEASE.total_seconds(),
        coalesce_key=coalesce_key,
        coalesce_seconds=DRAIN_MARK_SECONDS,
    )


def _drain_mark(organization_id: uuid.UUID) -> str:
    return f"webhooks:drain-queued:{organization_id}"


def drain_publish(*, organization_id: uuid.UUID) -> None:
    """Beat: publish the organization's drain whatever the mark says."""
    _publish(task_names.WEBHOOKS_DRAIN_ORGANIZATION, {"organization_id": str(organization_id)})


def drain_on_commit(*, organization_id: uuid.UUID) -> None:
    """Kick the organization's drain once the current transaction commits, unless one is
    already queued. The drain clears the mark before it reads the outbox, so a commit that
    finds the mark set is seen by that drain's read: a burst of commits shares one drain and
    none is left waiting for beat. A lost kick only costs latency: the beat drain (which
    ignores the mark) finds the work anyway."""
    _publish(
        task_names.WEBHOOKS_DRAIN_ORGANIZATION,
        {"organization_id": str(organization_id)},
        coalesce_key=_drain_mark(organization_id),
    )


def organizations_with_due_work() -> list[uuid.UUID]:
    """A platform operation on the owner connection: organizations with undispatched events
    or due deliveries that are not queued."""
    now = clock.now()
    undispatched = (
        WebhookEvent.objects.dangerously_across_organizations()
        .filter(dispatched_at__isnull=True)
        .order_by()
        .values_list("organization_id", flat=True)
        .distinct()[:DRAIN_BATCH]
    )
    due = (
        WebhookDelivery.objects.dangerously_across_organizations()
        .filter(status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now)
        .filter(Q(queued_until__isnull=True) | Q(queued_until__lt=now))
        .order_by()
        .values_list("organization_id", flat=True)
        .distinct()[:DRAIN_BATCH]
    )
    return list(dict.fromkeys([*undispatched, *due]))


@dataclass(frozen=True)
class DrainResult:
    events_dispatched: int
    deliveries_queued: int


def outbox_drain(*, organization_id: uuid.UUID) -> DrainResult:
    """Fan out and queue, inside the organization's scope; sends are published after commit."""
    cache.delete(_drain_mark(organization_id))
    now = clock.now()
    pending_events = list(
        WebhookEvent.objects.select_for_update(skip_locked=True)
        .filter(dispatched_at__isnull=True)
        .order_by("created_at")[:DRAIN_BATCH]
    )
    if pending_events:
        endpoints = list(WebhookEndpoint.objects.filter(enabled=True))
        WebhookDelivery.objects.bulk_create(
            [
                WebhookDelivery(organization_id=organization_id, event=event, endpoint=endpoint, next_attempt_at=now)
                for event in pending_events
                for endpoint in endpoints
                if endpoint.created_at <= event.created_at and events.matches(endpoint.event_types, event.event_type)
            ],
            ignore_conflicts=True,
        )
        WebhookEvent.objects.filter(id__in=[e.id for e in pending_events]).update(dispatched_at=now)
    due = list(
        WebhookDelivery.objects.select_for_update(skip_locked=True)
        .filter(status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now)
        .filter(Q(queued_until__isnull=True) | Q(queued_until__lt=now))
        .order_by("next_attempt_at")
        .values_list("id", flat=True)[:DRAIN_BATCH]
    )
    if due:
        WebhookDelivery.objects.filter(id__in=due).update(queued_until=now + QUEUE_LEASE)
        for delivery_id in due:
            _publish(
                task_names.WEBHOOKS_SEND, {"organization_id": str(organization_id), "delivery_id": str(delivery_id)}
            )
    if DRAIN_BATCH in (len(pending_events), len(due)):
        drain_on_commit(organization_id=organization_id)  # more is waiting
    return DrainResult(events_dispatched=len(pending_events), deliveries_queued=len(due))


def message_body(*, event: WebhookEvent, endpoint: WebhookEndpoint) -> bytes:
    """``{"type", "timestamp", "data"}``; ``data.content`` only for endpoints that opted in."""
    data = dict(event.payload)
    if event.content is not None and events.matches(endpoint.include_content_for, event.event_type):
        data["content"] = event.content
    message = {"type": event.event_type, "timestamp": event.created_at.isoformat(), "data": data}
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def active_secrets(*, endpoint: WebhookEndpoint, at: datetime) -> list[str]:
    """Every secret still signing at ``at``, newest first (two during a rotation overlap)."""
    rows = (
        WebhookSecret.objects.filter(endpoint=endpoint)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=at))
        .order_by("-created_at")
    )
    return [
        vault_decrypt(
            organization_id=row.organization_id,
            entry_id=row.id,
            value=EncryptedValue(
                ciphertext=bytes(row.ciphertext), nonce=bytes(row.nonce), data_key_version=row.data_key_version
            ),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class ClaimedAttempt:
    organization_id: uuid.UUID
    delivery_id: uuid.UUID
    endpoint_id: uuid.UUID
    number: int
    url: str
    headers: dict[str, str]
    body: bytes
    started_at: datetime


def delivery_claim(*, delivery_id: uuid.UUID) -> ClaimedAttempt | None:
    """Claim a due delivery for one attempt (in the organization's scope). None when another
    worker holds it, it finished, or it is not due: the caller then sends nothing."""
    now = clock.now()
    delivery = (
        WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("endpoint", "event")
        .filter(id=delivery_id, status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now)
        .first()
    )
    if delivery is None:
        return None
    endpoint = delivery.endpoint
    if not endpoint.enabled:
        _fail_pending(endpoint=endpoint)
        return None
    delivery.attempt_count += 1
    delivery.attempts_in_round += 1
    delivery.next_attempt_at = now + timedelta(seconds=settings.WEBHOOKS_TIMEOUT_SECONDS) + ATTEMPT_LEASE_MARGIN
    delivery.save(update_fields=["attempt_count", "attempts_in_round", "next_attempt_at"])
    body = message_body(event=delivery.event, endpoint=endpoint)
    signed = signing.signed_headers(
        secrets=active_secrets(endpoint=endpoint, at=now),
        message_id=str(delivery.event_id),
        timestamp=int(now.timestamp()),
        body=body,
    )
    return ClaimedAttempt(
        organization_id=delivery.organization_id,
        delivery_id=delivery.id,
        endpoint_id=endpoint.id,
        number=delivery.attempt_count,
        url=endpoint.url,
        headers={"content-type": "application/json", "user-agent": USER_AGENT, **signed},
        body=body,
        started_at=now,
    )


@dataclass(frozen=True)
class AttemptResult:
    latency_ms: int
    status_code: int | None = None
    retry_after: str | None = None
    response_snippet: str = ""
    error: str = ""


def attempt_send(claim: ClaimedAttempt) -> AttemptResult:
    """One POST, outside any transaction, through the SSRF-safe client."""
    started = clock.monotonic()
    try:
        response = ssrf.post_checked(
            claim.url,
            headers=claim.headers,
            body=claim.body,
            timeout=settings.WEBHOOKS_TIMEOUT_SECONDS,
            allow_loopback=settings.WEBHOOKS_ALLOW_LOOPBACK,
        )
    except netpolicy.OutboundError as exc:
        return AttemptResult(latency_ms=_elapsed_ms(started), error=f"{exc.code}: {exc}"[:300])
    return AttemptResult(
        latency_ms=_elapsed_ms(started),
        status_code=response.status,
        retry_after=response.retry_after,
        response_snippet=response.body_snippet,
    )


def _elapsed_ms(started: float) -> int:
    return round((clock.monotonic() - started) * 1000)


def delivery_record(*, claim: ClaimedAttempt, result: AttemptResult) -> schedule.Verdict | None:
    """Append the attempt and schedule what comes next (in the organization's scope). None when
    the delivery moved on meanwhile (replayed, disabled, re-claimed after the lease)."""
    now = clock.now()
    WebhookAttempt.objects.create(
        organization_id=claim.organization_id,
        delivery_id=claim.delivery_id,
        number=claim.number,
        started_at=claim.started_at,
        latency_ms=result.latency_ms,
        status_code=result.status_code,
        response_snippet=result.response_snippet,
        error=result.error,
    )
    delivery = (
        WebhookDelivery.objects.select_for_update(of=("self",))
        .select_related("endpoint")
        .filter(id=claim.delivery_id, status=WebhookDelivery.Status.PENDING, attempt_count=claim.number)
        .first()
    )
    if delivery is None:
        return None
    decision = schedule.decide(
        status_code=result.status_code,
        attempts_in_round=delivery.attempts_in_round,
        schedule=settings.WEBHOOKS_RETRY_SCHEDULE,
        retry_after=schedule.retry_after_seconds(result.retry_after, now=now),
    )
    delivery.last_status_code = result.status_code
    delivery.queued_until = None
    delivery.next_attempt_at = None
    if decision.verdict is schedule.Verdict.DELIVERED:
        delivery.status = WebhookDelivery.Status.SUCCEEDED
        delivery.delivered_at = now
    elif decision.verdict is schedule.Verdict.RETRY:
        delivery.next_attempt_at = now + timedelta(seconds=decision.delay_seconds or 0)
    else:
        delivery.status = WebhookDelivery.Status.FAILED
        delivery.failure_reason = (
            "The endpoint answered 410 Gone."
            if decision.verdict is schedule.Verdict.GONE
            else f"All {delivery.attempts_in_round} attempts of the retry schedule failed."
        )
    delivery.save(
        update_fields=[
            "status",
            "next_attempt_at",
            "queued_until",
            "last_status_code",
            "failure_reason",
            "delivered_at",
        ]
    )
    if delivery.status == WebhookDelivery.Status.FAILED:
        _disable_automatically(endpoint=delivery.endpoint, delivery=delivery)
    return decision.verdict


def _fail_pending(*, endpoint: WebhookEndpoint) -> int:
    return WebhookDelivery.objects.filter(endpoint=endpoint, status=WebhookDelivery.Status.PENDING).update(
        status=WebhookDelivery.Status.FAILED,
        next_attempt_at=None,
        queued_until=None,
        failure_reason="The endpoint was disabled before this delivery succeeded.",
    )


def endpoint_disable(*, endpoint: WebhookEndpoint, reason: str) -> None:
    """Stop delivering to ``endpoint``: its pending deliveries fail (they can be replayed once
    it is enabled again)."""
    endpoint.enabled = False
    endpoint.disabled_reason = reason[:300]
    endpoint.disabled_at = clock.now()
    endpoint.save(update_fields=["enabled", "disabled_reason", "disabled_at", "updated_at"])
    _fail_pending(endpoint=endpoint)


def _disable_automatically(*, endpoint: WebhookEndpoint, delivery: WebhookDelivery) -> None:
    """Like a failed job: an audit entry, a structured log, and the reason on the endpoint."""
    endpoint_disable(endpoint=endpoint, reason=f"Disabled automatically: {delivery.failure_reason}")
    audit_record(
        organization_id=endpoint.organization_id,
        action="webhook_endpoint.disabled",
        target_ids=[str(endpoint.id), str(delivery.id)],
    )
    logger.error(
        "webhook endpoint disabled",
        extra={
            "organization_id": str(endpoint.organization_id),
            "endpoint_id": str(endpoint.id),
            "delivery_id": str(delivery.id),
            "last_status_code": delivery.last_status_code,
            "reason": delivery.failure_reason,
        },
    )
