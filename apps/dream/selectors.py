from __future__ import annotations

from django.db.models import QuerySet

from apps.dream.models import DreamMerge
from apps.tenancy.models import Subject


def dream_merges_list(*, subject: Subject, limit: int) -> QuerySet[DreamMerge]:
    """The subject's merges, newest first (the snapshot is not loaded)."""
    return DreamMerge.objects.filter(subject=subject).defer("snapshot").order_by("-created_at", "id")[:limit]
