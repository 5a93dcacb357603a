"""The synthetic histories of the retrieval benchmark: deterministic, realistic in the ways the
benchmark relies on, and loadable into a real graph that a search answers within its budgets."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from apps.evaluation import synthetic
from apps.evaluation.management.commands.bench_retrieval import ANCHOR_CAP, FRAME_CAP, history_load, rows_cap
from apps.graph import adapter
from apps.graph.models import AnchorVector
from apps.memory.models import EpisodicEvent
from apps.providers.local_embedder import LocalEmbedder
from apps.retrieval.services import search
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant

SUBJECT = uuid.UUID("00000000-0000-4000-8000-000000000001")


def _spec(history: synthetic.SyntheticHistory) -> tuple[object, ...]:
    return (
        history.records,
        {k: a.properties(SUBJECT) for k, a in history.anchors.items()},
        {k: f.properties(SUBJECT) for k, f in history.frames.items()},
    )


@pytest.mark.unit
def test_same_seed_same_records_and_graph_spec() -> None:
    first = synthetic.generate_history(size=400, subject_id=SUBJECT, seed=11)
    again = synthetic.generate_history(size=400, subject_id=SUBJECT, seed=11)
    other = synthetic.generate_history(size=400, subject_id=SUBJECT, seed=12)
    assert _spec(first) == _spec(again)
    assert [r.summary for r in first.records] != [r.summary for r in other.records]
    questions = synthetic.benchmark_questions(first.records, count=30, seed=11)
    assert questions == synthetic.benchmark_questions(again.records, count=30, seed=11)
    assert len({q.text for q in questions}) == len(questions) == 30


@pytest.mark.unit
def test_a_shorter_history_is_a_prefix_of_a_longer_one() -> None:
    short = synthetic.generate_history(size=150, subject_id=SUBJECT)
    long = synthetic.generate_history(size=600, subject_id=SUBJECT)
    assert long.records[:150] == short.records
    assert set(short.anchors) <= set(long.anchors)


@pytest.mark.unit
def test_entities_are_reused_with_hubs_and_a_long_tail() -> None:
    history = synthetic.generate_history(size=2000, subject_id=SUBJECT)
    mentions = {key: len(spec.episodic_ids) for key, spec in history.anchors.items()}
    ranked = sorted(mentions.values(), reverse=True)
    assert ranked[0] > len(history.records) / 2  # the subject herself acts in most records
    hubs = {synthetic.HUB_PERSONS[i].lower() for i in range(len(synthetic.HUB_PERSONS))}
    assert hubs <= set(mentions)
    tail = [n for key, n in mentions.items() if key not in hubs]
    assert max(tail) >= 10  # some places, people and objects recur often …
    assert Counter(tail)[1] > len(tail) / 3  # … and many are mentioned once
    types = Counter(spec.entity.type for spec in history.anchors.values())
    assert {"person", "location", "object"} <= set(types)
    assert len(history.anchors) < sum(mentions.values()) / 2
    assert len(history.anchor_names()) == len(history.anchors)  # each name embedded once
    assert len({t.sentence for t in history.templates}) == len(history.templates) > 200


@pytest.mark.unit
def test_dated_and_undated_events_and_frame_identity() -> None:
    history = synthetic.generate_history(size=1500, subject_id=SUBJECT)
    dated = [r for r in history.records if r.event_time is not None]
    undated = [r for r in history.records if r.event_time is None]
    assert dated and undated
    assert {r.event_time_precision for r in dated} == {"day", "month"}
    assert any(r.status == "planned" for r in history.records)
    assert any(any(ch.isdigit() for ch in r.summary) and r.literals for r in history.records)
    frames = list(history.frames.values())
    assert all(len({key for _, key in f.arms}) >= 2 for f in frames)
    undated_frames = [f for f in frames if f.event_time is None]
    # Undated occurrences from different rows never share a frame (invariant 2).
    assert all(len(f.citations) == 1 for f in undated_frames)
    assert len(undated_frames) == len(undated)
    cited = Counter(c for f in frames for c in f.citations)
    assert set(cited) == {str(r.id) for r in history.records}


def test_a_tiny_history_loads_and_a_search_stays_within_budgets() -> None:
    tenant = make_tenant()
    subject = tenant.subject("maya")
    history = synthetic.generate_history(size=200, subject_id=subject.id)
    embedder = LocalEmbedder()
    load = history_load(subject=subject, history=history, embedder=embedder, progress=False)
    assert (load.anchors, load.frames) == (len(history.anchors), len(history.frames))
    with organization_scope(tenant.id):
        assert EpisodicEvent.objects.filter(subject=subject).count() == 200
        assert AnchorVector.objects.filter(subject=subject).count() == len(history.anchors)
        arms = adapter.cypher(
            organization_id=tenant.id,
            query="MATCH (f:Frame)-[r:ARM]->(a:Anchor) WHERE f.subject_id = $s RETURN count(r)",
            params={"s": str(subject.id)},
            returns=["n"],
        )[0][0]
    assert arms == load.arms

    row_ids = {str(r.id) for r in history.records}
    for question in synthetic.benchmark_questions(history.records, count=8):
        with organization_scope(tenant.id):
            result = search(subject=subject, question=question.text, embedder=embedder, mode="graph")
        budget = result.budget
        assert not result.fallback
        assert result.rows and {r.row.row_id for r in result.rows} <= row_ids
        assert all(set(f.fact.citations) <= row_ids for f in result.facts)
        assert budget.anchors_inspected <= ANCHOR_CAP
        assert budget.frames_inspected <= FRAME_CAP
        assert budget.rows_inspected <= rows_cap(load.max_citations)
        assert budget.rows_returned <= result.plan.budgets.total_rows
        assert set(result.timings_ms) >= {"embedding", "graph", "rows"}
