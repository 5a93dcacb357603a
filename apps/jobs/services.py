"""Job lifecycle, and the one way a task is published.

A job row commits with the work that asked for it; its task is published after commit
(:func:`publish_on_commit`), never from inside the transaction. A lost publish (the process
died between commit and publish) is found again: events that must happen (webhooks,
erasure) through their outbox tables and drains, jobs through :func:`jobs_sweep`, which
also resumes a stepwise job whose worker died (its heartbeat stopped) from its last
committed step, and publishes again the indexing of a write whose job stopped moving (its
publish was lost, e.g. the process died right after the commit).

A write's job (ADR 0031) records the chunks it wrote; once written it is ``indexing``, and
the indexing step settles it (``apps.graph.services.write_jobs_settle``) when the last of
its rows is indexed or failed. :func:`job_wait` is how a request waits for that.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.cache import cache
from django.db import connection, models, transaction
from django.db.models import F, Func, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.selectors import job_get
from apps.platform.budget import budget_remaining
from apps.platform.bulk import rows_update
from apps.platform.faults import fault_pause
from apps.tenancy.scope import current_organization_id, organization_scope

logger = logging.getLogger(__name__)


# The tasks a request publishes on its commit: a write's completion and an indexing job.
_REQUEST_TASKS = (task_names.WRITE_COMPLETE, task_names.INDEX_CHUNK)


def publisher_warm() -> None:
    """Connect this process's task publisher before its first request (ADR 0052), and route and
    declare the queues of the tasks a request publishes, building one message of each: the
    first publish would otherwise do all of it inside a customer's write (declaring a queue
    is idempotent; nothing is sent)."""
    from mirix_saas.celery import app

    app.backend  # noqa: B018 - loads the result backend, which sending a task reads
    with app.producer_or_acquire() as producer:
        producer.connection.ensure_connection(max_retries=1)
        for name in _REQUEST_TASKS:
            queue = app.amqp.router.route({}, name, (), {})["queue"]
            producer.maybe_declare(queue)
            app.amqp.create_task_message(f"warm-{name}", name, (), {})


def publish_on_commit(
    task_name: str,
    *,
    kwargs: Mapping[str, Any],
    queue: str | None = None,
    expires: float | None = None,
    coalesce_key: str | None = None,
    coalesce_seconds: int = 0,
) -> None:
    """Publish ``task_name`` once the current transaction commits (at once outside one); the
    name routes it to its queue unless ``queue`` is given. With ``coalesce_key``, nothing is
    published while a message published under that key in the last ``coalesce_seconds`` is
    still marked queued (its consumer clears the mark when it starts). A failed publish is
    logged, never raised into a request that already committed: the outbox drains and
    :func:`jobs_sweep` publish again what was lost."""
    from mirix_saas.celery import app

    task_kwargs = dict(kwargs)
    options: dict[str, Any] = {}
    if queue is not None:
        options["queue"] = queue
    if expires is not None:
        options["expires"] = expires

    def publish() -> None:
        fault_pause("jobs.publish")  # the crash tests kill a process here, after its commit
        if coalesce_key is not None and not cache.add(coalesce_key, 1, timeout=coalesce_seconds):
            return
        app.send_task(task_name, kwargs=task_kwargs, **options)

    transaction.on_commit(publish, robust=True)


def job_create(
    *, organization_id: uuid.UUID, kind: str, subject_id: uuid.UUID | None = None, api_key_id: uuid.UUID | None = None
) -> Job:
    """A queued job; ``api_key_id`` is the key whose request submits it, if its work is credited
    to that key (a batch's rows and tokens)."""
    return Job.objects.create(organization_id=organization_id, kind=kind, subject_id=subject_id, api_key_id=api_key_id)


def job_create_indexing(*, organization_id: uuid.UUID, chunk_id: uuid.UUID, subject_id: uuid.UUID | None = None) -> Job:
    """The job of rows already written (a write in the request, or rows the index sweep
    picks up again): ``indexing`` from the start, its indexing published after commit. The
    job row commits with the rows, so it is their outbox: if the publish is lost, the jobs
    sweep publishes it again once the job has not moved for ``JOBS_STALE_SECONDS``."""
    now = timezone.now()
    job = Job(
        organization_id=organization_id,
        kind="memory.index",
        subject_id=subject_id,
        status=Job.Status.INDEXING,
        chunk_ids=[chunk_id],
        started_at=now,
        heartbeat_at=now,
    )
    return _insert_enqueued(job=job, task_name=task_names.INDEX_CHUNK)


WRITE_JOB_KIND = "memory.write"


def job_create_writing(*, organization_id: uuid.UUID, chunk_id: uuid.UUID, subject_id: uuid.UUID | None = None) -> Job:
    """The job of a write accepted in its request (ADR 0054): ``queued`` until a worker has
    completed the write (routing, the other typed rows, embeddings), then ``indexing``. Its
    task is published after commit; the job row commits with the write, so a lost publish is
    published again by the jobs sweep."""
    job = Job(organization_id=organization_id, kind=WRITE_JOB_KIND, subject_id=subject_id, chunk_ids=[chunk_id])
    _set_task(job, task_names.WRITE_COMPLETE, None)
    job.save(force_insert=True)
    _publish_completion(organization_id=organization_id, kwargs=job.task_kwargs)
    return job


# How long the mark of a queued completion task keeps further writes from publishing one (ADR
# 0084); a mark outlives a lost message by at most this, then the next write publishes again.
WRITES_COMPLETION_MARK_SECONDS = 30


def _completion_mark(organization_id: uuid.UUID) -> str:
    return f"memory:complete-queued:{organization_id}"


def _publish_completion(*, organization_id: uuid.UUID, kwargs: Mapping[str, Any]) -> None:
    """One completion task queued per organization, not one per write (ADR 0084): a write
    whose commit finds one queued publishes nothing, since that task, which clears the mark
    before it reads the waiting writes, completes it. One task per write made a worker spend
    a task's fixed cost (about 25 ms) on each write that an earlier task had completed."""
    publish_on_commit(
        task_names.WRITE_COMPLETE,
        kwargs=kwargs,
        coalesce_key=_completion_mark(organization_id),
        coalesce_seconds=WRITES_COMPLETION_MARK_SECONDS,
    )


def writes_completion_started(*, organization_id: uuid.UUID) -> None:
    """A completion task starts: the next write publishes a task again. Called before the
    task reads the waiting writes, so a write that found the mark set is among them."""
    cache.delete(_completion_mark(organization_id))


def writes_completion_continue(*, organization_id: uuid.UUID, job_id: uuid.UUID) -> None:
    """A completion task's batch was full, so more writes may wait: a task for them (another
    worker process may take it meanwhile), unless one is queued already."""
    _publish_completion(
        organization_id=organization_id, kwargs={"organization_id": str(organization_id), "job_id": str(job_id)}
    )


def jobs_finish_accepted(*, results: dict[uuid.UUID, dict[str, Any]]) -> None:
    """Accepted writes are completed (their rows written and embedded): each job is
    ``indexing``, with its result, until the last of its rows is indexed; one statement for
    all of them. A job failed meanwhile stays failed."""
    now = timezone.now()
    jobs = [
        Job(
            id=job_id,
            status=Job.Status.INDEXING,
            result=result,
            started_at=Coalesce("started_at", Value(now)),
            heartbeat_at=now,
        )
        for job_id, result in results.items()
    ]
    Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).bulk_update(
        jobs, ["status", "result", "started_at", "heartbeat_at"]
    )


