"""Date expressions resolved against the time they were said. Pure: no framework imports.

Episodic records keep the time an event happened (or is planned to happen), not the time it
was mentioned, so "yesterday" said on 2023-05-08 is 2023-05-07 and "next month" is 2023-06.
A resolved date keeps its precision; its ISO 8601 form is reduced to that precision
(``2023``, ``2023-06``, ``2023-W18``, ``2023-05-07``) so a month is never passed off as a day.

The reference is always the time the text was said (a message's timestamp), never the time it
is read. The tense of the clause a phrase sits in (:class:`Tense`, decided by the caller, who
has the parse) says which way the ambiguous forms look:

- A bare weekday ("on Saturday"), a day and month without a year ("on 7 May", "May 27th"), a
  day of the month alone ("on the 27th") and "in May" look backwards in a past clause and
  forwards in a future one ("I'm moving in June", "we'll meet on the 3rd"). In a present or
  unmarked clause ("my appointment is May 27th") they take the nearest such day or month, the
  later one on a tie: one said a week ahead is next week's, not last year's.
- "last <weekday>" is the most recent such day strictly before the mention date and
  "next <weekday>" the first one strictly after it; "this <weekday>" is that day of the
  mention's ISO week.
- "in two weeks" is a date unless the clause is past; in a past one it is a duration.
- Weekends are the ISO week of their Saturday: "last weekend" is the previous ISO week's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from enum import StrEnum

from apps.language.calendar import MONTHS, WEEKDAYS, month_alternation, weekday_alternation


class Tense(StrEnum):
    """The tense of the clause a date phrase sits in: which way an ambiguous date looks."""

    PAST = "past"  # "we moved in April", "I had been there since May"
    FUTURE = "future"  # "we'll move in June", "I'm moving in June", "planning to go on Friday"
    UNMARKED = "unmarked"  # present or unknown: "my appointment is May 27th"


class Precision(StrEnum):
    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    YEAR = "year"
    TIME = "time"  # only from parse_event_time: a full ISO datetime


# The more specific precision wins when one phrase names several dates.
_PRECISION_RANK = {Precision.TIME: 0, Precision.DAY: 1, Precision.WEEK: 2, Precision.MONTH: 3, Precision.YEAR: 4}


@dataclass(frozen=True)
class ResolvedDate:
    phrase: str  # the expression exactly as written
    start: date  # first day of the period it names
    precision: Precision

    @property
    def iso(self) -> str:
        if self.precision is Precision.YEAR:
            return f"{self.start.year:04d}"
        if self.precision is Precision.MONTH:
            return f"{self.start.year:04d}-{self.start.month:02d}"
        if self.precision is Precision.WEEK:
            year, week, _ = self.start.isocalendar()
            return f"{year:04d}-W{week:02d}"
        return self.start.isoformat()


@dataclass(frozen=True)
class EventTime:
    start: datetime  # first instant of the period (naive unless the text carried an offset)
    precision: Precision


_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2,
}  # fmt: skip

# "May" is also a modal verb: as a month name it must be capitalised.
_MONTH = rf"(?P<month>{month_alternation(abbreviations=True, may=False)}|(?-i:May))\.?"
_WEEKDAY = rf"(?P<weekday>{weekday_alternation()})"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_ORDINAL_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_COUNT = r"(?P<count>\d+|a couple of|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_QUALIFIER = r"(?P<qualifier>last|next|this|coming|past)"


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _shift(mention: date, count: int, unit: str) -> tuple[date, Precision]:
    if unit == "day":
        return mention + timedelta(days=count), Precision.DAY
    if unit == "week":
        return _week_start(mention + timedelta(weeks=count)), Precision.WEEK
    if unit == "month":
        return _add_months(mention, count), Precision.MONTH
    return date(mention.year + count, 1, 1), Precision.YEAR


def _weekday_before(mention: date, weekday: int) -> date:
    return mention - timedelta(days=(mention.weekday() - weekday - 1) % 7 + 1)


def _weekday_after(mention: date, weekday: int) -> date:
    return mention + timedelta(days=(weekday - mention.weekday() - 1) % 7 + 1)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _month_index(day: date) -> int:
    return day.year * 12 + day.month


def _in_direction(
    candidates: list[date], mention: date, tense: Tense, *, distance: Callable[[date], int] = date.toordinal
) -> date | None:
    """Of the candidate days, the one the tense points to: the latest not after the mention for
    the past, the earliest not before it for the future, else the nearest by ``distance`` (days,
    or months for a month), the later one on a tie."""
    if tense is Tense.PAST:
        return max((day for day in candidates if day <= mention), default=None)
    if tense is Tense.FUTURE:
        return min((day for day in candidates if day >= mention), default=None)
    return min(candidates, key=lambda day: (abs(distance(day) - distance(mention)), -day.toordinal()), default=None)


def _undated_year(mention: date, month: int, day: int, tense: Tense) -> date | None:
    """A day and month said without a year: the one of the year before, of the mention's year or
    of the year after that the tense points to."""
    candidates = [_safe_date(mention.year + step, month, day) for step in (-1, 0, 1)]
    return _in_direction([day for day in candidates if day is not None], mention, tense)


@dataclass(frozen=True)
class _Context:
    mention: date
    tense: Tense


_Handler = Callable[[dict[str, str], _Context], tuple[date, Precision] | None]


def _iso_day(groups: dict[str, str], _: _Context) -> tuple[date, Precision] | None:
    day = _safe_date(int(groups["year"]), int(groups["m"]), int(groups["day"]))
    return (day, Precision.DAY) if day else None


def _full_day(groups: dict[str, str], _: _Context) -> tuple[date, Precision] | None:
    day = _safe_date(int(groups["year"]), MONTHS[groups["month"].lower()], int(groups["day"]))
    return (day, Precision.DAY) if day else None


def _day_month(groups: dict[str, str], context: _Context) -> tuple[date, Precision] | None:
    month, day_of_month = MONTHS[groups["month"].lower()], int(groups["day"])
    day = _undated_year(context.mention, month, day_of_month, context.tense)
    return (day, Precision.DAY) if day else None


def _day_of_month(groups: dict[str, str], context: _Context) -> tuple[date, Precision] | None:
    """ "On the 27th": that day of the month before, of the mention's month or of the next one."""
    mention, day_of_month = context.mention, int(groups["day"])
    candidates = [_add_months(mention, step) for step in (-1, 0, 1)]
    days = [_safe_date(first.year, first.month, day_of_month) for first in candidates]
    day = _in_direction([day for day in days if day is not None], mention, context.tense)
    return (day, Precision.DAY) if day else None


