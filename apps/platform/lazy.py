"""A value built on first use, once per process, safely under concurrent first use."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    def __init__(self, load: Callable[[], T]) -> None:
        self._load = load
        self._value: T | None = None
        self._lock = threading.Lock()

    def loaded(self) -> T | None:
        """The value if it was built already, else None (never builds it)."""
        return self._value

    def get(self) -> T:
        value = self._value
        if value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._load()
                value = self._value
        return value