def job_add_chunk(*, job: Job, chunk_id: uuid.UUID) -> None:
    """A job that is writing (a batch) wrote ``chunk_id``: it waits on its rows too, and the
    chunk's indexing is published after commit (one task per chunk, so that several indexing
    workers share a batch)."""
    appended = Func(
        F("chunk_ids"),
        Value(chunk_id, output_field=models.UUIDField()),
        function="array_append",
        output_field=ArrayField(models.UUIDField()),
    )
    Job.objects.filter(id=job.id).update(chunk_ids=appended)
    publish_on_commit(
        task_names.INDEX_CHUNK,
        kwargs={"organization_id": str(job.organization_id), "job_id": str(job.id), "chunk_id": str(chunk_id)},
    )


def _set_task(job: Job, task_name: str, kwargs: dict[str, Any] | None) -> None:
    job.task_name = task_name
    job.task_kwargs = {"organization_id": str(job.organization_id), "job_id": str(job.id), **(kwargs or {})}


def _insert_enqueued(*, job: Job, task_name: str) -> Job:
    """A new job inserted with what runs it (one statement, on the write path) and published
    after commit."""
    _set_task(job, task_name, None)
    job.save(force_insert=True)
    publish_on_commit(task_name, kwargs=job.task_kwargs)
    return job