def _month_year(groups: dict[str, str], _: _Context) -> tuple[date, Precision] | None:
    return date(int(groups["year"]), MONTHS[groups["month"].lower()], 1), Precision.MONTH


def _named_month(groups: dict[str, str], context: _Context) -> tuple[date, Precision] | None:
    month, mention = MONTHS[groups["month"].lower()], context.mention
    qualifier = (groups.get("qualifier") or "").lower()
    if qualifier == "this":
        return date(mention.year, month, 1), Precision.MONTH
    this_month = date(mention.year, mention.month, 1)
    candidates = [date(mention.year + step, month, 1) for step in (-1, 0, 1)]
    if qualifier == "last":  # "last May" said in May is a year ago
        return max(day for day in candidates if day < this_month), Precision.MONTH
    if qualifier == "next":
        return min(day for day in candidates if day > this_month), Precision.MONTH
    # "in May" said in May is this May, whatever the tense.
    chosen = _in_direction(candidates, this_month, context.tense, distance=_month_index)
    return (chosen, Precision.MONTH) if chosen else None


def _year(groups: dict[str, str], _: _Context) -> tuple[date, Precision] | None:
    return date(int(groups["year"]), 1, 1), Precision.YEAR


def _offset_days(days: int) -> _Handler:
    def handler(_: dict[str, str], context: _Context) -> tuple[date, Precision] | None:
        return context.mention + timedelta(days=days), Precision.DAY

    return handler


