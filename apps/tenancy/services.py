from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.platform.errors import Conflict, NotFound, Unprocessable, ValidationFailed
from apps.tenancy import idempotency, keys
from apps.tenancy.lifecycle import organization_offboarded
from apps.tenancy.models import (
    EXTERNAL_ID_PATTERN,
    EXTERNAL_ID_RULE,
    ApiKey,
    IdempotencyRecord,
    Membership,
    Organization,
    Subject,
    new_graph_name,
)
from apps.tenancy.scope import organization_scope

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,98}[a-z0-9]$")


def organization_create(*, name: str, slug: str, monthly_request_quota: int | None = None) -> Organization:
    """A platform operation (owner connection): the organization row only. Its graph is
    named now and created on its first write (ADR 0050)."""
    if not _SLUG.match(slug):
        raise ValidationFailed("slug must be 3-100 lowercase letters, digits or hyphens.")
    organization = Organization(
        name=name, slug=slug, graph_name=new_graph_name(), monthly_request_quota=monthly_request_quota
    )
    try:
        with transaction.atomic(using="owner"):
            organization.save(using="owner")
    except IntegrityError as exc:
        raise Conflict(f"An organization with slug {slug!r} already exists.") from exc
    return organization


def organization_offboard(*, organization_id: uuid.UUID) -> None:
    """Drop what the lifecycle hooks keep for the organization (its graph) and every row it
    owns (cascade), as one transaction."""
    with transaction.atomic(using="owner"):
        organization = (
            Organization.objects.dangerously_across_organizations()
            .select_for_update()
            .filter(id=organization_id)
            .first()
        )
        if organization is None:
            raise NotFound("Organization not found.")
        organization_offboarded(organization)
        organization.delete(using="owner")


def subject_create(
    *,
    organization_id: uuid.UUID,
    external_id: str,
    kind: str,
    display_name: str = "",
    metadata: dict[str, Any] | None = None,
) -> Subject:
    subject = Subject(
        organization_id=organization_id,
        external_id=external_id,
        kind=kind,
        display_name=display_name,
        metadata=metadata or {},
    )
    try:
        with transaction.atomic():
            subject.save()
    except IntegrityError as exc:
        raise Conflict(f"A subject with external_id {external_id!r} already exists.") from exc
    return subject


def subject_update(
    *, subject: Subject, display_name: str | None = None, metadata: dict[str, Any] | None = None
) -> Subject:
    """Change the subject's display name and/or replace its metadata (``None``: unchanged);
    its id, external id and kind never change."""
    if display_name is None and metadata is None:
        raise ValidationFailed("Nothing to change: send display_name, metadata or both.")
    fields = []
    if display_name is not None:
        subject.display_name = display_name
        fields.append("display_name")
    if metadata is not None:
        subject.metadata = metadata
        fields.append("metadata")
    subject.save(update_fields=fields)
    return subject


def organization_settings_update(*, organization_id: uuid.UUID, subjects_created_on_write: bool) -> Organization:
    """Change the organization's settings, in its scope (the row is its own under RLS)."""
    updated = Organization.objects.filter(id=organization_id).update(
        subjects_created_on_write=subjects_created_on_write
    )
    if not updated:
        raise NotFound("Organization not found.")
    return Organization.objects.get(id=organization_id)