def job_enqueue_on_commit(*, job: Job, task_name: str, kwargs: dict[str, Any] | None = None) -> None:
    """Record on the job what runs it (the sweep publishes it again from that) and publish
    it after commit."""
    _set_task(job, task_name, kwargs)
    Job.objects.filter(id=job.id).update(task_name=job.task_name, task_kwargs=job.task_kwargs)
    publish_on_commit(task_name, kwargs=job.task_kwargs)


def job_start(*, job_id: uuid.UUID) -> Job | None:
    """Claim a job for running. Returns None when it already finished (a redelivered message)."""
    job = Job.objects.select_for_update().filter(id=job_id).first()
    if job is None or job.status in (Job.Status.INDEXING, Job.Status.SUCCEEDED, Job.Status.FAILED):
        return None  # finished, or its writing is (an indexing job is its indexing's to settle)
    now = timezone.now()
    job.status = Job.Status.RUNNING
    job.attempts += 1
    job.started_at = job.started_at or now
    job.heartbeat_at = now
    job.save(update_fields=["status", "attempts", "started_at", "heartbeat_at"])
    return job


def job_progress(*, job_id: uuid.UUID, result: dict[str, Any]) -> None:
    Job.objects.filter(id=job_id).update(result=result, heartbeat_at=timezone.now())


def job_release(*, job_id: uuid.UUID) -> None:
    """A running job whose task will be retried goes back to ``queued`` until the retry claims it."""
    Job.objects.filter(id=job_id, status=Job.Status.RUNNING).update(
        status=Job.Status.QUEUED, heartbeat_at=timezone.now()
    )


def job_succeed(*, job_id: uuid.UUID, result: dict[str, Any]) -> None:
    jobs_succeed(results={job_id: result})


def jobs_succeed(*, results: dict[uuid.UUID, dict[str, Any]]) -> None:
    """Each job (of the organization in scope) succeeded, with its result: one statement for
    all of them (``rows_update``: Django's ``bulk_update`` builds a ``CASE`` per job and field)."""
    now = timezone.now()
    jobs = [
        Job(id=job_id, status=Job.Status.SUCCEEDED, finished_at=now, result=result)
        for job_id, result in results.items()
    ]
    rows_update(jobs, ["status", "finished_at", "result"], organization_id=current_organization_id())


def job_fail(*, job_id: uuid.UUID, code: str, message: str, result: dict[str, Any] | None = None) -> None:
    changes: dict[str, Any] = {"result": result} if result is not None else {}
    Job.objects.filter(id=job_id).update(
        status=Job.Status.FAILED,
        finished_at=timezone.now(),
        error_code=code[:64],
        error_message=message[:500],
        **changes,
    )


def job_finish_writing(*, job_id: uuid.UUID, result: dict[str, Any]) -> str:
    """A running job's work is done: ``succeeded`` if it wrote no rows to index, else
    ``indexing``, with one more indexing task published after commit (it indexes whatever of
    the job is still pending, then settles the job: the job's last chunk may have been indexed
    before this commit). A job failed meanwhile stays failed. Returns the job's status."""
    job = Job.objects.select_for_update().get(id=job_id)
    if job.status != Job.Status.RUNNING:
        return str(job.status)
    now = timezone.now()
    job.result = result
    if job.chunk_ids:
        job.status, job.heartbeat_at = Job.Status.INDEXING, now
        job.save(update_fields=["status", "heartbeat_at", "result"])
        publish_on_commit(
            task_names.INDEX_CHUNK, kwargs={"organization_id": str(job.organization_id), "job_id": str(job.id)}
        )
    else:
        job.status, job.finished_at = Job.Status.SUCCEEDED, now
        job.save(update_fields=["status", "finished_at", "result"])
    return str(job.status)


