"""What happens after a delivery attempt: delivered, retry later, give up, or endpoint gone.
Framework-free.

The schedule (setting ``WEBHOOKS_RETRY_SCHEDULE``) lists the delay before each attempt of a
round, the first being "now"; each delay gets ±10 % jitter so failed deliveries of many
endpoints do not retry in lockstep. A 429 or 503 with ``Retry-After`` is not retried before
the time it asks for. A 3xx is a failure: redirects are never followed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from enum import StrEnum

JITTER = 0.10
MAX_RETRY_AFTER_SECONDS = 86400.0
RETRY_AFTER_STATUSES = frozenset({429, 503})
GONE = 410


class Verdict(StrEnum):
    DELIVERED = "delivered"
    RETRY = "retry"
    EXHAUSTED = "exhausted"
    GONE = "gone"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    delay_seconds: float | None = None  # only for RETRY


def retry_after_seconds(value: str | None, *, now: datetime) -> float | None:
    """``Retry-After`` as seconds from ``now``: delta-seconds or an HTTP date; None if absent or invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - now).total_seconds())


def decide(
    *,
    status_code: int | None,
    attempts_in_round: int,
    schedule: Sequence[float],
    retry_after: float | None = None,
    rng: random.Random | None = None,
) -> Decision:
    """``status_code`` is None when no response came back (refused, unreachable, timed out)."""
    if status_code is not None and 200 <= status_code < 300:
        return Decision(Verdict.DELIVERED)
    if status_code == GONE:
        return Decision(Verdict.GONE)
    if attempts_in_round >= len(schedule):
        return Decision(Verdict.EXHAUSTED)
    delay = schedule[attempts_in_round] * (1 + (rng or random).uniform(-JITTER, JITTER))
    if status_code in RETRY_AFTER_STATUSES and retry_after is not None:
        delay = max(delay, min(retry_after, MAX_RETRY_AFTER_SECONDS))
    return Decision(Verdict.RETRY, delay)
