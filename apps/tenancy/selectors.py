from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import QuerySet

from apps.platform.errors import NotFound
from apps.tenancy.models import ApiKey, Organization, Subject


def organization_graph_name(*, organization_id: uuid.UUID) -> str | None:
    return Organization.objects.filter(id=organization_id).values_list("graph_name", flat=True).first()


def organization_get(*, organization_id: uuid.UUID) -> Organization:
    organization = Organization.objects.filter(id=organization_id).first()
    if organization is None:
        raise NotFound("Organization not found.")
    return organization


def subject_get(*, external_id: str) -> Subject:
    subject = Subject.objects.filter(external_id=external_id).first()
    if subject is None:
        raise NotFound(f"No subject with external_id {external_id!r} in this organization.")
    return subject


def subject_list(*, kind: str | None = None, after: tuple[datetime, uuid.UUID] | None = None) -> QuerySet[Subject]:
    queryset = Subject.objects.all()
    if kind:
        queryset = queryset.filter(kind=kind)
    if after is not None:
        created_at, subject_id = after
        queryset = queryset.filter(created_at__gt=created_at) | queryset.filter(
            created_at=created_at, id__gt=subject_id
        )
    return queryset.order_by("created_at", "id")


def api_key_list() -> QuerySet[ApiKey]:
    return ApiKey.objects.all().order_by("created_at")


@dataclass(frozen=True)
class ApiKeyRecord:
    """What authentication needs about a key, read before any organization is in scope."""

    id: uuid.UUID
    organization_id: uuid.UUID
    key_hash: str
    scopes: tuple[str, ...]
    expires_at: datetime | None
    revoked_at: datetime | None
    rate_limit_per_minute: int | None
    organization_active: bool
    monthly_request_quota: int | None


def api_key_record_by_lookup_id(*, lookup_id: str) -> ApiKeyRecord | None:
    """Through a SECURITY DEFINER function: the one read that precedes the tenant scope."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM tenancy_api_key_lookup(%s)", [lookup_id])
        row = cursor.fetchone()
    if row is None:
        return None
    return ApiKeyRecord(
        id=row[0],
        organization_id=row[1],
        key_hash=row[2],
        scopes=tuple(row[3]),
        expires_at=row[4],
        revoked_at=row[5],
        rate_limit_per_minute=row[6],
        organization_active=row[7] == Organization.Status.ACTIVE,
        monthly_request_quota=row[8],
    )
