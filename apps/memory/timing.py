"""A stopwatch that splits the write path's time by phase. Framework-free."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager


class Stopwatch:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - start

    def merge(self, other: Stopwatch) -> None:
        for name, seconds in other.seconds.items():
            self.seconds[name] += seconds
