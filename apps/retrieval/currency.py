"""Currency in ranking: for a question about the present, current evidence comes first. Pure.

A row is current while no row supersedes it (apps.memory.currency reads that). A fact (a
frame) is current while one of the rows it cites is; a fact whose every citation was replaced
states an old value. The planner's ``time_focus`` (apps.retrieval.planner) says what the
question asks:

- **present** ("where does she live", "what does she eat"): the current value is the answer.
  Each superseded row's current value (the head of its supersession chain, when it is among
  the candidates) takes the superseded row's place, and the superseded row follows right after
  it, marked (ADR 0099): still reachable within a budget, never above what replaced it. A
  superseded row whose current value is not among the candidates follows every current row.
  Facts that are not current rank after the current ones.
- **history** ("where did she live before", "when did she move"): the old values are the
  answer, so nothing is demoted; rows and facts keep their order and their marks.

Only the order changes: the row and fact caps stay what fusion and fact ranking chose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from apps.retrieval.types import FactCandidate, FusedRow, Plan, RowCandidate

_NEVER = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class CitedCurrency:
    """The currency of one cited row."""

    valid_from: datetime | None
    superseded_by: str | None
    valid_to: datetime | None


def mark_facts(facts: Sequence[FactCandidate], cited: Mapping[str, CitedCurrency]) -> list[FactCandidate]:
    """The facts with their currency: current while one cited row is current (or none of the
    cited rows is known: nothing says it changed); otherwise superseded by what replaced its
    newest citation, valid until then."""
    marked = []
    for fact in facts:
        known = [cited[row_id] for row_id in fact.citations if row_id in cited]
        if not known or any(currency.superseded_by is None for currency in known):
            marked.append(replace(fact, current=True, superseded_by=None, valid_to=None))
            continue
        newest = max(known, key=lambda currency: currency.valid_from or _NEVER)
        marked.append(replace(fact, current=False, superseded_by=newest.superseded_by, valid_to=newest.valid_to))
    return marked


def successor_ids(rows: Sequence[RowCandidate]) -> list[str]:
    """The rows that replaced superseded candidates and are not candidates themselves."""
    known = {row.row_id for row in rows}
    return list(
        dict.fromkeys(row.superseded_by for row in rows if row.superseded_by and row.superseded_by not in known)
    )


def _head(row: RowCandidate, pool: Mapping[str, RowCandidate]) -> RowCandidate | None:
    """The current row at the end of ``row``'s supersession chain, if the pool holds it."""
    seen = {row.row_id}
    while row.superseded_by is not None:
        following = pool.get(row.superseded_by)
        if following is None or following.row_id in seen:
            return None
        seen.add(following.row_id)
        row = following
    return row


def current_first(rows: Sequence[FusedRow], pool: Mapping[str, RowCandidate], plan: Plan) -> list[FusedRow]:
    """The returned rows in the order the question's time focus asks for (module docstring),
    as many as there were."""
    if plan.time_focus != "present":
        return list(rows)
    ordered: list[FusedRow] = []
    orphans: list[FusedRow] = []  # superseded, with no current value among the candidates
    placed: set[str] = set()
    for fused in rows:
        row = fused.row
        if row.current:
            if row.row_id not in placed:
                placed.add(row.row_id)
                ordered.append(fused)
            continue
        head = _head(row, pool)
        if head is None:
            orphans.append(fused)
            continue
        if head.row_id not in placed:  # the current value, in the old one's place
            placed.add(head.row_id)
            ordered.append(FusedRow(head, fused.source, fused.score))
        ordered.append(fused)
    return [*ordered, *orphans][: len(rows)]


def asked_facts_first(rows: Sequence[FusedRow], asked: Sequence[RowCandidate]) -> list[FusedRow]:
    """The rows a question asks for by name first, in their order: the facts of the key it asks
    for ("what diet does Nadia follow": the current ones), and the rows its numbered reference
    identifies (ADR 0098). Then the returned rows without them, as many as there were (or the
    asked rows alone when nothing else was returned)."""
    if not asked:
        return list(rows)
    first = [FusedRow(row, "base", 0.0) for row in asked]
    ids = {row.row_id for row in asked}
    rest = [fused for fused in rows if fused.row.row_id not in ids]
    return [*first, *rest][: max(len(rows), len(first))]
