"""Appending to the audit log, inside the transaction of the change it records."""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

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


_CHECK_LOCK_AND_READ_HEAD = (
    "SET CONSTRAINTS ALL IMMEDIATE; SET CONSTRAINTS ALL DEFERRED; SELECT pg_advisory_xact_lock(hashtextextended(%s, 0));"
    f" SELECT sequence, entry_hash FROM {AuditEntry._meta.db_table} WHERE organization_id = %s"
    " ORDER BY sequence DESC LIMIT 1"
)


@dataclass(frozen=True)
class AuditDraft:
    """One entry to append: what was done, to which subject and rows."""

    action: str
    subject_id: uuid.UUID | None = None
    target_ids: Sequence[str] = ()


def audit_record(
    *, organization_id: uuid.UUID, action: str, subject_id: uuid.UUID | None = None, target_ids: Sequence[str] = ()
) -> AuditEntry:
    """Append one entry to the organization's chain (serialized per organization); see
    ``audit_record_many``."""
    [entry] = audit_record_many(
        organization_id=organization_id,
        entries=[AuditDraft(action=action, subject_id=subject_id, target_ids=target_ids)],
    )
    return entry


def audit_record_many(*, organization_id: uuid.UUID, entries: Sequence[AuditDraft]) -> list[AuditEntry]:
    """Append the entries, in order, to the organization's chain: one lock, one read of the
    chain's head and one insert for all of them.

    The chain's lock is the last lock of the transaction (the lock order is in
    ``apps.memory.locks``): the foreign keys checked at commit would take row locks while
    holding it, so they are checked now, before it is taken; and the entries are the caller's
    last write."""
    if not entries:
        return []
    with connection.cursor() as cursor:
        # Checks the deferred foreign keys pending so far, then defers again what follows
        # (every deferrable constraint of the schema is INITIALLY DEFERRED), takes the
        # chain's lock and reads the chain's head under it: four statements in one round trip
        # (the cursor binds client-side); the head is the last statement's result.
        cursor.execute(_CHECK_LOCK_AND_READ_HEAD, [f"audit:{organization_id}", organization_id])
        while cursor.nextset():
            pass
        head = cursor.fetchone()
    sequence, previous_hash = (int(head[0]), str(head[1])) if head else (0, GENESIS)
    actor, request_id, now = current_actor(), request_id_var.get() or "", timezone.now()
    appended = []
    for draft in entries:
        sequence += 1
        entry = AuditEntry(
            organization_id=organization_id,
            sequence=sequence,
            actor=actor,
            action=draft.action,
            subject_id=draft.subject_id,
            target_ids=[str(t) for t in draft.target_ids],
            request_id=request_id,
            created_at=now,
            previous_hash=previous_hash,
        )
        entry.entry_hash = previous_hash = entry_hash(
            sequence=entry.sequence, fields=entry.chain_fields(), previous_hash=entry.previous_hash
        )
        appended.append(entry)
    return AuditEntry.objects.bulk_create(appended)
