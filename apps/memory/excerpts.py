"""What search returns of a document: its passages that fit the token budget. Pure.

A resource keeps its whole text; search returns passages of it (ADR 0025), never the whole
text over budget. Each matched resource contributes its best passage, then its next best, in
rounds, while they fit; a resource whose best passage does not fit what is left gets that
passage cut to it, so every matched resource shows something when any budget is left.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from apps.language.words import count_tokens, truncate_to_tokens


@dataclass(frozen=True)
class Excerpt:
    passage_id: str | None  # the passage row; None for a cut of a resource stored without passages
    start: int  # character offsets in the resource's text
    end: int
    text: str
    truncated: bool = False

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)


def choose_excerpts(ranked: Sequence[Sequence[Excerpt]], budget: int | None) -> list[list[Excerpt]]:
    """For each resource (in rank order, its passages best first), the excerpts it returns:
    without a budget its best passage; with one, passages in rounds while they fit."""
    chosen: list[list[Excerpt]] = [[] for _ in ranked]
    if budget is None:
        return [list(passages[:1]) for passages in ranked]
    left = budget
    depth = max((len(passages) for passages in ranked), default=0)
    for round_number in range(depth):
        for index, passages in enumerate(ranked):
            if round_number >= len(passages) or left <= 0:
                continue
            passage = passages[round_number]
            if passage.tokens <= left:
                chosen[index].append(passage)
                left -= passage.tokens
            elif not chosen[index]:
                text = truncate_to_tokens(passage.text, left)
                if text:
                    cut = replace(passage, end=passage.start + len(text), text=text, truncated=True)
                    chosen[index].append(cut)
                    left -= cut.tokens
    return chosen
