"""Erasure: of a subject, of what a withdrawn consent purpose covered, of an organization.

A subject or consent erasure is requested in the caller's transaction: the request, its job
and its outbox row commit together, and the job is published on commit. The beat drain
publishes again whatever has not finished when its outbox row falls due (a publish lost
between commit and broker, a job that failed), so every request runs to completion.

The job (``erasure_run``) takes one step per transaction: one bounded batch of one eraser
(see ``registry``), with the counts it erased, under a lock on the request. A retried or
duplicated job continues from the last committed step; nothing is counted twice. Then the
subject row goes (subject erasure), and once all of that has committed, every table rows
were deleted from is rewritten, one per step (``VACUUM (FULL, ANALYZE)`` on the owner
connection, ADR 0022), so the deleted text leaves the table files too. The last step writes
the receipt: counts, the rewrites, times and the SHA-256 of its canonical JSON, recorded in
the audit log.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from apps.audit.services import acting_as, audit_record, current_actor
from apps.erasure import adapter
from apps.erasure.erasers import TRANSIT_KEYS, deletion_counts, receipt_key_tables
from apps.erasure.models import ErasureOutbox, ErasureRequest
from apps.erasure.receipt import counts_merge, receipt_sha256
from apps.erasure.registry import Eraser, ErasureTarget, erasers_for
from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import job_create, job_enqueue_on_commit
from apps.platform.errors import NotFound
from apps.platform.faults import fault_pause
from apps.resources.storage import organization_prefix, storage
from apps.tenancy.models import Organization, Subject
from apps.tenancy.scope import organization_scope
from apps.tenancy.selectors import organization_graph_name
from apps.webhooks.events import SUBJECT_ERASED
from apps.webhooks.services import webhook_event_emit

logger = logging.getLogger(__name__)

# A request's first publish is the on-commit kick; the drain steps in if the job has not
# reported progress within the grace, and again whenever a lease passes without progress.
KICK_GRACE = timedelta(minutes=2)
LEASE = timedelta(minutes=10)
SUBJECT_ROW_STEP = "subject_row"
DRAIN_BATCH = 200
# How long a table rewrite waits for its exclusive lock before it gives the table up (and
# says so in the receipt): readers of the table queue behind a waiting rewrite.
REWRITE_LOCK_TIMEOUT_MS = 5000
# What the receipt says the rewrites cannot reach (ADR 0022).
RETAINED_ELSEWHERE = (
    "Earlier copies remain outside the table files until the operator's retention expires them: "
    "write-ahead log segments until Postgres recycles them, WAL archives, base backups and replicas' own WAL."
)


def subject_key(*, organization_id: uuid.UUID, external_id: str) -> str:
    """A keyed hash of the external id (keyed by the server secret, so a guessed id cannot be
    checked against it without the server): the tombstone of an erased subject."""
    value = f"{organization_id}:{external_id}"
    return salted_hmac("apps.erasure.subject_key", value, algorithm="sha256").hexdigest()


def _erasers(request: ErasureRequest) -> list[Eraser]:
    purposes = None if request.kind == ErasureRequest.Kind.SUBJECT else request.purposes
    return erasers_for(purposes=purposes)


def _publish_on_commit(request: ErasureRequest, job: Job) -> None:
    job_enqueue_on_commit(job=job, task_name=task_names.ERASURE_RUN, kwargs={"erasure_request_id": str(request.id)})


def erasure_request_create(*, subject: Subject, kind: str, purposes: Sequence[str] = ()) -> ErasureRequest:
    """Request an erasure of ``subject`` (or of what ``purposes`` cover), in the caller's
    organization scope and transaction. The caller holds the subject row locked."""
    now = timezone.now()
    request = ErasureRequest(
        organization_id=subject.organization_id,
        kind=kind,
        subject_id=subject.id,
        subject_key=subject_key(organization_id=subject.organization_id, external_id=subject.external_id),
        purposes=sorted(set(purposes)),
        requested_by=current_actor(),
    )
    keys = [key for eraser in _erasers(request) for key in eraser.keys]
    request.counts = dict.fromkeys(keys, 0)
    # The job is not the subject's: it must outlive the subject it erases.
    job = job_create(organization_id=subject.organization_id, kind=f"erasure.{kind}")
    request.job_id = job.id
    request.save(force_insert=True)
    ErasureOutbox.objects.create(
        organization_id=subject.organization_id, erasure_request=request, next_attempt_at=now + KICK_GRACE
    )
    _publish_on_commit(request, job)
    return request


@dataclass(frozen=True)
class SubjectErasure:
    request: ErasureRequest
    created: bool  # False: an earlier request for the subject (pending, running or done)


def subject_erase_request(*, organization_id: uuid.UUID, external_id: str) -> SubjectErasure:
    """``DELETE /v1/subjects/{external_id}``: request the erasure of every trace of a subject.

    Idempotent: while a request runs, and after it erased the subject (found by the tombstone
    of the external id), the same request is returned."""
    subject = Subject.objects.select_for_update().filter(external_id=external_id).first()
    if subject is None:
        key = subject_key(organization_id=organization_id, external_id=external_id)
        done = (
            ErasureRequest.objects.filter(kind=ErasureRequest.Kind.SUBJECT, subject_key=key)
            .order_by("-requested_at")
            .first()
        )
        if done is None:
            raise NotFound(f"No subject with external_id {external_id!r} in this organization.")
        return SubjectErasure(request=done, created=False)
    running = (
        ErasureRequest.objects.filter(kind=ErasureRequest.Kind.SUBJECT, subject_id=subject.id)
        .exclude(status=ErasureRequest.Status.COMPLETED)
        .first()
    )
    if running is not None:
        return SubjectErasure(request=running, created=False)
    request = erasure_request_create(subject=subject, kind=ErasureRequest.Kind.SUBJECT)
    logger.info(
        "subject erasure requested", extra={"erasure_request_id": str(request.id), "subject_id": str(subject.id)}
    )
    return SubjectErasure(request=request, created=True)


# --- the job ------------------------------------------------------------------------------------


def _progress(request: ErasureRequest) -> dict[str, Any]:
    return {
        "erasure_request_id": str(request.id),
        "status": request.status,
        "steps_done": list(request.steps_done),
        "counts": dict(request.counts),
        "receipt_sha256": request.receipt_sha256 or None,
    }


def _outbox_touch(request: ErasureRequest, *, now: datetime, done: bool = False) -> None:
    changes: dict[str, Any] = {"next_attempt_at": now + LEASE}
    if done:
        changes["done_at"] = now
    ErasureOutbox.objects.filter(erasure_request=request).update(**changes)


def erasure_run(*, erasure_request_id: uuid.UUID) -> Generator[dict[str, Any], None, dict[str, Any]]:
    """The erasure job's body: each ``next`` is one step, to run in a transaction of its own
    in the request's organization scope; the return value is the final progress."""
    external_id: str | None = None  # for the subject.erased event; None after a restart past the row
    while True:
        request = ErasureRequest.objects.select_for_update().filter(id=erasure_request_id).first()
        if request is None:
            return {"erasure_request_id": str(erasure_request_id), "status": "missing"}
        if request.status == ErasureRequest.Status.COMPLETED:
            return _progress(request)
        now = timezone.now()
        if request.status == ErasureRequest.Status.PENDING:
            request.status = ErasureRequest.Status.RUNNING
            request.started_at = now
        assert request.subject_id is not None
        target = ErasureTarget(organization_id=request.organization_id, subject_id=request.subject_id)
        step = next((e for e in _erasers(request) if e.name not in request.steps_done), None)
        if step is None:
            if request.kind == ErasureRequest.Kind.SUBJECT and SUBJECT_ROW_STEP not in request.steps_done:
                external_id = _subject_row_delete(request) or external_id
            elif (relation := _next_rewrite(request)) is not None:
                request.storage = [*request.storage, _rewrite(relation)]
            else:
                _complete(request, now=now, external_id=external_id)
                return _progress(request)
            request.save(update_fields=["status", "started_at", "counts", "steps_done", "storage"])
            _outbox_touch(request, now=now)
            yield _progress(request)
            continue
        # Every eraser step holds the subject row exclusively: anything writing the subject's
        # data holds it shared (a foreign key insert does; see apps.consent.locks), so a step
        # waits for such writes to commit and erases what they wrote. (The rewrites take no
        # such lock: a lock of this transaction would block the rewrite of its table.)
        Subject.objects.select_for_update().filter(id=request.subject_id).first()
        erased = {key: count for key, count in step.erase(target).items() if count}
        if erased:
            request.counts = counts_merge(request.counts, erased)
        else:
            request.steps_done = [*request.steps_done, step.name]
        request.save(update_fields=["status", "started_at", "counts", "steps_done"])
        _outbox_touch(request, now=now)
        fault_pause(f"erasure.step.{step.name}")
        yield _progress(request)


