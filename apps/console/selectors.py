"""The console's reads that no other app offers, in the current organization's scope."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, QuerySet

from apps.audit.models import AuditEntry
from apps.erasure.models import ErasureRequest
from apps.graph import selectors as graph_selectors
from apps.graph.picture import FrameInput, Picture, graph_picture
from apps.graph.services import INDEXED_STORES
from apps.jobs.models import Job
from apps.memory.models import STORES, IndexedRecord
from apps.memory.selectors import MemoryFilter, memory_list, vault_entries
from apps.memory.statements import semantic_statement
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


@dataclass(frozen=True)
class AuditRow:
    """An entry with names a reader knows beside its ids: the key's name, the staff user's
    username, the subject's external id (blank when it no longer exists, or, for a task or
    the system, when its id is already its name)."""

    entry: AuditEntry
    actor_kind: str
    actor_name: str
    subject_external_id: str


def _actor_parts(actor: str) -> tuple[str, str]:
    kind, _, ident = actor.partition(":")
    return (kind, ident) if ident else ("", actor)


def audit_rows(*, entries: list[AuditEntry]) -> list[AuditRow]:
    """Three lookups for the whole page, whatever its length."""
    parts = [_actor_parts(e.actor) for e in entries]
    key_ids = [key for kind, ident in parts if kind == "api_key" and (key := _uuid(ident)) is not None]
    user_ids = {int(ident) for kind, ident in parts if kind == "staff" and ident.isdigit()}
    key_names = {str(k): n for k, n in ApiKey.objects.filter(id__in=key_ids).values_list("id", "name")}
    usernames = {
        str(pk): name for pk, name in get_user_model().objects.filter(pk__in=user_ids).values_list("pk", "username")
    }
    subject_ids = {e.subject_id for e in entries if e.subject_id}
    external_ids = dict(Subject.objects.filter(id__in=subject_ids).values_list("id", "external_id"))
    names = {"api_key": key_names, "staff": usernames}
    return [
        AuditRow(
            entry=entry,
            actor_kind=kind,
            actor_name=names[kind].get(ident, "") if kind in names else "",
            subject_external_id=external_ids.get(entry.subject_id, "") if entry.subject_id else "",
        )
        for entry, (kind, ident) in zip(entries, parts, strict=True)
    ]


def _uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


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


def subject_graph_picture(*, subject: Subject, anchors: list[dict[str, Any]], frames: list[dict[str, Any]]) -> Picture:
    """The page's anchors and frames as a picture, with the rows the frames cite named by
    their text (one read for all of them)."""
    inputs = [
        FrameInput(
            frame_id=frame["frame_id"],
            predicate=frame.get("predicate") or frame.get("kind") or "",
            arms=[(str(role), str(key)) for role, key in frame.get("arms", [])],
            citations=[str(row) for row in frame.get("citations", [])],
        )
        for frame in frames
    ]
    cited = list(dict.fromkeys(row for frame in inputs for row in frame.citations))
    rows = graph_selectors.cited_rows(subject=subject, row_ids=cited)
    labels = {str(row.id): _row_label(row) for row in rows}
    return graph_picture(
        anchors=[(a["key"], a.get("name") or a["key"]) for a in anchors], frames=inputs, row_labels=labels
    )


def _row_label(row: Any) -> str:
    return semantic_statement(getattr(row, "name", ""), str(row.summary))
