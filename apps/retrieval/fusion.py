"""Citation-balanced fusion and token budgets (paper §2.4, A.3; architecture §7). Pure.

Rows arrive tagged with the lane that produced them (``base``, ``relation``, or ``flat`` after a
graph read raised). Fusion:

1. **Reranks** every row: ``PRIOR_WEIGHT / (1 + rank / PRIOR_SCALE)`` — a shallow prior on the
   row's rank in its type's vector search (0 for rows that came only through the graph) — plus
   ``LEXICAL_PRIOR_WEIGHT`` × the same prior on the row's BM25 rank among the search's
   candidates (when the adapter ranked them), plus ``COVERAGE_WEIGHT`` × the share of the
   question's content stems the row contains. The priors are shallow on purpose: a row that
   covers the question outranks the top vector hit that does not. The weights were set on one
   LoCoMo dev conversation (conv-30) by evidence recall within 1,024 tokens (ADR 0014).
   Ties: the adapter's ``lexical_score``, then row id.
2. **Cited rows first** (up to B^R): the citations of the ranked facts, in fact order (within
   one fact, by rerank score), because a fact without its supporting row is unverifiable.
3. **Base rows** (up to B^B) from the base and flat lanes. Episodic and semantic rows are
   ranked separately, since their vector ranks come from different searches, and interleaved
   by position (episodic first at equal position).
4. **Fill** up to the row limit (default B^R + B^B): cited rows past B^R first (they support
   rendered facts; our choice), then everything else in interleaved rerank order. No row id
   is taken twice.
5. **Paraphrase collapse**: an episodic row whose content-stem Jaccard similarity with an
   already taken episodic row is at least :data:`PARAPHRASE_JACCARD`, with the same numbers, is
   dropped only when both fall on the same calendar date (event time, else mention time; ``created_at`` is when we
   stored it, not when it happened, so it never dates a row). A dropped row takes no budget.
   The same wording on two dates stays two rows (A.3; the retrieval side of eq. 7).

:func:`count_tokens` is the evaluation's token metric: words and punctuation marks.
:func:`trim_to_token_budget` keeps items in order while they fit and skips those that do not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import TypeVar

from apps.retrieval.planner import content_stems, words
from apps.retrieval.types import (
    FactCandidate,
    FusedRow,
    FusedSource,
    FusionResult,
    MemoryType,
    Plan,
    RowCandidate,
)

PRIOR_WEIGHT = 0.5  # the vector-rank prior at rank 0 (our choice)
PRIOR_SCALE = 5.0  # the rank at which the prior halves: shallow (our choice)
LEXICAL_PRIOR_WEIGHT = 2.0  # the BM25-rank prior relative to the vector-rank prior (our choice)
COVERAGE_WEIGHT = 0.5  # times the share of the question's content stems a row covers (our choice)
# Content-stem Jaccard at or above which same-date episodic rows collapse (our choice): one
# differing content word in a short turn ("a puppy" / "a kitten named Max") scores ≈ 0.71.
PARAPHRASE_JACCARD = 0.8
_TYPE_ORDER: tuple[MemoryType, ...] = ("episodic", "semantic")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")

T = TypeVar("T")


def count_tokens(text: str) -> int:
    """Words and punctuation marks: ``"Hello, world!"`` is 4 tokens."""
    return len(_TOKEN.findall(text))


def trim_to_token_budget(items: Sequence[T], budget: int, *, text: Callable[[T], str]) -> list[T]:
    """The items, in order, that fit ``budget`` tokens; an item that does not fit is skipped whole."""
    kept: list[T] = []
    used = 0
    for item in items:
        cost = count_tokens(text(item))
        if used + cost <= budget:
            kept.append(item)
            used += cost
    return kept


def lexical_coverage(text: str, plan: Plan) -> float:
    wanted = plan.constraints.content_stems
    return len(content_stems(text) & wanted) / len(wanted) if wanted else 0.0


def _prior(rank: int | None) -> float:
    return 0.0 if rank is None else PRIOR_WEIGHT / (1.0 + max(rank, 0) / PRIOR_SCALE)


def rerank_score(row: RowCandidate, plan: Plan) -> float:
    """The vector-rank prior, the BM25-rank prior (same shape, when the row was ranked among its
    candidates), and the question's content stems the row covers."""
    coverage = COVERAGE_WEIGHT * lexical_coverage(row.text, plan)
    return _prior(row.vector_rank) + LEXICAL_PRIOR_WEIGHT * _prior(row.lexical_rank) + coverage


def row_calendar_date(row: RowCandidate) -> date | None:
    moment = row.event_time or row.mention_time
    return moment.date() if moment is not None else None


