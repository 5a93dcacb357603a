"""Lossless merge of one anchor into another in an organization's graph, and its undo
(docs/architecture.md, "Consolidation plane"); the algebra is ``apps.graph.merge``.

A merge a→b runs in the caller's transaction, under the store's advisory locks (anchor keys
first, then frame ids, each in sorted order — the order the indexer takes them): b and the
re-keyed frames are written as ``merge`` computes them, the adjacency index beside the graph
follows (``apps.graph.adjacency.merge_anchor``), a's name vector leaves the name index, and a
is dropped. The evidence store is never written; only the undo reads it, for the words of the
mentions it restores (the snapshot keeps no text of the rows: ADR 0115).

Everything the merge changes is captured in a JSON snapshot beforehand (a's and b's property
maps, every affected frame, a's name vector, the affected adjacency rows), together with a
digest of the state the merge left; :func:`anchor_merge_undo` restores the snapshot exactly,
and refuses (409) when b or the merged frames changed since, so undo never discards later work.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from apps.graph import adjacency, store
from apps.graph.adapter import cypher
from apps.graph.merge import frames_united, merged_anchor, rekeyed_frame, state_digest
from apps.graph.models import AnchorVector
from apps.platform.errors import ApplicationError

_INCIDENT_FRAMES = """
MATCH (a:Anchor {subject_id: $subject_id, key: $key})<-[:ARM]-(f:Frame)
WITH DISTINCT f
RETURN properties(f)
"""
_FRAMES_DELETE = """
UNWIND $frame_ids AS i
MATCH (f:Frame {subject_id: $subject_id, frame_id: i})
DETACH DELETE f
RETURN count(*)
"""
_ANCHOR_DELETE = """
MATCH (n:Anchor {subject_id: $subject_id, key: $key})
DETACH DELETE n
RETURN count(*)
"""


class MergeConflict(ApplicationError):
    status_code = 409
    code = "conflict"


@dataclass
class MergeOutcome:
    source_key: str
    target_key: str
    frame_renames: dict[str, str]
    frames_united: int
    snapshot: dict[str, Any] = field(repr=False)
    after_digest: str = ""


def _incident_frames(organization_id: uuid.UUID, subject_id: uuid.UUID, key: str) -> list[dict[str, Any]]:
    rows = cypher(
        organization_id=organization_id,
        query=_INCIDENT_FRAMES,
        params={"subject_id": str(subject_id), "key": key},
        returns=["props"],
    )
    return sorted((row[0] for row in rows), key=lambda f: str(f["frame_id"]))


# --- adjacency rows: snapshot and restore (the side tables beside the graph) -----------------------

_ROW_COLUMNS = ("id", "anchor_key", "memory_type", "row_id", "embedding", "embedding_model")
_FRAME_COLUMNS = ("id", "anchor_key", "frame_id", "predicate", "roles", "event_time", "citations")


def _adjacency_snapshot(
    organization_id: uuid.UUID, subject_id: uuid.UUID, anchor_keys: list[str], frame_ids: list[str]
) -> dict[str, list[list[Any]]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, anchor_key, memory_type, row_id::text, embedding::text, embedding_model FROM graph_anchor_row"
            " WHERE organization_id = %s AND subject_id = %s AND anchor_key = ANY(%s::text[]) ORDER BY id",
            [organization_id, subject_id, anchor_keys],
        )
        rows = [list(r) for r in cursor.fetchall()]
        cursor.execute(
            "SELECT id, anchor_key, frame_id, predicate, roles, event_time, citations::text[] FROM graph_anchor_frame"
            " WHERE organization_id = %s AND subject_id = %s AND (anchor_key = ANY(%s::text[]) OR frame_id = ANY(%s::text[]))"
            " ORDER BY id",
            [organization_id, subject_id, anchor_keys[:1], frame_ids],
        )
        frames = [list(r) for r in cursor.fetchall()]
    return {"rows": rows, "frames": frames}


def _adjacency_restore(
    organization_id: uuid.UUID,
    subject_id: uuid.UUID,
    anchor_keys: list[str],
    frame_ids: list[str],
    saved: dict[str, list[list[Any]]],
) -> None:
    scope = [organization_id, subject_id]
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM graph_anchor_row WHERE organization_id = %s AND subject_id = %s AND anchor_key = ANY(%s::text[])",
            [*scope, anchor_keys],
        )
        cursor.execute(
            "DELETE FROM graph_anchor_frame WHERE organization_id = %s AND subject_id = %s"
            " AND (anchor_key = ANY(%s::text[]) OR frame_id = ANY(%s::text[]))",
            [*scope, anchor_keys[:1], frame_ids],
        )
        if saved["rows"]:
            cursor.execute(
                "INSERT INTO graph_anchor_row (organization_id, subject_id, id, anchor_key, memory_type, row_id,"
                " embedding, embedding_model) SELECT %s, %s, i, k, m, r::uuid, v::halfvec, vm"
                " FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[])"
                " AS t(i, k, m, r, v, vm)",
                [*scope, *([row[n] for row in saved["rows"]] for n in range(len(_ROW_COLUMNS)))],
            )
            adjacency.fill_row_words(organization_id=organization_id, subject_id=subject_id, anchor_keys=anchor_keys)
        for row in saved["frames"]:  # a snapshot taken before citations were recorded has none (NULL)
            cursor.execute(
                "INSERT INTO graph_anchor_frame (organization_id, subject_id, id, anchor_key, frame_id, predicate,"
                " roles, event_time, citations) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::uuid[])",
                [*scope, *row, *[None] * (len(_FRAME_COLUMNS) - len(row))],
            )


# --- the merge ------------------------------------------------------------------------------------


def _vector_snapshot(organization_id: uuid.UUID, subject_id: uuid.UUID, key: str) -> dict[str, Any] | None:
    vector = AnchorVector.objects.filter(organization_id=organization_id, subject_id=subject_id, anchor_key=key).first()
    if vector is None:
        return None
    return {
        "id": str(vector.id),
        "anchor_key": vector.anchor_key,
        "name": vector.name,
        "anchor_type": vector.anchor_type,
        "embedding": [float(x) for x in vector.embedding],
        "embedding_model": vector.embedding_model,
        "created_at": vector.created_at.isoformat(),
    }


def anchor_merge(
    *, organization_id: uuid.UUID, subject_id: uuid.UUID, source_key: str, target_key: str
) -> MergeOutcome:
    """Merge anchor ``source_key`` into ``target_key`` (a→b) in the caller's transaction."""
    if source_key == target_key:
        raise MergeConflict("An anchor cannot be merged into itself.")
    scope: dict[str, Any] = {"organization_id": organization_id, "subject_id": subject_id}
    store.lock_keys(**scope, keys=[f"anchor:{source_key}", f"anchor:{target_key}"])
    anchors = store.anchors_by_key(**scope, keys=[source_key, target_key])
    if source_key not in anchors or target_key not in anchors:
        raise MergeConflict(
            "Both anchors must exist to merge them.",
            details={"missing": sorted({source_key, target_key} - set(anchors))},
        )
    source, target = anchors[source_key], anchors[target_key]

    old_frames = _incident_frames(organization_id, subject_id, source_key)
    rekeyed = [
        rekeyed_frame(f, subject_id=subject_id, source_key=source_key, target_key=target_key) for f in old_frames
    ]
    renames = {old["frame_id"]: new["frame_id"] for old, new in zip(old_frames, rekeyed, strict=True)}
    new_ids = sorted(set(renames.values()))
    store.lock_keys(**scope, keys=[f"frame:{i}" for i in sorted(set(renames) | set(new_ids))])
    existing = store.frames_by_id(**scope, frame_ids=[i for i in new_ids if i not in renames])

    united = frames_united(rekeyed, existing)

    snapshot = {
        "source": source,
        "target": target,
        "frames": old_frames + [existing[i] for i in sorted(existing)],
        "new_frame_ids": new_ids,
        "vector": _vector_snapshot(organization_id, subject_id, source_key),
        "adjacency": _adjacency_snapshot(
            organization_id, subject_id, [source_key, target_key], sorted(set(renames) | set(new_ids))
        ),
    }

    # Drop the old frames first (their ids may be reused by nothing else: identity is fresh).
    if renames:
        cypher(
            organization_id=organization_id,
            query=_FRAMES_DELETE,
            params={"subject_id": str(subject_id), "frame_ids": sorted(renames)},
            returns=["n"],
        )
    after_target = merged_anchor(source, target)
    store.anchors_write(organization_id=organization_id, created=[], updated=[after_target])
    store.frames_write(**scope, created=list(united.created.values()), updated=list(united.updated.values()))
    cypher(
        organization_id=organization_id,
        query=_ANCHOR_DELETE,
        params={"subject_id": str(subject_id), "key": source_key},
        returns=["n"],
    )
    adjacency.merge_anchor(**scope, source_key=source_key, target_key=target_key, frame_renames=renames)
    AnchorVector.objects.filter(organization_id=organization_id, subject_id=subject_id, anchor_key=source_key).delete()

    after = store.anchors_by_key(**scope, keys=[target_key])[target_key]
    frames_after = store.frames_by_id(**scope, frame_ids=new_ids)
    return MergeOutcome(
        source_key=source_key,
        target_key=target_key,
        frame_renames=renames,
        frames_united=united.united,
        snapshot=snapshot,
        after_digest=state_digest(after, frames_after),
    )


