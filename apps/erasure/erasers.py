"""The built-in erasure steps: every store and side store of the platform as it stands.

Each step deletes one bounded batch per call, through the ORM (so Django's cascades run and
are counted) or the graph store (the graph), in the organization's scope.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from django.apps import apps as django_apps
from django.db import models
from django.db.models import F

from apps.consent.purposes import STORE_CONVERSATIONS, STORE_SENSITIVE_VALUES
from apps.erasure.registry import Counts, Eraser, ErasureTarget, eraser_register
from apps.graph import store
from apps.graph.models import AnchorFrame, AnchorRow, AnchorVector
from apps.jobs.models import Job
from apps.memory.models import STORES, IngestionBatch, PendingWrite, VaultEntry
from apps.resources.storage import storage, subject_prefix
from apps.tenancy.models import Subject
from apps.webhooks.models import WebhookEvent

DELETE_BATCH = 500

# Models whose rows outlive the subject on purpose: the append-only audit log and erasure
# requests hold ids, counts and hashes only (ADR 0008).
RETAINED_MODELS = frozenset({"audit.auditentry", "erasure.erasurerequest"})


# How a receipt names rows: the store name, or a short plural; other models, their table.
_RECEIPT_KEYS = {
    **{model._meta.label_lower: name for name, model in STORES.items()},
    "memory.ingestionbatch": "ingestion_batches",
    "memory.pendingwrite": "pending_writes",
    "jobs.job": "jobs",
    "webhooks.webhookevent": "webhook_events",
    "webhooks.webhookdelivery": "webhook_deliveries",
    "webhooks.webhookattempt": "webhook_attempts",
    "graph.anchorvector": "anchor_vectors",
    "graph.anchorframe": "anchor_frames",
    "graph.anchorrow": "anchor_rows",
    "consent.consentrecord": "consent_records",
    "tenancy.subject": "subjects",
}


def receipt_key(model: type[models.Model]) -> str:
    return _RECEIPT_KEYS.get(model._meta.label_lower, model._meta.db_table)


# Tables that hold a subject's text only in transit: a row is deleted once a worker used it
# (a write's conversation until it is completed, ADR 0054), so an erasure finds no row to
# count there, yet the dead row versions keep the text in the table's files until rewritten.
TRANSIT_KEYS = ("pending_writes",)


def receipt_key_tables(keys: Collection[str]) -> list[str]:
    """The tables (qualified) whose rows a receipt's keys count: the tables an erasure
    deleted rows from, found again from its counts (graph keys are the graph's, elsewhere)."""
    wanted = set(keys)
    tables = {
        f"public.{model._meta.db_table}"
        for model in django_apps.get_models(include_auto_created=True)
        if receipt_key(model) in wanted
    }
    return sorted(tables)


def deletion_counts(per_model: Mapping[str, int]) -> Counts:
    """Django's ``delete()`` counts (by model label) as receipt counts."""
    counts: Counts = {}
    for label, count in per_model.items():
        if count:
            key = receipt_key(django_apps.get_model(label))
            counts[key] = counts.get(key, 0) + count
    return counts


def delete_batch(rows: models.QuerySet[Any]) -> Counts:
    """Delete up to ``DELETE_BATCH`` of ``rows`` with everything that cascades from them."""
    ids = list(rows.order_by().values_list("pk", flat=True)[:DELETE_BATCH])
    if not ids:
        return {}
    _, per_model = rows.filter(pk__in=ids).delete()
    return deletion_counts(per_model)


def subject_rows(model: type[models.Model], target: ErasureTarget) -> models.QuerySet[Any]:
    rows = model._base_manager.filter(subject_id=target.subject_id)
    if any(f.attname == "organization_id" for f in model._meta.concrete_fields):
        rows = rows.filter(organization_id=target.organization_id)
    return rows


def _model_eraser(model: type[models.Model]) -> Any:
    def erase(target: ErasureTarget) -> Counts:
        return delete_batch(subject_rows(model, target))

    return erase


def _pending_batches_erase(target: ErasureTarget) -> Counts:
    """A pending batch holds the chunks it has yet to write: delete its job, and the batch
    with it, so that a queued step finds nothing to do. (A finished batch keeps no content;
    its row goes with its job when the subject is erased.)"""
    pending = subject_rows(IngestionBatch, target).filter(chunks_done__lt=F("chunks_total"))
    return delete_batch(Job.objects.filter(id__in=pending.values("job_id")))


def _pending_writes_erase(target: ErasureTarget) -> Counts:
    """A write accepted but not yet completed holds its conversation: delete its job, and the
    pending write with it, so that no worker completes it after the stores were erased."""
    return delete_batch(Job.objects.filter(id__in=subject_rows(PendingWrite, target).values("job_id")))


def _graph_erase(target: ErasureTarget) -> Counts:
    return store.subject_graph_delete_batch(organization_id=target.organization_id, subject_id=target.subject_id)


def _objects_erase(target: ErasureTarget) -> Counts:
    prefix = subject_prefix(organization_id=target.organization_id, subject_id=target.subject_id)
    return {"objects": storage().delete_prefix(prefix)}


def subject_owned_models() -> list[type[models.Model]]:
    """Every installed model with a ``subject`` foreign key or a ``subject_id`` column, but
    the subject itself and the retained ones."""
    found = []
    for model in django_apps.get_models():
        if model is Subject or model._meta.label_lower in RETAINED_MODELS:
            continue
        if any(f.attname == "subject_id" for f in model._meta.concrete_fields):
            found.append(model)
    return sorted(found, key=lambda m: m._meta.label_lower)


def _subject_rows_erase(target: ErasureTarget) -> Counts:
    """What no other step erased: a batch of the first model that still has rows of the subject."""
    for model in subject_owned_models():
        counts = delete_batch(subject_rows(model, target))
        if counts:
            return counts
    return {}


def register_builtin_erasers() -> None:
    conversations = frozenset({STORE_CONVERSATIONS})
    storage_purposes = frozenset({STORE_CONVERSATIONS, STORE_SENSITIVE_VALUES})
    steps = [
        # Pending batches first: a batch step in flight commits before this one can delete
        # it, and the rows it wrote are then erased by the store steps below.
        Eraser("pending_batches", _pending_batches_erase, ("ingestion_batches",), storage_purposes, order=100),
        Eraser("pending_writes", _pending_writes_erase, ("pending_writes",), storage_purposes, order=101),
        Eraser("webhook_events", _model_eraser(WebhookEvent), ("webhook_events",), conversations, order=150),
        Eraser("vault", _model_eraser(VaultEntry), ("vault",), frozenset({STORE_SENSITIVE_VALUES}), order=200),
        *(
            Eraser(name, _model_eraser(model), (name,), conversations, order=210 + position)
            for position, (name, model) in enumerate(STORES.items())
            if model is not VaultEntry
        ),
        # Name embeddings of the subject's anchors, kept beside the graph.
        Eraser("anchor_vectors", _model_eraser(AnchorVector), ("anchor_vectors",), conversations, order=300),
        # The adjacency index beside the graph (which frames and rows touch each anchor).
        Eraser("anchor_frames", _model_eraser(AnchorFrame), ("anchor_frames",), conversations, order=302),
        Eraser("anchor_rows", _model_eraser(AnchorRow), ("anchor_rows",), conversations, order=304),
        Eraser("graph", _graph_erase, ("graph_vertices", "graph_edges"), conversations, order=310),
        Eraser("objects", _objects_erase, ("objects",), conversations, order=400),
        # Subject erasure only: what the subject's remaining jobs and any other model hold.
        Eraser("jobs", _model_eraser(Job), ("jobs",), order=800),
        Eraser("subject_rows", _subject_rows_erase, order=900),
    ]
    for step in steps:
        eraser_register(step)
