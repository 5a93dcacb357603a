"""The days a usage report covers and the names it counts requests under. Framework-free."""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator
from dataclasses import dataclass

MAX_DAYS = 92  # a quarter: the longest range one report answers
DEFAULT_DAYS = 30

_CONVERTER = re.compile(r"<(?:[a-z_]+:)?([a-z_]+)>")


class PeriodError(ValueError):
    """A range a report cannot answer; the message says how to fix the call."""


@dataclass(frozen=True)
class Period:
    """Whole UTC days, ``first`` to ``last`` inclusive."""

    first: datetime.date
    last: datetime.date

    @property
    def days(self) -> int:
        return (self.last - self.first).days + 1

    def each_day(self) -> Iterator[datetime.date]:
        for offset in range(self.days):
            yield self.first + datetime.timedelta(days=offset)

    def bounds(self) -> tuple[datetime.datetime, datetime.datetime]:
        """``[start, end)`` in UTC, for reading timestamped rows."""
        start = datetime.datetime.combine(self.first, datetime.time.min, tzinfo=datetime.UTC)
        end = datetime.datetime.combine(self.last + datetime.timedelta(days=1), datetime.time.min, tzinfo=datetime.UTC)
        return start, end


def period_resolve(*, first: datetime.date | None, last: datetime.date | None, today: datetime.date) -> Period:
    """``from``/``to`` as a client sends them, either or both left out: ``to`` defaults to
    today (UTC), ``from`` to the 30 days ending at ``to``."""
    last = last or today
    if last > today + datetime.timedelta(days=1):  # a day's grace for clients east of UTC
        raise PeriodError(
            f"'to' ({last.isoformat()}) is in the future; usage is known up to {today.isoformat()} (UTC)."
        )
    if first is None:
        first = last - datetime.timedelta(days=min(DEFAULT_DAYS - 1, last.toordinal() - 1))
    if first > last:
        raise PeriodError(f"'from' ({first.isoformat()}) is after 'to' ({last.isoformat()}); swap them.")
    period = Period(first=first, last=last)
    if period.days > MAX_DAYS:
        raise PeriodError(
            f"The range covers {period.days} days; at most {MAX_DAYS} are reported at once. "
            "Ask for a shorter range, or several."
        )
    return period


def operation_name(*, method: str, route: str) -> str:
    """``POST /v1/subjects/{external_id}/memories``: the method and the route as the API
    reference writes it, never the path with its ids (one counter per operation, not per id)."""
    path = _CONVERTER.sub(r"{\1}", route.lstrip("/"))
    return f"{method} /{path}"
