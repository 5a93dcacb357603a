"""The anchor key of a name (docs/architecture.md, "Graph plane"). Pure: no framework imports.

``anchor_key`` lowercases a name, replaces punctuation with spaces, drops a fixed list of eleven articles
and function words, singularizes tokens of at least four letters
(:func:`apps.language.words.singularize`), and sorts what is left, so
"Mobile App", "mobile apps" and "Apps, Mobile" share the key ``"app mobile"``. It is
deliberately conservative:

- Numbers and dates are kept as tokens: "10 Gallons" (``"10 gallon"``) ≠ "20 Gallons".
  Thousands separators inside a number are dropped and decimal points kept, so "$1,200" and
  "1200" agree and "3.5" stays one token.
- Only plural endings are normalized, never other suffixes: "Training" stays ``"training"``
  while "Trains" becomes ``"train"``.
- A possessive ``'s`` is dropped with its apostrophe ("Caroline's dog" = "Carolines dog"
  after singularization = ``"caroline dog"``), instead of leaving a stray ``s`` token.
- Text is NFKC-normalized first (full-width and compatibility forms), accents are kept.

The paper fixes the number of dropped words (eleven) but does not list them; ours are the
three articles, the two most common conjunctions and the six prepositions that most often
join the words of a name ("Bank of America", "Trip to Paris", "Dinner with Melanie"):
``a an the and or of to in on at for``. "with" is kept because it changes meaning in names
("Coffee with milk" vs "Coffee"), "or" is dropped because a name is never defined by it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from apps.language.calendar import MONTH_AND_WEEKDAY_NAMES
from apps.language.words import singularize

# The eleven articles and function words the key drops (eleven, as in the design; the list is our choice).
FUNCTION_WORDS: frozenset[str] = frozenset({"a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for"})

_POSSESSIVE = re.compile(r"(?<=\w)['\u2019\u02bc]s\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# A decimal point between digits survives; every other non-alphanumeric character splits.
_SEPARATOR = re.compile(r"(?:(?<!\d)\.|\.(?!\d)|[^\w.]|_)+")


def key_tokens(name: str) -> list[str]:
    """The tokens of ``anchor_key(name)``, in their original order (before sorting)."""
    text = unicodedata.normalize("NFKC", name).lower()
    text = _POSSESSIVE.sub("", text)
    text = _THOUSANDS.sub("", text)
    tokens = (token for token in _SEPARATOR.split(text) if token)
    return [singularize(token) for token in tokens if token not in FUNCTION_WORDS]


@functools.lru_cache(maxsize=65536)
def anchor_key(name: str) -> str:
    """The canonical key of an anchor name; ``""`` when nothing but function words."""
    return " ".join(sorted(key_tokens(name)))


def is_number_token(token: str) -> bool:
    return any(char.isdigit() for char in token) and all(char.isdigit() or char == "." for char in token)


def distinguishing_tokens(name: str) -> frozenset[str]:
    """The tokens two names must share to denote the same entity: numbers, dates and codes.

    Tokens with a digit ("10", "2023", "a4", "w" + "2" of "W-2"), single letters ("Model S",
    "Plan B") and month and weekday names. A merge of two names whose sets differ would
    merge different quantities, days or months, or form and model codes.
    """
    return frozenset(
        token
        for token in key_tokens(name)
        if any(char.isdigit() for char in token) or len(token) == 1 or token in MONTH_AND_WEEKDAY_NAMES
    )


def may_denote_same(name: str, other: str) -> bool:
    """False when the names differ in a number, a date or a code, so no decision may merge them."""
    return distinguishing_tokens(name) == distinguishing_tokens(other)


def keys_of(names: Iterable[str]) -> frozenset[str]:
    """The non-empty keys of some names."""
    return frozenset(key for key in map(anchor_key, names) if key)
