"""Currency of stored rows: is a row the current value, and if not, what replaced it and when.

Rows are never changed in place: an update appends a row whose ``supersedes`` points at the row
it replaces (apps.memory.models). Currency is therefore read, not stored: a row is current when
no row supersedes it; ``superseded_by`` is that row, found by the reverse lookup over the
unique ``supersedes`` index; ``valid_from`` is when the row's value started to hold and
``valid_to`` the ``valid_from`` of the row that replaced it.

``valid_from`` is the event time, else the mention time. A semantic row has neither column: its
mention time is the earliest mention time of the episodic rows of its chunk that share a source
message with it (the messages it was extracted from), else when it was stored (a manual update
has no message: it is stated when it is made). Core, procedural and resource rows hold from when
they were stored.

One statement per read batch, whatever its size (:func:`rows_currency`); the SQL fragments are
shared with the retrieval reads, which fold them into their own row statement.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from apps.memory.event_currency import event_successor_join_sql, semantic_valid_from_sql
from apps.memory.models import STORES, EpisodicEvent, EvidenceRecord, ResourceItem, SemanticItem
from apps.platform.replica import read_connection

_RESOURCE = ResourceItem._meta.db_table


@dataclass(frozen=True, slots=True)
class Currency:
    valid_from: datetime | None
    superseded_by: uuid.UUID | None = None
    valid_to: datetime | None = None

    @property
    def current(self) -> bool:
        return self.superseded_by is None


def valid_from_sql(table: str, alias: str) -> str:
    """The SQL expression of ``valid_from`` for a row of ``table`` named ``alias``."""
    if table == EpisodicEvent._meta.db_table:
        return f"COALESCE({alias}.event_time, {alias}.mention_time)"
    if table == SemanticItem._meta.db_table:
        return semantic_valid_from_sql(alias)
    return f"{alias}.created_at"


def successor_join_sql(table: str, alias: str, successor: str) -> str:
    """A LEFT JOIN of the row that supersedes ``alias`` (at most one: a unique constraint)."""
    return (
        f"LEFT JOIN {table} AS {successor} ON {successor}.organization_id = {alias}.organization_id"
        f" AND {successor}.supersedes_id = {alias}.id"
    )


def _replaced_document_sql(alias: str) -> str:
    """The later versions of the pasted document the semantic row ``alias`` was extracted
    from: its message is the document's, in its chunk (``FROM … WHERE``, version ``v``)."""
    return f"""FROM {_RESOURCE} AS d
        JOIN {_RESOURCE} AS v ON v.organization_id = d.organization_id AND v.supersedes_id = d.id
        WHERE d.organization_id = {alias}.organization_id AND d.chunk_id = {alias}.chunk_id
          AND d.subject_id = {alias}.subject_id AND d.source_message_ids && {alias}.source_message_ids"""


def replaced_document_join_sql(alias: str, successor: str) -> str:
    """A LEFT JOIN LATERAL giving ``{successor}.id`` and ``{successor}.created_at``: the version
    that replaced the pasted document the semantic row ``alias`` was extracted from, or NULLs.
    A fact stated by a replaced version holds no longer than that version (ADR 0101); one the
    new version states again is the new version's own row."""
    return (
        f"LEFT JOIN LATERAL (SELECT v.id, v.created_at {_replaced_document_sql(alias)} LIMIT 1) AS {successor} ON TRUE"
    )


def from_replaced_document_sql(alias: str) -> str:
    """The semantic row ``alias`` was extracted from a document a later version replaced."""
    return f"EXISTS (SELECT 1 {_replaced_document_sql(alias)})"


def successor_columns_sql(table: str, alias: str, successor: str) -> tuple[str, str]:
    """The joins and the two columns (successor id, its ``valid_from``) of the row that
    replaced ``alias``: the row that supersedes it, or for an episodic row whose extracted facts
    were all superseded, the turn that stated the new value (apps.memory.event_currency), or for
    a passage of a document version that a later one replaced, or a fact extracted from it,
    that version."""
    joins = successor_join_sql(table, alias, successor)
    columns = f"{successor}.id, {valid_from_sql(table, successor)}"
    if table == EpisodicEvent._meta.db_table:
        joins += f" {event_successor_join_sql(alias, successor + '_event')}"
        # A passage of a document that a later version replaced, which no passage of that
        # version revises (its part was cut): replaced by that version (ADR 0101).
        joins += (
            f" LEFT JOIN {_RESOURCE} AS {successor}_doc ON {successor}_doc.organization_id = {alias}.organization_id"
            f" AND {successor}_doc.supersedes_id = {alias}.resource_id"
        )
        columns = (
            f"COALESCE({successor}.id, {successor}_event.id, {successor}_doc.id),"
            f" COALESCE({valid_from_sql(table, successor)}, {successor}_event.valid_from, {successor}_doc.created_at)"
        )
    if table == SemanticItem._meta.db_table:
        joins += f" {replaced_document_join_sql(alias, successor + '_doc')}"
        columns = (
            f"COALESCE({successor}.id, {successor}_doc.id),"
            f" COALESCE({valid_from_sql(table, successor)}, {successor}_doc.created_at)"
        )
    return joins, columns


def _statement(table: str) -> str:
    joins, successor = successor_columns_sql(table, "r", "s")
    return f"""
        SELECT r.id, {valid_from_sql(table, "r")}, {successor}
        FROM {table} AS r {joins}
        WHERE r.organization_id = %(organization)s AND r.subject_id = %(subject)s AND r.id = ANY(%(ids)s::uuid[])
    """


def rows_currency(
    *, organization_id: uuid.UUID, subject_id: uuid.UUID, ids_by_type: Mapping[str, Sequence[uuid.UUID]]
) -> dict[uuid.UUID, Currency]:
    """The currency of the subject's rows with these ids, per memory type (``STORES`` names),
    in one statement. Ids of another subject or organization are absent from the result."""
    parts = [(memory_type, list(ids)) for memory_type, ids in ids_by_type.items() if ids]
    if not parts:
        return {}
    params: dict[str, Any] = {"organization": organization_id, "subject": subject_id}
    statements = []
    for index, (memory_type, ids) in enumerate(parts):
        statement = _statement(STORES[memory_type]._meta.db_table).replace("%(ids)s", f"%(ids{index})s")
        statements.append(f"({statement})")
        params[f"ids{index}"] = ids
    with read_connection().cursor() as cursor:
        cursor.execute(" UNION ALL ".join(statements), params)
        fetched = cursor.fetchall()
    return {
        row_id: Currency(valid_from=valid_from, superseded_by=successor, valid_to=successor_from if successor else None)
        for row_id, valid_from, successor, successor_from in fetched
    }


def with_currency(rows: Iterable[EvidenceRecord]) -> list[Any]:
    """The rows, each with its :class:`Currency` as ``row.currency`` (one statement for all).

    The rows must belong to one subject (every read of the API is a subject's)."""
    rows = list(rows)
    if not rows:
        return rows
    ids_by_type: dict[str, list[uuid.UUID]] = {}
    names = {model: name for name, model in STORES.items()}
    for row in rows:
        ids_by_type.setdefault(names[type(row)], []).append(row.id)
    found = rows_currency(
        organization_id=rows[0].organization_id, subject_id=rows[0].subject_id, ids_by_type=ids_by_type
    )
    for row in rows:
        row.currency = found[row.id]  # type: ignore[attr-defined]
    return rows
