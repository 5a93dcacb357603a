from __future__ import annotations

import uuid

from django.db import models
from pgvector.django import VectorField

from apps.tenancy.models import Subject, TenantModel


class AnchorVector(TenantModel):
    """The name embedding of one anchor, beside the graph: pgvector ANN for canonicalization and
    for retrieval's anchor entry. Keyed like the anchor: (subject, κ)."""

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
