"""Rows by id: one statement for both types, the same candidates the ORM read made."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from django.db import connection
from django.test.utils import CaptureQueriesContext
from pgvector.django import CosineDistance

from apps.memory.models import EpisodicEvent, SemanticItem
from apps.retrieval import reads
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant

MODEL = "test-3d"


def _episodic(subject, text: str, embedding: list[float] | None, model: str = MODEL) -> EpisodicEvent:  # type: ignore[no-untyped-def]
    return EpisodicEvent.objects.create(
        organization_id=subject.organization_id,
        subject=subject,
        source_kind="chat",
        session_id="s1",
        chunk_id=uuid.uuid4(),
        actor="Ana",
        event_type="event",
        summary=f"Ana: {text}",
        details=f"the whole message: {text}",
        event_time=datetime(2024, 3, 1, tzinfo=UTC) if "dated" in text else None,
        mention_time=datetime(2024, 3, 2, 9, 30, tzinfo=UTC),
        embedding=embedding,
        embedding_model=model if embedding is not None else "",
        index_status="indexed",
    )


def _semantic(subject, name: str, embedding: list[float]) -> SemanticItem:  # type: ignore[no-untyped-def]
    return SemanticItem.objects.create(
        organization_id=subject.organization_id,
        subject=subject,
        source_kind="chat",
        chunk_id=uuid.uuid4(),
        name=name,
        summary=f"{name} is a fact",
        details="details of the fact",
        source="test",
        embedding=embedding,
        embedding_model=MODEL,
        index_status="indexed",
    )


def _reference(subject, ids: list[str], vector: list[float]) -> dict[str, tuple[float, str, str, object, object]]:  # type: ignore[no-untyped-def]
    """What the ORM read returned: similarity, text, matched text and both times per row."""
    found = {}
    for model_class in (EpisodicEvent, SemanticItem):
        queryset = model_class.objects.filter(subject=subject, id__in=ids).annotate(
            distance=CosineDistance("embedding", vector)
        )
        for row in queryset:
            similarity = 1.0 - float(row.distance) if row.embedding_model == MODEL and row.distance is not None else 0.0
            found[str(row.id)] = (
                similarity,
                reads.row_text(row),
                reads.matched_text(row),
                getattr(row, "event_time", None),
                getattr(row, "mention_time", None),
            )
    return found


def test_rows_by_id_reads_both_types_in_one_statement_as_the_orm_did() -> None:
    tenant = make_tenant()
    subject, other = tenant.subject(), tenant.subject()
    vector = [0.6, 0.8, 0.0]
    with organization_scope(tenant.id):
        episodic = [
            _episodic(subject, "dated visit", [1.0, 0.0, 0.0]),
            _episodic(subject, "close", [0.6, 0.79, 0.1]),
            _episodic(subject, "old model", [0.6, 0.8, 0.0], model="another"),
            _episodic(subject, "not embedded", None),
        ]
        semantic = [_semantic(subject, "Ana", [0.0, 1.0, 0.0]), _semantic(subject, "Bo", [0.5, 0.5, 0.5])]
        foreign = _episodic(other, "another subject's", [0.6, 0.8, 0.0])
        ids = [str(r.id) for r in [*episodic, *semantic, foreign]] + [str(uuid.uuid4()), str(episodic[0].id)]
        with CaptureQueriesContext(connection) as queries:
            rows = reads.rows_by_id(subject=subject, ids=ids, vector=vector, model=MODEL, lane="base")
        reference = _reference(subject, ids, vector)
    assert len(queries.captured_queries) == 1  # both types at once, no field loaded afterwards
    assert sorted(r.row_id for r in rows) == sorted(reference) == sorted(str(r.id) for r in [*episodic, *semantic])
    by_id = {r.row_id: r for r in rows}
    for row_id, (_, text, match_text, event_time, mention_time) in reference.items():
        row = by_id[row_id]
        assert (row.text, row.match_text, row.event_time, row.mention_time) == (
            text,
            match_text,
            event_time,
            mention_time,
        )
    for kind in ("episodic", "semantic"):  # ranks follow the ORM's similarities, ties by id
        of_kind = [r.row_id for r in rows if r.memory_type == kind]
        assert of_kind == sorted(of_kind, key=lambda i: (-reference[i][0], i))
    # Ranked by similarity within each type: the other model and the missing vector rank last.
    assert [r.row_id for r in rows if r.memory_type == "episodic"] == [
        str(r.id) for r in (episodic[1], episodic[0], *sorted(episodic[2:], key=lambda r: str(r.id)))
    ]
    assert [r.vector_rank for r in rows] == [0, 1, 2, 3, 0, 1]
    assert [r.row_id for r in rows if r.memory_type == "semantic"] == [str(semantic[1].id), str(semantic[0].id)]
    assert reference[str(semantic[1].id)][0] > reference[str(semantic[0].id)][0] > reference[str(episodic[0].id)][0]
    assert by_id[str(semantic[0].id)].text == "Ana: Ana is a fact"
    assert by_id[str(episodic[0].id)].chunk_id == str(episodic[0].chunk_id)
    assert by_id[str(episodic[0].id)].created_at == episodic[0].created_at
    assert {r.session_id for r in rows} == {"s1", ""}
    assert {r.lane for r in rows} == {"base"}
