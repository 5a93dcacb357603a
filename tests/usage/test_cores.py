"""The usage report's pure parts: its days, the operation names it counts, its chart."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from apps.usage.chart import bar_chart, nice_ceiling
from apps.usage.periods import MAX_DAYS, PeriodError, operation_name, period_resolve

pytestmark = pytest.mark.unit

TODAY = date(2026, 12, 2)


def test_a_period_defaults_to_the_thirty_days_ending_today() -> None:
    period = period_resolve(first=None, last=None, today=TODAY)
    assert (period.first, period.last, period.days) == (date(2026, 11, 3), TODAY, 30)
    days = list(period.each_day())
    assert days[0] == date(2026, 11, 3) and days[-1] == TODAY and len(days) == 30
    assert period.bounds() == (datetime(2026, 11, 3, tzinfo=UTC), datetime(2026, 12, 3, tzinfo=UTC))
    ending = period_resolve(first=None, last=date(2026, 1, 10), today=TODAY)
    assert ending.first == date(2025, 12, 12)


def test_bad_periods_say_how_to_fix_them() -> None:
    with pytest.raises(PeriodError, match="swap them"):
        period_resolve(first=date(2026, 12, 2), last=date(2026, 12, 1), today=TODAY)
    with pytest.raises(PeriodError, match=f"93 days; at most {MAX_DAYS}"):
        period_resolve(first=date(2026, 9, 1), last=TODAY, today=TODAY)
    with pytest.raises(PeriodError, match="in the future"):
        period_resolve(first=None, last=date(2026, 12, 4), today=TODAY)
    assert period_resolve(first=date(2026, 9, 2), last=TODAY, today=TODAY).days == MAX_DAYS
    assert period_resolve(first=None, last=date(2026, 12, 3), today=TODAY).last == date(2026, 12, 3)
    assert period_resolve(first=None, last=date(1, 1, 5), today=TODAY).first == date(1, 1, 1)


def test_operations_are_named_by_route_never_by_id() -> None:
    assert operation_name(method="GET", route="v1/usage") == "GET /v1/usage"
    assert (
        operation_name(
            method="PATCH", route="v1/subjects/<str:external_id>/memories/<str:memory_type>/<uuid:record_id>"
        )
        == "PATCH /v1/subjects/{external_id}/memories/{memory_type}/{record_id}"
    )


def test_the_axis_is_a_round_number_split_into_whole_steps() -> None:
    assert [nice_ceiling(v) for v in (0, 1, 2, 3, 7, 11, 99, 101, 4999)] == [1, 1, 2, 5, 10, 20, 100, 200, 5000]
    chart = bar_chart([("d1", 0), ("d2", 7), ("d3", 10)])
    assert [t.value for t in chart.ticks] == [0, 2, 4, 6, 8, 10] and chart.peak == 10
    tallest = chart.bars[2]
    assert tallest.y == chart.ticks[-1].y and tallest.y + tallest.height == chart.baseline
    assert chart.bars[0].height == 0 and chart.bars[1].height == pytest.approx(tallest.height * 0.7, abs=0.01)
    assert [b.x for b in chart.bars] == sorted(b.x for b in chart.bars)
    assert all(b.x + b.width <= chart.width for b in chart.bars)
    assert (chart.first_label, chart.last_label) == ("d1", "d3")


def test_a_quiet_month_still_draws_an_axis() -> None:
    chart = bar_chart([(f"d{i}", 0) for i in range(30)])
    assert len(chart.bars) == 30 and all(b.height == 0 for b in chart.bars)
    assert [t.value for t in chart.ticks] == [0, 1]
    empty = bar_chart([])
    assert empty.bars == [] and empty.peak == 0
