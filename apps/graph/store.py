"""Reads and writes of anchors, frames and arms in an organization's AGE graph.

Every statement is a constant; every value is a parameter; every query filters by subject.
Identity is protected three ways: per-key advisory transaction locks taken in sorted order
(so concurrent indexers serialize on shared keys without deadlocking), a read-then-write
inside the lock (AGE's MERGE is not concurrency-safe and has no ON CREATE/ON MATCH), and the
unique expression indexes created with the graph as the last line of defence.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection

from apps.graph import adjacency
from apps.graph.adapter import cypher, vertices_by_identity
from apps.graph.models import AnchorVector
from apps.tenancy.models import Subject

ANCHOR_PROPERTIES = (
    "subject_id",
    "key",
    "name",
    "type",
    "aliases",
    "mention_count",
    "admission_score",
    "episodic_ids",
    "semantic_ids",
)
FRAME_PROPERTIES = (
    "frame_id",
    "subject_id",
    "kind",
    "predicate",
    "arms",
    "literals",
    "event_time",
    "event_time_precision",
    "mention_time",
    "status",
    "citations",
)

_ANCHORS_CREATE = """
UNWIND $anchors AS a
CREATE (n:Anchor {subject_id: a.subject_id, key: a.key, name: a.name, type: a.type, aliases: a.aliases,
                  mention_count: a.mention_count, admission_score: a.admission_score,
                  episodic_ids: a.episodic_ids, semantic_ids: a.semantic_ids})
RETURN count(n)
"""
_ANCHORS_UPDATE = """
UNWIND $anchors AS a
MATCH (n:Anchor) WHERE n.subject_id = a.subject_id AND n.key = a.key
SET n.aliases = a.aliases, n.mention_count = a.mention_count, n.admission_score = a.admission_score,
    n.episodic_ids = a.episodic_ids, n.semantic_ids = a.semantic_ids
RETURN count(n)
"""
_FRAMES_CREATE = """
UNWIND $frames AS x
CREATE (f:Frame {frame_id: x.frame_id, subject_id: x.subject_id, kind: x.kind, predicate: x.predicate,
                 arms: x.arms, literals: x.literals, event_time: x.event_time,
                 event_time_precision: x.event_time_precision, mention_time: x.mention_time,
                 status: x.status, citations: x.citations})
RETURN count(f)
"""
_FRAMES_UPDATE = """
UNWIND $frames AS x
MATCH (f:Frame) WHERE f.subject_id = x.subject_id AND f.frame_id = x.frame_id
SET f.citations = x.citations, f.literals = x.literals, f.status = x.status, f.mention_time = x.mention_time
RETURN count(f)
"""
_ARMS_CREATE = """
UNWIND $arms AS arm
MATCH (f:Frame) WHERE f.subject_id = $subject_id AND f.frame_id = arm.frame_id
MATCH (a:Anchor) WHERE a.subject_id = $subject_id AND a.key = arm.key
CREATE (f)-[:ARM {role: arm.role}]->(a)
RETURN count(*)
"""


def lock_keys(*, organization_id: uuid.UUID, subject_id: uuid.UUID, keys: Iterable[str]) -> None:
    """Transaction-scoped advisory locks, in sorted order, one per identity key."""
    names = sorted({f"{organization_id}:{subject_id}:{key}" for key in keys})
    if not names:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(name, 0)) FROM unnest(%s::text[]) AS name ORDER BY name",
            [names],
        )


def anchors_by_key(
    *, organization_id: uuid.UUID, subject_id: uuid.UUID, keys: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """The subject's anchors with these keys, by key (absent keys are left out). One statement
    through the unique (subject_id, key) index, whatever the number of keys."""
    if not keys:
        return {}
    found = vertices_by_identity(organization_id=organization_id, label="Anchor", subject_id=subject_id, values=keys)
    return {props["key"]: props for props in found}


def anchor_properties(
    *, organization_id: uuid.UUID, subject_id: uuid.UUID, keys: Sequence[str], properties: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Only the named ``properties`` (and ``key``) of the subject's anchors with these keys, by
    key: what :func:`anchors_by_key` reads, without shipping the rest of each vertex."""
    if not keys:
        return {}
    wanted = list(dict.fromkeys(["key", *properties]))
    found = vertices_by_identity(
        organization_id=organization_id, label="Anchor", subject_id=subject_id, values=keys, properties=wanted
    )
    return {props["key"]: props for props in found}


