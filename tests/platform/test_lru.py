"""The process's recent values (apps.platform.lru): a pure unit."""

from __future__ import annotations

import pytest

from apps.platform.lru import RecentValues

pytestmark = pytest.mark.unit


def test_missing_keys_are_computed_once_in_one_call_in_first_occurrence_order() -> None:
    values: RecentValues[str, str] = RecentValues(10)
    calls: list[list[str]] = []

    def upper(keys: list[str]) -> list[str]:
        calls.append(keys)
        return [key.upper() for key in keys]

    assert values.many(["b", "a", "b"], upper) == ["B", "A", "B"]
    assert values.many(["a", "c", "b", "c"], upper) == ["A", "C", "B", "C"]
    assert calls == [["b", "a"], ["c"]]
    assert values.many([], upper) == [] and len(calls) == 2


def test_the_least_recently_used_value_goes_first() -> None:
    values: RecentValues[str, int] = RecentValues(2)
    values.put("a", 1)
    values.put("b", 2)
    assert values.get("a") == 1  # "a" is now the most recent
    values.put("c", 3)
    assert "b" not in values and values.get("a") == 1 and values.get("c") == 3 and len(values) == 2


def test_a_computation_that_answers_the_wrong_count_is_refused() -> None:
    values: RecentValues[str, int] = RecentValues(4)
    with pytest.raises(ValueError):
        values.many(["a", "b"], lambda keys: [1])
    assert len(values) == 0
