from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL

from apps.memory.currency import with_currency
from apps.memory.filter_sql import filter_sql
from apps.memory.filters import MEMORY_TYPES, Filter
from apps.memory.models import (
    STORES,
    CoreBlock,
    EpisodicEvent,
    EvidenceRecord,
    IngestionBatchChunk,
    ResourceItem,
    VaultEntry,
)
from apps.memory.search import SearchHit, fuse, keyword_lane, vector_lane
from apps.platform.errors import NotFound, ValidationFailed
from apps.tenancy.models import Subject
from apps.vault.services import EncryptedValue, vault_decrypt

READABLE_TYPES = MEMORY_TYPES
SEARCHABLE_TYPES = ("procedural", "resource")


def current_rows(model: type[EvidenceRecord], *, subject: Subject) -> QuerySet[Any]:
    """Rows of ``model`` for ``subject`` that no later row supersedes."""
    superseded = model.objects.filter(subject=subject, supersedes__isnull=False).values("supersedes")
    return model.objects.filter(subject=subject).exclude(id__in=superseded)


_STORE_NAMES = {model: name for name, model in STORES.items()}


def rows_filtered(rows: QuerySet[Any], where: Filter | None) -> QuerySet[Any]:
    """``rows`` (of one store) that match the filter ``where``, in the database: the filter
    is part of the statement, before any ordering or limit the caller adds."""
    if where is None:
        return rows
    table = rows.model._meta.db_table
    params: list[Any] = []

    def param(value: Any) -> str:
        params.append(value)
        return "%s"

    compiled = filter_sql(
        where,
        memory_type=_STORE_NAMES[rows.model],
        table=table,
        alias=connection.ops.quote_name(table),
        param=param,
    )
    if isinstance(compiled, bool):
        return rows if compiled else rows.none()
    # Every value is a bound parameter; the text is compiled from the parsed tree (filter_sql).
    return rows.filter(RawSQL(compiled, params, output_field=BooleanField()))  # noqa: S611


def _without_vectors(rows: QuerySet[Any]) -> QuerySet[Any]:
    """Embeddings are large and never returned: leave them in the database."""
    return rows.defer("embedding") if any(f.name == "embedding" for f in rows.model._meta.fields) else rows


def _store(memory_type: str) -> type[EvidenceRecord]:
    if memory_type not in READABLE_TYPES:
        raise ValidationFailed(f"type must be one of {list(READABLE_TYPES)}.")
    return STORES[memory_type]


@dataclass(frozen=True)
class MemoryFilter:
    memory_type: str | None  # None: every readable store
    session_id: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    event_after: datetime | None = None
    event_before: datetime | None = None
    include_superseded: bool = False
    where: Filter | None = None  # the ``filters`` tree


# A position in a listing: (created_at, type, id), the order rows are listed in across stores.
ListPosition = tuple[datetime, str, uuid.UUID]


def _store_query(memory_type: str, *, subject: Subject, filters: MemoryFilter) -> QuerySet[Any]:
    model = _store(memory_type)
    rows: QuerySet[Any] = (
        model.objects.filter(subject=subject) if filters.include_superseded else current_rows(model, subject=subject)
    )
    if filters.session_id is not None:
        rows = rows.filter(session_id=filters.session_id)
    if filters.created_after:
        rows = rows.filter(created_at__gte=filters.created_after)
    if filters.created_before:
        rows = rows.filter(created_at__lt=filters.created_before)
    if filters.event_after or filters.event_before:
        if model is not EpisodicEvent:
            raise ValidationFailed("event_after / event_before apply to episodic memories only; pass type=episodic.")
        if filters.event_after:
            rows = rows.filter(event_time__gte=filters.event_after)
        if filters.event_before:
            rows = rows.filter(event_time__lt=filters.event_before)
    return rows_filtered(rows, filters.where)


def _store_rows(
    memory_type: str, *, subject: Subject, filters: MemoryFilter, after: ListPosition | None, limit: int
) -> list[Any]:
    rows = _store_query(memory_type, subject=subject, filters=filters)
    if after is not None:
        # Rows of this store that come after the position in (created_at, type, id) order.
        created_at, after_type, row_id = after
        if memory_type > after_type:
            rows = rows.filter(created_at__gte=created_at)
        elif memory_type < after_type:
            rows = rows.filter(created_at__gt=created_at)
        else:
            rows = rows.filter(Q(created_at__gt=created_at) | Q(created_at=created_at, id__gt=row_id))
    return list(_without_vectors(rows).order_by("created_at", "id")[:limit])


def memory_list(*, subject: Subject, filters: MemoryFilter, after: ListPosition | None, limit: int) -> list[Any]:
    """Up to ``limit`` rows after ``after`` in (created_at, type, id) order: of one store, or
    of every readable store merged (each store reads at most ``limit`` rows)."""
    types = [filters.memory_type] if filters.memory_type is not None else list(READABLE_TYPES)
    rows = [
        row
        for memory_type in types
        for row in _store_rows(memory_type, subject=subject, filters=filters, after=after, limit=limit)
    ]
    rows.sort(key=lambda row: (row.created_at, memory_type_of(row), row.id))
    return with_currency(rows[:limit])


