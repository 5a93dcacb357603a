"""Where a request's time goes: phases timed by the code that runs them. Framework-free.

A request that asks for its timings (``apps.platform.middleware.ServerTimingMiddleware``)
opens a :class:`PhaseTimer` for its context; code on the request's path marks its work with
``with phase("embedding"):``. Phases nest and are *exclusive*: while an inner phase runs, the
outer one is paused, so an SQL statement inside the graph lanes counts as ``sql`` and not also
as ``retrieval``, and the phases of one request add up to its time in the application (the
rest of the total is ``other``: the framework, parsing, middleware).

With no timer open, ``phase`` is one context-variable read and a shared no-op context manager:
cheap enough to leave on every path (the write path's stopwatch, the embedder, every SQL
statement of a timed request).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext


class PhaseTimer:
    """Exclusive milliseconds per phase name, for one request."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.ms: dict[str, float] = {}
        self._clock = clock
        self._open: list[list[object]] = []  # [name, start of its running stretch]
        self._began = clock()

    def enter(self, name: str) -> None:
        now = self._clock()
        if self._open:
            self._pause(self._open[-1], now)
        self._open.append([name, now])

    def exit(self) -> None:
        now = self._clock()
        self._pause(self._open.pop(), now)
        if self._open:
            self._open[-1][1] = now

    def _pause(self, stretch: list[object], now: float) -> None:
        name, start = stretch
        assert isinstance(name, str) and isinstance(start, int | float)
        self.ms[name] = self.ms.get(name, 0.0) + (now - start) * 1000

    def total_ms(self) -> float:
        return (self._clock() - self._began) * 1000

    def header(self) -> str:
        """The ``Server-Timing`` value: each phase, ``other`` (the rest) and ``total``."""
        total = self.total_ms()
        phases = sorted(self.ms.items(), key=lambda item: -item[1])
        other = max(0.0, total - sum(ms for _, ms in phases))
        parts = [f"{name};dur={ms:.2f}" for name, ms in [*phases, ("other", other), ("total", total)]]
        return ", ".join(parts)


_timer: contextvars.ContextVar[PhaseTimer | None] = contextvars.ContextVar("phase_timer", default=None)
_OFF: AbstractContextManager[None] = nullcontext()


@contextmanager
def timed_request(clock: Callable[[], float] = time.perf_counter) -> Iterator[PhaseTimer]:
    """Open a timer for the block (a request); ``phase`` records into it."""
    timer = PhaseTimer(clock)
    token = _timer.set(timer)
    try:
        yield timer
    finally:
        _timer.reset(token)


def timing_active() -> bool:
    return _timer.get() is not None


@contextmanager
def _timed(timer: PhaseTimer, name: str) -> Iterator[None]:
    timer.enter(name)
    try:
        yield
    finally:
        timer.exit()


def phase(name: str) -> AbstractContextManager[None]:
    """Count the block as ``name`` in the current request's timings (nothing when none is open)."""
    timer = _timer.get()
    return _OFF if timer is None else _timed(timer, name)


def parse_server_timing(value: str) -> dict[str, float]:
    """``{"sql": 1.5, …}`` from a ``Server-Timing`` value (``name;dur=1.5, …``); entries without a
    duration are left out."""
    phases: dict[str, float] = {}
    for entry in value.split(","):
        name, *params = (part.strip() for part in entry.split(";"))
        for param in params:
            key, _, number = param.partition("=")
            if key == "dur" and name:
                try:
                    phases[name] = phases.get(name, 0.0) + float(number)
                except ValueError:
                    continue
    return phases