def _subject_row_delete(request: ErasureRequest) -> str | None:
    """Delete the subject row and whatever still hangs off it (counted); its external id."""
    assert request.subject_id is not None
    request.steps_done = [*request.steps_done, SUBJECT_ROW_STEP]
    subject = Subject.objects.select_for_update().filter(id=request.subject_id).first()
    if subject is None:
        return None
    _, per_model = Subject.objects.filter(id=subject.id).delete()
    request.counts = counts_merge(request.counts, deletion_counts(per_model))
    return subject.external_id


def _touched_relations(request: ErasureRequest) -> list[str]:
    """The tables the erasure deleted rows from, found from its counts: the stores' tables
    (with everything that cascaded), the tables that held its text in transit, and, when graph
    elements went, the graph's tables."""
    erased = [key for key, count in request.counts.items() if count]
    relations = receipt_key_tables([*erased, *TRANSIT_KEYS] if erased else [])
    if {"graph_vertices", "graph_edges"} & set(erased):
        graph_name = organization_graph_name(organization_id=request.organization_id)
        if graph_name:
            relations += adapter.graph_relations(graph_name=graph_name)
    return relations


def _next_rewrite(request: ErasureRequest) -> str | None:
    done = {entry["relation"] for entry in request.storage}
    return next((relation for relation in _touched_relations(request) if relation not in done), None)