def _count(groups: dict[str, str]) -> int:
    raw = groups["count"].lower()
    return int(raw) if raw.isdigit() else _NUMBERS[raw]


def _ago(groups: dict[str, str], context: _Context) -> tuple[date, Precision] | None:
    return _shift(context.mention, -_count(groups), groups["unit"].lower())


def _from_now(groups: dict[str, str], context: _Context) -> tuple[date, Precision] | None:
    return _shift(context.mention, _count(groups), groups["unit"].lower())


def _in_future(groups: dict[str, str], context: _Context) -> tuple[date, Precision] | None:
    return _from_now(groups, context) if context.tense is not Tense.PAST else None


def _qualified_period(groups: dict[str, str], context: _Context) -> tuple[date, Precision] | None:
    qualifier, unit = groups["qualifier"].lower(), groups["unit"].lower()
    if qualifier == "past":  # "the past week" is a span, not a date
        return None
    step = {"last": -1, "this": 0, "next": 1, "coming": 1}[qualifier]
    return _shift(context.mention, step, unit)


def _qualified_weekend(groups: dict[str, str], context: _Context) -> tuple[date, Precision] | None:
    qualifier, mention = groups["qualifier"].lower(), context.mention
    if qualifier == "past":  # "this past weekend": the most recent Saturday
        return _week_start(_weekday_before(mention, 5)), Precision.WEEK
    step = {"last": -1, "this": 0, "next": 1, "coming": 1}[qualifier]
    return _week_start(mention) + timedelta(weeks=step), Precision.WEEK


def _qualified_weekday(groups: dict[str, str], context: _Context) -> tuple[date, Precision] | None:
    qualifier, weekday, mention = groups["qualifier"].lower(), WEEKDAYS[groups["weekday"].lower()], context.mention
    if qualifier in ("last", "past"):
        return _weekday_before(mention, weekday), Precision.DAY
    if qualifier in ("next", "coming"):
        return _weekday_after(mention, weekday), Precision.DAY
    return _week_start(mention) + timedelta(days=weekday), Precision.DAY


def _bare_weekday(groups: dict[str, str], context: _Context) -> tuple[date, Precision] | None:
    weekday, mention = WEEKDAYS[groups["weekday"].lower()], context.mention
    # Strictly before or after: "on Monday" said on a Monday is a week away, not today.
    candidates = [_weekday_before(mention, weekday), _weekday_after(mention, weekday)]
    if context.tense is Tense.PAST:
        return candidates[0], Precision.DAY
    if context.tense is Tense.FUTURE:
        return candidates[1], Precision.DAY
    return min(candidates, key=lambda day: (abs((day - mention).days), -day.toordinal())), Precision.DAY


_PATTERNS: tuple[tuple[re.Pattern[str], _Handler], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), handler)
    for pattern, handler in (
        (rf"\b{_YEAR}-(?P<m>\d{{2}})-(?P<day>\d{{2}})\b", _iso_day),
        (rf"\b{_DAY}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}\b", _full_day),
        (rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", _full_day),
        (rf"\b{_DAY}(?:\s+of)?\s+{_MONTH}(?!\w)", _day_month),
        (rf"\b{_MONTH}\s+{_DAY}\b", _day_month),
        (
            rf"\b(?:on\s+)?the\s+{_ORDINAL_DAY}\b(?!\s+(?:of\s+)?(?:century|floor|time|birthday|anniversary))",
            _day_of_month,
        ),
        (rf"\b{_MONTH}(?:\s+of)?,?\s+{_YEAR}\b", _month_year),
        (rf"\b(?:(?P<qualifier>last|next|this)|in|during)\s+{_MONTH}(?!\w)", _named_month),
        (rf"\b(?:in|since|during)\s+(?:the\s+year\s+)?{_YEAR}\b", _year),
        (r"\b(?:the\s+day\s+before\s+yesterday)\b", _offset_days(-2)),
        (r"\b(?:the\s+day\s+after\s+tomorrow)\b", _offset_days(2)),
        (r"\b(?:yesterday|last\s+night)\b", _offset_days(-1)),
        (r"\btomorrow\b", _offset_days(1)),
        (r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening)|right\s+now)\b", _offset_days(0)),
        (rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", _ago),
        (rf"\b{_COUNT}\s+{_UNIT}\s+from\s+(?:now|today)\b", _from_now),
        (rf"\bin\s+{_COUNT}\s+{_UNIT}\b", _in_future),
        (rf"\b(?:this\s+)?{_QUALIFIER}\s+{_UNIT}\b", _qualified_period),
        (rf"\b(?:this\s+)?{_QUALIFIER}\s+weekend\b", _qualified_weekend),
        (rf"\b{_QUALIFIER}\s+{_WEEKDAY}\b", _qualified_weekday),
        (rf"\b(?:on\s+)?{_WEEKDAY}\b", _bare_weekday),
    )
)


