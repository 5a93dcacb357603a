"""Frame identity (docs/architecture.md, "Graph plane"). Pure: no framework imports.

A frame's *arm set* is the sorted set of its ``role:anchor key`` strings. Then

- a semantic frame is ``H(subject, predicate, arm set)``: repeated support for one durable claim
  adds citations to one frame;
- an episodic frame is ``H(subject, predicate, arm set, occurrence)``, the occurrence being the
  explicit event time when one was extracted, else the immutable id of the memory row: two
  mentions of one dated event share a frame, two undated runs on different days never do.

Planned vs done, literals, the mention time and citations are not part of the identity.

H is SHA-256 over a canonical JSON array
``[version, kind, subject, predicate, arm set(, occurrence)]`` (compact separators, UTF-8), as 64
lowercase hex digits. The version tag lets a future rule
change mint new ids instead of silently colliding with old ones; the kind keeps a semantic and
an episodic frame apart even when their other parts agree. The occurrence is tagged (``time:`` /
``row:``) so an event time can never equal a row id.

Callers pass canonical anchor names (after canonicalization), so the arm set is computed on the
names the anchors actually have. Predicates and roles are compared case-insensitively with runs of
spaces, hyphens and underscores folded to one underscore ("pick up" = "Pick-Up" = "pick_up").
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterable

from apps.graph.frames import ExtractedFrame, RecordKind
from apps.graph.keys import anchor_key

FRAME_ID_VERSION = "mirix.frame.v1"

_LABEL_SEPARATORS = re.compile(r"[\s_\-]+")


def normalize_label(label: str) -> str:
    """A predicate or a role as it takes part in identity: ``"Pick Up"`` → ``"pick_up"``."""
    return _LABEL_SEPARATORS.sub("_", label.strip().casefold()).strip("_")


def role_signature(roles: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The arm set: the sorted, de-duplicated ``role:anchor key``; arms whose name has no key are left out."""
    return tuple(sorted({f"{normalize_label(role)}:{key}" for role, name in roles if (key := anchor_key(name))}))


def frame_signature(frame: ExtractedFrame) -> tuple[str, tuple[str, ...]]:
    """(predicate, arm set): what two frames of one record must share to be the same claim."""
    return normalize_label(frame.predicate), role_signature(frame.roles)


def occurrence_key(*, event_time: str | None, memory_id: uuid.UUID) -> str:
    """The occurrence: the explicit event time if one was extracted, else the immutable memory row id."""
    if event_time is not None and event_time.strip():
        return f"time:{event_time.strip()}"
    return f"row:{memory_id}"


def _digest(parts: list[object]) -> str:
    encoded = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def semantic_frame_id(*, subject_id: uuid.UUID, predicate: str, roles: Iterable[tuple[str, str]]) -> str:
    """A semantic frame's id: H(subject, predicate, arm set)."""
    return _digest(
        [FRAME_ID_VERSION, "semantic", str(subject_id), normalize_label(predicate), list(role_signature(roles))]
    )


def episodic_frame_id(
    *,
    subject_id: uuid.UUID,
    predicate: str,
    roles: Iterable[tuple[str, str]],
    event_time: str | None,
    memory_id: uuid.UUID,
) -> str:
    """An episodic frame's id: H(subject, predicate, arm set, occurrence)."""
    return _digest(
        [
            FRAME_ID_VERSION,
            "episodic",
            str(subject_id),
            normalize_label(predicate),
            list(role_signature(roles)),
            occurrence_key(event_time=event_time, memory_id=memory_id),
        ]
    )


def frame_identity(frame: ExtractedFrame, *, kind: RecordKind, subject_id: uuid.UUID, memory_id: uuid.UUID) -> str:
    """The id of a frame extracted from memory row ``memory_id`` of a ``kind`` record."""
    if kind == "semantic":
        return semantic_frame_id(subject_id=subject_id, predicate=frame.predicate, roles=frame.roles)
    return episodic_frame_id(
        subject_id=subject_id,
        predicate=frame.predicate,
        roles=frame.roles,
        event_time=frame.event_time,
        memory_id=memory_id,
    )


def frame_id_from_arms(
    *,
    subject_id: uuid.UUID,
    kind: RecordKind,
    predicate: str,
    arms: Iterable[tuple[str, str]],
    event_time: str | None,
    first_citation: str,
) -> str:
    """The id of a stored frame recomputed from its arms ``(role, anchor key)`` (keys, not names), as an
    anchor merge re-keys it: semantic ``H(subject, predicate, arm set)``, episodic with the occurrence too, the
    occurrence being the frame's event time or else the row it was first extracted from."""
    signature = sorted({f"{normalize_label(role)}:{key}" for role, key in arms if key})
    if kind == "semantic":
        return _digest([FRAME_ID_VERSION, "semantic", str(subject_id), normalize_label(predicate), signature])
    chi = f"time:{event_time.strip()}" if event_time and event_time.strip() else f"row:{first_citation}"
    return _digest([FRAME_ID_VERSION, "episodic", str(subject_id), normalize_label(predicate), signature, chi])