def _rewrite(relation: str) -> dict[str, Any]:
    """One table rewritten, or why not (the receipt says so; the space is then reused by the
    table's routine vacuum)."""
    started = timezone.now()
    status = adapter.relation_rewrite(relation=relation, lock_timeout_ms=REWRITE_LOCK_TIMEOUT_MS)
    if status != "rewritten":
        logger.warning("erasure table rewrite skipped", extra={"relation": relation, "status": status})
    return {"relation": relation, "status": status, "at": started.isoformat()}


def _complete(request: ErasureRequest, *, now: datetime, external_id: str | None = None) -> None:
    request.status = ErasureRequest.Status.COMPLETED
    request.completed_at = now
    request.receipt = erasure_receipt(request)
    request.receipt_sha256 = receipt_sha256(request.receipt)
    request.save(update_fields=["status", "started_at", "counts", "completed_at", "receipt", "receipt_sha256"])
    _outbox_touch(request, now=now, done=True)
    audit_record(
        organization_id=request.organization_id,
        action=f"erasure.{request.kind}.completed",
        subject_id=request.subject_id,
        target_ids=[str(request.id), f"receipt:sha256:{request.receipt_sha256}"],
    )
    if request.kind == ErasureRequest.Kind.SUBJECT:
        webhook_event_emit(
            organization_id=request.organization_id,
            event_type=SUBJECT_ERASED,
            payload={
                "subject_id": str(request.subject_id),
                "subject_external_id": external_id,
                "erasure_request_id": str(request.id),
                "receipt_sha256": request.receipt_sha256,
                "counts": request.counts,
            },
        )
    logger.info(
        "erasure completed",
        extra={"erasure_request_id": str(request.id), "kind": request.kind, "receipt_sha256": request.receipt_sha256},
    )


def erasure_receipt(request: ErasureRequest) -> dict[str, Any]:
    """What the receipt says — ids, counts and times, never content — and so what its hash covers."""
    assert request.completed_at is not None
    return {
        "erasure_request_id": str(request.id),
        "organization_id": str(request.organization_id),
        "kind": request.kind,
        "subject_id": str(request.subject_id) if request.subject_id else None,
        "subject_key": request.subject_key or None,
        "purposes": list(request.purposes),
        "requested_by": request.requested_by,
        "requested_at": request.requested_at.isoformat(),
        "completed_at": request.completed_at.isoformat(),
        "counts": dict(sorted(request.counts.items())),
        **({} if request.kind == ErasureRequest.Kind.ORGANIZATION else {"storage": _storage_receipt(request)}),
    }


def _storage_receipt(request: ErasureRequest) -> dict[str, Any]:
    """What was done to the table files, and what the operator's retention still holds."""
    return {
        "method": "VACUUM (FULL, ANALYZE) of each table rows were deleted from, after the deletes committed",
        "relations": list(request.storage),
        "retained_elsewhere": RETAINED_ELSEWHERE,
    }


# --- the outbox drain ---------------------------------------------------------------------------


def erasure_outbox_drain(*, now: datetime | None = None) -> int:
    """Beat: publish every erasure whose outbox row is due and not done (a platform
    operation over organizations); returns how many were published."""
    now = now or timezone.now()
    due = list(
        ErasureOutbox.objects.dangerously_across_organizations()
        .filter(done_at__isnull=True, next_attempt_at__lte=now)
        .order_by("next_attempt_at")
        .values_list("organization_id", "id")[:DRAIN_BATCH]
    )
    published = 0
    for organization_id, outbox_id in due:
        with organization_scope(organization_id), acting_as(f"task:{task_names.ERASURE_DRAIN}"):
            published += _outbox_publish(outbox_id=outbox_id, now=now)
    return published


