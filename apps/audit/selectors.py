from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from apps.audit.chain import ChainEntry, chain_verify, first_broken_link
from apps.audit.models import AuditEntry


def _entries(organization_id: uuid.UUID, *, as_owner: bool) -> QuerySet[AuditEntry]:
    if as_owner:
        return AuditEntry.objects.dangerously_across_organizations().filter(organization_id=organization_id)
    return AuditEntry.objects.for_organization(organization_id)


def audit_chain(*, organization_id: uuid.UUID, as_owner: bool = True) -> Iterator[ChainEntry]:
    """The organization's entries in order: as the owner (a platform operation), or through
    the application role in the organization's scope (its own API)."""
    rows = _entries(organization_id, as_owner=as_owner)
    for row in rows.order_by("sequence").iterator(chunk_size=2000):
        yield ChainEntry(
            sequence=row.sequence, fields=row.chain_fields(), previous_hash=row.previous_hash, entry_hash=row.entry_hash
        )


def audit_verify(*, organization_id: uuid.UUID) -> int | None:
    return first_broken_link(audit_chain(organization_id=organization_id))


@dataclass(frozen=True)
class ChainStatus:
    entries: int
    head_sequence: int | None
    head_hash: str | None
    broken_sequence: int | None  # the first entry that does not verify
    broken_entry: AuditEntry | None

    @property
    def intact(self) -> bool:
        return self.broken_sequence is None


def audit_chain_status(*, organization_id: uuid.UUID, as_owner: bool = False) -> ChainStatus:
    """Verify the organization's whole chain and name the first entry that breaks it."""
    verdict = chain_verify(audit_chain(organization_id=organization_id, as_owner=as_owner))
    broken = None
    if verdict.first_broken is not None:
        broken = _entries(organization_id, as_owner=as_owner).filter(sequence=verdict.first_broken).first()
    return ChainStatus(
        entries=verdict.entries,
        head_sequence=verdict.head_sequence,
        head_hash=verdict.head_hash,
        broken_sequence=verdict.first_broken,
        broken_entry=broken,
    )


def audited_organizations() -> list[uuid.UUID]:
    return list(
        AuditEntry.objects.dangerously_across_organizations().values_list("organization_id", flat=True).distinct()
    )


def audit_entries(
    *,
    organization_id: uuid.UUID,
    since: datetime | None = None,
    until: datetime | None = None,
    after_sequence: int = 0,
    limit: int = 1000,
) -> list[AuditEntry]:
    """A page of the organization's entries in chain order, created in ``[since, until)``."""
    rows = _entries(organization_id, as_owner=False).filter(sequence__gt=after_sequence)
    if since is not None:
        rows = rows.filter(created_at__gte=since)
    if until is not None:
        rows = rows.filter(created_at__lt=until)
    return list(rows.order_by("sequence")[:limit])


def audit_entries_for_subject(*, organization_id: uuid.UUID, subject_id: uuid.UUID) -> list[AuditEntry]:
    return list(_entries(organization_id, as_owner=False).filter(subject_id=subject_id).order_by("sequence"))