def frames_by_id(
    *, organization_id: uuid.UUID, subject_id: uuid.UUID, frame_ids: Sequence[str], properties: Sequence[str] = ()
) -> dict[str, dict[str, Any]]:
    """The subject's frames with these ids by id (absent ids are left out); one statement
    through the unique frame_id index, whatever the number of ids. With ``properties``, only
    those (and ``frame_id``)."""
    if not frame_ids:
        return {}
    wanted = list(dict.fromkeys(["frame_id", *properties])) if properties else []
    found = vertices_by_identity(
        organization_id=organization_id, label="Frame", subject_id=subject_id, values=frame_ids, properties=wanted
    )
    return {props["frame_id"]: props for props in found}


def _write(organization_id: uuid.UUID, query: str, name: str, items: list[dict[str, Any]], **extra: Any) -> None:
    if items:
        cypher(organization_id=organization_id, query=query, params={name: items, **extra}, returns=["n"])


def anchors_write(*, organization_id: uuid.UUID, created: list[dict[str, Any]], updated: list[dict[str, Any]]) -> None:
    """Anchors as property maps. Every row id their ``episodic_ids`` / ``semantic_ids`` list is
    recorded in the adjacency index (repeats ignored); the vertex keeps only the newest
    ``adjacency.ANCHOR_ROWS_KEPT`` of each, so no anchor grows with its mentions."""
    by_subject: dict[str, list[dict[str, Any]]] = {}
    for props in [*created, *updated]:
        by_subject.setdefault(str(props["subject_id"]), []).append(props)
    for subject_id, anchors in sorted(by_subject.items()):
        adjacency.add_mentions(
            organization_id=organization_id,
            subject_id=uuid.UUID(subject_id),
            mentions=adjacency.anchor_mentions(anchors),
        )
    _write(organization_id, _ANCHORS_CREATE, "anchors", [_bounded(a) for a in created])
    _write(organization_id, _ANCHORS_UPDATE, "anchors", [_bounded(a) for a in updated])


def _bounded(props: dict[str, Any]) -> dict[str, Any]:
    kept = adjacency.ANCHOR_ROWS_KEPT
    return {
        **props,
        "episodic_ids": list(props["episodic_ids"])[-kept:],
        "semantic_ids": list(props["semantic_ids"])[-kept:],
    }


def frames_write(
    *,
    organization_id: uuid.UUID,
    subject_id: uuid.UUID,
    created: list[dict[str, Any]],
    updated: list[dict[str, Any]],
) -> None:
    """New frames with their arms (to anchors already written), and citation updates; the
    adjacency index records both (the updated frames' citations on their anchor rows)."""
    _write(organization_id, _FRAMES_CREATE, "frames", created)
    adjacency.add_frames(organization_id=organization_id, subject_id=subject_id, frames=created)
    arms = [
        {"frame_id": frame["frame_id"], "role": role, "key": key} for frame in created for role, key in frame["arms"]
    ]
    _write(organization_id, _ARMS_CREATE, "arms", arms, subject_id=str(subject_id))
    _write(organization_id, _FRAMES_UPDATE, "frames", updated)
    adjacency.set_citations(organization_id=organization_id, subject_id=subject_id, frames=updated)


# --- inspection (paginated by key / frame id; pages are at most PAGE_CAP long) ---------------------

PAGE_CAP = 200
_ANCHOR_PAGE = """
MATCH (n:Anchor) WHERE n.subject_id = $subject_id AND n.key > $after
RETURN properties(n) ORDER BY n.key LIMIT 201
"""
_FRAME_PAGE = """
MATCH (f:Frame) WHERE f.subject_id = $subject_id AND f.frame_id > $after
RETURN properties(f) ORDER BY f.frame_id LIMIT 201
"""
_FRAME_PAGE_OF_ANCHOR = """
MATCH (a:Anchor)<-[:ARM]-(f:Frame)
WHERE a.subject_id = $subject_id AND a.key = $anchor_key AND f.subject_id = $subject_id AND f.frame_id > $after
WITH DISTINCT f
RETURN properties(f) ORDER BY f.frame_id LIMIT 201
"""


def anchor_page(*, organization_id: uuid.UUID, subject_id: uuid.UUID, after: str) -> list[dict[str, Any]]:
    rows = cypher(
        organization_id=organization_id,
        query=_ANCHOR_PAGE,
        params={"subject_id": str(subject_id), "after": after},
        returns=["props"],
    )
    return [row[0] for row in rows]


