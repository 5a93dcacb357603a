"""The request's phase timer (pure): exclusive phases, the header and its parsing."""

from __future__ import annotations

import time

import pytest

from apps.platform.timing import PhaseTimer, parse_server_timing, phase, timed_request, timing_active

pytestmark = pytest.mark.unit


def test_phases_are_exclusive_so_an_inner_phase_is_not_counted_in_the_outer_one() -> None:
    with timed_request() as timer:
        with phase("retrieval"):
            time.sleep(0.02)
            with phase("sql"):
                time.sleep(0.05)
            time.sleep(0.02)
        with phase("sql"):
            time.sleep(0.01)
    assert timer.ms["sql"] == pytest.approx(60, abs=15)
    assert timer.ms["retrieval"] == pytest.approx(40, abs=15)
    assert timer.ms["sql"] + timer.ms["retrieval"] <= timer.total_ms()


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
