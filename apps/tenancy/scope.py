"""The organization scope of the current request or task.

``organization_scope`` is the only place that sets it: it opens a transaction, sets
``app.organization_id`` with ``SET LOCAL`` semantics (so pooled connections never carry it
into another request) and records it in a context variable that the fail-closed managers read.
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction

from apps.platform.errors import MissingTenantScope

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


def _set_database_scope(value: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('app.organization_id', %s, true)", [value])


@contextmanager
def organization_scope(organization_id: uuid.UUID) -> Iterator[None]:
    """Run the block in a transaction scoped to one organization (app role + RLS)."""
    previous = _current_organization.get()
    nested = connection.in_atomic_block
    with transaction.atomic():
        _set_database_scope(str(organization_id))
        token = _current_organization.set(organization_id)
        try:
            yield
        finally:
            _current_organization.reset(token)
        if nested:
            # Still inside an outer transaction: hand it back its own scope.
            _set_database_scope(str(previous) if previous else "")
