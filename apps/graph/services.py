from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q
from django.utils import timezone

from apps.audit.services import acting_as
from apps.graph import adapter, adjacency, store
from apps.graph.extraction.local import LocalGraphLLM
from apps.graph.indexing import IndexStats, SubjectIndexer, extraction_input
from apps.graph.models import AnchorFrame, AnchorRow, AnchorVector
from apps.graph.selectors import REINDEX_JOB
from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.outcomes import job_announce_failed, jobs_announce_succeeded
from apps.jobs.selectors import job_get
from apps.jobs.services import (
    job_create,
    job_create_indexing,
    job_enqueue_on_commit,
    job_fail,
    jobs_lock_indexing,
    jobs_succeed,
    jobs_touch,
)
from apps.language.pipeline import PARSES
from apps.memory.models import EpisodicEvent, IndexedRecord, SemanticItem
from apps.memory.services import REEMBED_BATCH, memory_reembed_step
from apps.platform.faults import fault_pause
from apps.platform.table_statistics import statistics_refresh
from apps.providers.interfaces import Embedder, MeteringContext
from apps.providers.registry import embedder, graph_llm_for
from apps.providers.services import BufferedUsageMeter
from apps.tenancy.models import Subject
from apps.tenancy.scope import current_organization_id, organization_scope

logger = logging.getLogger(__name__)

_COUNT_VERTICES = "MATCH (v) RETURN count(v)"
INDEXED_STORES: tuple[type[IndexedRecord], ...] = (EpisodicEvent, SemanticItem)
MAX_INDEX_ATTEMPTS = 5
PENDING_GRACE = timedelta(minutes=10)  # a pending row older than this lost its job
SWEEP_CHUNKS = 100


def graph_check(*, organization_id: uuid.UUID) -> dict[str, Any]:
    """Confirm the organization's graph answers Cypher and report its size; an organization
    that has written nothing to its graph yet has none (ADR 0050)."""
    if not adapter.graph_created(organization_id=organization_id):
        return {"graph": "not_created", "vertices": 0}
    rows = adapter.cypher(organization_id=organization_id, query=_COUNT_VERTICES, params={}, returns=["n"])
    return {"graph": "ok", "vertices": int(rows[0][0]) if rows else 0}


def _mark(rows: list[IndexedRecord], *, status: str, error: str = "") -> None:
    for model in INDEXED_STORES:
        ids = [row.id for row in rows if isinstance(row, model)]
        if ids:
            model.objects.filter(id__in=ids).update(
                index_status=status, index_error=error[:200], index_attempts=F("index_attempts") + 1
            )


def _indexer(subject: Subject, meter: BufferedUsageMeter) -> SubjectIndexer:
    return SubjectIndexer(
        subject=subject,
        graph_llm=graph_llm_for(subject.organization_id),
        embedder=embedder(),
        metering=MeteringContext(organization_id=subject.organization_id, meter=meter),
    )


def _index_subject_rows(
    subject: Subject, rows: list[IndexedRecord], totals: IndexStats, meter: BufferedUsageMeter
) -> list[uuid.UUID]:
    """Index a subject's rows as one batch; if the batch fails, row by row, so that one bad row
    cannot hold back the others. A failure never touches the evidence: the row is marked."""
    try:
        with transaction.atomic():
            stats = _indexer(subject, meter).index(rows)
            _mark(rows, status=IndexedRecord.IndexStatus.INDEXED)
            fault_pause("indexing.before_commit")
        _add(totals, stats)
        return []
    except Exception:  # a graph error or a provider failure: isolate it
        logger.warning(
            "batch indexing failed; retrying row by row", extra={"subject_id": str(subject.id), "rows": len(rows)}
        )
    failed = []
    for row in rows:
        try:
            with transaction.atomic():
                stats = _indexer(subject, meter).index([row])
                _mark([row], status=IndexedRecord.IndexStatus.INDEXED)
            _add(totals, stats)
        except Exception as exc:
            # Only the error's class: graph errors can carry other queries' text.
            logger.warning("row indexing failed", extra={"row_id": str(row.id), "error_type": type(exc).__name__})
            _mark([row], status=IndexedRecord.IndexStatus.FAILED, error=f"{type(exc).__name__}: indexing failed")
            failed.append(row.id)
    return failed


