"""The time budget of one API request (``settings.REQUEST_BUDGET_SECONDS``).

``RequestBudgetMiddleware`` opens the budget when a request arrives; the database backend
(``apps.platform.database``) refuses to commit once it is spent, so the request's transaction is
rolled back and the client's 503 is the truth: nothing of a request answered "timed out" is
stored. Outside a request (tasks, commands) there is no budget.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import OperationalError

_deadline: contextvars.ContextVar[tuple[float, int] | None] = contextvars.ContextVar("request_deadline", default=None)


class RequestTimedOut(OperationalError):
    """The request's budget ran out before its transaction committed; it was rolled back."""

    def __init__(self, budget_seconds: int) -> None:
        super().__init__(f"request budget of {budget_seconds} s spent before commit")
        self.budget_seconds = budget_seconds


@contextmanager
def request_budget(seconds: int) -> Iterator[None]:
    token = _deadline.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _deadline.reset(token)


def budget_remaining() -> float | None:
    """Seconds left of the current request's budget (negative once spent); None outside a request."""
    deadline = _deadline.get()
    return None if deadline is None else deadline[0] - time.monotonic()


def check_budget() -> None:
    """Raise ``RequestTimedOut`` when the current request's budget is spent."""
    deadline = _deadline.get()
    if deadline is not None and time.monotonic() > deadline[0]:
        raise RequestTimedOut(deadline[1])
