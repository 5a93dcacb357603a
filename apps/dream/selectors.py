from __future__ import annotations

import uuid
from datetime import datetime

from django.db.models import Q, QuerySet

from apps.dream.models import DreamMerge
from apps.tenancy.models import Subject


def dream_merges_list(
    *, subject: Subject, limit: int, before: tuple[datetime, uuid.UUID] | None = None
) -> QuerySet[DreamMerge]:
    """The subject's merges, newest first, before ``before`` (created_at, id); the snapshot is
    not loaded."""
    merges = DreamMerge.objects.filter(subject=subject).defer("snapshot")
    if before is not None:
        created_at, merge_id = before
        merges = merges.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=merge_id))
    return merges.order_by("-created_at", "-id")[:limit]
