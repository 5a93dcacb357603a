"""The answer loop of the answer endpoint (docs/architecture.md, "Retrieval plane").

Framework-free but for :func:`apps.retrieval.services.search`, which it calls with the subject
it is given (the caller holds the organization's scope). The answering agent is a port
(:class:`~apps.providers.interfaces.AnswerLLM`):

1. Search the question; the agent drafts an answer from the evidence, citing row ids. It may
   ask for another search (``needs_more``) until :data:`MAX_RETRIEVAL_CALLS` searches have run;
   each draft sees the union of the evidence so far.
2. :func:`~apps.retrieval.answer_check.check_answer` reads the question's plan, the draft and
   that evidence ledger (never a reference answer). When a rule fires, exactly one more search
   (the check's query, :data:`MAX_EXTRA_SEARCHES`) and one rewrite over the union of evidence.
3. The answer cites only ids that were in the evidence the agent was shown; any other id is
   dropped, so a client can always dereference what an answer cites.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from apps.providers.interfaces import (
    AnswerDraft,
    AnswerLLM,
    AnswerRequest,
    Embedder,
    EvidenceFact,
    EvidenceRow,
    MeteringContext,
)
from apps.retrieval import reads
from apps.retrieval.answer_check import MAX_RETRIEVAL_CALLS, CheckRule, check_answer
from apps.retrieval.services import Mode, search
from apps.retrieval.types import FactCandidate, Plan, RowCandidate

if TYPE_CHECKING:
    from apps.tenancy.models import Subject

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 2000  # a follow-up query an agent asks for is cut to the question's own limit


@dataclass(frozen=True)
class CitedRow:
    """A row an answer cites, with its currency."""

    id: str
    current: bool
    superseded_by: str | None
    valid_from: datetime | None
    valid_to: datetime | None
    metadata: dict[str, Any] = field(default_factory=dict)  # the tags of the write that produced it


@dataclass(frozen=True)
class AnswerResult:
    answer: str
    cited_row_ids: tuple[str, ...]  # only ids of the evidence the agent was shown
    cited_rows: tuple[CitedRow, ...]  # the same rows, in the same order, with their currency
    searches: int  # every search run, the check's extra one included
    check_rules: tuple[CheckRule, ...]  # the rules the check fired on the draft
    rewritten: bool
    plan: Plan  # the question's plan
    fallback: bool  # some search fell back to direct evidence retrieval


@dataclass
class _Ledger:
    """The union of the evidence of every search so far: rows and facts in first-seen order."""

    rows: dict[str, RowCandidate] = field(default_factory=dict)
    facts: dict[str, FactCandidate] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)
    fallback: bool = False

    @property
    def searches(self) -> int:
        return len(self.queries)

    def searched(self, query: str) -> bool:
        wanted = query.casefold()
        return any(done.casefold() == wanted for done in self.queries)

    def cited_ids(self) -> frozenset[str]:
        """Ids an answer may cite: the rows shown and the rows the facts shown cite."""
        return frozenset(self.rows) | {row_id for fact in self.facts.values() for row_id in fact.citations}

    def request(
        self, question: str, *, searches_left: int, draft: str | None = None, rules: tuple[str, ...] = ()
    ) -> AnswerRequest:
        return AnswerRequest(
            question=question,
            rows=tuple(_evidence_row(row) for row in self.rows.values()),
            facts=tuple(_evidence_fact(fact) for fact in self.facts.values()),
            searches_left=searches_left,
            draft=draft,
            check_rules=rules,
        )


def _evidence_row(row: RowCandidate) -> EvidenceRow:
    return EvidenceRow(
        row_id=row.row_id,
        memory_type=row.memory_type,
        text=row.text,
        event_time=row.event_time,
        mention_time=row.mention_time,
        speaker=row.speaker,
        current=row.current,
        attribute=row.attribute or "",
        told=row.told,
        passage=row.passage,
    )


def _evidence_fact(fact: FactCandidate) -> EvidenceFact:
    return EvidenceFact(
        predicate=fact.predicate,
        arguments=tuple((role, name) for role, _, name in fact.roles),
        literals=tuple(fact.literals.items()),
        event_time=fact.event_time,
        status=fact.status,
        citations=tuple(fact.citations),
    )


def answer_question(
    *,
    subject: Subject,
    question: str,
    embedder: Embedder,
    answerer: AnswerLLM,
    metering: MeteringContext,
    mode: Mode = "graph",
    token_budget: int | None = None,
) -> AnswerResult:
    """Answer ``question`` from ``subject``'s memories: at most :data:`MAX_RETRIEVAL_CALLS`
    searches while drafting, then the answer check and at most one more search and rewrite."""
    ledger = _Ledger()

    def run_search(query: str) -> Plan:
        result = search(
            subject=subject, question=query, embedder=embedder, mode=mode, token_budget=token_budget, metering=metering
        )
        ledger.queries.append(query)
        ledger.fallback = ledger.fallback or result.fallback
        for fused in result.rows:
            ledger.rows.setdefault(fused.row.row_id, fused.row)
        for scored in result.facts:
            ledger.facts.setdefault(scored.fact.frame_id, scored.fact)
        return result.plan

    plan = run_search(question)
    # The answerer reads the question as search planned it: about the subject in its third
    # person ("Where does Ana live?"), as its rows and facts name it (ADR 0095).
    asked = plan.question
    draft = answerer.answer(ledger.request(asked, searches_left=MAX_RETRIEVAL_CALLS - 1), metering=metering)
    while (query := _followup(draft, ledger)) is not None:
        run_search(query)
        searches_left = MAX_RETRIEVAL_CALLS - ledger.searches
        draft = answerer.answer(ledger.request(asked, searches_left=searches_left), metering=metering)

    check = check_answer(plan, draft.answer, rows=list(ledger.rows.values()), facts=list(ledger.facts.values()))
    rewritten = check.fired
    if rewritten:
        run_search(check.query or question)  # the one extra search (MAX_EXTRA_SEARCHES)
        rewrite = ledger.request(asked, searches_left=0, draft=draft.answer, rules=check.rules)
        draft = answerer.answer(rewrite, metering=metering)

    allowed = ledger.cited_ids()
    cited = tuple(dict.fromkeys(row_id for row_id in draft.cited_row_ids if row_id in allowed))
    dropped = len(set(draft.cited_row_ids) - allowed)
    logger.info(
        "question answered",
        extra={
            "subject_id": str(subject.id),
            "operator": plan.operator,
            "searches": ledger.searches,
            "check_rules": list(check.rules),
            "rewritten": rewritten,
            "cited": len(cited),
            "dropped_citations": dropped,
        },
    )
    currency = reads.cited_currency(subject=subject, ids=cited)
    tags = reads.rows_metadata(subject=subject, ids=cited) if cited else {}
    return AnswerResult(
        answer=draft.answer,
        cited_row_ids=cited,
        cited_rows=tuple(
            CitedRow(
                id=row_id,
                current=currency[row_id].superseded_by is None,
                superseded_by=currency[row_id].superseded_by,
                valid_from=currency[row_id].valid_from,
                valid_to=currency[row_id].valid_to,
                metadata=tags.get(row_id, {}),
            )
            for row_id in cited
            if row_id in currency
        ),
        searches=ledger.searches,
        check_rules=check.rules,
        rewritten=rewritten,
        plan=plan,
        fallback=ledger.fallback,
    )


def _followup(draft: AnswerDraft, ledger: _Ledger) -> str | None:
    """The search a draft asks for, if one is left and it is new (a repeated query would only
    return the same evidence again)."""
    if draft.needs_more is None or ledger.searches >= MAX_RETRIEVAL_CALLS:
        return None
    query = " ".join(draft.needs_more.split())[:MAX_QUERY_CHARS]
    if not query or ledger.searched(query):
        return None
    return query
