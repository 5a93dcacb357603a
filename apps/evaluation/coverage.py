"""Candidate coverage of graph mode: the gold turns of a question that no graph lane brings
into the candidate set, and which lane should have reached each (``eval_locomo
--coverage-report``). The lanes are traced through ``graph_lane_trace``; the anchors a gold
turn's rows mention come from the adjacency index."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from apps.evaluation.locomo import Question
from apps.graph.adjacency import known_mentions
from apps.providers.interfaces import Embedder
from apps.retrieval.services import LaneTrace, graph_lane_trace
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope

# Why a gold turn is missing, in the order the lanes are tried.
NO_ROW = "write path: no memory row cites the turn"
NO_ANCHOR = "anchor lane: its rows mention no anchor (only similarity or words could reach it)"
ROW_CAP = "anchor lane: a selected anchor mentions it, cut by the per-anchor row cap"
NOT_SELECTED = "anchor lane: an anchor of it was recalled but not selected"
CO_CAP = "co-participant lane: an anchor of it was read as a co-participant, cut at its few rows"
NOT_RECALLED = "anchor recall: none of its anchors was recalled or named by the question"


def missing_lane(row_ids: list[str], anchors: set[str], trace: LaneTrace) -> str:
    """The lane that should have brought a gold turn (cited by ``row_ids``, whose rows mention
    ``anchors``) into a candidate set that does not hold it."""
    if not row_ids:
        return NO_ROW
    if not anchors:
        return NO_ANCHOR
    if anchors & set(trace.selected):
        return ROW_CAP
    if anchors & set(trace.recalled):
        return NOT_SELECTED
    if anchors & set(trace.co_participants):
        return CO_CAP
    return NOT_RECALLED


def question_coverage(
    *, subject: Subject, question: Question, embedder: Embedder, rows_of: dict[str, list[str]]
) -> list[dict[str, Any]]:
    """One line per gold turn of ``question`` that is not a graph-mode candidate. ``rows_of``
    maps a dia_id to the ids of the rows citing it."""
    with organization_scope(subject.organization_id):
        trace = graph_lane_trace(subject=subject, question=question.question, embedder=embedder)
        missing = [dia for dia in question.evidence if not set(rows_of.get(dia, [])) & trace.candidates]
        row_ids = [row for dia in missing for row in rows_of.get(dia, [])]
        mentions = known_mentions(organization_id=subject.organization_id, subject_id=subject.id, row_ids=row_ids)
    anchors_of: dict[str, set[str]] = defaultdict(set)
    for key, row in mentions:
        anchors_of[row].add(key)
    lines = []
    for dia in missing:
        rows = rows_of.get(dia, [])
        anchors = set().union(*(anchors_of[row] for row in rows)) if rows else set()
        lines.append(
            {
                "sample_id": question.sample_id,
                "qa_index": question.qa_index,
                "dia_id": dia,
                "lane": missing_lane(rows, anchors, trace),
                "anchors": sorted(anchors),
                "selected": trace.selected,
            }
        )
    return lines
