"""Build a subject's evidence rows and graph directly, in the shapes the indexer writes them,
so a test controls exactly which anchors, names and frames exist."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import connection

from apps.graph import store
from apps.graph.adapter import cypher
from apps.graph.identity import frame_id_from_arms
from apps.graph.keys import anchor_key
from apps.graph.models import AnchorVector
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.providers.registry import embedder
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope

EVIDENCE_TABLES = (
    "memory_core_block",
    "memory_episodic_event",
    "memory_semantic_item",
    "memory_procedural_item",
    "memory_resource_item",
    "memory_vault_entry",
)


@dataclass
class Spec:
    name: str
    type: str
    semantic: int = 1  # semantic rows that mention it
    episodic: int = 0
    aliases: list[str] = field(default_factory=list)
    score: float = 1.0
    texts: list[str] = field(default_factory=list)  # the rows' texts, in order (default: "<name> fact n")


@dataclass
class Built:
    subject: Subject
    chunk_id: uuid.UUID
    rows: dict[str, list[str]]  # anchor key → the row ids that mention it


def semantic_row(subject: Subject, chunk_id: uuid.UUID, text: str) -> SemanticItem:
    return SemanticItem.objects.create(
        organization_id=subject.organization_id,
        subject=subject,
        source_kind="chat",
        chunk_id=chunk_id,
        name=text[:300],
        summary=text,
        details=text,
        source="test",
        index_status="indexed",
    )


def episodic_row(subject: Subject, chunk_id: uuid.UUID, text: str) -> EpisodicEvent:
    return EpisodicEvent.objects.create(
        organization_id=subject.organization_id,
        subject=subject,
        source_kind="chat",
        chunk_id=chunk_id,
        actor="Ana",
        event_type="event",
        summary=text,
        details=text,
        mention_time=datetime(2024, 3, 2, tzinfo=UTC),
        index_status="indexed",
    )


def add_anchors(subject: Subject, specs: list[Spec], *, chunk_id: uuid.UUID | None = None) -> Built:
    """Rows, anchors and name vectors (real embeddings) for ``specs``; call inside the scope."""
    chunk_id = chunk_id or uuid.uuid4()
    created, rows = [], {}
    for spec in specs:
        key = anchor_key(spec.name)
        texts = [
            *(
                [f"{spec.name} fact {n}" for n in range(spec.semantic)]
                + [f"{spec.name} event {n}" for n in range(spec.episodic)]
            )
        ]
        texts[: len(spec.texts)] = spec.texts
        semantic = [str(semantic_row(subject, chunk_id, texts[n]).id) for n in range(spec.semantic)]
        episodic = [str(episodic_row(subject, chunk_id, texts[spec.semantic + n]).id) for n in range(spec.episodic)]
        rows[key] = semantic + episodic
        created.append(
            {
                "subject_id": str(subject.id),
                "key": key,
                "name": spec.name,
                "type": spec.type,
                "aliases": list(spec.aliases),
                "mention_count": len(semantic) + len(episodic),
                "admission_score": spec.score,
                "episodic_ids": episodic,
                "semantic_ids": semantic,
            }
        )
    store.anchors_write(organization_id=subject.organization_id, created=created, updated=[])
    vectors = embedder().embed([a["name"] for a in created])
    store.anchor_vectors_write(subject=subject, anchors=created, vectors=vectors, model=embedder().model_name)
    return Built(subject=subject, chunk_id=chunk_id, rows=rows)


def add_frame(
    subject: Subject,
    *,
    kind: str,
    predicate: str,
    arms: list[tuple[str, str]],
    citations: list[str],
    event_time: str | None = None,
    literals: dict[str, str] | None = None,
    status: str = "done",
) -> str:
    """A frame with arms (role, anchor name); returns its id (as the indexer would compute it)."""
    keyed = [[role, anchor_key(name)] for role, name in arms]
    frame_id = frame_id_from_arms(
        subject_id=subject.id,
        kind=kind,  # type: ignore[arg-type]
        predicate=predicate,
        arms=[(r, k) for r, k in keyed],
        event_time=event_time,
        first_citation=citations[0],
    )
    store.frames_write(
        organization_id=subject.organization_id,
        subject_id=subject.id,
        created=[
            {
                "frame_id": frame_id,
                "subject_id": str(subject.id),
                "kind": kind,
                "predicate": predicate,
                "arms": keyed,
                "literals": literals or {},
                "event_time": event_time,
                "event_time_precision": "",
                "mention_time": "2024-03-02T00:00:00+00:00",
                "status": status,
                "citations": citations,
            }
        ],
        updated=[],
    )
    return frame_id


_ANCHORS = "MATCH (a:Anchor {subject_id: $subject_id}) RETURN properties(a)"
_FRAMES = "MATCH (f:Frame {subject_id: $subject_id}) RETURN properties(f)"
_ARMS = "MATCH (f:Frame {subject_id: $subject_id})-[r:ARM]->(a:Anchor) RETURN f.frame_id, r.role, a.key"


def graph_state(subject: Subject) -> dict[str, Any]:
    """Everything a merge may change: anchors, frames, arms (edges), the name index and the
    adjacency tables, each in a canonical order (inside the organization's scope)."""
    params = {"subject_id": str(subject.id)}
    org = subject.organization_id
    anchors = {r[0]["key"]: r[0] for r in cypher(organization_id=org, query=_ANCHORS, params=params, returns=["a"])}
    frames = {r[0]["frame_id"]: r[0] for r in cypher(organization_id=org, query=_FRAMES, params=params, returns=["f"])}
    arms = sorted(tuple(r) for r in cypher(organization_id=org, query=_ARMS, params=params, returns=["f", "r", "k"]))
    vectors = sorted(
        (v.anchor_key, v.name, v.anchor_type, str(v.id)) for v in AnchorVector.objects.filter(subject=subject)
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT anchor_key, memory_type, row_id::text, search_vector::text FROM graph_anchor_row"
            " WHERE subject_id = %s ORDER BY 1, 3",
            [subject.id],
        )
        anchor_rows = cursor.fetchall()
        cursor.execute(
            "SELECT anchor_key, frame_id, predicate, roles FROM graph_anchor_frame WHERE subject_id = %s ORDER BY 1, 2",
            [subject.id],
        )
        anchor_frames = cursor.fetchall()
    return {
        "anchors": anchors,
        "frames": frames,
        "arms": arms,
        "vectors": vectors,
        "anchor_rows": anchor_rows,
        "anchor_frames": anchor_frames,
    }


def evidence_checksums(organization_id: uuid.UUID) -> dict[str, str]:
    """md5 of every evidence table's rows, in id order, as the owner sees them (beneath RLS)."""
    from django.db import connections

    sums = {}
    with connections["owner"].cursor() as cursor:
        for table in EVIDENCE_TABLES:
            cursor.execute(
                f"SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t.id), '')) FROM \"{table}\" t"
                " WHERE organization_id = %s",
                [organization_id],
            )
            count, digest = cursor.fetchone()
            sums[table] = f"{count}:{digest}"
    return sums


def in_scope(subject: Subject) -> Any:
    return organization_scope(subject.organization_id)
