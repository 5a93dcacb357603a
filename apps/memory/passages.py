"""Long text cut into passages that search can return one at a time. Framework-free.

A pasted document or an upload is kept whole as a resource; its passages are what the graph
indexes and what search returns, so a question about one paragraph of a 4,000-word document
gets that paragraph, within a token budget, instead of the whole text. Passages end on
paragraph, then sentence, then line, then word boundaries, and each knows its character
offsets in the text it came from (``text[start:end] == passage.text``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from apps.language.words import is_heading_line

# A message this long is pasted text, not a conversation turn: the write path keeps it whole as
# a resource and searchable passage by passage, as it keeps a document (ADR 0100). One row of
# it would take most of a search's token budget.
PASTE_CHARS = 3_000
# From this length on it is a document: the conversation writers do not read it (ADR 0025).
# Below it they do, for the facts it states, and its passages stand for its episode.
DOCUMENT_CHARS = 20_000
PASSAGE_TARGET_CHARS = 1_000
PASSAGE_MAX_CHARS = 1_400

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_LINE_BREAK = re.compile(r"\n[ \t]*")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])[\"')\]]*\s+")
_WORD_GAP = re.compile(r"\s+")


@dataclass(frozen=True)
class Passage:
    start: int
    end: int
    text: str


def is_pasted(text: str) -> bool:
    """Kept as a resource and its passages, not as one episodic row."""
    return len(text) >= PASTE_CHARS


def is_document(text: str) -> bool:
    """Not read by the conversation writers."""
    return len(text) >= DOCUMENT_CHARS


def _pieces(text: str, start: int, end: int, separator: re.Pattern[str]) -> list[tuple[int, int]]:
    """The spans of ``text[start:end]`` between matches of ``separator``."""
    spans, cursor = [], start
    for match in separator.finditer(text, start, end):
        if match.start() > cursor:
            spans.append((cursor, match.start()))
        cursor = match.end()
    if cursor < end:
        spans.append((cursor, end))
    return spans


def _units(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Spans no longer than ``limit``: paragraphs, else their sentences, else their lines (a
    log or a table without sentence ends; hard-wrapped prose is cut at its sentences first),
    else runs of words, else (one word longer than the limit) hard cuts."""
    if end - start <= limit:
        return [(start, end)]
    for separator in (_PARAGRAPH_BREAK, _SENTENCE_END, _LINE_BREAK, _WORD_GAP):
        spans = _pieces(text, start, end, separator)
        if len(spans) > 1:
            return [unit for s, e in spans for unit in _units(text, s, e, limit)]
    return [(cut, min(cut + limit, end)) for cut in range(start, end, limit)]


def split_passages(text: str, *, target: int = PASSAGE_TARGET_CHARS, limit: int = PASSAGE_MAX_CHARS) -> list[Passage]:
    """Consecutive passages covering every non-blank part of ``text``: units are packed while
    the passage stays within ``target`` characters, and none is longer than ``limit``. A
    heading never ends a passage: it opens the next one, with what it heads."""
    passages: list[Passage] = []
    current: tuple[int, int] | None = None
    last = 0  # where the current passage's last unit starts
    for unit_start, unit_end in _units(text, 0, len(text), limit):
        if current is not None:
            joined, short = unit_end - current[0], current[1] - current[0] < target // 3
            # A short passage so far (a heading, a one-line paragraph) takes the next unit
            # up to the limit rather than standing alone.
            if joined <= target or (short and joined <= limit):
                current, last = (current[0], unit_end), unit_start
                continue
            if last > current[0] and is_heading_line(text[last : current[1]]) and unit_end - last <= limit:
                passages.append(_passage(text, current[0], last))
                current, last = (last, unit_end), unit_start
                continue
            passages.append(_passage(text, *current))
        current, last = (unit_start, unit_end), unit_start
    if current is not None:
        passages.append(_passage(text, *current))
    return [passage for passage in passages if passage.text]


def _passage(text: str, start: int, end: int) -> Passage:
    """The span without its surrounding whitespace, offsets moved to match."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Passage(start=start, end=end, text=text[start:end])


def document_title(text: str, *, limit: int = 120) -> str:
    """A pasted document's title: its first non-blank line, shortened at a word."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if len(first) <= limit:
        return first or "Pasted document"
    return first[:limit].rsplit(" ", 1)[0].rstrip(" ,.;:") + "…"
