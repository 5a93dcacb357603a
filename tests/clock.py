"""A clock for tests: real time plus the time it skipped.

``sleep`` returns at once and adds its seconds to an offset that ``now`` and ``monotonic``
include, so code under test sees exactly the waits it asked for while the test does not wait.
Time still moves with the real clock too: rows stamped by code that reads the real clock are
never in this clock's future.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta


class SkippingClock:
    def __init__(self) -> None:
        self._skipped = 0.0
        self._lock = threading.Lock()
        self.sleeps: list[float] = []  # every sleep asked for, in order

    @property
    def skipped(self) -> float:
        return self._skipped

    def now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self._skipped)

    def monotonic(self) -> float:
        return time.monotonic() + self._skipped

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self._skipped += max(0.0, seconds)

    def advance_to(self, moment: datetime) -> None:
        """Skip forward to ``moment`` (nothing if it has passed)."""
        ahead = (moment - self.now()).total_seconds()
        if ahead > 0:
            with self._lock:
                self._skipped += ahead