def subject_for_write(*, organization_id: uuid.UUID, external_id: str, kind: str) -> tuple[Subject, bool]:
    """The subject a write goes to, created (of ``kind``) when the external id is unknown and
    the organization creates subjects on first write (ADR 0039); whether it was created.
    Race-safe: two concurrent first writes make one subject (the unique external id)."""
    subject = Subject.objects.filter(external_id=external_id).first()
    if subject is not None:
        return subject, False
    enabled = Organization.objects.filter(id=organization_id).values_list("subjects_created_on_write", flat=True)
    if not enabled.first():
        raise NotFound(
            f"No subject with external_id {external_id!r} in this organization. Create it with POST /v1/subjects "
            "(this organization does not create subjects on first write)."
        )
    if not re.match(EXTERNAL_ID_PATTERN, external_id):
        raise ValidationFailed(f"external_id {external_id!r} cannot name a new subject. {EXTERNAL_ID_RULE}.")
    if kind not in Subject.Kind.values:
        raise ValidationFailed(f"subject_kind must be one of {list(Subject.Kind.values)}.")
    # get_or_create inserts in a savepoint: a concurrent first write's uncommitted row makes
    # this insert wait for it; once it commits, the insert fails and the row is read instead.
    return Subject.objects.get_or_create(
        external_id=external_id, defaults={"organization_id": organization_id, "kind": kind}
    )


def membership_create(*, organization_id: uuid.UUID, user_id: int, role: str) -> Membership:
    with organization_scope(organization_id):
        membership, _ = Membership.objects.update_or_create(
            organization_id=organization_id, user_id=user_id, defaults={"role": role}
        )
    return membership


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    secret: str  # the full key: shown once, never stored


def api_key_create(
    *,
    organization_id: uuid.UUID,
    name: str,
    scopes: list[str],
    expires_at: datetime | None = None,
    rate_limit_per_minute: int | None = None,
    rotated_from: ApiKey | None = None,
) -> IssuedKey:
    unknown = keys.invalid_scopes(scopes)
    if unknown or not scopes:
        raise ValidationFailed(f"scopes must be a non-empty subset of {list(keys.SCOPES)}; unknown: {unknown}")
    now = timezone.now()
    if expires_at is not None and expires_at <= now:
        raise ValidationFailed(
            f"expires_at {expires_at.isoformat()} is not in the future (it is now {now.isoformat()}); "
            "give a later time, or omit expires_at for a key that does not expire.",
            details={"expires_at": ["Must be in the future."]},
        )
    new_key = keys.generate_key(settings.API_KEY_PREFIX, settings.API_KEY_PEPPER)
    with organization_scope(organization_id):
        api_key = ApiKey.objects.create(
            organization_id=organization_id,
            name=name,
            lookup_id=new_key.lookup_id,
            key_hash=new_key.key_hash,
            scopes=sorted(set(scopes)),
            expires_at=expires_at,
            rate_limit_per_minute=rate_limit_per_minute,
            rotated_from=rotated_from,
        )
    return IssuedKey(api_key=api_key, secret=new_key.full_key)


def api_key_revoke(*, organization_id: uuid.UUID, api_key_id: uuid.UUID) -> ApiKey:
    with organization_scope(organization_id):
        updated = ApiKey.objects.filter(id=api_key_id, revoked_at__isnull=True).update(revoked_at=timezone.now())
        api_key = ApiKey.objects.filter(id=api_key_id).first()
    if api_key is None:
        raise NotFound("API key not found.")
    if not updated and api_key.revoked_at is None:
        raise Conflict("API key could not be revoked.")
    return api_key


def api_key_rotate(*, organization_id: uuid.UUID, api_key_id: uuid.UUID, overlap: timedelta | None = None) -> IssuedKey:
    """Issue a successor with the same scopes; the old key keeps working for ``overlap`` only.

    A key has at most one successor: rotating a key that was already rotated is a 409 naming
    the successor to rotate instead. The row lock makes a concurrent second rotation wait for
    the first to commit, and then see its successor."""
    overlap = overlap if overlap is not None else timedelta(seconds=settings.API_KEY_ROTATION_OVERLAP_SECONDS)
    with organization_scope(organization_id):
        old = ApiKey.objects.select_for_update().filter(id=api_key_id, revoked_at__isnull=True).first()
        if old is None:
            raise NotFound("No active API key with that id.")
        successor = ApiKey.objects.filter(rotated_from_id=old.id).order_by("created_at").first()
        if successor is not None:
            raise Conflict(
                f"API key {old.id} was already rotated to {successor.id}; rotate that key instead "
                "(a key has one successor).",
                details={"successor_id": str(successor.id)},
            )
        cutoff = timezone.now() + overlap
        if old.expires_at is None or old.expires_at > cutoff:
            old.expires_at = cutoff
            old.save(update_fields=["expires_at"])
        return api_key_create(
            organization_id=organization_id,
            name=old.name,
            scopes=list(old.scopes),
            expires_at=None,
            rate_limit_per_minute=old.rate_limit_per_minute,
            rotated_from=old,
        )