def _outbox_publish(*, outbox_id: uuid.UUID, now: datetime) -> int:
    due = ErasureOutbox.objects.filter(id=outbox_id, done_at__isnull=True, next_attempt_at__lte=now)
    request_id = due.values_list("erasure_request_id", flat=True).first()
    if request_id is None:
        return 0  # done meanwhile
    # Locked in the order a step locks them (request, then outbox). A request that is locked
    # has a step running: it is alive, and its next step pushes the outbox row's time on.
    request = ErasureRequest.objects.select_for_update(skip_locked=True).filter(id=request_id).first()
    outbox = due.select_for_update(skip_locked=True).first() if request is not None else None
    if request is None or outbox is None:
        return 0
    if request.status == ErasureRequest.Status.COMPLETED:
        outbox.done_at = now
        outbox.save(update_fields=["done_at"])
        return 0
    job = Job.objects.filter(id=request.job_id).first() if request.job_id else None
    if job is None or job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED):
        # A finished job is never claimed again: a new one continues where the last stopped.
        job = job_create(organization_id=request.organization_id, kind=f"erasure.{request.kind}")
        request.job_id = job.id
        request.save(update_fields=["job_id"])
    outbox.next_attempt_at = now + LEASE
    outbox.publish_count += 1
    outbox.last_published_at = now
    outbox.save(update_fields=["next_attempt_at", "publish_count", "last_published_at"])
    _publish_on_commit(request, job)
    logger.info(
        "erasure republished",
        extra={"erasure_request_id": str(request.id), "job_id": str(job.id), "publish_count": outbox.publish_count},
    )
    return 1


# --- organizations --------------------------------------------------------------------------------


def organization_erase(*, organization_id: uuid.UUID) -> ErasureRequest:
    """Erase an organization (console, platform operation): its objects, its graph and every
    row it owns, then the organization itself. Returns the completed request with its receipt,
    which outlives the organization (as does its audit log). Safe to call again after a
    failure, and after success (it returns the same receipt)."""
    across = ErasureRequest.objects.dangerously_across_organizations()
    with transaction.atomic(using="owner"):
        organization = (
            Organization.objects.dangerously_across_organizations()
            .select_for_update()
            .filter(id=organization_id)
            .first()
        )
        request = across.filter(organization_id=organization_id, kind=ErasureRequest.Kind.ORGANIZATION).first()
        if organization is None:
            if request is not None and request.status == ErasureRequest.Status.COMPLETED:
                return request
            raise NotFound("Organization not found.")
        if organization.status != Organization.Status.OFFBOARDING:
            # Its keys stop working now, before anything is erased.
            organization.status = Organization.Status.OFFBOARDING
            organization.save(using="owner", update_fields=["status"])
        if request is None:
            request = ErasureRequest(
                organization_id=organization_id,
                kind=ErasureRequest.Kind.ORGANIZATION,
                status=ErasureRequest.Status.RUNNING,
                requested_by=current_actor(),
                started_at=timezone.now(),
            )
            request.save(using="owner", force_insert=True)
        graph_name = organization.graph_name
    with organization_scope(organization_id):
        audit_record(
            organization_id=organization_id, action="erasure.organization.started", target_ids=[str(request.id)]
        )
    objects = storage().delete_prefix(organization_prefix(organization_id=organization_id))
    with transaction.atomic(using="owner"):
        request = across.select_for_update().get(id=request.id)
        request.counts = counts_merge(request.counts, {"objects": objects})
        request.save(using="owner", update_fields=["counts"])
    with transaction.atomic(using="owner"):
        request = across.select_for_update().get(id=request.id)
        organization_exists = (
            Organization.objects.dangerously_across_organizations().select_for_update().filter(id=organization_id)
        ).exists()
        if organization_exists:
            rows = adapter.organization_rows_erase(
                organization_id=organization_id, graph_name=graph_name, keep_tables={"audit_entry", "erasure_request"}
            )
            _, per_model = across.filter(organization_id=organization_id).exclude(id=request.id).delete()
            rows["erasure_request"] = per_model.get(ErasureRequest._meta.label, 0)
            request.counts = counts_merge(request.counts, {key: n for key, n in rows.items() if n})
        request.status = ErasureRequest.Status.COMPLETED
        request.completed_at = timezone.now()
        request.receipt = erasure_receipt(request)
        request.receipt_sha256 = receipt_sha256(request.receipt)
        request.save(using="owner")
    with organization_scope(organization_id):
        audit_record(
            organization_id=organization_id,
            action="erasure.organization.completed",
            target_ids=[str(request.id), f"receipt:sha256:{request.receipt_sha256}"],
        )
    logger.info(
        "organization erased",
        extra={"organization_id": str(organization_id), "receipt_sha256": request.receipt_sha256},
    )
    return request
