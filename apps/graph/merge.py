"""The algebra of a lossless anchor merge a→b (docs/architecture.md, "Consolidation plane"):
framework-free functions over property maps. ``apps.graph.merge_store`` applies them to an
organization's graph, and snapshots and undoes what it changed.

- b takes the union of a's and b's episodic and semantic row ids, a's name and aliases as
  aliases, the sum of the mention counts and the larger admission score (:func:`merged_anchor`);
- every frame with an arm to a is re-keyed with that arm pointing to b; its id is recomputed
  from its arms (the arm set changes with the key) (:func:`rekeyed_frame`); frames that now
  share an id are united: their citations are kept (ordered union), literals united, "done"
  outranks "planned", the later mention time wins (:func:`united_frame`, :func:`frames_united`).

Union, sum and maximum are commutative and associative, so a sequence of merges reaches the
same rows, names and counts in any order.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from apps.graph.identity import frame_id_from_arms


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _union(*lists: list[Any]) -> list[Any]:
    return list(dict.fromkeys(item for items in lists for item in items))


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


@dataclass(frozen=True)
class UnitedFrames:
    created: dict[str, dict[str, Any]]  # new ids: one frame from the re-keyed frames that share it
    updated: dict[str, dict[str, Any]]  # ids a frame already has: that frame united with them
    united: int  # how many frames were folded into another


def frames_united(rekeyed: list[dict[str, Any]], existing: dict[str, dict[str, Any]]) -> UnitedFrames:
    """Group re-keyed frames by their new id and unite each group (with the frame ``existing``
    already holds under that id, if any)."""
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
    return UnitedFrames(created=created, updated=updated, united=united)


def state_digest(target: dict[str, Any] | None, frames: dict[str, dict[str, Any]]) -> str:
    """A digest of a merged anchor and frames: an undo proceeds only while it is unchanged."""
    return _digest({"target": target, "frames": [frames[i] for i in sorted(frames)]})