def jobs_lock_indexing(*, chunk_ids: list[uuid.UUID] | None = None, job_id: uuid.UUID | None = None) -> list[Job]:
    """The ``indexing`` jobs waiting on any of ``chunk_ids`` (or the one job ``job_id``), locked in id
    order (one order for every settler, so two never deadlock). A settler holding the lock
    counts the job's pending rows with a snapshot taken after every earlier settler's commit."""
    jobs = Job.objects.select_for_update().filter(status=Job.Status.INDEXING)
    if job_id is not None:
        jobs = jobs.filter(id=job_id)
    if chunk_ids is not None:
        jobs = jobs.filter(chunk_ids__overlap=chunk_ids)
    return list(jobs.order_by("id"))


def jobs_touch(*, job_ids: list[uuid.UUID]) -> None:
    """The jobs moved (one of their chunks was indexed): the sweep leaves them alone for a while."""
    if job_ids:
        Job.objects.filter(id__in=job_ids).update(heartbeat_at=timezone.now())


WAIT_FIRST_POLL_SECONDS = 0.05
WAIT_MAX_POLL_SECONDS = 0.5
WAIT_BUDGET_MARGIN_SECONDS = 1.0


def wait_poll_delays(*, first: float = WAIT_FIRST_POLL_SECONDS, cap: float = WAIT_MAX_POLL_SECONDS) -> Iterator[float]:
    """The pauses between two looks at a job: from 50 ms, growing by half each time, at most
    500 ms (a short write is answered soon after it is indexed; a long wait costs two short
    queries a second)."""
    delay = first
    while True:
        yield delay
        delay = min(cap, delay * 1.5)


def job_wait(*, organization_id: uuid.UUID, job_id: uuid.UUID, timeout: float) -> Job:
    """The job once it is finished (``succeeded`` or ``failed``), or as it is when ``timeout``
    seconds (cut to what is left of the request's budget, less a second to answer) have
    passed. Each look is a short transaction of its own; nothing is held between looks. Call
    it outside any transaction: what it waits for is work that other processes commit."""
    assert not connection.in_atomic_block, "job_wait runs outside a transaction"
    remaining = budget_remaining()
    if remaining is not None:
        timeout = min(timeout, remaining - WAIT_BUDGET_MARGIN_SECONDS)
    deadline = time.monotonic() + timeout
    delays = wait_poll_delays()
    while True:
        with organization_scope(organization_id):
            job = job_get(job_id=job_id)
        left = deadline - time.monotonic()
        if job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED) or left <= 0:
            return job
        time.sleep(min(next(delays), left))


