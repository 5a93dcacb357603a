from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Sum

from apps.providers.models import ProviderUsage


@dataclass(frozen=True)
class UsageTotals:
    calls: int
    prompt_tokens: int
    completion_tokens: int


def usage_totals_by_purpose(*, since: datetime | None = None, until: datetime | None = None) -> dict[str, UsageTotals]:
    """The organization in scope's token usage per purpose, over ``[since, until)``."""
    queryset = ProviderUsage.objects.all()
    if since is not None:
        queryset = queryset.filter(created_at__gte=since)
    if until is not None:
        queryset = queryset.filter(created_at__lt=until)
    rows = (
        queryset.values("purpose")
        .annotate(calls=Count("id"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"))
        .order_by("purpose")
    )
    return {
        row["purpose"]: UsageTotals(
            calls=row["calls"], prompt_tokens=row["prompt"], completion_tokens=row["completion"]
        )
        for row in rows
    }