def _add(totals: IndexStats, stats: IndexStats) -> None:
    for name, value in stats.as_dict().items():
        setattr(totals, name, getattr(totals, name) + value)


_NEEDS_INDEXING = Q(index_status=IndexedRecord.IndexStatus.PENDING) | Q(
    index_status=IndexedRecord.IndexStatus.FAILED, index_attempts__lt=MAX_INDEX_ATTEMPTS
)


def index_chunk(*, chunk_id: uuid.UUID) -> dict[str, Any]:
    """Index the chunk's rows that still need it (``index_chunks`` of one chunk)."""
    return index_chunks(chunk_ids=[chunk_id])


def index_chunks(*, chunk_ids: list[uuid.UUID]) -> dict[str, Any]:
    """Index the chunks' rows that still need it, each subject's rows of all the chunks as one
    batch (one embedding call for their anchors). Idempotent: indexed rows are skipped, and
    rows another worker is indexing right now are skipped too (SKIP LOCKED). Once this
    transaction commits, the write jobs waiting on the chunks are settled (whoever indexes a
    chunk, a job's own task, another job's, a dream round, completes the jobs it finishes)."""
    organization_id = current_organization_id()
    # Before the jobs settle: a client told its write is indexed searches with statistics
    # that know the new rows (ADR 0083).
    transaction.on_commit(graph_statistics_refresh, robust=True)
    transaction.on_commit(
        lambda: write_jobs_settle_now(organization_id=organization_id, chunk_ids=chunk_ids), robust=True
    )
    by_subject: dict[uuid.UUID, list[IndexedRecord]] = defaultdict(list)
    for model in INDEXED_STORES:
        rows = (
            model.objects.filter(_NEEDS_INDEXING, chunk_id__in=chunk_ids)
            # NO KEY: writers superseding these rows check their foreign key (FOR KEY SHARE)
            # without waiting for the indexer (the lock order is in apps.memory.locks).
            .select_for_update(skip_locked=True, no_key=True)
            .order_by("created_at", "id")
        )
        for row in rows:
            by_subject[row.subject_id].append(row)
    graph_llm = graph_llm_for(organization_id)
    totals = IndexStats()
    failed: list[uuid.UUID] = []
    # The provider replies of every subject, in one insert at the end (a subject whose batch
    # rolls back keeps its replies metered: their tokens were spent).
    meter = BufferedUsageMeter()
    with PARSES.held():  # the batch's parses stay until every subject has read them
        if isinstance(graph_llm, LocalGraphLLM):  # every subject's texts in one parse (ADR 0084)
            graph_llm.parse_ahead([extraction_input(row) for rows in by_subject.values() for row in rows])
        for subject in Subject.objects.filter(id__in=list(by_subject)):
            failed += _index_subject_rows(subject, by_subject[subject.id], totals, meter)
    meter.flush()
    return {**totals.as_dict(), "failed": len(failed)}


# What indexing grows and a search reads by organization and subject.
STATISTICS_TABLES: tuple[str, ...] = (
    *(model._meta.db_table for model in INDEXED_STORES),
    *(model._meta.db_table for model in (AnchorRow, AnchorFrame, AnchorVector)),
)


def graph_statistics_refresh() -> list[str]:
    """Analyze the evidence and graph-plane tables that autovacuum would analyze next
    (``apps.platform.table_statistics``); the tables analyzed."""
    return statistics_refresh(STATISTICS_TABLES)


MAX_FAILURES_LISTED = 100


@dataclass
class IndexProgress:
    """How far the indexing of some chunks' rows got."""

    pending: int = 0
    indexed: int = 0
    failed: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)  # {type, id, error}, the first 100 failed rows


