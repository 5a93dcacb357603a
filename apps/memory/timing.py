"""A stopwatch that splits the write path's time by phase. Framework-free.

Each phase also counts in the request's own timings when it asks for them
(``apps.platform.timing``), so a write answered over HTTP reports routing, writing and
embedding beside the SQL and the commit."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

from apps.platform.timing import phase as request_phase


class Stopwatch:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            with request_phase(name):
                yield
        finally:
            self.seconds[name] += time.perf_counter() - start

    def merge(self, other: Stopwatch) -> None:
        for name, seconds in other.seconds.items():
            self.seconds[name] += seconds