def anchor_merge_undo(
    *, organization_id: uuid.UUID, subject_id: uuid.UUID, snapshot: dict[str, Any], after_digest: str
) -> None:
    """Restore the graph to what it was right before a merge, from the merge's snapshot.

    Refused with 409 when the merged anchor or frames changed since the merge (a later merge
    or new indexing touched them): undo the later merges first."""
    scope: dict[str, Any] = {"organization_id": organization_id, "subject_id": subject_id}
    source, target = snapshot["source"], snapshot["target"]
    old_ids = sorted(str(f["frame_id"]) for f in snapshot["frames"])
    new_ids = [str(i) for i in snapshot["new_frame_ids"]]
    store.lock_keys(**scope, keys=[f"anchor:{source['key']}", f"anchor:{target['key']}"])
    store.lock_keys(**scope, keys=[f"frame:{i}" for i in sorted(set(old_ids) | set(new_ids))])
    anchors = store.anchors_by_key(**scope, keys=[source["key"], target["key"]])
    current = state_digest(anchors.get(target["key"]), store.frames_by_id(**scope, frame_ids=new_ids))
    if source["key"] in anchors or current != after_digest:
        raise MergeConflict(
            "The graph changed since this merge (a later merge or new indexing touched it); undo later merges first."
        )
    cypher(
        organization_id=organization_id,
        query=_FRAMES_DELETE,
        params={"subject_id": str(subject_id), "frame_ids": new_ids},
        returns=["n"],
    )
    store.anchors_write(organization_id=organization_id, created=[source], updated=[target])
    store.frames_write(**scope, created=list(snapshot["frames"]), updated=[])
    _adjacency_restore(
        organization_id,
        subject_id,
        [source["key"], target["key"]],
        sorted(set(old_ids) | set(new_ids)),
        snapshot["adjacency"],
    )
    vector = snapshot.get("vector")
    if vector is not None:
        restored = AnchorVector.objects.create(
            id=uuid.UUID(vector["id"]),
            organization_id=organization_id,
            subject_id=subject_id,
            anchor_key=vector["anchor_key"],
            name=vector["name"],
            anchor_type=vector["anchor_type"],
            embedding=vector["embedding"],
            embedding_model=vector["embedding_model"],
        )
        AnchorVector.objects.filter(id=restored.id).update(created_at=vector["created_at"])
