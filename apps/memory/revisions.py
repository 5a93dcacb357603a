"""A document pasted or uploaded again, changed: which earlier text it revises, and which of its
passages revises which earlier passage. Framework-free (ADR 0101).

Two texts are versions of one document when most of their sentences are the same, word for
word: at least ``REVISION_OVERLAP`` of the larger text's distinct sentences of four words or
more are in the other. A revision changes some values and keeps most sentences. Two documents
cut from one template, or sharing boilerplate, differ in the sentences that carry their
content (a name, a date, an amount), so distinct sentences tell them apart where runs of words
or counted sentences do not: every run of a template lease is in every other lease of it, and
a closing paragraph repeated under each section outweighs the sections. Passages of two
versions are then paired one to one by their shared runs of ``SHINGLE_WORDS`` words, the most
alike first (ties go to the pair nearest in position, so a paragraph repeated through a
document pairs with its own place), when at least ``PASSAGE_OVERLAP`` of the larger passage's
runs are shared; a new passage with no partner is new, an old one with no partner was cut.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import TypeAlias, TypeVar

SHINGLE_WORDS = 4
SENTENCE_WORDS = 4
REVISION_OVERLAP = 0.6
PASSAGE_OVERLAP = 0.5

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n\s*")
Shingles: TypeAlias = set[tuple[str, ...]]
K = TypeVar("K")


def _shingles(text: str, size: int = SHINGLE_WORDS) -> Shingles:
    """The text's runs of ``size`` words, lowercased (a shorter text is its one run)."""
    words = _WORD.findall(text.lower())
    if len(words) <= size:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def sentences(text: str) -> set[str]:
    """The text's distinct sentences (and lines) of at least ``SENTENCE_WORDS`` words, each as
    its lowercased words. Headings ("Clause 17.") and a sentence a text repeats (boilerplate
    closing every section) count once, or not at all: what tells two documents apart is the
    sentences that carry their content."""
    found = (" ".join(_WORD.findall(piece.lower())) for piece in _SENTENCE_END.split(text))
    return {sentence for sentence in found if sentence.count(" ") + 1 >= SENTENCE_WORDS}


def revises(old: str, new: str) -> float:
    """How much ``new`` is a version of ``old``: the share of the larger text's sentences that
    both have, when at least ``REVISION_OVERLAP``; else 0."""
    return _revision_score(sentences(old), sentences(new))


def _revision_score(first: set[str], second: set[str]) -> float:
    larger = max(len(first), len(second))
    score = len(first & second) / larger if larger else 0.0
    return score if score >= REVISION_OVERLAP else 0.0


def revised_version(new: str, candidates: Iterable[tuple[K, str]]) -> K | None:
    """The key of the candidate text ``new`` revises most (the first of equals), or None."""
    mine = sentences(new)
    best, best_score = None, 0.0
    for key, text in candidates:
        score = _revision_score(sentences(text), mine)
        if score > best_score:
            best, best_score = key, score
    return best


def aligned_passages(old: Sequence[str], new: Sequence[str]) -> dict[int, int]:
    """Each new passage's index → the index of the old passage it revises, one to one. Only
    pairs that share a shingle are compared (an index from shingle to old passages), so the
    cost follows the texts' length, not the product of their passage counts."""
    old_sets, new_sets = [_shingles(text) for text in old], [_shingles(text) for text in new]
    holders: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for index, found in enumerate(old_sets):
        for shingle in found:
            holders[shingle].append(index)
    scale = len(old) / len(new) if new else 1.0
    pairs = []
    for i, found in enumerate(new_sets):
        shared = Counter(j for shingle in found for j in holders.get(shingle, ()))
        for j, count in shared.items():
            score = count / max(len(found), len(old_sets[j]))
            if score >= PASSAGE_OVERLAP:
                pairs.append((-score, abs(j - i * scale), i, j))
    pairs.sort()
    paired: dict[int, int] = {}
    taken: set[int] = set()
    for _, _, i, j in pairs:
        if i not in paired and j not in taken:
            paired[i] = j
            taken.add(j)
    return paired
