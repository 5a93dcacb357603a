"""Updating many rows of one tenant table in one statement, each row with values of its own.

Django's ``bulk_update`` writes a ``CASE WHEN id = … THEN …`` expression per field and row and
resolves each one: for a batch of embedded rows (a 384-number vector each) that costs more
Python than the embedding call that produced them. ``rows_update`` sends the rows as one
``VALUES`` list, each value cast to its column's type, and joins it on the primary key:

    UPDATE memory_episodic_event AS t SET embedding = v.embedding, …
    FROM (VALUES (%s::uuid, %s::vector(384), …), …) AS v(pk, embedding, …)
    WHERE t.id = v.pk AND t.organization_id = %s
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django.db import connections, models, router

ROWS_PER_STATEMENT = 500  # a statement's parameters stay far below the protocol's 65,535


def rows_update(rows: Sequence[models.Model], fields: Sequence[str], *, organization_id: uuid.UUID) -> int:
    """Write ``fields`` of every row (all of one model, with an ``organization_id`` column) as
    they are on the instances; rows of another organization are left alone (row-level
    security refuses them too). Returns how many rows were updated."""
    if not rows:
        return 0
    model = type(rows[0])
    assert all(type(row) is model for row in rows), "rows_update takes rows of one model"
    meta = model._meta
    connection = connections[router.db_for_write(model)]
    quote = connection.ops.quote_name
    pk = meta.pk
    assert pk is not None
    columns = [_concrete(meta.get_field(name)) for name in fields]
    casts = [f"%s::{pk.db_type(connection)}", *(f"%s::{field.db_type(connection)}" for field in columns)]
    row_sql = "(" + ", ".join(casts) + ")"
    names = ", ".join(["pk", *(quote(_column(field)) for field in columns)])
    assignments = ", ".join(f"{quote(_column(field))} = v.{quote(_column(field))}" for field in columns)
    updated = 0
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        batch = rows[start : start + ROWS_PER_STATEMENT]
        params: list[Any] = []
        for row in batch:
            params.append(pk.get_db_prep_value(row.pk, connection))
            params += [field.get_db_prep_save(getattr(row, field.attname), connection) for field in columns]
        params.append(organization_id)
        sql = (
            f"UPDATE {quote(meta.db_table)} AS t SET {assignments} "
            f"FROM (VALUES {', '.join([row_sql] * len(batch))}) AS v({names}) "
            f"WHERE t.{quote(_column(pk))} = v.pk AND t.organization_id = %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            updated += cursor.rowcount
    return updated


def _concrete(field: models.Field[Any, Any] | models.ForeignObjectRel) -> models.Field[Any, Any]:
    assert isinstance(field, models.Field) and field.concrete, f"{field} is not a column"
    return field


def _column(field: models.Field[Any, Any]) -> str:
    assert field.column is not None
    return field.column
