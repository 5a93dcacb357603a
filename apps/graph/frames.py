"""What extraction hands to indexing: entities and n-ary frames of one record (docs/architecture.md, "Graph plane").

Pure data: no framework imports. A frame names its arguments by entity name; indexing maps
each name to an anchor through canonicalization and the admission gate, and materializes the
frame only if its arguments resolve to at least two distinct anchors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from apps.graph.keys import anchor_key

EntityType = Literal[
    "person", "organization", "location", "object", "concept", "event", "date", "content", "method", "other"
]
ENTITY_TYPES: tuple[EntityType, ...] = get_args(EntityType)
FrameStatus = Literal["planned", "done"]
RecordKind = Literal["episodic", "semantic"]

# A frame is materialized only if its arguments resolve to this many distinct anchors (|A_f| ≥ 2).
MIN_FRAME_ANCHORS = 2


@dataclass(frozen=True)
class ExtractedEntity:
    name: str
    type: EntityType


@dataclass(frozen=True)
class ExtractedFrame:
    """A reified n-ary fact: ``predicate`` with role-typed arms to entities, and literals.

    ``roles`` pairs an open-vocabulary role with an entity name (a role may repeat:
    two companions). ``literals`` keeps dates, prices, counts, durations and measurements on
    the frame instead of making anchors of them. ``event_time`` is ISO 8601, possibly reduced
    (``2023``, ``2023-05``, ``2023-W18``, ``2023-05-07``); ``None`` when the source gives none.
    """

    predicate: str
    roles: list[tuple[str, str]]
    literals: dict[str, str] = field(default_factory=dict)
    event_time: str | None = None
    status: FrameStatus = "done"

    @property
    def argument_names(self) -> list[str]:
        """The entity names of the arms, each once, in role order."""
        return list(dict.fromkeys(name for _, name in self.roles))

    def distinct_anchor_keys(self) -> set[str]:
        return {key for key in map(anchor_key, self.argument_names) if key}


@dataclass(frozen=True)
class Extraction:
    entities: list[ExtractedEntity]
    frames: list[ExtractedFrame]


def has_enough_anchors(frame: ExtractedFrame) -> bool:
    return len(frame.distinct_anchor_keys()) >= MIN_FRAME_ANCHORS


def render_frame(frame: ExtractedFrame) -> str:
    """One line a person or a model can read: ``fly(agent: Caroline; origin: Boston) [price=$450]``."""
    arms = "; ".join(f"{role}: {name}" for role, name in frame.roles)
    extras = [f"{name}={value}" for name, value in frame.literals.items()]
    if frame.event_time:
        extras.append(f"event_time={frame.event_time}")
    if frame.status == "planned":
        extras.append("planned")
    return f"{frame.predicate}({arms})" + (f" [{', '.join(extras)}]" if extras else "")
