"""The coverage audit that decides whether one bounded repair call runs (docs/architecture.md, "Graph plane").

Pure: no framework imports. The audit compares the words of the rendered frames (predicate,
argument names, literal values, event time) with the source text and lists what they miss:

1. quoted phrases ("...", “...”, ‘...’, '...') not every content word of which is covered;
2. numbers (digits, with a currency sign and a unit when written: "$450", "10 gallons",
   "3.5 km", "2nd") whose value no frame carries; dates are not numbers here;
3. visual content: a source with a shared image, photo or video ("[shared an image: …]",
   "[photo: …]") is uncovered when the frames cover less than 45 % of its distinct content
   words; the missing items are then its uncovered captions, or else its uncovered content
   words;
4. dates with digits or a month name ("7 May 2023", "2023-05-07", "May 2023", "1990", "3 pm")
   that no frame carries. A missing date alone never triggers repair: session dates recur
   in many records and provenance keeps them. Missing dates only join a call that a missing
   quote, number or visual detail already requires.

At most 12 items are listed, in that order. Spelled-out numbers ("three") are not audited.
Words are compared as anchor-key tokens (lowercase, singular) stemmed on both sides with
:func:`apps.language.words.stem` ("painted" = "painting" = "paint"), because predicates are
lemmas and sources are not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from apps.graph.frames import ExtractedFrame
from apps.graph.keys import FUNCTION_WORDS, key_tokens
from apps.language.calendar import MONTHS, month_alternation
from apps.language.words import SHARED_PICTURE, stem

MAX_REPAIR_ITEMS = 12
VISUAL_COVERAGE_THRESHOLD = 0.45

_STOPWORDS: frozenset[str] = FUNCTION_WORDS | frozenset(
    """
    about above after again against all also am any are aren as be because been before being below between
    both but by can cannot could did didn do does doesn doing don down during each else even ever every few
    from further get got had has have having he her here hers herself him himself his how however i if into
    is isn it its itself just let like me more most much must my myself no nor not now off once only other
    ought our ours ourselves out over own really same she should so some such than that then there these
    they this those through too under until up upon us very was wasn we were weren what when where which
    while who whom whose why will with won would yes yet you your yours yourself yourselves haha lol oh ok
    okay wow yeah hey hi hello thanks thank please sure still maybe gonna wanna kinda pretty quite lot
    thing things something anything everything one ones im ive youre thats dont cant
    """.split()
)

_QUOTE = re.compile(
    r"\"(?P<straight>[^\"\n]{1,200})\"|\u201c(?P<curly>[^\u201d\n]{1,200})\u201d"
    r"|\u2018(?P<single_curly>[^\u2019\n]{1,200})\u2019(?!\w)"
    # A straight single quote is also an apostrophe: only a short phrase opening on a letter.
    r"|(?<![\w'])'(?P<single>[A-Za-z][^'\n]{0,58}[^\s'])'(?!\w)"
)
# Capitalized only: "may", "march" and "jan" are also ordinary words.
_MONTH = rf"(?-i:(?:{month_alternation(abbreviations=True, capitalized=True)})\.?)"
_ORDINAL_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_DATE = re.compile(
    rf"""
    \b\d{{4}}-(?:W\d{{2}}|\d{{2}}(?:-\d{{2}})?)(?:T\d{{2}}(?::\d{{2}}){{0,2}}(?:Z|[+-]\d{{2}}:?\d{{2}})?)?\b
  | \b\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?\b
  | \b(?:{_ORDINAL_DAY}\s+(?:of\s+)?)?{_MONTH}(?:\s+{_ORDINAL_DAY}\b)?(?:,?\s+\d{{4}})?\b
  | \b\d{{1,2}}(?::\d{{2}})?\s?(?:a\.m\.|p\.m\.|am\b|pm\b)
  | \b\d{{1,2}}:\d{{2}}\b
  | (?:\b|')(?:19|20)?\d0s\b
  | \b(?:19|20)\d{{2}}\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
# A number is listed with the word that follows it ("3 bags", "10km", "2nd place") unless
# that word is a stop word, so a repair call knows what was counted or measured.
_NUMBER = re.compile(
    r"(?<![\w.\-/:])(?P<currency>[$€£¥]\s?)?(?P<value>\d+(?:,\d{3})*(?:\.\d+)?)(?:st|nd|rd|th)?"
    r"(?P<unit>\s?(?:%|[A-Za-z]+))?(?![\w/])"
)


@dataclass(frozen=True)
class CoverageAudit:
    needs_repair: bool
    missing: list[str]  # at most MAX_REPAIR_ITEMS, as written in the source
    visual_coverage: float | None = None  # share of content words covered, for a source with visual content


def _number_value(text: str) -> str:
    try:
        return format(Decimal(text.replace(",", "")).normalize(), "f")
    except InvalidOperation:
        return text


def _number_item(match: re.Match[str]) -> str:
    unit = match["unit"]
    if unit and unit.strip().lower() in _STOPWORDS:
        return match.string[match.start() : match.start("unit")].strip()
    return match.group().strip()


def _words(text: str) -> list[str]:
    return [stem(token) for token in key_tokens(text)]


def _numbers(text: str) -> set[str]:
    """Every numeric value in a text, dates' parts included, month names as their number."""
    values = {_number_value(match) for match in re.findall(r"\d+(?:[.,]\d+)*", text)}
    values |= {str(MONTHS[word]) for word in re.findall(r"[a-z]+", text.lower()) if word in MONTHS}
    return values


def _frame_texts(frames: Iterable[ExtractedFrame]) -> Iterator[str]:
    for frame in frames:
        yield frame.predicate.replace("_", " ")
        yield from (name for _, name in frame.roles)
        yield from frame.literals.values()
        if frame.event_time:
            yield frame.event_time


def _content_words(text: str) -> list[str]:
    words = (stem(token) for token in key_tokens(text) if token.isalpha() and len(token) > 2)
    return [word for word in words if word not in _STOPWORDS]


def _quotes(source: str) -> Iterator[str]:
    for match in _QUOTE.finditer(source):
        phrase = next(group for group in match.groups() if group is not None).strip()
        if phrase:
            yield phrase


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [match.span() for match in pattern.finditer(text)]


def _inside(position: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def audit_coverage(source: str, frames: Sequence[ExtractedFrame]) -> CoverageAudit:
    """What the frames of a record miss of its source text, and whether that warrants repair."""
    texts = list(_frame_texts(frames))
    frame_words = {word for text in texts for word in _words(text)}
    frame_numbers = {value for text in texts for value in _numbers(text)}

    quotes = [quote for quote in _quotes(source) if not set(_content_words(quote) or _words(quote)) <= frame_words]

    dates = _spans(_DATE, source)
    numbers = [
        _number_item(match)
        for match in _NUMBER.finditer(source)
        if not _inside(match.start("value"), dates) and _number_value(match["value"]) not in frame_numbers
    ]

    visual_items: list[str] = []
    visual_coverage: float | None = None
    captions = [match["caption"].strip() for match in SHARED_PICTURE.finditer(source)]
    if captions:
        content = list(dict.fromkeys(_content_words(SHARED_PICTURE.sub(lambda m: f" {m['caption']} ", source))))
        covered = [word for word in content if word in frame_words]
        visual_coverage = len(covered) / len(content) if content else 1.0
        if visual_coverage < VISUAL_COVERAGE_THRESHOLD:
            visual_items = [c for c in captions if c and not set(_content_words(c)) <= frame_words]
            visual_items = visual_items or [word for word in content if word not in frame_words]

    missing = [*quotes, *numbers, *visual_items]
    needs_repair = bool(missing)
    if needs_repair:
        missing += [
            source[start:end].strip() for start, end in dates if not _numbers(source[start:end]) <= frame_numbers
        ]
    return CoverageAudit(
        needs_repair=needs_repair,
        missing=list(dict.fromkeys(missing))[:MAX_REPAIR_ITEMS],
        visual_coverage=visual_coverage,
    )
