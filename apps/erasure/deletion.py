"""Deleting chosen rows of a subject: besides erasure, the one operation that removes evidence.

Updates stay append-only (a PATCH appends a row that supersedes the old one); a customer who
must remove a row — a wrong fact, a document uploaded by mistake — deletes it, and it goes the
way erasure takes a subject's rows (ADR 0037): from its store, from the graph (its citations
leave every frame; a frame or anchor left with nothing citing it goes, with its arms, its
adjacency entries and its name vector), and, for a document, its passages and its stored bytes.
Everything commits in the caller's transaction, with the audit entry and the
``memory.deleted`` event; the stored bytes are deleted once that has committed.

Supersession chains stay whole: a row that superseded a deleted row supersedes, afterwards, the
nearest older row that survives (or nothing). Currency is read (``apps.memory.currency``), so
deleting the newest value of a chain makes the value before it current again.

The rows are chosen by id (:class:`RowRef`), or by a filter (:func:`memory_filter_delete`):
the rows the listing with that filter shows (every store but the vault, which the filter
language does not name), superseded rows included: deleting "metadata.source = X" removes
every such row, its history too (``{"current": true}`` in the filter keeps to current rows).
Up to :data:`MAX_ROWS` matches are deleted in the request, in one transaction; more make a
job that deletes them in batches of :data:`MAX_ROWS`, each batch a transaction of its own
with its audit entry and its ``memory.deleted`` event (:func:`memory_filter_delete_run`).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.audit.services import audit_record
from apps.erasure import adapter
from apps.erasure.receipt import counts_merge, receipt_sha256
from apps.graph import adjacency, store
from apps.graph.models import AnchorFrame, AnchorRow, AnchorVector
from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import job_create, job_enqueue_on_commit
from apps.memory.filters import And, Filter, Not, Or, parse_filters
from apps.memory.locks import subject_write_lock
from apps.memory.models import STORES, EpisodicEvent, EvidenceRecord, ResourceItem
from apps.memory.selectors import MemoryFilter, memory_refs
from apps.platform.errors import NotFound, ValidationFailed
from apps.resources.storage import storage
from apps.tenancy.models import Subject
from apps.webhooks.events import MEMORY_DELETED
from apps.webhooks.services import webhook_event_emit

logger = logging.getLogger(__name__)

# Rows per call: a larger selection is refused with a message that says to page (ADR 0037).
MAX_ROWS = 1000
DELETABLE_TYPES = tuple(STORES)
GRAPH_TYPES = ("episodic", "semantic")
# The stores whose rows the application updates in place (index status, embeddings), so it may
# lock them; core blocks and vault entries it can only append, never lock: nothing changes them
# meanwhile, and every deleter holds the subject row exclusively first.
UPDATABLE_TYPES = ("episodic", "semantic", "procedural", "resource")


@dataclass(frozen=True, order=True)
class RowRef:
    memory_type: str
    id: uuid.UUID

    def as_dict(self) -> dict[str, str]:
        return {"type": self.memory_type, "id": str(self.id)}


def row_refs_checked(rows: Iterable[RowRef], *, allow_empty: bool = False) -> list[RowRef]:
    """The selection without repeats, in a stable order; a bad type or too many rows is a 400."""
    unique = sorted(set(rows))
    unknown = sorted({r.memory_type for r in unique} - set(DELETABLE_TYPES))
    if unknown:
        raise ValidationFailed(f"type must be one of {list(DELETABLE_TYPES)}; got {unknown}.")
    if not unique and not allow_empty:
        raise ValidationFailed("ids must name at least one row.")
    if len(unique) > MAX_ROWS:
        raise ValidationFailed(
            f"At most {MAX_ROWS} rows per call; this call names {len(unique)}. "
            f"Send them in pages of {MAX_ROWS} or fewer.",
            details={"limit": MAX_ROWS, "requested": len(unique)},
        )
    return unique


@dataclass(frozen=True)
class DeletionReceipt:
    deleted: list[RowRef]
    not_found: list[RowRef]
    counts: dict[str, int]
    relinked: list[dict[str, str | None]]
    objects: list[str]

    def as_dict(self, *, subject: Subject, deleted_at: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "subject_id": str(subject.id),
            "deleted": [r.as_dict() for r in self.deleted],
            "not_found": [r.as_dict() for r in self.not_found],
            "counts": dict(sorted(self.counts.items())),
            "relinked": self.relinked,
            "deleted_at": deleted_at,
        }
        return {**body, "receipt_sha256": receipt_sha256(body)}


def memory_rows_delete(
    *, subject: Subject, rows: Sequence[RowRef], missing_ok: bool = True, allow_empty: bool = False
) -> dict[str, Any]:
    """Delete ``rows`` of ``subject`` (see the module docstring); the receipt.

    Ids the subject has no row of are listed as ``not_found`` (another subject's or another
    organization's rows are never touched); with ``missing_ok=False`` any of them is a 404
    and nothing is deleted. With ``allow_empty`` no rows is a receipt of nothing."""
    selection = row_refs_checked(rows, allow_empty=allow_empty)
    # Lock order of apps.memory.locks: the subject row (exclusively, like erasure: writes in
    # flight commit first), the subject's write lock, the rows, then the graph's keys.
    Subject.objects.select_for_update().filter(id=subject.id).first()
    subject_write_lock(subject_id=subject.id)
    found: dict[str, dict[uuid.UUID, Any]] = {}
    for memory_type in DELETABLE_TYPES:
        ids = [r.id for r in selection if r.memory_type == memory_type]
        if ids:
            model = STORES[memory_type]
            rows_of = model.objects.filter(subject=subject, id__in=ids).defer(*_heavy(model))
            if memory_type in UPDATABLE_TYPES:
                rows_of = rows_of.select_for_update()
            found[memory_type] = {row.id: row for row in rows_of}
    deleted = [r for r in selection if r.id in found.get(r.memory_type, {})]
    not_found = [r for r in selection if r not in deleted]
    if not_found and not missing_ok:
        raise NotFound(f"No {not_found[0].memory_type} memory {str(not_found[0].id)!r} for this subject.")
    passages = _passages_of_removed_documents(subject, found.get("resource", {}))
    if passages:
        found.setdefault("episodic", {}).update(passages)
        deleted = sorted({*deleted, *(RowRef("episodic", row_id) for row_id in passages)})
    counts: dict[str, int] = dict.fromkeys(DELETABLE_TYPES, 0)
    graph_ids = {str(row_id) for t in GRAPH_TYPES for row_id in found.get(t, {})}
    counts = counts_merge(counts, graph_rows_forget(subject=subject, row_ids=graph_ids))
    relinked: list[dict[str, str | None]] = []
    blobs: list[str] = []
    for memory_type, by_id in found.items():
        if not by_id:
            continue
        if memory_type == "resource":
            blobs = _orphaned_blobs(subject, by_id)
        relinked += _rows_delete(subject, memory_type, by_id, counts)
    counts["objects"] = len(blobs)
    if blobs:
        transaction.on_commit(lambda: _blobs_delete(blobs))
    receipt = DeletionReceipt(
        deleted=deleted, not_found=not_found, counts=counts, relinked=relinked, objects=sorted(blobs)
    )
    body = receipt.as_dict(subject=subject, deleted_at=timezone.now().isoformat())
    if deleted:
        webhook_event_emit(
            organization_id=subject.organization_id,
            event_type=MEMORY_DELETED,
            subject_id=subject.id,
            payload={
                "subject_id": str(subject.id),
                "subject_external_id": subject.external_id,
                "records": body["deleted"],
                "counts": body["counts"],
                "receipt_sha256": body["receipt_sha256"],
            },
        )
    logger.info(
        "memory rows deleted",
        extra={"subject_id": str(subject.id), "deleted": len(deleted), "receipt_sha256": body["receipt_sha256"]},
    )
    return body


# --- by filter ----------------------------------------------------------------------------------

FILTER_JOB_KIND = "memory.delete"


def rows_matching(*, subject: Subject, where: Filter, as_of: datetime, limit: int) -> list[RowRef]:
    """Up to ``limit`` rows of ``subject`` written before ``as_of`` that match ``where``: the
    listing's selection (every store but the vault), superseded rows included."""
    filters = MemoryFilter(memory_type=None, created_before=as_of, include_superseded=True, where=where)
    return [RowRef(t, row_id) for t, row_id in memory_refs(subject=subject, filters=filters, limit=limit)]


def _names_current(node: Filter) -> bool:
    if isinstance(node, And | Or):
        return any(_names_current(child) for child in node.children)
    if isinstance(node, Not):
        return _names_current(node.child)
    return node.field == "current"


def memory_filter_delete(*, subject: Subject, filters: Any) -> dict[str, Any] | Job:
    """Delete the rows of ``subject`` that match ``filters`` (the filter language's JSON):
    the receipt when they are at most :data:`MAX_ROWS` (none: a receipt of nothing), else the
    job that deletes them in batches, published after commit. Rows written after the call
    are never touched by it."""
    where = parse_filters(filters)
    as_of = timezone.now()
    rows = rows_matching(subject=subject, where=where, as_of=as_of, limit=MAX_ROWS + 1)
    if len(rows) <= MAX_ROWS:
        return memory_rows_delete(subject=subject, rows=rows, allow_empty=True)
    if _names_current(where):
        # Which rows are current changes as batches delete rows: the later batches would not
        # delete what the filter matched when it was sent.
        raise ValidationFailed(
            f"A filter on current matches more than {MAX_ROWS} rows, more than one call deletes; narrow it "
            f"(e.g. by created_at) to {MAX_ROWS} rows or fewer per call, or drop current to delete every match.",
            details={"limit": MAX_ROWS},
        )
    job = job_create(organization_id=subject.organization_id, kind=FILTER_JOB_KIND, subject_id=subject.id)
    job_enqueue_on_commit(
        job=job,
        task_name=task_names.MEMORY_DELETE,
        kwargs={"subject_id": str(subject.id), "filters": filters, "as_of": as_of.isoformat()},
    )
    return job


def memory_filter_delete_run(
    job: Job, *, subject_id: uuid.UUID, filters: Any, as_of: datetime
) -> Generator[dict[str, Any], None, dict[str, Any]]:
    """The filter deletion job's body: each ``next`` deletes one batch of at most
    :data:`MAX_ROWS` matching rows (its own transaction, audit entry and ``memory.deleted``
    event); the result adds up the batches' receipts. A resumed job goes on from what it
    recorded: deleted rows no longer match."""
    where = parse_filters(filters)
    done: dict[str, Any] = dict(job.result or {})
    progress: dict[str, Any] = {
        "subject_id": str(subject_id),
        "deleted": int(done.get("deleted", 0)),
        "counts": dict(done.get("counts", {})),
        "batches": int(done.get("batches", 0)),
        "receipt_sha256": list(done.get("receipt_sha256", [])),
    }
    while True:
        subject = Subject.objects.filter(id=subject_id).first()
        if subject is None:  # erased meanwhile: nothing of it is left to delete
            return progress
        rows = rows_matching(subject=subject, where=where, as_of=as_of, limit=MAX_ROWS)
        if not rows:
            return progress
        receipt = memory_rows_delete(subject=subject, rows=rows)
        audit_record(
            organization_id=subject.organization_id,
            action="memory.delete",
            subject_id=subject.id,
            target_ids=[*(r["id"] for r in receipt["deleted"]), f"receipt:sha256:{receipt['receipt_sha256']}"],
        )
        progress = {
            **progress,
            "deleted": progress["deleted"] + len(receipt["deleted"]),
            "counts": dict(sorted(counts_merge(progress["counts"], receipt["counts"]).items())),
            "batches": progress["batches"] + 1,
            "receipt_sha256": [*progress["receipt_sha256"], receipt["receipt_sha256"]],
        }
        yield progress


def _heavy(model: type[EvidenceRecord]) -> list[str]:
    return [f.name for f in model._meta.concrete_fields if f.name in ("embedding", "extracted_text", "ciphertext")]


def _passages_of_removed_documents(subject: Subject, resources: dict[uuid.UUID, Any]) -> dict[uuid.UUID, Any]:
    """A document's passages (episodic rows quoting it, ADR 0025) go with the document: with
    the last version of it that holds its bytes (``_orphaned_blobs``)."""
    orphaned = set(_orphaned_blobs(subject, resources))
    gone = [row_id for row_id, row in resources.items() if row.object_key in orphaned]
    if not gone:
        return {}
    rows = EpisodicEvent.objects.select_for_update().filter(subject=subject, resource_id__in=gone).defer("embedding")
    return {row.id: row for row in rows}


def _orphaned_blobs(subject: Subject, resources: dict[uuid.UUID, Any]) -> list[str]:
    """The stored objects of these resource rows that no other version of them still holds
    (a PATCH of a document's title appends a row that keeps its bytes)."""
    keys = {str(row.object_key) for row in resources.values()}
    kept = set(
        ResourceItem.objects.filter(subject=subject, object_key__in=keys)
        .exclude(id__in=list(resources))
        .values_list("object_key", flat=True)
    )
    return sorted(keys - kept)


def _rows_delete(
    subject: Subject, memory_type: str, by_id: dict[uuid.UUID, Any], counts: dict[str, int]
) -> list[dict[str, str | None]]:
    """Delete the rows; a surviving row that superseded one of them supersedes the nearest
    older survivor instead. Returns those changes of ``supersedes``."""
    deleted, relinked = adapter.evidence_rows_delete(
        table=STORES[memory_type]._meta.db_table, subject_id=subject.id, ids=sorted(by_id)
    )
    counts[memory_type] = counts.get(memory_type, 0) + deleted
    return [
        {"type": memory_type, "id": str(successor), "supersedes": str(predecessor) if predecessor else None}
        for successor, predecessor in relinked
    ]


def _blobs_delete(keys: Sequence[str]) -> None:
    for key in keys:
        try:
            storage().delete(key)
        except Exception:  # the rows are gone; a blob left behind goes with the subject's erasure
            logger.exception("memory deletion could not delete a stored object", extra={"object_key": key})


# --- the graph ----------------------------------------------------------------------------------


def graph_rows_forget(*, subject: Subject, row_ids: set[str]) -> dict[str, int]:
    """Remove the rows' citations from the subject's graph and the index beside it.

    The frames and anchors to visit are found through the adjacency index (the anchors that
    mention the rows, and the frames touching those anchors), so the cost follows the rows,
    not the size of the graph. A frame that cites nothing afterwards goes with its arms; an
    anchor that no row mentions and no frame touches afterwards goes with its name vector."""
    counts = dict.fromkeys(
        ("graph_frames", "graph_anchors", "graph_edges", "anchor_rows", "anchor_frames", "anchor_vectors"), 0
    )
    if not row_ids:
        return counts
    organization_id, subject_id = subject.organization_id, subject.id
    mentions = AnchorRow.objects.filter(subject=subject, row_id__in=sorted(row_ids))
    anchor_keys = sorted(set(mentions.values_list("anchor_key", flat=True)))
    if not anchor_keys:
        return counts
    frame_ids = sorted(
        set(AnchorFrame.objects.filter(subject=subject, anchor_key__in=anchor_keys).values_list("frame_id", flat=True))
    )
    store.lock_keys(
        organization_id=organization_id,
        subject_id=subject_id,
        keys=[f"anchor:{k}" for k in anchor_keys] + [f"frame:{f}" for f in frame_ids],
    )
    removed_per_anchor: dict[str, int] = {}
    for key in mentions.values_list("anchor_key", flat=True):
        removed_per_anchor[key] = removed_per_anchor.get(key, 0) + 1
    counts["anchor_rows"] = mentions.delete()[0]

    frames = store.frames_by_id(
        organization_id=organization_id, subject_id=subject_id, frame_ids=frame_ids, properties=["citations", "arms"]
    )
    updated, gone = [], []
    for frame_id, props in sorted(frames.items()):
        citations = [str(c) for c in props.get("citations") or []]
        kept = [c for c in citations if c not in row_ids]
        if not kept:
            gone.append(frame_id)
            counts["graph_edges"] += len(props.get("arms") or [])
        elif len(kept) != len(citations):
            updated.append({"frame_id": frame_id, "citations": kept})
    adapter.graph_frames_update(organization_id=organization_id, subject_id=subject_id, frames=updated)
    adjacency.set_citations(organization_id=organization_id, subject_id=subject_id, frames=updated)
    counts["graph_frames"] = adapter.graph_frames_delete(
        organization_id=organization_id, subject_id=subject_id, frame_ids=gone
    )
    counts["anchor_frames"] = AnchorFrame.objects.filter(subject=subject, frame_id__in=gone).delete()[0]

    still_mentioned = set(
        AnchorRow.objects.filter(subject=subject, anchor_key__in=anchor_keys).values_list("anchor_key", flat=True)
    )
    still_framed = set(
        AnchorFrame.objects.filter(subject=subject, anchor_key__in=anchor_keys).values_list("anchor_key", flat=True)
    )
    orphans = [k for k in anchor_keys if k not in still_mentioned and k not in still_framed]
    anchors = store.anchor_properties(
        organization_id=organization_id,
        subject_id=subject_id,
        keys=[k for k in anchor_keys if k not in orphans],
        properties=["episodic_ids", "semantic_ids", "mention_count"],
    )
    adapter.graph_anchors_update(
        organization_id=organization_id,
        subject_id=subject_id,
        anchors=[
            {
                "key": key,
                "episodic_ids": [i for i in props.get("episodic_ids") or [] if str(i) not in row_ids],
                "semantic_ids": [i for i in props.get("semantic_ids") or [] if str(i) not in row_ids],
                "mention_count": max(0, int(props.get("mention_count") or 0) - removed_per_anchor.get(key, 0)),
            }
            for key, props in sorted(anchors.items())
        ],
    )
    counts["graph_anchors"] = adapter.graph_anchors_delete(
        organization_id=organization_id, subject_id=subject_id, keys=orphans
    )
    counts["anchor_vectors"] = AnchorVector.objects.filter(subject=subject, anchor_key__in=orphans).delete()[0]
    return counts