def memory_refs(*, subject: Subject, filters: MemoryFilter, limit: int) -> list[tuple[str, uuid.UUID]]:
    """(type, id) of up to ``limit`` rows the listing with ``filters`` would show, in
    (created_at, type, id) order, without reading the rows themselves."""
    types = [filters.memory_type] if filters.memory_type is not None else list(READABLE_TYPES)
    found = [
        (created_at, memory_type, row_id)
        for memory_type in types
        for row_id, created_at in _store_query(memory_type, subject=subject, filters=filters)
        .order_by("created_at", "id")
        .values_list("id", "created_at")[:limit]
    ]
    return [(memory_type, row_id) for _, memory_type, row_id in sorted(found)[:limit]]


_TYPE_NAMES = {model: name for name, model in STORES.items()}


def memory_type_of(row: Any) -> str:
    """The store a row belongs to (``episodic``, ``resource``, ...)."""
    return _TYPE_NAMES[type(row)]


def _row(*, subject: Subject, memory_type: str, record_id: uuid.UUID) -> Any:
    row = _without_vectors(_store(memory_type).objects.filter(subject=subject, id=record_id)).first()
    if row is None:
        raise NotFound(f"No {memory_type} memory {record_id} for this subject.")
    return row


def memory_get(*, subject: Subject, memory_type: str, record_id: uuid.UUID) -> Any:
    """The row, with its currency (``row.currency``)."""
    return with_currency([_row(subject=subject, memory_type=memory_type, record_id=record_id)])[0]


def memory_history(*, subject: Subject, memory_type: str, record_id: uuid.UUID) -> list[Any]:
    """The supersession chain through ``record_id``, newest first."""
    model = _store(memory_type)
    row = _row(subject=subject, memory_type=memory_type, record_id=record_id)
    newer: list[Any] = []
    cursor = row
    while (successor := _without_vectors(model.objects.filter(subject=subject, supersedes=cursor)).first()) is not None:
        newer.append(successor)
        cursor = successor
    older: list[Any] = []
    cursor = row
    while cursor.supersedes_id is not None:
        cursor = _without_vectors(model.objects.filter(id=cursor.supersedes_id)).get()
        older.append(cursor)
    return with_currency([*reversed(newer), row, *older])


def core_blocks(*, subject: Subject) -> list[CoreBlock]:
    return with_currency(current_rows(CoreBlock, subject=subject).order_by("label"))


def memory_search(
    *,
    subject: Subject,
    memory_type: str,
    query: str,
    limit: int,
    vector: list[float],
    model: str,
    where: Filter | None = None,
) -> list[SearchHit]:
    """Rows of one typed store by meaning (``vector``, the query's embedding by ``model``) and words."""
    if memory_type not in SEARCHABLE_TYPES:
        raise ValidationFailed(f"search covers {list(SEARCHABLE_TYPES)}; episodic and semantic go through /search.")
    rows = rows_filtered(_without_vectors(current_rows(STORES[memory_type], subject=subject)), where)
    hits = fuse(vector_lane(rows, vector=vector, model=model), keyword_lane(rows, query=query), limit=limit)
    with_currency(hit.row for hit in hits)
    return hits


def resource_get(*, subject: Subject, resource_id: uuid.UUID) -> ResourceItem:
    row: ResourceItem = _row(subject=subject, memory_type="resource", record_id=resource_id)
    return row


def vault_entries(*, subject: Subject) -> list[VaultEntry]:
    return list(VaultEntry.objects.filter(subject=subject).defer("ciphertext", "nonce").order_by("created_at", "id"))


def vault_value(*, subject: Subject, entry_id: uuid.UUID) -> tuple[VaultEntry, str]:
    entry = VaultEntry.objects.filter(subject=subject, id=entry_id).first()
    if entry is None:
        raise NotFound(f"No vault entry {entry_id} for this subject.")
    value = vault_decrypt(
        organization_id=entry.organization_id,
        entry_id=entry.id,
        value=EncryptedValue(
            ciphertext=bytes(entry.ciphertext), nonce=bytes(entry.nonce), data_key_version=entry.data_key_version
        ),
    )
    return entry, value


def batch_records(*, batch_id: uuid.UUID) -> list[tuple[str, uuid.UUID]]:
    """(type, id) of every row the batch's chunks have written so far, chunk by chunk."""
    chunk_ids = [
        chunk_id
        for chunk_id in IngestionBatchChunk.objects.filter(batch_id=batch_id)
        .order_by("index")
        .values_list("chunk_id", flat=True)
        if chunk_id is not None  # a chunk that stored nothing
    ]
    return chunk_records(chunk_ids=chunk_ids)


def records_by_chunk(*, chunk_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[tuple[str, uuid.UUID]]]:
    """``chunk_records`` of each chunk, for many chunks in one query per store."""
    records: dict[uuid.UUID, list[tuple[str, uuid.UUID]]] = {chunk_id: [] for chunk_id in chunk_ids}
    if not chunk_ids:
        return records
    for memory_type, model in STORES.items():
        for chunk_id, row_id in (
            model.objects.filter(chunk_id__in=chunk_ids).order_by("created_at", "id").values_list("chunk_id", "id")
        ):
            records[chunk_id].append((memory_type, row_id))
    return records


def chunk_records(*, chunk_ids: list[uuid.UUID]) -> list[tuple[str, uuid.UUID]]:
    """(type, id) of every row of the chunks, store by store, oldest first."""
    if not chunk_ids:
        return []
    return [
        (memory_type, row_id)
        for memory_type, model in STORES.items()
        for row_id in model.objects.filter(chunk_id__in=chunk_ids)
        .order_by("created_at", "id")
        .values_list("id", flat=True)
    ]
