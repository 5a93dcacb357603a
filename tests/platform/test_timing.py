"""The request's phase timer (pure): exclusive phases, the header and its parsing."""

from __future__ import annotations

import time

import pytest

from apps.platform.timing import PhaseTimer, parse_server_timing, phase, timed_request, timing_active

pytestmark = pytest.mark.unit


class Clock:
    """A clock the test moves by hand, in seconds."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, ms: float) -> None:
        self.now += ms / 1000


def test_phases_are_exclusive_so_an_inner_phase_is_not_counted_in_the_outer_one() -> None:
    clock = Clock()
    with timed_request(clock) as timer:
        clock.advance(1)
        with phase("retrieval"):
            clock.advance(20)
            with phase("sql"):
                clock.advance(50)
            clock.advance(20)
        with phase("sql"):
            clock.advance(10)
        clock.advance(4)
    assert timer.ms == pytest.approx({"retrieval": 40.0, "sql": 60.0})
    assert timer.total_ms() == pytest.approx(105.0)
    assert parse_server_timing(timer.header()) == pytest.approx(
        {"sql": 60.0, "retrieval": 40.0, "other": 5.0, "total": 105.0}
    )


def test_without_a_timer_phases_record_nothing_and_share_one_no_op() -> None:
    assert not timing_active()
    assert phase("sql") is phase("embedding")
    with phase("sql"):
        pass
    with timed_request():
        assert timing_active()
    assert not timing_active()


def test_the_header_lists_every_phase_the_rest_and_the_total_and_parses_back() -> None:
    timer = PhaseTimer()
    timer.enter("sql")
    time.sleep(0.01)
    timer.exit()
    parsed = parse_server_timing(timer.header())
    assert set(parsed) == {"sql", "other", "total"}
    assert parsed["sql"] >= 10
    assert parsed["sql"] + parsed["other"] == pytest.approx(parsed["total"], abs=0.02)


def test_parsing_ignores_entries_without_a_duration() -> None:
    assert parse_server_timing('cache;desc="hit", sql;dur=1.5, bad;dur=x, total;dur=3') == {"sql": 1.5, "total": 3.0}
