"""The organization scope of the current request or task.

``organization_scope`` is the only place that sets it: it opens a transaction, sets
``app.organization_id`` with ``SET LOCAL`` semantics (so pooled connections never carry it
into another request) and records it in a context variable that the fail-closed managers read.

A scope is opened on one database alias and the block reads from that alias: a read-only
view opens a second one on ``replica`` for its handler (``apps.platform.replica``, ADR 0051),
and a scope on ``default`` nested inside it reads from the primary again. The outermost scope
on ``default`` pins the organization's reads to the primary for a few seconds once a
transaction that wrote commits (read-your-writes), unless told its writes are bookkeeping
that no read depends on (``records_writes=False``).
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DEFAULT_DB_ALIAS, connections, transaction

from apps.platform.errors import MissingTenantScope
from apps.platform.replica import reading_from, record_write_on_commit

_current_organization: contextvars.ContextVar[uuid.UUID | None] = contextvars.ContextVar(
    "current_organization", default=None
)


def current_organization_id() -> uuid.UUID:
    organization_id = _current_organization.get()
    if organization_id is None:
        raise MissingTenantScope("no organization in scope: wrap the call in organization_scope()")
    return organization_id


def optional_organization_id() -> uuid.UUID | None:
    return _current_organization.get()


_SCOPE = "SELECT set_config('app.organization_id', %s, true)"
_SCOPE_NOT_DURABLE = _SCOPE + ", set_config('synchronous_commit', 'off', true)"


def _set_database_scope(using: str, value: str, *, durable: bool = True) -> None:
    with connections[using].cursor() as cursor:
        cursor.execute(_SCOPE if durable else _SCOPE_NOT_DURABLE, [value])


@contextmanager
def organization_scope(
    organization_id: uuid.UUID, *, using: str = DEFAULT_DB_ALIAS, records_writes: bool = True, durable: bool = True
) -> Iterator[None]:
    """Run the block in a transaction on ``using`` scoped to one organization (app role + RLS).
    ``durable=False`` (bookkeeping only, at the top level): its commit does not wait for the
    WAL flush, so a crash may lose it; set in the scope's own statement."""
    previous = _current_organization.get()
    nested = connections[using].in_atomic_block
    if nested and not durable:
        raise ValueError("durable=False is for a transaction of its own, not inside another")
    with transaction.atomic(using=using):
        _set_database_scope(using, str(organization_id), durable=durable)
        token = _current_organization.set(organization_id)
        try:
            with reading_from(using):
                yield
        finally:
            _current_organization.reset(token)
        if nested:
            # Still inside an outer transaction: hand it back its own scope.
            _set_database_scope(using, str(previous) if previous else "")
        elif records_writes and using == DEFAULT_DB_ALIAS:
            record_write_on_commit(organization_id, using=using)