def frame_page(
    *, organization_id: uuid.UUID, subject_id: uuid.UUID, after: str, anchor_key: str | None = None
) -> list[dict[str, Any]]:
    params = {"subject_id": str(subject_id), "after": after}
    if anchor_key is None:
        rows = cypher(organization_id=organization_id, query=_FRAME_PAGE, params=params, returns=["props"])
    else:
        rows = cypher(
            organization_id=organization_id,
            query=_FRAME_PAGE_OF_ANCHOR,
            params={**params, "anchor_key": anchor_key},
            returns=["props"],
        )
    return [row[0] for row in rows]


def anchor_vectors_write(
    *, subject: Subject, anchors: Sequence[dict[str, Any]], vectors: Sequence[Sequence[float]], model: str
) -> None:
    """The name vectors of new anchors (``key``, ``name`` and ``type`` of each), in the index
    beside the graph that anchor recall searches; an anchor already indexed keeps its vector."""
    AnchorVector.objects.bulk_create(
        [
            AnchorVector(
                organization_id=subject.organization_id,
                subject=subject,
                anchor_key=a["key"],
                name=a["name"],
                anchor_type=a["type"],
                embedding=list(vector),
                embedding_model=model,
            )
            for a, vector in zip(anchors, vectors, strict=True)
        ],
        batch_size=2000,
        ignore_conflicts=True,
    )


def adjacency_rebuild(*, organization_id: uuid.UUID, subject_id: uuid.UUID) -> dict[str, int]:
    """Derive the subject's adjacency index again from its graph, in the caller's transaction.

    ``graph_anchor_frame`` is recomputed from the frames' arms and citations. ``graph_anchor_row`` is
    recomputed from what the graph holds of mentions — each anchor's kept newest rows and the
    rows cited by the frames that touch it — united with the index's own older mentions of
    anchors that still exist (an anchor keeps only its newest rows, so those are the one copy).
    Returns the resulting row counts."""
    adjacency.frames_clear(organization_id=organization_id, subject_id=subject_id)
    keys: set[str] = set()
    after = ""
    while page := anchor_page(organization_id=organization_id, subject_id=subject_id, after=after):
        page = page[:PAGE_CAP]
        keys.update(str(a["key"]) for a in page)
        adjacency.add_mentions(
            organization_id=organization_id, subject_id=subject_id, mentions=adjacency.anchor_mentions(page)
        )
        after = str(page[-1]["key"])
    after = ""
    while page := frame_page(organization_id=organization_id, subject_id=subject_id, after=after):
        page = page[:PAGE_CAP]
        adjacency.add_frames(organization_id=organization_id, subject_id=subject_id, frames=page)
        adjacency.add_mentions(
            organization_id=organization_id,
            subject_id=subject_id,
            mentions=[
                (str(key), str(frame.get("kind") or "episodic"), str(row_id))
                for frame in page
                for _, key in frame["arms"]
                for row_id in frame["citations"]
            ],
        )
        after = str(page[-1]["frame_id"])
    adjacency.mentions_keep_only(organization_id=organization_id, subject_id=subject_id, anchor_keys=keys)
    return adjacency.index_counts(organization_id=organization_id, subject_id=subject_id)


DELETE_BATCH = 500

# Edges first (an edge may join two of the subject's vertices: DISTINCT deletes it once),
# then the vertices, which no edge references any more.
_EDGES_DELETE = (
    f"MATCH (n)-[e]-() WHERE n.subject_id = $subject_id WITH DISTINCT e LIMIT {DELETE_BATCH} DELETE e RETURN count(*)"
)
_VERTICES_DELETE = (
    f"MATCH (n) WHERE n.subject_id = $subject_id WITH n LIMIT {DELETE_BATCH} DETACH DELETE n RETURN count(*)"
)


def subject_graph_delete_batch(*, organization_id: uuid.UUID, subject_id: uuid.UUID) -> dict[str, int]:
    """Delete up to a batch of the subject's edges, or when none is left, of its vertices."""
    params = {"subject_id": str(subject_id)}
    rows = cypher(organization_id=organization_id, query=_EDGES_DELETE, params=params, returns=["n"])
    edges = int(rows[0][0]) if rows else 0
    if edges:
        return {"graph_edges": edges}
    rows = cypher(organization_id=organization_id, query=_VERTICES_DELETE, params=params, returns=["n"])
    return {"graph_vertices": int(rows[0][0]) if rows else 0}
