"""Per-key rate limits and per-organization monthly quotas, counted in the shared cache."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from apps.tenancy.authentication import ApiKeyPrincipal


@dataclass(frozen=True)
class RateLimitState:
    """The key's window after this request, for the ``X-RateLimit-*`` headers."""

    limit: int
    remaining: int
    reset: int  # Unix time (seconds) when the window ends and the count starts again

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }


def _count(key: str, ttl: int) -> int:
    """A fixed-window counter in one round trip: the window starts at 0 with its TTL if it is
    new (SET NX EX) and is incremented, both in one MULTI, so no counter lives without a TTL."""
    raw = cache.make_and_validate_key(key)
    client = cache._cache.get_client(raw, write=True)  # type: ignore[attr-defined]
    with client.pipeline(transaction=True) as pipe:
        pipe.set(raw, 0, ex=ttl, nx=True)
        pipe.incr(raw)
        _, used = pipe.execute()
    return int(used)


class ApiKeyRateThrottle(BaseThrottle):
    window_seconds = 60

    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        principal = request.auth
        if not isinstance(principal, ApiKeyPrincipal):
            return True
        limit = principal.rate_limit_per_minute or settings.API_KEY_RATE_PER_MINUTE
        now = time.time()
        window = int(now // self.window_seconds)
        used = _count(f"rate:{principal.api_key_id}:{window}", self.window_seconds + 5)
        # The view sends it back as headers, on success and on a 429 alike.
        view.rate_limit = RateLimitState(
            limit=limit, remaining=max(limit - used, 0), reset=(window + 1) * self.window_seconds
        )
        if used <= limit:
            return True
        self._wait = (window + 1) * self.window_seconds - now
        return False

    def wait(self) -> float | None:
        return self._wait


def _month_key(organization_id: object, now: datetime) -> str:
    return f"quota:{organization_id}:{now.year:04d}{now.month:02d}"


def _next_month(now: datetime) -> datetime:
    return datetime(now.year + now.month // 12, now.month % 12 + 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class QuotaStatus:
    """The organization's monthly request quota as the throttle counts it (UTC months)."""

    limit: int
    used: int
    resets_at: datetime

    @property
    def left(self) -> int:
        return max(0, self.limit - self.used)


def quota_status(*, organization_id: uuid.UUID, monthly_request_quota: int | None) -> QuotaStatus:
    now = datetime.now(UTC)
    used = cache.get(_month_key(organization_id, now)) or 0
    return QuotaStatus(
        limit=monthly_request_quota or settings.ORGANIZATION_DEFAULT_MONTHLY_QUOTA,
        used=int(used),
        resets_at=_next_month(now),
    )


class OrganizationQuotaThrottle(BaseThrottle):
    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        principal = request.auth
        if not isinstance(principal, ApiKeyPrincipal):
            return True
        quota = principal.monthly_request_quota or settings.ORGANIZATION_DEFAULT_MONTHLY_QUOTA
        now = datetime.now(UTC)
        if _count(_month_key(principal.organization_id, now), 32 * 24 * 3600) <= quota:
            return True
        self._wait = (_next_month(now) - now).total_seconds()
        return False

    def wait(self) -> float | None:
        return self._wait
