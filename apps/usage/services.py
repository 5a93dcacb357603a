"""Counting requests: one upsert per request into its (organization, key, day, operation)
counter, run after the response has been sent (ADR 0042)."""

from __future__ import annotations

import datetime
import logging
import uuid

from django.db import DatabaseError
from django.utils import timezone

from apps.tenancy.scope import organization_scope
from apps.usage import adapter

logger = logging.getLogger(__name__)


def usage_count(
    *,
    organization_id: uuid.UUID,
    api_key_id: uuid.UUID,
    day: datetime.date,
    operation: str,
    failed: bool,
    rows_written: int,
) -> None:
    """Add one request to its counter, in a short transaction of its own. The answer is
    already on its way: a counter that cannot be written is logged, never raised."""
    try:
        # Bookkeeping no read depends on: it never pins the organization to the primary, and
        # no request waits on a disk for a counter (a crash may lose the last few counts).
        with organization_scope(organization_id, records_writes=False, durable=False):
            adapter.counter_add(
                organization_id=organization_id,
                api_key_id=api_key_id,
                day=day,
                operation=operation,
                failed=failed,
                rows_written=rows_written,
            )
    except DatabaseError:
        logger.exception("usage count failed", extra={"organization_id": str(organization_id), "operation": operation})


def usage_credit_rows(*, organization_id: uuid.UUID, api_key_id: uuid.UUID, operation: str, rows_written: int) -> None:
    """Credit rows a job wrote to the key that submitted it, under the operation that did,
    on today's (UTC) counter; in the caller's transaction, so the credit commits with the
    rows (a step run again after a crash credits its rows once)."""
    if rows_written:
        adapter.counter_credit_rows(
            organization_id=organization_id,
            api_key_id=api_key_id,
            day=timezone.now().date(),
            operation=operation,
            rows_written=rows_written,
        )
