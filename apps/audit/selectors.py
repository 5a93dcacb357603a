from __future__ import annotations

import uuid
from collections.abc import Iterator

from apps.audit.chain import ChainEntry, first_broken_link
from apps.audit.models import AuditEntry


def audit_chain(*, organization_id: uuid.UUID) -> Iterator[ChainEntry]:
    """The organization's entries in order, read as the owner (a platform operation)."""
    rows = AuditEntry.objects.dangerously_across_organizations().filter(organization_id=organization_id)
    for row in rows.order_by("sequence").iterator(chunk_size=2000):
        yield ChainEntry(
            sequence=row.sequence, fields=row.chain_fields(), previous_hash=row.previous_hash, entry_hash=row.entry_hash
        )


def audit_verify(*, organization_id: uuid.UUID) -> int | None:
    return first_broken_link(audit_chain(organization_id=organization_id))


def audited_organizations() -> list[uuid.UUID]:
    return list(
        AuditEntry.objects.dangerously_across_organizations().values_list("organization_id", flat=True).distinct()
    )
