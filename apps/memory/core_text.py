"""Core memory follows the facts: which lines of a core block state a superseded fact, and the
block with those lines restated. Pure.

A core block is a list of statements ("Nadia: I live in Porto."). When a write supersedes a
semantic fact, the block's line that states the old value is replaced, in place, by the new
value's line, so the block never keeps saying the old city after the user said they moved.
A line states a fact when most of its content words (the entity's name left out) are words of
the fact's summary: the local writer's lines equal its summaries, a language model's lines are
paraphrases of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from apps.language.words import content_stems

# Share of a line's content stems that must be the fact's for the line to state the fact.
STATES_SHARE = 0.6


@dataclass(frozen=True)
class FactChange:
    """A stored fact about ``entity`` superseded by a new value: both as their summaries."""

    entity: str
    old_text: str
    new_text: str
    new_message_ids: tuple[str, ...] = ()


def states(line: str, fact: str, *, entity: str) -> bool:
    """Does ``line`` state ``fact`` (about ``entity``)?"""
    name = content_stems(entity)
    line_stems, fact_stems = content_stems(line) - name, content_stems(fact) - name
    if not line_stems or not fact_stems:
        return " ".join(line.split()).casefold() == " ".join(fact.split()).casefold()
    shared = len(line_stems & fact_stems)
    return shared >= min(2, len(line_stems)) and shared / len(line_stems) >= STATES_SHARE


def restate_superseded(
    lines: Sequence[str], appended: Sequence[str], changes: Sequence[FactChange]
) -> tuple[list[str], list[FactChange]]:
    """The block's ``lines`` with ``appended`` added, where each line stating a changed fact's
    old value gives way to the new value's line: the appended line that states it (moved to
    the old line's place) or else the new summary. Returns the lines and the changes that
    touched the block."""
    block = list(lines)
    pending = list(appended)
    restated: list[FactChange] = []
    for change in changes:
        stale = [index for index, line in enumerate(block) if states(line, change.old_text, entity=change.entity)]
        if not stale:
            continue
        replacement = next((line for line in pending if states(line, change.new_text, entity=change.entity)), None)
        if replacement is None:
            replacement = change.new_text
        else:
            pending.remove(replacement)
        first, *others = stale
        block[first] = replacement
        block = [line for index, line in enumerate(block) if index not in others]
        restated.append(change)
    return [*block, *(line for line in pending if line not in block)], restated