def _mention_date(mention_time: date) -> date:
    return mention_time.date() if isinstance(mention_time, datetime) else mention_time


def find_dates(text: str, *, mention_time: date, tense: Tense | Callable[[int], Tense]) -> list[ResolvedDate]:
    """Every date expression in ``text``, left to right; where they overlap, the longest.

    ``mention_time`` (a date or datetime) is when the text was said: the reference of every
    relative form. ``tense`` is the tense of the text's clause, or a function from a phrase's
    character offset in ``text`` to the tense of the clause it sits in (a sentence may tell of
    a past move and a planned one).
    """
    mention = _mention_date(mention_time)
    tense_at = tense if callable(tense) else (lambda _offset, fixed=tense: fixed)
    candidates: list[tuple[int, int, ResolvedDate]] = []
    for pattern, handler in _PATTERNS:
        for match in pattern.finditer(text):
            groups = {name: value for name, value in match.groupdict().items() if value is not None}
            period = handler(groups, _Context(mention=mention, tense=tense_at(match.start())))
            if period is not None:
                start, precision = period
                candidates.append((match.start(), match.end(), ResolvedDate(match.group(0), start, precision)))
    # Longest first, so "in March 2021" is March 2021 and not "in March" of the mention's year.
    candidates.sort(key=lambda item: (item[0] - item[1], item[0]))
    chosen: list[tuple[int, int, ResolvedDate]] = []
    for begin, end, resolved in candidates:
        if all(end <= taken_begin or begin >= taken_end for taken_begin, taken_end, _ in chosen):
            chosen.append((begin, end, resolved))
    return [resolved for _, _, resolved in sorted(chosen, key=lambda item: item[0])]


def most_specific(dates: list[ResolvedDate]) -> ResolvedDate | None:
    """The date with the finest precision (the first of equals): "next month, on 7 June" → 7 June."""
    return min(dates, key=lambda resolved: _PRECISION_RANK[resolved.precision], default=None)


_EVENT_TIME_FORMS: tuple[tuple[re.Pattern[str], Precision], ...] = (
    (re.compile(r"^(?P<year>\d{4})$"), Precision.YEAR),
    (re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})$"), Precision.MONTH),
    (re.compile(r"^(?P<year>\d{4})-W(?P<week>\d{2})$"), Precision.WEEK),
    (re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})$"), Precision.DAY),
)


def parse_event_time(value: str) -> EventTime:
    """Read an event time in ISO 8601, full or reduced precision; ``ValueError`` otherwise."""
    for pattern, precision in _EVENT_TIME_FORMS:
        match = pattern.match(value)
        if match is None:
            continue
        year = int(match["year"])
        if precision is Precision.YEAR:
            start = date(year, 1, 1)
        elif precision is Precision.MONTH:
            start = date(year, int(match["month"]), 1)
        elif precision is Precision.WEEK:
            start = date.fromisocalendar(year, int(match["week"]), 1)
        else:
            start = date(year, int(match["month"]), int(match["day"]))
        return EventTime(start=datetime(start.year, start.month, start.day), precision=precision)
    if "T" not in value and " " not in value:
        raise ValueError(f"not an ISO 8601 date or datetime: {value!r}")
    return EventTime(start=datetime.fromisoformat(value), precision=Precision.TIME)
