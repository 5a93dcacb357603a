"""Date expressions resolved against the mention time (a pure module: no database needed)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from apps.language.dates import EventTime, Precision, ResolvedDate, Tense, find_dates, most_specific, parse_event_time

pytestmark = pytest.mark.unit

MONDAY = date(2023, 5, 8)  # Monday 8 May 2023
SUNDAY = date(2023, 5, 7)


def _iso(text: str, *, mention: date = MONDAY, tense: Tense = Tense.PAST) -> list[str]:
    return [resolved.iso for resolved in find_dates(text, mention_time=mention, tense=tense)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to the museum yesterday.", "2023-05-07"),
        ("Yesterday was my birthday.", "2023-05-07"),
        ("We had pizza last night.", "2023-05-07"),
        ("It happened the day before yesterday.", "2023-05-06"),
        ("I am at the beach today.", "2023-05-08"),
        ("I ran this morning.", "2023-05-08"),
        ("We met two days ago.", "2023-05-06"),
        ("We met a couple of days ago.", "2023-05-06"),
        ("We met 10 days ago.", "2023-04-28"),
        ("I moved a year ago.", "2022"),
        ("I started three months ago.", "2023-02"),
        ("It was two weeks ago.", "2023-W17"),
        ("I ran last Saturday.", "2023-05-06"),
        ("I ran last Monday.", "2023-05-01"),  # the mention day's own weekday: a week back
        ("I ran on Friday.", "2023-05-05"),
        ("Friday was long.", "2023-05-05"),
        ("I painted last week.", "2023-W18"),
        ("We hiked last weekend.", "2023-W18"),
        ("We hiked this past weekend.", "2023-W18"),
        ("I was sick last month.", "2023-04"),
        ("I graduated last year.", "2022"),
        ("We married on 7 May 2023.", "2023-05-07"),
        ("We married on the 7th of May, 2023.", "2023-05-07"),
        ("We married on May 7th, 2023.", "2023-05-07"),
        ("We married on May 7.", "2023-05-07"),
        ("We married on 7 May.", "2023-05-07"),
        ("We met on 2023-04-01.", "2023-04-01"),
        ("It opened in March 2021.", "2021-03"),
        ("It opened in March.", "2023-03"),
        ("It was in June.", "2022-06"),  # a past June, said in May: last year's
        ("It was last May.", "2022-05"),
        ("I have lived here since 2016.", "2016"),
        ("It opened in 2019.", "2019"),
    ],
)
def test_past_expressions(text: str, expected: str) -> None:
    assert _iso(text) == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We will fly to Paris next month.", "2023-06"),
        ("I'll call you tomorrow.", "2023-05-09"),
        ("It is the day after tomorrow.", "2023-05-10"),
        ("We leave next Saturday.", "2023-05-13"),
        ("We leave next Monday.", "2023-05-15"),
        ("We leave this Friday.", "2023-05-12"),
        ("We leave this coming Friday.", "2023-05-12"),
        ("I'm going to the concert on Friday.", "2023-05-12"),
        ("I'll see you on Monday.", "2023-05-15"),
        ("The exam is in two weeks.", "2023-W21"),
        ("The exam is in 3 days.", "2023-05-11"),
        ("It is three days from now.", "2023-05-11"),
        ("We marry next year.", "2024"),
        ("We move next week.", "2023-W20"),
        ("We camp next weekend.", "2023-W20"),
        ("We marry on 7 May.", "2024-05-07"),  # already past this year: next year's
        ("We marry in June.", "2023-06"),
        ("We marry in April.", "2024-04"),
        ("We marry next May.", "2024-05"),
    ],
)
def test_future_expressions(text: str, expected: str) -> None:
    assert _iso(text, tense=Tense.FUTURE) == [expected]


def test_a_duration_in_a_past_event_is_not_a_date() -> None:
    assert _iso("I read the whole book in 2 days.") == []
    assert _iso("The exam is in 2 days.", tense=Tense.FUTURE) == ["2023-05-10"]


def test_weekends_and_weekdays_from_a_sunday() -> None:
    assert _iso("last weekend", mention=SUNDAY) == ["2023-W17"]  # the previous ISO week's
    assert _iso("this past weekend", mention=SUNDAY) == ["2023-W18"]  # yesterday's Saturday
    assert _iso("last Sunday", mention=SUNDAY) == ["2023-04-30"]
    assert _iso("next Sunday", mention=SUNDAY, tense=Tense.FUTURE) == ["2023-05-14"]


def test_month_and_year_boundaries() -> None:
    new_year = date(2024, 1, 1)
    assert _iso("last month", mention=new_year) == ["2023-12"]
    assert _iso("yesterday", mention=new_year) == ["2023-12-31"]
    assert _iso("last week", mention=new_year) == ["2023-W52"]
    assert _iso("next month", mention=date(2023, 12, 31), tense=Tense.FUTURE) == ["2024-01"]
    assert _iso("in December", mention=date(2024, 1, 15)) == ["2023-12"]
    assert _iso("on 29 February", mention=date(2023, 3, 1)) == []  # no such day in 2023


def test_not_dates() -> None:
    assert _iso("I may go out, it may rain.") == []  # the modal verb is not the month
    assert _iso("I play tennis on Saturdays.") == []  # a habit, not a date
    assert _iso("We waited for the past week.") == []  # a span, not a date
    assert _iso("I ran 5 km and lifted 40 kg.") == []
    assert _iso("See you next time!") == []
    assert _iso("It took a few days ago-ish.") == []


def test_several_dates_left_to_right_with_phrases_verbatim() -> None:
    found = find_dates(
        "Yesterday I booked flights: we fly next month, on 7 June 2023, and return on June 21, 2023.",
        mention_time=datetime(2023, 5, 8, 23, 30, tzinfo=UTC),
        tense=Tense.FUTURE,
    )
    assert [(r.phrase, r.iso, r.precision) for r in found] == [
        ("Yesterday", "2023-05-07", Precision.DAY),
        ("next month", "2023-06", Precision.MONTH),
        ("7 June 2023", "2023-06-07", Precision.DAY),
        ("June 21, 2023", "2023-06-21", Precision.DAY),
    ]


def test_the_longest_overlapping_expression_wins() -> None:
    assert [
        (r.phrase, r.iso) for r in find_dates("On May 7th, 2023 we met.", mention_time=MONDAY, tense=Tense.PAST)
    ] == [("May 7th, 2023", "2023-05-07")]
    assert [r.phrase for r in find_dates("the day before yesterday", mention_time=MONDAY, tense=Tense.PAST)] == [
        "the day before yesterday"
    ]


def test_most_specific_prefers_the_finest_precision() -> None:
    month = ResolvedDate("next month", date(2023, 6, 1), Precision.MONTH)
    day = ResolvedDate("7 June", date(2023, 6, 7), Precision.DAY)
    week = ResolvedDate("next week", date(2023, 5, 15), Precision.WEEK)
    assert most_specific([month, week, day]) == day
    assert most_specific([month, week]) == week
    assert most_specific([]) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2023", EventTime(datetime(2023, 1, 1), Precision.YEAR)),
        ("2023-06", EventTime(datetime(2023, 6, 1), Precision.MONTH)),
        ("2023-W18", EventTime(datetime(2023, 5, 1), Precision.WEEK)),
        ("2023-05-07", EventTime(datetime(2023, 5, 7), Precision.DAY)),
        ("2023-05-07T14:30:00", EventTime(datetime(2023, 5, 7, 14, 30), Precision.TIME)),
        ("2023-05-07T14:30:00Z", EventTime(datetime(2023, 5, 7, 14, 30, tzinfo=UTC), Precision.TIME)),
    ],
)
def test_parse_event_time(value: str, expected: EventTime) -> None:
    assert parse_event_time(value) == expected


@pytest.mark.parametrize("value", ["", "yesterday", "2023-13", "2023-02-30", "2023-W54", "20230507", "May 2023"])
def test_parse_event_time_rejects_non_iso(value: str) -> None:
    with pytest.raises(ValueError):
        parse_event_time(value)


def test_every_resolved_form_parses_back() -> None:
    text = "yesterday, last week, next month, next year, on 7 May 2023"
    for resolved in find_dates(text, mention_time=MONDAY, tense=Tense.PAST):
        assert parse_event_time(resolved.iso).start.date() == resolved.start


# The reference is the time the text was said; the clause's tense decides past or future.
TUE_MAY_20 = date(2025, 5, 20)  # Tuesday 20 May 2025
DEC_29 = date(2024, 12, 29)  # Sunday 29 December 2024
JAN_3 = date(2025, 1, 3)  # Friday 3 January 2025
PAST, FUTURE, UNMARKED = Tense.PAST, Tense.FUTURE, Tense.UNMARKED


@pytest.mark.parametrize(
    ("text", "mention", "tense", "expected"),
    [
        # Month names: a plan for next month is next month, a move last month was last month.
        ("We're moving in June.", TUE_MAY_20, FUTURE, "2025-06"),
        ("We moved in April.", TUE_MAY_20, PAST, "2025-04"),
        ("We moved in April.", TUE_MAY_20, UNMARKED, "2025-04"),
        ("The lease starts in June.", TUE_MAY_20, UNMARKED, "2025-06"),
        ("We'll go in April.", TUE_MAY_20, FUTURE, "2026-04"),
        ("We went in June.", TUE_MAY_20, PAST, "2024-06"),
        ("It happens in May.", TUE_MAY_20, FUTURE, "2025-05"),
        ("It happened in May.", TUE_MAY_20, PAST, "2025-05"),
        ("The wedding is in November.", TUE_MAY_20, UNMARKED, "2025-11"),  # six months either way: the later
        ("I started last March.", TUE_MAY_20, PAST, "2025-03"),
        ("We fly next March.", TUE_MAY_20, FUTURE, "2026-03"),
        ("Last May was hard.", TUE_MAY_20, PAST, "2024-05"),
        ("This June we sail.", TUE_MAY_20, FUTURE, "2025-06"),
        # Year boundaries, December to January and back.
        ("We're moving in January.", DEC_29, FUTURE, "2025-01"),
        ("We moved in December.", JAN_3, PAST, "2024-12"),
        ("The audit is in February.", DEC_29, UNMARKED, "2025-02"),
        ("I joined in November.", JAN_3, UNMARKED, "2024-11"),
        ("next month", DEC_29, FUTURE, "2025-01"),
        ("last month", JAN_3, PAST, "2024-12"),
        ("next year", DEC_29, FUTURE, "2025"),
        ("last week", JAN_3, PAST, "2024-W52"),
        ("next week", DEC_29, FUTURE, "2025-W01"),
        ("tomorrow", date(2024, 12, 31), FUTURE, "2025-01-01"),
        ("yesterday", date(2025, 1, 1), PAST, "2024-12-31"),
        # Ordinal days with a month, a week ahead or behind, and across the new year.
        ("My appointment is May 27th.", TUE_MAY_20, UNMARKED, "2025-05-27"),
        ("My appointment is on May 27th.", TUE_MAY_20, FUTURE, "2025-05-27"),
        ("I saw her on May 13th.", TUE_MAY_20, PAST, "2025-05-13"),
        ("The exam was on May 27th.", TUE_MAY_20, PAST, "2024-05-27"),
        ("The party is on January 4th.", DEC_29, UNMARKED, "2025-01-04"),
        ("We met on December 27th.", JAN_3, PAST, "2024-12-27"),
        ("We meet on 2 January.", DEC_29, FUTURE, "2025-01-02"),
        ("I'm flying on the 27th.", TUE_MAY_20, FUTURE, "2025-05-27"),
        ("I had my exam on the 3rd.", TUE_MAY_20, PAST, "2025-05-03"),
        ("The rent is due on the 1st.", TUE_MAY_20, UNMARKED, "2025-06-01"),
        ("It arrives on the 2nd.", DEC_29, FUTURE, "2025-01-02"),
        ("It arrived on the 30th.", JAN_3, PAST, "2024-12-30"),
        # Weekdays: bare, last/next/this.
        ("I ran on Friday.", TUE_MAY_20, PAST, "2025-05-16"),
        ("I'll run on Friday.", TUE_MAY_20, FUTURE, "2025-05-23"),
        ("Yoga is on Thursday.", TUE_MAY_20, UNMARKED, "2025-05-22"),
        ("The call was on Monday.", TUE_MAY_20, UNMARKED, "2025-05-19"),
        ("I start next Monday.", TUE_MAY_20, FUTURE, "2025-05-26"),
        ("I started last Monday.", TUE_MAY_20, PAST, "2025-05-19"),
        ("this Friday", TUE_MAY_20, FUTURE, "2025-05-23"),
        ("We shop on Saturday.", DEC_29, FUTURE, "2025-01-04"),
        ("We shopped on Friday.", JAN_3, PAST, "2024-12-27"),
        ("next Wednesday", DEC_29, FUTURE, "2025-01-01"),
        # Counts: "in two weeks", "a month ago".
        ("We move in two weeks.", TUE_MAY_20, FUTURE, "2025-W23"),
        ("The move is in two weeks.", TUE_MAY_20, UNMARKED, "2025-W23"),
        ("I quit a month ago.", TUE_MAY_20, PAST, "2025-04"),
        ("I quit a month ago.", JAN_3, PAST, "2024-12"),
        ("We met three days ago.", date(2025, 1, 2), PAST, "2024-12-30"),
        ("in 3 days", DEC_29, FUTURE, "2025-01-01"),
        ("two weeks from now", DEC_29, UNMARKED, "2025-W02"),
    ],
)
def test_relative_dates_resolve_against_the_mention_in_the_direction_of_the_tense(
    text: str, mention: date, tense: Tense, expected: str
) -> None:
    assert _iso(text, mention=mention, tense=tense) == [expected]


def test_each_phrase_takes_the_tense_of_its_own_clause() -> None:
    text = "We moved in April, and we'll repaint in April too."
    second = text.rindex("in April")
    found = find_dates(
        text, mention_time=TUE_MAY_20, tense=lambda offset: Tense.FUTURE if offset >= second else Tense.PAST
    )
    assert [resolved.iso for resolved in found] == ["2025-04", "2026-04"]


def test_a_past_duration_and_the_day_of_an_ordinal_noun_are_not_dates() -> None:
    assert _iso("I learned it in two weeks.", mention=TUE_MAY_20, tense=PAST) == []
    assert _iso("We live on the 3rd floor.", mention=TUE_MAY_20, tense=UNMARKED) == []