def index_progress(*, jobs: list[Job]) -> dict[uuid.UUID, IndexProgress]:
    """How far the indexing of each job's rows got: one query per store counts the rows of
    every job's chunks by chunk and status; the failed rows are listed only for a job that
    has some."""
    status = IndexedRecord.IndexStatus
    chunk_ids = sorted({chunk_id for job in jobs for chunk_id in job.chunk_ids})
    counts: dict[uuid.UUID, IndexProgress] = defaultdict(IndexProgress)
    for model in INDEXED_STORES:
        for chunk_id, row_status, rows in (
            model.objects.filter(chunk_id__in=chunk_ids)
            .values("chunk_id", "index_status")
            .annotate(rows=Count("id"))
            .values_list("chunk_id", "index_status", "rows")
        ):
            chunk = counts[chunk_id]
            if row_status == status.PENDING:
                chunk.pending += rows
            elif row_status == status.INDEXED:
                chunk.indexed += rows
            elif row_status == status.FAILED:
                chunk.failed += rows
    progress = {}
    for job in jobs:
        of_job = progress[job.id] = IndexProgress()
        for chunk_id in set(job.chunk_ids):
            chunk = counts.get(chunk_id, IndexProgress())
            of_job.pending += chunk.pending
            of_job.indexed += chunk.indexed
            of_job.failed += chunk.failed
        if of_job.failed:
            of_job.failures = _index_failures(chunk_ids=job.chunk_ids)
    return progress


def _index_failures(*, chunk_ids: list[uuid.UUID]) -> list[dict[str, str]]:
    """The first MAX_FAILURES_LISTED failed rows of the chunks, store by store, oldest first."""
    failures: list[dict[str, str]] = []
    for model in INDEXED_STORES:
        memory_type = "episodic" if model is EpisodicEvent else "semantic"
        failures += [
            {"type": memory_type, "id": str(row_id), "error": error}
            for row_id, error in model.objects.filter(
                chunk_id__in=chunk_ids, index_status=IndexedRecord.IndexStatus.FAILED
            )
            .order_by("created_at", "id")
            .values_list("id", "index_error")[: MAX_FAILURES_LISTED - len(failures)]
        ]
        if len(failures) >= MAX_FAILURES_LISTED:
            break
    return failures


def job_chunks_needing_index(*, job_id: uuid.UUID) -> list[uuid.UUID]:
    """The chunks of a write's job with rows still to index, in the order they were written."""
    chunk_ids = job_get(job_id=job_id).chunk_ids
    waiting: set[uuid.UUID] = set()
    for model in INDEXED_STORES:
        waiting |= set(model.objects.filter(_NEEDS_INDEXING, chunk_id__in=chunk_ids).values_list("chunk_id", flat=True))
    return [chunk_id for chunk_id in chunk_ids if chunk_id in waiting]


def write_jobs_settle(*, chunk_ids: list[uuid.UUID] | None = None, job_id: uuid.UUID | None = None) -> list[Job]:
    """Settle the ``indexing`` jobs waiting on any of ``chunk_ids`` (or the job ``job_id``), in the
    organization in scope: a job none of whose rows is pending any more is ``succeeded`` when
    all of them are indexed, else ``failed`` with each failed row and its reason in
    ``result.rows_not_indexed`` (the first 100), or with ``writing_failed`` when its writers
    failed (its messages' rows are kept and indexed; ``result.writing_error`` says why);
    a job with rows pending is only marked as moving. Returns
    the jobs it finished. Race-free under concurrent indexers: the jobs are locked first (in
    id order) and their rows counted after, so of two indexers committing the last two
    chunks of a job, the later one sees both, and a job is finished once."""
    organization_id = current_organization_id()
    jobs = jobs_lock_indexing(chunk_ids=chunk_ids, job_id=job_id)
    progress_of = index_progress(jobs=jobs)
    jobs_touch(job_ids=[job.id for job in jobs if progress_of[job.id].pending])
    finished, succeeded = [], {}
    for job in jobs:
        progress = progress_of[job.id]
        if progress.pending:
            continue
        result = {**job.result, "rows_indexed": progress.indexed, "rows_failed": progress.failed}
        if progress.failed:
            result["rows_not_indexed"] = progress.failures
            job_fail(
                job_id=job.id,
                code="rows_not_indexed",
                message=f"{progress.failed} of {progress.indexed + progress.failed} rows were stored but could not be indexed, so search "
                "may not find them; see result.rows_not_indexed for each reason. The index sweep retries them "
                f"(up to {MAX_INDEX_ATTEMPTS} attempts each).",
                result=result,
            )
            job_announce_failed(organization_id=organization_id, job_id=job.id)
        elif job.result.get("writing_error"):
            job_fail(
                job_id=job.id,
                code="writing_failed",
                message="The messages were stored and indexed as they were said, but the writers could not "
                "derive the other typed rows; see result.writing_error. Write the messages again to retry.",
                result=result,
            )
            job_announce_failed(organization_id=organization_id, job_id=job.id)
        else:
            succeeded[job.id] = result
        finished.append(job)
    if succeeded:
        jobs_succeed(results=succeeded)
        jobs_announce_succeeded(organization_id=organization_id, jobs=[job for job in jobs if job.id in succeeded])
    return finished


