"""Lossless merge of one anchor into another (docs/architecture.md, "Consolidation plane"), and its undo.

A merge a→b, in the caller's transaction, under the store's advisory locks (anchor keys first,
then frame ids, each in sorted order — the order the indexer takes them):

- b takes the union of a's and b's episodic and semantic row ids, a's name and aliases as
  aliases, the sum of the mention counts and the larger admission score;
- every frame with an arm to a is re-keyed with that arm pointing to b; its id is recomputed
  from its arms (the arm set changes with the key); frames that now share an id are united: their
  citations are kept (ordered union), literals united, "done" outranks "planned", the later
  mention time wins;
- the adjacency index beside the graph follows (``apps.graph.adjacency.merge_anchor``), a's
  name vector leaves the name index, and a is dropped.

The evidence store is never read or written. Union, sum and maximum are commutative and
associative, so a sequence of merges reaches the same rows, names and counts in any order.

Everything the merge changes is captured in a JSON snapshot beforehand (a's and b's property
maps, every affected frame, a's name vector, the affected adjacency rows), together with a
digest of the state the merge left; :func:`anchor_merge_undo` restores the snapshot exactly,
and refuses (409) when b or the merged frames changed since, so undo never discards later work.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from apps.graph import adjacency, store
from apps.graph.adapter import cypher
from apps.graph.identity import frame_id_from_arms
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


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _union(*lists: list[Any]) -> list[Any]:
    return list(dict.fromkeys(item for items in lists for item in items))


def _incident_frames(organization_id: uuid.UUID, subject_id: uuid.UUID, key: str) -> list[dict[str, Any]]:
    rows = cypher(
        organization_id=organization_id,
        query=_INCIDENT_FRAMES,
        params={"subject_id": str(subject_id), "key": key},
        returns=["props"],
    )
    return sorted((row[0] for row in rows), key=lambda f: str(f["frame_id"]))


def rekeyed_frame(frame: dict[str, Any], *, subject_id: uuid.UUID, source_key: str, target_key: str) -> dict[str, Any]:
    """The frame with every arm to ``source_key`` pointing at ``target_key``, under its new id."""
    arms = [
        list(arm)
        for arm in dict.fromkeys((role, target_key if key == source_key else key) for role, key in frame["arms"])
    ]
    citations = [str(c) for c in frame["citations"]]
    frame_id = frame_id_from_arms(
        subject_id=subject_id,
        kind=frame["kind"],
        predicate=frame["predicate"],
        arms=[(role, key) for role, key in arms],
        event_time=frame.get("event_time"),
        first_citation=citations[0] if citations else "",
    )
    return {**frame, "frame_id": frame_id, "arms": arms}


def united_frame(base: dict[str, Any], others: list[dict[str, Any]]) -> dict[str, Any]:
    """One frame from frames that share an identity: every citation kept, literals united (the
    base's values win), done outranks planned, the latest mention time."""
    frames = [base, *others]
    literals: dict[str, Any] = {}
    for frame in reversed(frames):
        literals.update(frame.get("literals") or {})
    return {
        **base,
        "citations": _union(*(list(f["citations"]) for f in frames)),
        "literals": literals,
        "status": "done" if any(f.get("status") == "done" for f in frames) else base.get("status", "done"),
        "mention_time": max(str(f.get("mention_time") or "") for f in frames) or base.get("mention_time"),
    }


def merged_anchor(source: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    """b after a→b: union of row ids, a's names as aliases, summed counts, max admission score."""
    names = [source["name"], *source.get("aliases", []), *target.get("aliases", [])]
    return {
        **target,
        "aliases": [n for n in _union(names) if n != target["name"]],
        "mention_count": int(source["mention_count"]) + int(target["mention_count"]),
        "admission_score": max(float(source["admission_score"]), float(target["admission_score"])),
        "episodic_ids": _union(list(target["episodic_ids"]), list(source["episodic_ids"])),
        "semantic_ids": _union(list(target["semantic_ids"]), list(source["semantic_ids"])),
    }


# --- adjacency rows: snapshot and restore (the side tables beside the graph) -----------------------

_ROW_COLUMNS = ("id", "anchor_key", "memory_type", "row_id", "embedding", "embedding_model")
_FRAME_COLUMNS = ("id", "anchor_key", "frame_id", "predicate", "roles", "event_time")


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
            "SELECT id, anchor_key, frame_id, predicate, roles, event_time FROM graph_anchor_frame"
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
        for row in saved["frames"]:
            cursor.execute(
                "INSERT INTO graph_anchor_frame (organization_id, subject_id, id, anchor_key, frame_id, predicate,"
                " roles, event_time) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [*scope, *row],
            )


# --- the merge ------------------------------------------------------------------------------------


def _state_digest(target: dict[str, Any] | None, frames: dict[str, dict[str, Any]]) -> str:
    return _digest({"target": target, "frames": [frames[i] for i in sorted(frames)]})


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

    groups: dict[str, list[dict[str, Any]]] = {}
    for frame in rekeyed:
        groups.setdefault(frame["frame_id"], []).append(frame)
    created: dict[str, dict[str, Any]] = {}
    updated: dict[str, dict[str, Any]] = {}
    for frame_id, members in sorted(groups.items()):
        if frame_id in existing:
            updated[frame_id] = united_frame(existing[frame_id], members)
        else:
            created[frame_id] = united_frame(members[0], members[1:])
    united = sum(len(members) for members in groups.values()) - len(groups) + len(updated)

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
    store.frames_write(**scope, created=list(created.values()), updated=list(updated.values()))
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
        frames_united=united,
        snapshot=snapshot,
        after_digest=_state_digest(after, frames_after),
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
    current = _state_digest(anchors.get(target["key"]), store.frames_by_id(**scope, frame_ids=new_ids))
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
