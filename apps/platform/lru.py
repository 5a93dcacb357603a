"""The most recently used values of a computation, by key, kept in the process. Pure.

For work that is the same every time it is asked (a text's parse, a text's vector) and is
asked again soon: a worker parses and embeds the same names and messages batch after batch.
A batch's misses are computed in one call, which is what makes the batched models cheap.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class RecentValues(Generic[K, V]):
    """Up to ``size`` values, the least recently used dropped first; safe under threads (a
    miss is computed outside the lock: two threads may compute the same value, never wrongly)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: K) -> bool:
        return key in self._values

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def many(self, keys: Sequence[K], compute: Callable[[list[K]], Sequence[V]]) -> list[V]:
        """The value of each key, in order; the distinct keys not kept are computed in one
        ``compute`` call (in the order of their first occurrence) and kept."""
        found: dict[K, V] = {}
        for key in dict.fromkeys(keys):
            value = self.get(key)
            if value is not None:
                found[key] = value
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        if missing:
            computed = compute(missing)
            if len(computed) != len(missing):
                raise ValueError(f"computed {len(computed)} values for {len(missing)} keys")
            for key, value in zip(missing, computed, strict=True):
                found[key] = value
                self.put(key, value)
        return [found[key] for key in keys]