def write_jobs_settle_now(*, organization_id: uuid.UUID, chunk_ids: list[uuid.UUID]) -> None:
    """``write_jobs_settle`` in a transaction of its own (after an indexing commit)."""
    with organization_scope(organization_id), acting_as("task:indexing.settle"):
        write_jobs_settle(chunk_ids=chunk_ids)


def index_sweep_chunks() -> list[uuid.UUID]:
    """Chunks of the organization in scope with rows left pending (their job was lost) or failed
    with attempts left (e.g. the graph was unavailable), oldest first, at most 100."""
    stale = Q(index_status=IndexedRecord.IndexStatus.PENDING, created_at__lt=timezone.now() - PENDING_GRACE) | Q(
        index_status=IndexedRecord.IndexStatus.FAILED, index_attempts__lt=MAX_INDEX_ATTEMPTS
    )
    chunks: dict[uuid.UUID, None] = {}
    for model in INDEXED_STORES:
        for chunk_id in (
            model.objects.filter(stale).order_by("created_at").values_list("chunk_id", flat=True)[:SWEEP_CHUNKS]
        ):
            chunks.setdefault(chunk_id, None)
    return list(chunks)[:SWEEP_CHUNKS]


def index_sweep(*, organization_id: uuid.UUID) -> int:
    """Beat, in the organization's scope: rebuild the adjacency index of subjects whose graph
    has none (apps.graph.adjacency.rebuild), and queue one indexing job per chunk with rows
    left pending or failed (bounded attempts per row); returns how many jobs were queued."""
    adjacency_rebuild_missing()
    chunks = index_sweep_chunks()
    for chunk_id in chunks:
        job_create_indexing(organization_id=organization_id, chunk_id=chunk_id)
    return len(chunks)


def index_retry_failed(*, organization_id: uuid.UUID, subject_id: uuid.UUID | None = None) -> list[uuid.UUID]:
    """Give the failed rows (of one subject, or of the whole organization in scope) a fresh
    round of attempts and queue one indexing job per chunk; returns the ids of those jobs."""
    chunks: dict[uuid.UUID, uuid.UUID] = {}
    for model in INDEXED_STORES:
        rows = model.objects.filter(index_status=IndexedRecord.IndexStatus.FAILED)
        if subject_id is not None:
            rows = rows.filter(subject_id=subject_id)
        for chunk_id, row_subject_id in rows.values_list("chunk_id", "subject_id").distinct():
            chunks.setdefault(chunk_id, row_subject_id)
        rows.update(index_status=IndexedRecord.IndexStatus.PENDING, index_attempts=0, index_error="")
    job_ids = []
    for chunk_id, row_subject_id in chunks.items():
        job = job_create_indexing(organization_id=organization_id, chunk_id=chunk_id, subject_id=row_subject_id)
        job_ids.append(job.id)
    return job_ids


# A re-index (ADR 0096): side-table rows deleted per step, and chunks indexed per step.
REINDEX_DELETE_BATCH = 1000
REINDEX_CHUNKS = 20


def subject_reindex_queue(*, subject: Subject) -> Job:
    """Queue the re-index of the subject's graph (ADR 0096), published once the caller commits."""
    job = job_create(organization_id=subject.organization_id, kind=REINDEX_JOB, subject_id=subject.id)
    job_enqueue_on_commit(job=job, task_name=task_names.GRAPH_REINDEX, kwargs={"subject_id": str(subject.id)})
    return job


