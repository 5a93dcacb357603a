"""The anchor key κ(name) (paper §2.3, A.2; architecture §6). Pure: no framework imports.

κ lowercases a name, replaces punctuation with spaces, drops a fixed list of eleven articles
and function words, singularizes tokens of at least four letters, and sorts what is left, so
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

# The eleven articles and function words κ drops (the paper's count; the list is our choice).
FUNCTION_WORDS: frozenset[str] = frozenset({"a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for"})

# Only tokens of at least this many characters are singularized ("bus", "gas", "yes" never are).
MIN_SINGULARIZE_LENGTH = 4

# Words that end like plurals but are not (or whose plural is not regular); checked first.
_NOT_PLURAL: frozenset[str] = frozenset(
    {
        # mass nouns and fields of study
        "news", "series", "species", "means", "physics", "economics", "politics", "mathematics", "athletics",
        "gymnastics", "aerobics", "robotics", "genetics", "ethics", "linguistics", "electronics", "logistics",
        "acoustics", "optics", "aesthetics", "diabetes", "measles", "mumps", "rabies", "herpes", "clothes",
        "thanks", "always", "perhaps", "sometimes", "towards", "afterwards", "besides", "nowadays", "whereas",
        "headquarters", "lens", "chaos", "cosmos", "ethos", "pathos", "logos", "kudos", "pants", "jeans",
        # words ending in -as, -es or -os whose singular is themselves
        "alias", "atlas", "bias", "canvas", "christmas", "pancreas", "texas", "kansas", "arkansas", "vegas",
        "bahamas", "midas", "judas", "thomas", "nicholas", "douglas", "lucas", "jonas", "elias", "tobias",
        "andreas", "matthias", "silas", "james", "charles", "jones", "agnes", "hughes", "rhodes", "andes",
        "hermes", "mercedes", "achilles", "socrates", "hercules", "angeles", "wales", "athens", "brussels",
        "netherlands", "philippines", "maldives", "seychelles", "barbados", "honduras", "carlos", "marcos",
        "santos", "lagos", "mars", "paris", "illinois", "tennis", "yes", "this", "thus",
    }
)  # fmt: skip

# Irregular plurals and plurals whose singular a suffix rule would get wrong.
_IRREGULAR: dict[str, str] = {
    "children": "child", "women": "woman", "teeth": "tooth", "geese": "goose", "mice": "mouse",
    "feet": "foot", "knives": "knife", "wives": "wife", "lives": "life", "wolves": "wolf",
    "shelves": "shelf", "halves": "half", "thieves": "thief", "scarves": "scarf", "loaves": "loaf",
    "calves": "calf", "elves": "elf", "selves": "self", "potatoes": "potato", "tomatoes": "tomato",
    "heroes": "hero", "echoes": "echo", "vetoes": "veto", "volcanoes": "volcano", "mosquitoes": "mosquito",
    "torpedoes": "torpedo", "dominoes": "domino", "analyses": "analysis", "crises": "crisis",
    "theses": "thesis", "diagnoses": "diagnosis", "hypotheses": "hypothesis", "oases": "oasis",
    "parentheses": "parenthesis", "synopses": "synopsis", "emphases": "emphasis", "gases": "gas",
    "canvases": "canvas", "aliases": "alias", "atlases": "atlas", "biases": "bias", "quizzes": "quiz",
    "excuses": "excuse", "abuses": "abuse", "fuses": "fuse", "muses": "muse", "refuses": "refuse",
    "recluses": "recluse", "misuses": "misuse", "uses": "use",
}  # fmt: skip

# Nouns ending in -ie (their plural -ies must not become -y: "movies" → "movie", not "movy").
_IE_NOUNS: frozenset[str] = frozenset(
    {
        "movie", "cookie", "zombie", "calorie", "rookie", "selfie", "hippie", "brownie", "smoothie", "goalie",
        "auntie", "genie", "prairie", "sweetie", "veggie", "foodie", "indie", "hoodie", "birdie", "lingerie",
        "newbie", "techie", "roomie", "bestie", "cutie", "pixie", "freebie", "barbie", "magpie", "necktie",
        "collie", "sortie", "yuppie", "junkie", "aussie", "boogie", "eerie", "walkie", "talkie", "bootie",
    }
)  # fmt: skip

# Nouns ending in -che (their plural -ches must keep the e: "headaches" → "headache").
_CHE_ENDINGS: tuple[str, ...] = (
    "ache", "cache", "niche", "quiche", "avalanche", "moustache", "mustache", "psyche", "creche", "cliche",
    "pastiche", "douche", "tranche", "attache", "microfiche",
)  # fmt: skip

_VOWELS = frozenset("aeiou")
_POSSESSIVE = re.compile(r"(?<=\w)['\u2019\u02bc]s\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# A decimal point between digits survives; every other non-alphanumeric character splits.
_SEPARATOR = re.compile(r"(?:(?<!\d)\.|\.(?!\d)|[^\w.]|_)+")


def _singular_ies(token: str) -> str:
    stem = token[:-3]
    if len(stem) <= 1 or stem + "ie" in _IE_NOUNS:  # "pies", "ties"; "movies"
        return token[:-1]
    return stem + "y"  # "cities", "puppies", "hobbies"


def _singular_es(token: str) -> str | None:
    """The singular of a token ending in -es when the -es is a plural ending, else None."""
    if token.endswith(("sses", "xes", "shes", "zzes")):  # classes, boxes, dishes, buzzes
        return token[:-2]
    if token.endswith("ches"):
        stem = token[:-2]
        return stem + "e" if (stem + "e").endswith(_CHE_ENDINGS) else stem  # headaches / watches
    if token.endswith("uses") and len(token) >= 5 and token[-5] not in _VOWELS:
        return token[:-2]  # bonuses, viruses, campuses, buses (not houses, causes)
    return None


def singularize(token: str) -> str:
    """The conservative singular of one lowercase token; tokens under four letters are kept."""
    if len(token) < MIN_SINGULARIZE_LENGTH or not token.isalpha() or token in _NOT_PLURAL:
        return token
    irregular = _IRREGULAR.get(token)
    if irregular is not None:
        return irregular
    if not token.endswith("s") or token.endswith(("ss", "us", "is")):  # glass, campus, analysis
        return token
    if token.endswith("ies"):
        return _singular_ies(token)
    if token.endswith("es"):
        singular = _singular_es(token)
        if singular is not None:
            return singular
    return token[:-1]  # apps, gallons, trains, houses, photos


def key_tokens(name: str) -> list[str]:
    """The tokens of κ(name), in their original order (before sorting)."""
    text = unicodedata.normalize("NFKC", name).lower()
    text = _POSSESSIVE.sub("", text)
    text = _THOUSANDS.sub("", text)
    tokens = (token for token in _SEPARATOR.split(text) if token)
    return [singularize(token) for token in tokens if token not in FUNCTION_WORDS]


@functools.lru_cache(maxsize=65536)
def anchor_key(name: str) -> str:
    """κ(name): the canonical key of an anchor name; ``""`` when nothing but function words."""
    return " ".join(sorted(key_tokens(name)))


def is_number_token(token: str) -> bool:
    return any(char.isdigit() for char in token) and all(char.isdigit() or char == "." for char in token)


_MONTHS_AND_DAYS: frozenset[str] = frozenset(
    {
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
        "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
        "dec", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    }
)  # fmt: skip


def distinguishing_tokens(name: str) -> frozenset[str]:
    """The tokens two names must share to denote the same entity: numbers, dates and codes.

    Tokens with a digit ("10", "2023", "a4", "w" + "2" of "W-2"), single letters ("Model S",
    "Plan B") and month and weekday names. A merge of two names whose sets differ would
    merge different quantities, days or months, or form and model codes (paper §A.2).
    """
    return frozenset(
        token
        for token in key_tokens(name)
        if any(char.isdigit() for char in token) or len(token) == 1 or token in _MONTHS_AND_DAYS
    )


def may_denote_same(name: str, other: str) -> bool:
    """False when the names differ in a number, a date or a code, so no decision may merge them."""
    return distinguishing_tokens(name) == distinguishing_tokens(other)


def keys_of(names: Iterable[str]) -> frozenset[str]:
    """The non-empty keys of some names."""
    return frozenset(key for key in map(anchor_key, names) if key)
