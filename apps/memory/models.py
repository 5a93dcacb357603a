"""The six typed memory stores: the system of record.

Rows are never changed in place. A writer's update appends a new row whose ``supersedes``
points at the row it replaces; the old row stays readable and citable. Only erasure deletes.
The one mutable column is the graph ``index_status`` of episodic and semantic rows, which
describes the index, not the evidence.
"""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from pgvector.django import VectorField

from apps.tenancy.models import Subject, TenantModel


class EvidenceRecord(TenantModel):
    """Columns common to every store: identity, owner, provenance, creation time."""

    class SourceKind(models.TextChoices):
        CHAT = "chat"
        TEXT = "text"
        DOCUMENT = "document"
        API = "api"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    source_kind = models.CharField(max_length=16, choices=SourceKind.choices)
    session_id = models.CharField(max_length=200, blank=True, default="")
    chunk_id = models.UUIDField()
    source_message_ids = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    # Only erasure deletes evidence, and it takes a row together with its whole chain.
    supersedes = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # The write's tags (apps.memory.metadata), on every row it produced; filters read them.
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        abstract = True


class EmbeddedRecord(EvidenceRecord):
    """Rows searchable by meaning: an embedding of any dimension, tagged with its model, and
    a full-text vector for keyword search."""

    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=100, blank=True, default="")

    class Meta:
        abstract = True


class IndexedRecord(EmbeddedRecord):
    """Episodic and semantic rows, which the provenance hypergraph indexes."""

    class IndexStatus(models.TextChoices):
        # Stored in the write's request, not yet embedded: a worker completes the write
        # (routing, the other typed rows, the embedding) and makes it ``pending`` (ADR 0054).
        WRITING = "writing"
        PENDING = "pending"
        INDEXED = "indexed"
        FAILED = "failed"

    index_status = models.CharField(max_length=16, choices=IndexStatus.choices, default=IndexStatus.PENDING)
    index_error = models.CharField(max_length=200, blank=True, default="")
    index_attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        abstract = True


def _search_vector(*fields: str) -> models.GeneratedField:
    """Full-text search over the row's text, kept by Postgres itself (a generated column)."""
    return models.GeneratedField(
        expression=SearchVector(*fields, config="english"), output_field=SearchVectorField(), db_persist=True
    )


def _supersedes_once(prefix: str) -> models.UniqueConstraint:
    """A row is superseded at most once: concurrent updates of one row cannot fork history."""
    return models.UniqueConstraint(fields=["supersedes"], name=f"{prefix}_supersedes_once")


def _evidence_indexes(prefix: str, *, searchable: bool) -> list[models.Index]:
    indexes: list[models.Index] = [
        models.Index(fields=["organization", "subject", "created_at"], name=f"{prefix}_subject_created"),
        models.Index(fields=["organization", "chunk_id"], name=f"{prefix}_chunk"),
        GinIndex(fields=["metadata"], name=f"{prefix}_metadata"),
    ]
    if searchable:
        indexes.append(GinIndex(fields=["search_vector"], name=f"{prefix}_search"))
    return indexes


class CoreBlock(EvidenceRecord):
    """A labelled block of always-in-context memory (persona, human, …) with a size limit."""

    label = models.CharField(max_length=64)
    value = models.TextField()
    char_limit = models.PositiveIntegerField(default=5000)

    class Meta:
        db_table = "memory_core_block"
        constraints = [_supersedes_once("mcore")]
        indexes = [
            *_evidence_indexes("mcore", searchable=False),
            models.Index(fields=["subject", "label"], name="mcore_label"),
        ]


class EpisodicEvent(IndexedRecord):
    class Status(models.TextChoices):
        PLANNED = "planned"
        DONE = "done"

    actor = models.CharField(max_length=200)
    event_type = models.CharField(max_length=100)
    summary = models.TextField()
    details = models.TextField()
    event_time = models.DateTimeField(null=True, blank=True)  # when it happened / is planned
    event_time_precision = models.CharField(max_length=8, blank=True, default="")
    mention_time = models.DateTimeField()  # when it was said or written
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.DONE)
    # A passage of a resource (a pasted or uploaded document): which one, and where in its
    # text the passage is, ``extracted_text[resource_start:resource_end]`` (ADR 0025).
    resource_id = models.UUIDField(null=True, blank=True)
    resource_start = models.PositiveIntegerField(null=True, blank=True)
    resource_end = models.PositiveIntegerField(null=True, blank=True)
    search_vector = _search_vector("actor", "summary", "details")

    class Meta:
        db_table = "memory_episodic_event"
        constraints = [_supersedes_once("mepi")]
        indexes = [
            *_evidence_indexes("mepi", searchable=True),
            models.Index(fields=["organization", "subject", "event_time"], name="mepi_event_time"),
            # A subject's chunk in order: a row's same-chunk neighbours are two short index
            # scans, with no sort and no second index to intersect (ADR 0083).
            models.Index(fields=["organization", "subject", "chunk_id", "created_at", "id"], name="mepi_subject_chunk"),
            models.Index(
                fields=["organization", "resource_id", "resource_start"],
                name="mepi_resource_passage",
                condition=models.Q(resource_id__isnull=False),
            ),
        ]