@contextmanager
def job_heartbeat(*, organization_id: uuid.UUID, job_id: uuid.UUID) -> Iterator[None]:
    """While the block runs, a thread of the worker stamps the job's heartbeat every
    ``JOBS_HEARTBEAT_SECONDS`` (in a connection and transaction of its own), so that a long
    step of a healthy job never looks like a dead worker; a killed worker's heartbeat stops."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(settings.JOBS_HEARTBEAT_SECONDS):
                with organization_scope(organization_id):
                    Job.objects.filter(id=job_id, status=Job.Status.RUNNING).update(heartbeat_at=timezone.now())
        except Exception:
            logger.exception("job heartbeat stopped", extra={"job_id": str(job_id)})
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"heartbeat-{job_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@dataclass(frozen=True)
class SweepResult:
    resumed: int  # running jobs whose worker died, and indexing jobs that stopped moving, published again
    republished: int  # queued jobs whose publish was lost, published again
    failed: int  # running jobs whose worker died and that cannot be resumed

    @property
    def total(self) -> int:
        return self.resumed + self.republished + self.failed


def jobs_sweep(*, now: datetime | None = None) -> SweepResult:
    """In the organization in scope: a running job whose heartbeat is older than
    ``JOBS_STALE_SECONDS`` lost its worker; it goes back to ``queued`` and is published again
    (its steps are idempotent and resume after the last committed one), or is failed when it
    records no task or was resumed ``JOBS_MAX_RESUMES`` times already (a job that kills its
    worker). A queued job not picked up within ``JOBS_QUEUED_REPUBLISH_SECONDS`` is published
    again. An ``indexing`` job none of whose chunks was indexed for ``JOBS_STALE_SECONDS`` has
    its indexing published again (the same bound of resumes, then it fails). A job whose
    heartbeat is fresh is never touched, however long it has run."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.JOBS_STALE_SECONDS)
    resumed = failed = republished = 0
    for job in (
        Job.objects.select_for_update(skip_locked=True)
        .filter(status=Job.Status.RUNNING)
        .filter(Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, started_at__lt=stale))
    ):
        if job.task_name and job.resumes < settings.JOBS_MAX_RESUMES:
            job.status, job.heartbeat_at, job.resumes = Job.Status.QUEUED, now, job.resumes + 1
            job.save(update_fields=["status", "heartbeat_at", "resumes"])
            publish_on_commit(job.task_name, kwargs=job.task_kwargs)
            resumed += 1
        else:
            job_fail(job_id=job.id, code="worker_lost", message="The job's worker stopped and it could not be resumed.")
            failed += 1
    waiting = list(
        Job.objects.select_for_update(skip_locked=True)
        .alias(last_seen=Coalesce("heartbeat_at", "created_at"))
        .filter(status=Job.Status.QUEUED, kind=WRITE_JOB_KIND, last_seen__lt=stale)
        .order_by("created_at", "id")
    )
    if waiting:
        # Accepted writes not completed for a while (ADR 0054): a publish was lost (the process
        # died after its commit) or a worker died mid-batch. One task completes every waiting
        # write of the organization, so the oldest job's is published again, once.
        Job.objects.filter(id__in=[job.id for job in waiting]).update(heartbeat_at=now, resumes=F("resumes") + 1)
        publish_on_commit(waiting[0].task_name, kwargs=waiting[0].task_kwargs)
        resumed += len(waiting)
    lost = now - timedelta(seconds=settings.JOBS_QUEUED_REPUBLISH_SECONDS)
    for job in (
        Job.objects.select_for_update(skip_locked=True)
        .alias(last_seen=Coalesce("heartbeat_at", "created_at"))
        .filter(status=Job.Status.QUEUED, last_seen__lt=lost)
        .exclude(task_name="")
    ):
        job.heartbeat_at = now
        job.save(update_fields=["heartbeat_at"])
        publish_on_commit(job.task_name, kwargs=job.task_kwargs)
        republished += 1
    for job in Job.objects.select_for_update(skip_locked=True).filter(
        status=Job.Status.INDEXING, heartbeat_at__lt=stale
    ):
        # Written, but no chunk of it indexed for a while: its indexing publish was lost (the
        # process died after its commit) or its indexing worker died. Published again: the
        # task indexes what is still pending and settles the job.
        if job.resumes < settings.JOBS_MAX_RESUMES:
            job.heartbeat_at, job.resumes = now, job.resumes + 1
            job.save(update_fields=["heartbeat_at", "resumes"])
            publish_on_commit(
                task_names.INDEX_CHUNK, kwargs={"organization_id": str(job.organization_id), "job_id": str(job.id)}
            )
            resumed += 1
        else:
            job_fail(
                job_id=job.id,
                code="indexing_stalled",
                message="The rows were written but their indexing did not progress; they stay stored, "
                "and the index sweep indexes them once an indexing worker is back.",
            )
            failed += 1
    if resumed or failed or republished:
        logger.warning("jobs swept", extra={"resumed": resumed, "failed": failed, "republished": republished})
    return SweepResult(resumed=resumed, republished=republished, failed=failed)
