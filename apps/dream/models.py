"""Records of semantic AutoDream: its rounds, every merge (with what undoing it needs), the
negative cache, and which anchors served as a source. All of it is index metadata about one
subject; none of it is evidence."""

from __future__ import annotations

import uuid

from django.db import models

from apps.tenancy.models import Subject, TenantModel


class DreamRound(TenantModel):
    """One round of one dream job: intermediate, final, or the repair round after a final."""

    class Kind(models.TextChoices):
        INTERMEDIATE = "intermediate"
        FINAL = "final"
        REPAIR = "repair"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    job = models.ForeignKey("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    chunk_ids = models.JSONField(default=list)
    frontier_rows = models.PositiveIntegerField(default=0)
    sources = models.PositiveIntegerField(default=0)
    pairs_considered = models.PositiveIntegerField(default=0)
    verified = models.PositiveIntegerField(default=0)
    merged = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)
    cached = models.PositiveIntegerField(default=0)
    skipped_by_cap = models.PositiveIntegerField(default=0)
    invalid = models.PositiveIntegerField(default=0)
    stale = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(default=0.0)

    class Meta:
        db_table = "dream_round"
        indexes = [models.Index(fields=["organization", "subject", "started_at"], name="dream_round_subject")]
        constraints = [models.UniqueConstraint(fields=["job", "kind"], name="dream_round_job_kind")]

    def __str__(self) -> str:
        return f"{self.kind} dream round {self.id}"


class DreamMerge(TenantModel):
    """A merge a→b: the pair, the decision, when, by which job; and the snapshot that undoes it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    round = models.ForeignKey(DreamRound, null=True, blank=True, on_delete=models.SET_NULL, related_name="merges")
    job = models.ForeignKey("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    anchor_type = models.CharField(max_length=32)
    source_key = models.CharField(max_length=300)
    source_name = models.CharField(max_length=300)
    target_key = models.CharField(max_length=300)
    target_name = models.CharField(max_length=300)
    cosine = models.FloatField()
    decided_by = models.CharField(max_length=120)
    frames_rekeyed = models.PositiveIntegerField(default=0)
    frames_united = models.PositiveIntegerField(default=0)
    snapshot = models.JSONField()
    after_digest = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "dream_merge"
        indexes = [models.Index(fields=["organization", "subject", "created_at"], name="dream_merge_subject")]

    def __str__(self) -> str:
        return f"{self.source_key} → {self.target_key}"


class DreamRejection(TenantModel):
    """An explicit "not the same entity", cached by hash(sorted case-folded pair, type)."""

    id = models.BigAutoField(primary_key=True)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    cache_key = models.CharField(max_length=64)
    anchor_type = models.CharField(max_length=32)
    decided_by = models.CharField(max_length=120)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "dream_rejection"
        constraints = [
            models.UniqueConstraint(fields=["organization", "subject", "cache_key"], name="dream_rejection_unique")
        ]

    def __str__(self) -> str:
        return f"rejection {self.cache_key[:12]}"


class DreamSource(TenantModel):
    """An anchor some round used as a source (the final round adds the eligible ones never used)."""

    id = models.BigAutoField(primary_key=True)
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")
    anchor_key = models.CharField(max_length=300)

    class Meta:
        db_table = "dream_source"
        constraints = [
            models.UniqueConstraint(fields=["organization", "subject", "anchor_key"], name="dream_source_unique")
        ]

    def __str__(self) -> str:
        return self.anchor_key
