"""Appending to the audit log, inside the transaction of the change it records."""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from django.db import connection
from django.utils import timezone

from apps.audit.chain import GENESIS, entry_hash
from apps.audit.models import AuditEntry
from apps.platform.logging import request_id_var

_actor: contextvars.ContextVar[str | None] = contextvars.ContextVar("audit_actor", default=None)


@contextmanager
def acting_as(actor: str) -> Iterator[None]:
    token = _actor.set(actor)
    try:
        yield
    finally:
        _actor.reset(token)


def current_actor() -> str:
    """Who is acting in this context, as the audit log names it ("system" outside any)."""
    return _actor.get() or "system"


_CHECK_AND_LOCK = (
    "SET CONSTRAINTS ALL IMMEDIATE; SET CONSTRAINTS ALL DEFERRED; SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
)


def audit_record(
    *, organization_id: uuid.UUID, action: str, subject_id: uuid.UUID | None = None, target_ids: Sequence[str] = ()
) -> AuditEntry:
    """Append one entry to the organization's chain (serialized per organization).

    The chain's lock is the last lock of the transaction (the lock order is in
    ``apps.memory.locks``): the foreign keys checked at commit would take row locks while
    holding it, so they are checked now, before it is taken; and the entry is the caller's
    last write."""
    with connection.cursor() as cursor:
        # Checks the deferred foreign keys pending so far, then defers again what follows
        # (every deferrable constraint of the schema is INITIALLY DEFERRED), and takes the
        # chain's lock: three statements in one round trip (the cursor binds client-side).
        cursor.execute(_CHECK_AND_LOCK, [f"audit:{organization_id}"])
    last = (
        AuditEntry.objects.for_organization(organization_id)
        .order_by("-sequence")
        .only("sequence", "entry_hash")
        .first()
    )
    entry = AuditEntry(
        organization_id=organization_id,
        sequence=(last.sequence + 1) if last else 1,
        actor=current_actor(),
        action=action,
        subject_id=subject_id,
        target_ids=[str(t) for t in target_ids],
        request_id=request_id_var.get() or "",
        created_at=timezone.now(),
        previous_hash=last.entry_hash if last else GENESIS,
    )
    entry.entry_hash = entry_hash(
        sequence=entry.sequence, fields=entry.chain_fields(), previous_hash=entry.previous_hash
    )
    entry.save(force_insert=True)
    return entry
