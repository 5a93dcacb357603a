"""Names of larger cities and of countries, for place names chat writes in lower case."""

from __future__ import annotations

import pytest

from apps.language.places import is_place_name


@pytest.mark.parametrize(
    ("words", "named"),
    [
        ("porto", True),
        ("Lisbon", True),
        ("são paulo", True),
        ("sao paulo", True),  # without its accent
        ("new york", True),  # "New York City" without "City"
        ("portugal", True),
        ("march", False),  # a town too small to keep: the month is meant
        ("bedminster", False),  # a part of a city
        ("kitchen", False),
    ],
)
def test_a_larger_city_or_a_country_by_its_name_in_any_case(words: str, named: bool) -> None:
    assert is_place_name(words) is named
