"""The console's reads that no other app offers, in the current organization's scope."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, QuerySet

from apps.audit.models import AuditEntry
from apps.erasure.models import ErasureRequest
from apps.graph.services import INDEXED_STORES
from apps.jobs.models import Job
from apps.memory.models import STORES, IndexedRecord
from apps.memory.selectors import MemoryFilter, memory_list, vault_entries
from apps.platform.errors import NotFound
from apps.tenancy.models import ApiKey, Subject
from apps.webhooks.models import WebhookEndpoint

MEMORY_TYPES = ("core", "episodic", "semantic", "procedural", "resource", "vault")
PAGE = 100


@dataclass(frozen=True)
class OrganizationOverview:
    subjects: int
    active_keys: int
    jobs_by_status: dict[str, int]
    webhook_endpoints: int
    erasure_requests: int
    audit_entries: int


def organization_overview(*, organization_id: uuid.UUID) -> OrganizationOverview:
    jobs = dict(Job.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    return OrganizationOverview(
        subjects=Subject.objects.count(),
        active_keys=ApiKey.objects.filter(revoked_at__isnull=True).count(),
        jobs_by_status=jobs,
        webhook_endpoints=WebhookEndpoint.objects.count(),
        erasure_requests=ErasureRequest.objects.count(),
        audit_entries=AuditEntry.objects.for_organization(organization_id).count(),
    )


def subject_by_id(*, subject_id: uuid.UUID) -> Subject:
    subject = Subject.objects.filter(id=subject_id).first()
    if subject is None:
        raise NotFound("No such subject in this organization (it may have been erased).")
    return subject


def subject_search(*, query: str = "") -> QuerySet[Subject]:
    subjects = Subject.objects.all()
    if query:
        subjects = subjects.filter(external_id__istartswith=query)
    return subjects.order_by("external_id")[:PAGE]


def subject_memory_rows(*, subject: Subject, memory_type: str) -> list[Any]:
    """One store's rows for the browser, superseded versions included (vault: captions only)."""
    if memory_type == "vault":
        return list(vault_entries(subject=subject))[:PAGE]
    return memory_list(
        subject=subject, filters=MemoryFilter(memory_type=memory_type, include_superseded=True), after=None, limit=PAGE
    )


def subject_memory_counts(*, subject: Subject) -> dict[str, int]:
    return {name: STORES[name].objects.filter(subject=subject).count() for name in MEMORY_TYPES}


def audit_entry_search(
    *,
    organization_id: uuid.UUID,
    action: str = "",
    subject_id: uuid.UUID | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[AuditEntry]:
    """The newest matching entries; an action ending in '.' matches as a prefix."""
    entries = AuditEntry.objects.for_organization(organization_id)
    if action:
        entries = entries.filter(action__startswith=action) if action.endswith(".") else entries.filter(action=action)
    if subject_id is not None:
        entries = entries.filter(subject_id=subject_id)
    if since is not None:
        entries = entries.filter(created_at__gte=since)
    if until is not None:
        entries = entries.filter(created_at__lt=until)
    return list(entries.order_by("-sequence")[:PAGE])


def job_list(*, status: str = "", kind: str = "") -> list[Job]:
    jobs = Job.objects.all()
    if status:
        jobs = jobs.filter(status=status)
    if kind:
        jobs = jobs.filter(kind=kind)
    return list(jobs.order_by("-created_at")[:PAGE])


def failed_index_rows(*, subject_id: uuid.UUID | None = None) -> int:
    total = 0
    for model in INDEXED_STORES:
        rows = model.objects.filter(index_status=IndexedRecord.IndexStatus.FAILED)
        if subject_id is not None:
            rows = rows.filter(subject_id=subject_id)
        total += rows.count()
    return total
