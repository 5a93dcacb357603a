"""The one table of English month and weekday names. Pure.

Every reader of dates (date resolution, the planner, the answer check, the coverage audit,
anchor keys) takes its names and its regular-expression alternations from here, so a name
added once is known everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

MONTH_FULL_NAMES: tuple[str, ...] = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december",
)  # fmt: skip
# Abbreviations in calendar order; "sept" before "sep" so an alternation tries the longer first.
MONTH_ABBREVIATIONS: Mapping[str, int] = MappingProxyType(
    {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sept": 9, "sep": 9, "oct": 10,
     "nov": 11, "dec": 12}
)  # fmt: skip
# Every month name, full and abbreviated, lowercase → its number (1–12).
MONTHS: Mapping[str, int] = MappingProxyType(
    {name: number for number, name in enumerate(MONTH_FULL_NAMES, start=1)} | dict(MONTH_ABBREVIATIONS)
)
# Weekday names, lowercase → ``date.weekday()`` (Monday 0).
WEEKDAYS: Mapping[str, int] = MappingProxyType(
    {name: number for number, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday",
                                                  "saturday", "sunday"))}
)  # fmt: skip
MONTH_AND_WEEKDAY_NAMES: frozenset[str] = frozenset(MONTHS) | frozenset(WEEKDAYS)


def month_number(name: str) -> int | None:
    """The number of a month name, full or abbreviated, any case, with or without a final dot."""
    return MONTHS.get(name.lower().rstrip("."))


def month_alternation(*, abbreviations: bool, may: bool = True, capitalized: bool = False) -> str:
    """The month names as a regular-expression alternation: full names in calendar order, then
    the abbreviations. ``may=False`` leaves out "may" (also a modal verb: callers add a
    case-sensitive ``(?-i:May)`` of their own); ``capitalized`` writes "January", "Jan"."""
    names = [name for name in MONTH_FULL_NAMES if may or name != "may"]
    if abbreviations:
        names += list(MONTH_ABBREVIATIONS)
    return "|".join(name.capitalize() if capitalized else name for name in names)


def weekday_alternation() -> str:
    """The weekday names as a regular-expression alternation, Monday first."""
    return "|".join(WEEKDAYS)
