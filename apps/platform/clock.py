"""The clock that retrying and scheduling code reads: wall time, elapsed time and waiting.
Framework-free.

Modules that wait or schedule hold a module-level ``clock`` (the system clock) and call it
instead of ``time``/``timezone`` directly, so that a test can install a clock whose sleeps
return at once and move time forward: retries and schedules are then checked to the
millisecond without the test waiting for them.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware (UTC)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back, for measuring durations."""
        ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


SYSTEM_CLOCK: Clock = SystemClock()