def subject_graph_clear_step(*, subject: Subject) -> dict[str, int]:
    """One batch of the subject's graph deleted, for a re-index: its edges, then its vertices
    (the graph first: the sweep rebuilds the adjacency index of a graph that has anchors and no
    index), then its anchors' name vectors and adjacency rows. Empty when nothing is left."""
    counts = store.subject_graph_delete_batch(organization_id=subject.organization_id, subject_id=subject.id)
    if any(counts.values()):
        return counts
    for model in (AnchorVector, AnchorFrame, AnchorRow):
        ids: list[Any] = list(
            model.objects.filter(subject_id=subject.id).values_list("pk", flat=True)[:REINDEX_DELETE_BATCH]
        )
        if ids:
            model.objects.filter(pk__in=ids).delete()
            return {model._meta.db_table: len(ids)}
    return {}


def subject_rows_mark_pending(*, subject: Subject) -> int:
    """Every indexed or failed episodic and semantic row of the subject to be indexed again,
    with fresh attempts; returns how many rows the re-index will index (these and those already
    pending). A row still being written is its write's to complete and index, as every write's."""
    statuses = IndexedRecord.IndexStatus
    for model in INDEXED_STORES:
        model.objects.filter(subject_id=subject.id, index_status__in=(statuses.INDEXED, statuses.FAILED)).update(
            index_status=statuses.PENDING, index_attempts=0, index_error=""
        )
    return sum(
        model.objects.filter(subject_id=subject.id, index_status=statuses.PENDING).count() for model in INDEXED_STORES
    )


def subject_index_step(*, subject: Subject, chunks: int = REINDEX_CHUNKS) -> tuple[int, int]:
    """Index up to ``chunks`` chunks with rows of the subject that need it; returns how many
    chunks it took, 0 when no row needs indexing, and how many of the rows it settled (indexed,
    or failed with no attempt left; a failed row with attempts left is taken again by a later
    step)."""
    chunk_ids: dict[uuid.UUID, None] = {}
    for model in INDEXED_STORES:
        needing_rows = model.objects.filter(_NEEDS_INDEXING, subject_id=subject.id).order_by()
        chunk_ids.update(dict.fromkeys(needing_rows.values_list("chunk_id", flat=True).distinct()[:chunks]))
    batch = list(chunk_ids)[:chunks]
    if not batch:
        return 0, 0
    needing = Q(_NEEDS_INDEXING, subject_id=subject.id, chunk_id__in=batch)
    before = sum(model.objects.filter(needing).count() for model in INDEXED_STORES)
    index_chunks(chunk_ids=batch)
    after = sum(model.objects.filter(needing).count() for model in INDEXED_STORES)
    return len(batch), before - after


ADJACENCY_REBUILDS_PER_SWEEP = 10


def adjacency_rebuild_missing() -> list[uuid.UUID]:
    """Subjects of the organization in scope whose graph has anchors but whose adjacency index
    is empty (indexed before the index existed, or restored without it), or whose index has
    frames without recorded citations (indexed before they were recorded, ADR 0048): each
    rebuilt from its graph in a transaction of its own, at most ADJACENCY_REBUILDS_PER_SWEEP
    per call."""
    unrecorded = AnchorFrame.objects.filter(subject_id=OuterRef("pk"), citations__isnull=True)
    subjects = (
        Subject.objects.filter(Exists(AnchorVector.objects.filter(subject_id=OuterRef("pk"))))
        .filter(~Exists(AnchorRow.objects.filter(subject_id=OuterRef("pk"))) | Exists(unrecorded))
        .order_by("id")[:ADJACENCY_REBUILDS_PER_SWEEP]
    )
    rebuilt = []
    for subject in subjects:
        with transaction.atomic():
            store.adjacency_rebuild(organization_id=subject.organization_id, subject_id=subject.id)
        rebuilt.append(subject.id)
    return rebuilt


def graph_reembed_step(*, embedder: Embedder, batch_size: int = REEMBED_BATCH) -> int:
    """One batch of ``memory_reembed_step``; the graph's copies of the episodic and semantic
    vectors (on their mentions) follow in the same transaction. Returns how many rows were
    re-embedded (0: done)."""
    rows = memory_reembed_step(embedder=embedder, batch_size=batch_size)
    if rows and isinstance(rows[0], (EpisodicEvent, SemanticItem)):
        adjacency.refresh_row_vectors(
            organization_id=rows[0].organization_id,
            memory_type="episodic" if isinstance(rows[0], EpisodicEvent) else "semantic",
            rows=[(str(r.id), str(r.subject_id), r.embedding, r.embedding_model) for r in rows],
        )
    return len(rows)
