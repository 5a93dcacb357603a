"""Core lines that state a superseded fact, restated with the new value (pure, no database)."""

from __future__ import annotations

from apps.memory.core_text import FactChange, restate_superseded, states

MOVE = FactChange(
    entity="Lena", old_text="Lena: I live in Porto.", new_text="Lena: We moved from Porto to Lyon last week."
)


def test_a_line_states_a_fact_it_repeats_or_paraphrases() -> None:
    assert states("Lena: I live in Porto.", "Lena: I live in Porto.", entity="Lena")
    assert states("Lena lives in Porto.", "Lena: I live in Porto with my partner Joon.", entity="Lena")
    assert not states("Lena: I'm a nurse.", "Lena: I live in Porto.", entity="Lena")
    assert not states("Lena: We moved from Porto to Lyon last week.", "Lena: I live in Porto.", entity="Lena")


def test_the_stale_line_gives_way_in_place_to_the_new_values_appended_line() -> None:
    lines, restated = restate_superseded(
        ["Lena: I'm a nurse.", "Lena: I live in Porto.", "Lena: I love hiking."],
        ["Lena: We moved from Porto to Lyon last week.", "Lena: I have a cat."],
        [MOVE],
    )
    assert lines == [
        "Lena: I'm a nurse.",
        "Lena: We moved from Porto to Lyon last week.",
        "Lena: I love hiking.",
        "Lena: I have a cat.",
    ]
    assert restated == [MOVE]


def test_without_an_appended_line_the_new_summary_replaces_the_stale_one() -> None:
    lines, restated = restate_superseded(["Lena: I live in Porto.", "Lena: I live in Porto."], [], [MOVE])
    assert lines == ["Lena: We moved from Porto to Lyon last week."] and restated == [MOVE]


def test_a_block_that_never_stated_the_old_value_is_left_alone() -> None:
    lines, restated = restate_superseded(["Lena: I'm a nurse."], [], [MOVE])
    assert lines == ["Lena: I'm a nurse."] and restated == []
