"""The usage counter's upsert and the storage figures' SQL: identifiers are constants of the
schema (model table names, the server-generated graph name), every value a bound parameter."""

from __future__ import annotations

import datetime
import re
import uuid

from django.db import connection

from apps.tenancy.models import GRAPH_NAME_PATTERN

_TABLE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")

_COUNT = """
    INSERT INTO usage_counter (organization_id, api_key_id, day, operation, requests, errors, rows_written)
    VALUES (%s, %s, %s, %s, 1, %s, %s)
    ON CONFLICT (organization_id, day, api_key_id, operation) DO UPDATE SET
        requests = usage_counter.requests + 1,
        errors = usage_counter.errors + EXCLUDED.errors,
        rows_written = usage_counter.rows_written + EXCLUDED.rows_written
"""


_CREDIT = """
    INSERT INTO usage_counter (organization_id, api_key_id, day, operation, requests, errors, rows_written)
    VALUES (%s, %s, %s, %s, 0, 0, %s)
    ON CONFLICT (organization_id, day, api_key_id, operation) DO UPDATE SET
        rows_written = usage_counter.rows_written + EXCLUDED.rows_written
"""


def counter_credit_rows(
    *, organization_id: uuid.UUID, api_key_id: uuid.UUID, day: datetime.date, operation: str, rows_written: int
) -> None:
    """Add rows written later, by a job, to the counter of the operation that submitted it,
    in the caller's transaction (no request is counted)."""
    with connection.cursor() as cursor:
        cursor.execute(_CREDIT, [organization_id, api_key_id, day, operation, rows_written])


def counter_add(
    *,
    organization_id: uuid.UUID,
    api_key_id: uuid.UUID,
    day: datetime.date,
    operation: str,
    failed: bool,
    rows_written: int,
) -> None:
    """One statement: the row lock it takes is held until the commit that follows (the
    caller's scope, not durable: see ``apps.usage.services.usage_count``)."""
    with connection.cursor() as cursor:
        cursor.execute(_COUNT, [organization_id, api_key_id, day, operation, int(failed), rows_written])


def table_rows_and_bytes(*, organization_id: uuid.UUID, table: str) -> tuple[int, int]:
    """Rows of one tenant table in the organization's scope (RLS confines the scan) and the
    bytes their tuples hold (``pg_column_size``, TOASTed values at their stored size)."""
    if not _TABLE_NAME.match(table):
        raise ValueError("not a table name of the schema")
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT count(*), coalesce(sum(pg_column_size(t.*)), 0) FROM "{table}" t WHERE t.organization_id = %s',
            [organization_id],
        )
        rows, size = cursor.fetchone()
    return int(rows), int(size)


def graph_bytes(*, graph_name: str) -> int:
    """The disk size of the organization's AGE graph: every relation of its schema, indexes
    and TOAST included."""
    if not GRAPH_NAME_PATTERN.match(graph_name):
        raise ValueError("not a server-generated graph name")
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = %s AND c.relkind = 'r'""",
            [graph_name],
        )
        (size,) = cursor.fetchone()
    return int(size)