def token_jaccard(first: str, second: str) -> float:
    """Jaccard similarity of two texts' content stems (of their lowercase words if neither has any)."""
    a, b = content_stems(first), content_stems(second)
    if not a and not b:
        a, b = frozenset(w.lower() for w in words(first)), frozenset(w.lower() for w in words(second))
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def is_same_date_paraphrase(first: RowCandidate, second: RowCandidate) -> bool:
    if first.memory_type != "episodic" or second.memory_type != "episodic":
        return False
    day = row_calendar_date(first)
    if day is None or day != row_calendar_date(second):
        return False
    if set(_DIGITS.findall(first.text)) != set(_DIGITS.findall(second.text)):
        return False  # different quantities are different facts
    return token_jaccard(first.text, second.text) >= PARAPHRASE_JACCARD


@dataclass(frozen=True, slots=True)
class _Ranked:
    row: RowCandidate
    score: float
    base: bool  # reached through the base or flat lane


def _unique_rows(rows: Iterable[RowCandidate], plan: Plan) -> dict[str, _Ranked]:
    """One entry per row id; a row from several lanes keeps its best rank and lexical score."""
    merged: dict[str, tuple[RowCandidate, bool]] = {}
    for row in rows:
        base = row.lane in ("base", "flat")
        seen = merged.get(row.row_id)
        if seen is None:
            merged[row.row_id] = (row, base)
            continue
        ranks = [rank for rank in (seen[0].vector_rank, row.vector_rank) if rank is not None]
        best = replace(
            seen[0],
            vector_rank=min(ranks) if ranks else None,
            lexical_score=max(seen[0].lexical_score, row.lexical_score),
        )
        merged[row.row_id] = (best, seen[1] or base)
    return {row_id: _Ranked(row, rerank_score(row, plan), base) for row_id, (row, base) in merged.items()}


def _rank_key(item: _Ranked) -> tuple[float, float, str]:
    return (-item.score, -item.row.lexical_score, item.row.row_id)


def _interleaved(items: Iterable[_Ranked]) -> list[_Ranked]:
    """Each type ranked on its own, then merged by position (episodic first at equal position)."""
    by_type: dict[MemoryType, list[_Ranked]] = {kind: [] for kind in _TYPE_ORDER}
    for item in items:
        by_type[item.row.memory_type].append(item)
    positioned = [
        (position, _TYPE_ORDER.index(kind), item)
        for kind, group in by_type.items()
        for position, item in enumerate(sorted(group, key=_rank_key))
    ]
    return [item for _, _, item in sorted(positioned, key=lambda entry: (entry[0], entry[1], entry[2].row.row_id))]


def _cited(ranked: dict[str, _Ranked], facts: Sequence[FactCandidate]) -> list[_Ranked]:
    first_fact: dict[str, int] = {}
    for index, fact in enumerate(facts):
        for row_id in fact.citations:
            if row_id in ranked:
                first_fact.setdefault(row_id, index)
    return sorted(
        (ranked[row_id] for row_id in first_fact), key=lambda item: (first_fact[item.row.row_id], *_rank_key(item))
    )


class _Selection:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.rows: list[FusedRow] = []
        self.seen: set[str] = set()
        self.collapsed: list[tuple[str, str]] = []

    @property
    def full(self) -> bool:
        return len(self.rows) >= self.limit

    def take(self, item: _Ranked, source: FusedSource) -> bool:
        row = item.row
        if row.row_id in self.seen or self.full:
            return False
        self.seen.add(row.row_id)
        twin = next((kept.row for kept in self.rows if is_same_date_paraphrase(kept.row, row)), None)
        if twin is not None:
            self.collapsed.append((row.row_id, twin.row_id))
            return False
        self.rows.append(FusedRow(row, source, item.score))
        return True


def fuse(
    rows: Iterable[RowCandidate], facts: Sequence[FactCandidate], plan: Plan, *, limit: int | None = None
) -> FusionResult:
    """The returned evidence rows: ≤ B^R cited, then ≤ B^B base, then fill up to ``limit``.

    ``facts`` are the rendered facts in rank order (e.g. ``[s.fact for s in rank_facts(...)]``);
    ``limit`` is the request's row limit, B^R + B^B by default.
    """
    budgets = plan.budgets
    selection = _Selection(budgets.total_rows if limit is None else max(limit, 0))
    ranked = _unique_rows(rows, plan)
    cited = _cited(ranked, facts)

    taken = 0
    for item in cited:
        if taken >= budgets.cited_rows:
            break
        taken += selection.take(item, "cited")

    taken = 0
    for item in _interleaved(item for item in ranked.values() if item.base):
        if taken >= budgets.base_rows:
            break
        taken += selection.take(item, "base")

    for item in [*cited, *_interleaved(ranked.values())]:
        if selection.full:
            break
        selection.take(item, "fill")

    return FusionResult(rows=tuple(selection.rows), collapsed=tuple(selection.collapsed), rows_inspected=len(ranked))