class SemanticItem(IndexedRecord):
    """A fact about an entity. ``(name, attribute)`` is the fact's key: a new value supersedes
    only the current row of the same key (the entity's name compared case-insensitively), so
    facts about one person of other attributes stay current. Rows from before the attribute
    existed keep an empty one and are superseded only by an update of their own."""

    name = models.CharField(max_length=300)
    attribute = models.CharField(max_length=100, blank=True, default="")
    summary = models.TextField()
    details = models.TextField()
    source = models.CharField(max_length=300)
    search_vector = _search_vector("name", "summary", "details")

    class Meta:
        db_table = "memory_semantic_item"
        constraints = [_supersedes_once("msem")]
        indexes = [
            *_evidence_indexes("msem", searchable=True),
            models.Index(fields=["organization", "subject", "name", "attribute"], name="msem_name_attribute"),
        ]


class ProceduralItem(EmbeddedRecord):
    title = models.CharField(max_length=300)
    summary = models.TextField()
    steps = models.JSONField(default=list)
    domain = models.CharField(max_length=100)
    search_vector = _search_vector("title", "summary", "domain")

    class Meta:
        db_table = "memory_procedural_item"
        constraints = [_supersedes_once("mproc")]
        indexes = _evidence_indexes("mproc", searchable=True)


class ResourceItem(EmbeddedRecord):
    title = models.CharField(max_length=300)
    summary = models.TextField()
    resource_type = models.CharField(max_length=32)
    content_type = models.CharField(max_length=100)
    object_key = models.CharField(max_length=500)
    size_bytes = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    extracted_text = models.TextField()
    search_vector = _search_vector("title", "summary", "extracted_text")

    class Meta:
        db_table = "memory_resource_item"
        constraints = [_supersedes_once("mres")]
        indexes = _evidence_indexes("mres", searchable=True)


class VaultEntry(EvidenceRecord):
    """A sensitive value: encrypted at rest, never embedded, indexed or sent to a model."""

    class Sensitivity(models.TextChoices):
        HIGH = "high"
        MEDIUM = "medium"

    entry_type = models.CharField(max_length=32)
    source = models.CharField(max_length=300)
    sensitivity = models.CharField(max_length=8, choices=Sensitivity.choices)
    caption = models.CharField(max_length=300)
    ciphertext = models.BinaryField()
    nonce = models.BinaryField()
    data_key_version = models.PositiveIntegerField()

    class Meta:
        db_table = "memory_vault_entry"
        constraints = [_supersedes_once("mvault")]
        indexes = _evidence_indexes("mvault", searchable=False)


STORES: dict[str, type[EvidenceRecord]] = {
    "core": CoreBlock,
    "episodic": EpisodicEvent,
    "semantic": SemanticItem,
    "procedural": ProceduralItem,
    "resource": ResourceItem,
    "vault": VaultEntry,
}


class PendingWrite(TenantModel):
    """A write accepted in its request (ADR 0054): its messages are stored as episodic rows
    (and its documents as resources and passages, its sensitive values in the vault); what
    is left, routing, the other typed rows and the embeddings, waits here for a worker, with
    the redacted conversation the writers read. Deleted once done: content is not kept past
    its use."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, related_name="+")
    chunk_id = models.UUIDField()
    source_kind = models.CharField(max_length=16)
    session_id = models.CharField(max_length=200, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    api_key_id = models.UUIDField(null=True, blank=True)  # whose the model tokens are
    # The redacted conversation: [{id, role, name, content, timestamp}], documents left out.
    messages = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "memory_pending_write"
        indexes = [models.Index(fields=["organization", "created_at"], name="mpend_org_created")]

    def __str__(self) -> str:
        return f"pending write {self.chunk_id}"


class IngestionBatch(TenantModel):
    """Ordered chunks for one subject, written one by one by a job; holds content until done."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, related_name="+")
    session_id = models.CharField(max_length=200, blank=True, default="")
    chunks = models.JSONField()
    chunks_total = models.PositiveIntegerField()
    chunks_done = models.PositiveIntegerField(default=0)
    records_written = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "memory_ingestion_batch"

    def __str__(self) -> str:
        return f"batch {self.id} ({self.chunks_done}/{self.chunks_total})"


class IngestionBatchChunk(TenantModel):
    """One written chunk of a batch, committed with the chunk's rows: the unique (batch, index)
    refuses a second write of a chunk, whatever runs the batch again."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    batch = models.ForeignKey(IngestionBatch, on_delete=models.CASCADE, related_name="+")
    index = models.PositiveIntegerField()
    chunk_id = models.UUIDField(null=True)  # the rows' provenance chunk id; null: the chunk stored nothing
    records_written = models.PositiveIntegerField()
    written_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "memory_ingestion_batch_chunk"
        constraints = [models.UniqueConstraint(fields=["batch", "index"], name="batch_chunk_once")]

    def __str__(self) -> str:
        return f"batch {self.batch_id} chunk {self.index}"