TOUCH_EVERY_SECONDS = 60
_touched_at: dict[uuid.UUID, float] = {}  # key id -> when this process last touched it (monotonic)


def api_key_touch(*, api_key_id: uuid.UUID) -> None:
    """Record use at most once a minute per key: one cheap UPDATE, inside the request scope,
    and none at all while this process touched the key less than a minute ago. A key row
    another request is touching is skipped, not waited for: that request holds the row until
    it commits, and concurrent requests of the key would queue behind it."""
    clock = time.monotonic()
    if clock - _touched_at.get(api_key_id, -TOUCH_EVERY_SECONDS) < TOUCH_EVERY_SECONDS:
        return
    now = timezone.now()
    due = (
        ApiKey.objects.filter(id=api_key_id)
        .exclude(last_used_at__gt=now - timedelta(seconds=TOUCH_EVERY_SECONDS))
        .select_for_update(skip_locked=True, no_key=True)
    )
    ApiKey.objects.filter(id__in=due.values("id")).update(last_used_at=now)
    if len(_touched_at) >= 10_000:
        _touched_at.clear()  # bounded; forgetting costs one UPDATE per key
    _touched_at[api_key_id] = clock


# --- idempotency keys (ADR 0038) ----------------------------------------------------------------


def idempotency_claim(*, organization_id: uuid.UUID, key: str, request_hash: str) -> IdempotencyRecord | None:
    """Claim ``key`` for this request, in the request's transaction; the stored answer when
    the key already answered this same request (then nothing is to run), else None.

    The claim is a transaction-scoped advisory lock on (organization, key): it is held until
    the request's transaction ends — committed with the write and its stored answer, or
    rolled back with nothing stored — so no marker outlives a failed or killed request. A
    second request with the key while the first holds it is a 409; the same key with another
    request is a 422."""
    problem = idempotency.key_problem(key)
    if problem:
        raise ValidationFailed(problem, details={"header": idempotency.HEADER})
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", [f"idempotency:{organization_id}:{key}"]
        )
        row = cursor.fetchone()
    if not row or not row[0]:
        raise Conflict(
            f"A request with this {idempotency.HEADER} is still in progress; retry once it has finished.",
            details={"header": idempotency.HEADER},
        )
    record = IdempotencyRecord.objects.filter(key=key, expires_at__gt=timezone.now()).first()
    if record is not None and record.request_hash != request_hash:
        raise Unprocessable(
            f"This {idempotency.HEADER} was used for another request (method, path or body); "
            "use a new key for a new request.",
            details={"header": idempotency.HEADER},
        )
    return record


def idempotency_store(
    *,
    organization_id: uuid.UUID,
    key: str,
    request_hash: str,
    status_code: int,
    response: Any,
    subject_id: uuid.UUID | None = None,
) -> None:
    """Store the answer to the claimed key, in the request's transaction (it commits with the
    write it answers). An expired record of the key is replaced."""
    now = timezone.now()
    IdempotencyRecord.objects.filter(key=key).delete()
    IdempotencyRecord.objects.create(
        organization_id=organization_id,
        key=key,
        subject_id=subject_id,
        request_hash=request_hash,
        status_code=status_code,
        response=response,
        expires_at=now + idempotency.RETENTION,
    )


def idempotency_purge(*, now: datetime | None = None) -> int:
    """Beat, per organization: delete the records whose 24 hours have passed."""
    deleted, _ = IdempotencyRecord.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted
