from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from pgvector.django import HalfVectorField, VectorField

from apps.tenancy.models import Subject, TenantModel


class AnchorVector(TenantModel):
    """The name embedding of one anchor, beside the graph: pgvector ANN for canonicalization and
    for retrieval's anchor entry. Keyed like the anchor: (subject, anchor key)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    anchor_key = models.CharField(max_length=300)
    name = models.CharField(max_length=300)
    anchor_type = models.CharField(max_length=32)
    embedding = VectorField()
    embedding_model = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "graph_anchor_vector"
        constraints = [
            models.UniqueConstraint(fields=["organization", "subject", "anchor_key"], name="anchor_vector_key_unique")
        ]
        indexes = [models.Index(fields=["organization", "subject", "anchor_type"], name="anchor_vector_subject_type")]

    def __str__(self) -> str:
        return f"{self.anchor_key} ({self.anchor_type})"


class AnchorFrame(TenantModel):
    """Adjacency index beside the graph: one row per (anchor, incident frame), with the frame's
    predicate, the anchor's roles in it and the rows the frame cites. Maintained by the graph
    store's writes in the same transaction and rebuildable from the frames
    (``apps.graph.adjacency``).

    ``citations`` lets a filtered read keep only frames that cite a matching row before it
    caps them (ADR 0048); ``NULL`` means "not recorded yet" (a frame indexed before the
    column existed, until the subject's index is rebuilt) and passes that test."""

    id = models.BigAutoField(primary_key=True)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    anchor_key = models.CharField(max_length=300)
    frame_id = models.CharField(max_length=200)
    predicate = models.CharField(max_length=200)
    roles = ArrayField(models.CharField(max_length=64), default=list)
    event_time = models.CharField(max_length=40, blank=True, default="")
    citations = ArrayField(models.UUIDField(), null=True, blank=True)

    class Meta:
        db_table = "graph_anchor_frame"
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "subject", "anchor_key", "frame_id"], name="anchor_frame_unique"
            )
        ]
        indexes = [
            models.Index(
                fields=["organization", "subject", "anchor_key", "predicate", "frame_id"],
                name="anchor_frame_predicate",
            ),
            models.Index(fields=["organization", "subject", "frame_id"], name="anchor_frame_frame"),
        ]

    def __str__(self) -> str:
        return f"{self.anchor_key} ← {self.frame_id}"


class AnchorRow(TenantModel):
    """Adjacency index beside the graph: one row per (anchor, evidence row that mentions it).
    The serial ``id`` orders mentions by arrival, so "the newest rows of an anchor" is one
    bounded index scan. The anchor vertex keeps only counts and its newest few ids.

    Each mention carries a half-precision copy of its row's vector (ADR 0019), so an anchor's
    mentions are ranked by similarity to a question without reading the evidence tables, and a
    copy of its row's full-text vector (ADR 0115), so the mentions with a question's words are
    found without reading them either."""

    id = models.BigAutoField(primary_key=True)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    anchor_key = models.CharField(max_length=300)
    memory_type = models.CharField(max_length=16)
    row_id = models.UUIDField()
    embedding = HalfVectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=100, blank=True, default="")
    search_vector = SearchVectorField(null=True, blank=True)

    class Meta:
        db_table = "graph_anchor_row"
        constraints = [
            # Row first: it also answers "which anchors mention these rows", and an anchor's
            # mentions are read only through anchor_row_newest (ADR 0019).
            models.UniqueConstraint(
                fields=["organization", "subject", "row_id", "anchor_key"], name="anchor_row_unique_by_row"
            )
        ]
        indexes = [
            models.Index(
                fields=["organization", "subject", "anchor_key", "memory_type", "id"], name="anchor_row_newest"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.anchor_key} ← {self.memory_type}:{self.row_id}"
