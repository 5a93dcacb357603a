"""Reads of the retrieval API: bounded, cited evidence for one subject's question."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from apps.memory.filters import Filter
from apps.providers.interfaces import MeteringContext
from apps.providers.registry import query_embedder
from apps.retrieval import reads
from apps.retrieval.services import BudgetReport, Mode, search
from apps.retrieval.types import FusedRow, Plan, ScoredFact
from apps.tenancy.models import Subject


@dataclass(frozen=True)
class Passage:
    """Where a row sits in a resource it is a passage of."""

    id: str
    start: int | None
    end: int | None


@dataclass(frozen=True)
class Provenance:
    session_id: str | None
    chunk_id: str
    source_message_ids: list[str]
    resource: Passage | None


@dataclass(frozen=True)
class EvidenceRow:
    """A returned row, with where it came from and which fusion phase took it."""

    fused: FusedRow
    provenance: Provenance
    attribute: str | None = None  # a semantic row's fact attribute
    metadata: dict[str, Any] = field(default_factory=dict)  # the tags of the write that produced it


@dataclass(frozen=True)
class SearchEvidence:
    mode: Mode
    fallback: bool
    plan: Plan
    facts: list[ScoredFact]
    rows: list[EvidenceRow]
    typed: dict[str, Any]  # the other stores' rows, by store name (the API adds skills)
    budget: BudgetReport


def _provenance(subject: Subject, rows: list[FusedRow]) -> list[EvidenceRow]:
    """Each row's chunk, source messages and (for a passage) place in its resource, read from
    its store (the row candidates carry the chunk only)."""
    stored = reads.rows_provenance(subject=subject, ids=[fused.row.row_id for fused in rows])
    evidence = []
    for fused in rows:
        found = stored.get(fused.row.row_id)
        resource = found.resource if found is not None else None
        provenance = Provenance(
            session_id=fused.row.session_id,
            chunk_id=found.chunk_id if found is not None else fused.row.chunk_id or "",
            source_message_ids=found.source_message_ids if found is not None else [],
            resource=Passage(id=resource[0], start=resource[1], end=resource[2]) if resource is not None else None,
        )
        attribute = found.attribute if found is not None and fused.row.memory_type == "semantic" else None
        evidence.append(
            EvidenceRow(
                fused=fused, provenance=provenance, attribute=attribute, metadata=found.metadata if found else {}
            )
        )
    return evidence


def search_evidence(
    *,
    subject: Subject,
    question: str,
    mode: Mode = "graph",
    memory_types: Sequence[str] = ("episodic", "semantic"),
    token_budget: int | None = None,
    limit: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    where: Filter | None = None,
    metering: MeteringContext | None = None,
) -> SearchEvidence:
    """The question's plan, graph facts with their citations, the rows within the budgets
    (with provenance), the other requested stores' rows and the budget report."""
    result = search(
        subject=subject,
        question=question,
        embedder=query_embedder(subject.organization_id),
        mode=mode,
        memory_types=memory_types,
        token_budget=token_budget,
        limit=limit,
        since=since,
        until=until,
        where=where,
        metering=metering,
    )
    return SearchEvidence(
        mode=result.mode,
        fallback=result.fallback,
        plan=result.plan,
        facts=result.facts,
        rows=_provenance(subject, result.rows),
        typed=result.typed,
        budget=result.budget,
    )
