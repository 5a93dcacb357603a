"""Inputs and structured outputs of the graph decisions: extract, canonicalize, repair (docs/architecture.md, "Graph plane").

Framework-free. The output models follow the rules of :mod:`apps.providers.schemas` for
OpenAI's strict JSON-schema mode: every field required (nullable where a value may be
absent), no extra keys, no defaults, no numeric or length constraints in the schema. A frame's
literals are a list of name/value pairs because strict mode allows no free-form objects.
The models convert to the pure types of :mod:`apps.graph.frames`, which is what callers see.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field

from apps.graph.frames import (
    EntityType,
    ExtractedEntity,
    ExtractedFrame,
    Extraction,
    FrameStatus,
    RecordKind,
    has_enough_anchors,
)
from apps.graph.identity import normalize_label
from apps.graph.keys import anchor_key
from apps.language.dates import parse_event_time
from apps.providers.schemas import Text

# Canonicalization compares an entity with at most this many retrieved anchors (paper A.2).
MAX_SAME_ENTITY_CANDIDATES = 4


def _iso_event_time(value: str | None) -> str | None:
    if value is not None:
        value = value.strip() or None
        if value is not None:
            parse_event_time(value)
    return value


EventTime = Annotated[str | None, AfterValidator(_iso_event_time)]


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExtractionInput(_Input):
    """One committed episodic or semantic record, as the graph extractor reads it."""

    kind: RecordKind
    text: Text  # the record's summary and details
    mention_time: AwareDatetime | None = None  # when it was said or written
    event_time: EventTime = None  # when it happened (episodic), ISO 8601, possibly reduced
    actor: str | None = None  # who "I", "me" and "my" are: the speaker or the episode's actor
    status: FrameStatus | None = None  # the record's own status; a frame's default


class AnchorCandidate(_Input):
    """An existing anchor retrieved for an entity: its canonical name and its known aliases."""

    name: Text
    aliases: list[str] = Field(default_factory=list)


class SameEntityQuestion(_Input):
    """One extracted entity and the anchors it may be (each a rename it may take)."""

    name: Text
    type: EntityType
    candidates: list[AnchorCandidate] = Field(max_length=MAX_SAME_ENTITY_CANDIDATES)


class SameEntityDecision(_Input):
    """``same_as`` is the name of one of the question's own candidates, or None: a new anchor."""

    name: str
    same_as: str | None


# --- structured outputs ----------------------------------------------------------------------


class EntityDraft(_Output):
    name: Text = Field(description="The entity as the record names it, e.g. 'Caroline', 'Boston', 'pottery class'.")
    type: EntityType = Field(description="The kind of entity.")


class RoleArm(_Output):
    role: Text = Field(description="The entity's role in the fact, e.g. agent, theme, origin, destination, companion.")
    entity: Text = Field(description="The name of an entity listed in 'entities'.")


class LiteralValue(_Output):
    name: Text = Field(description="What the value is, e.g. date, price, count, duration, distance, weight.")
    value: Text = Field(description="The value exactly as written, with its unit or currency, e.g. '$450', '3 months'.")


class FrameDraft(_Output):
    predicate: Text = Field(description="The relation or event as a lowercase verb lemma, e.g. 'fly', 'adopt', 'own'.")
    roles: list[RoleArm] = Field(description="Every participant with its role; at least two distinct entities.")
    literals: list[LiteralValue] = Field(
        description="Dates, prices, counts, durations and measurements of this fact, kept as values, never entities."
    )
    event_time: EventTime = Field(
        description=(
            "When it happened or is planned to happen, resolved against the record's times: ISO 8601 "
            "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS, or reduced to YYYY-MM, YYYY-Www or YYYY; null when unknown."
        )
    )
    status: FrameStatus = Field(description="'planned' for future or intended events, else 'done'.")

    def to_frame(self) -> ExtractedFrame:
        literals: dict[str, str] = {}
        for literal in self.literals:
            name = normalize_label(literal.name) or "value"
            literals[name] = f"{literals[name]}; {literal.value}" if name in literals else literal.value
        return ExtractedFrame(
            predicate=normalize_label(self.predicate),
            roles=[(normalize_label(arm.role), arm.entity) for arm in self.roles],
            literals=literals,
            event_time=self.event_time,
            status=self.status,
        )


class FrameExtraction(_Output):
    """The extractor's reply: the record's entities and its n-ary frames."""

    entities: list[EntityDraft] = Field(description="Every entity or concept the record mentions.")
    frames: list[FrameDraft] = Field(description="Every fact or event the record states, one frame each.")

    def to_extraction(self) -> Extraction:
        return consistent_extraction(
            [ExtractedEntity(name=entity.name, type=entity.type) for entity in self.entities],
            [frame.to_frame() for frame in self.frames],
        )


class FrameRepair(FrameExtraction):
    """The repair call's reply: only frames (and their new entities) to add."""


class SameEntityChoice(_Output):
    entity_id: int = Field(description="The id of the entity, as numbered in the input.")
    same_as: str | None = Field(
        description="The exact name of the one candidate that is the same entity, or null when none is."
    )


class SameEntityChoices(_Output):
    decisions: list[SameEntityChoice] = Field(description="One decision per entity of the input.")


def consistent_extraction(entities: list[ExtractedEntity], frames: list[ExtractedFrame]) -> Extraction:
    """Entities once each (by anchor key), frames once each, every arm naming a listed entity, two anchors a frame.

    A model may name an arm it did not list as an entity: that entity is added with type
    ``other`` rather than losing the arm. Arms whose name has an empty key are dropped.
    """
    listed: dict[str, ExtractedEntity] = {}
    for entity in entities:
        key = anchor_key(entity.name)
        if key:
            listed.setdefault(key, entity)
    kept: list[ExtractedFrame] = []
    for frame in frames:
        roles = [(role, name) for role, name in frame.roles if anchor_key(name)]
        if len(roles) != len(frame.roles):
            frame = ExtractedFrame(frame.predicate, roles, frame.literals, frame.event_time, frame.status)
        if not frame.predicate or not has_enough_anchors(frame) or frame in kept:
            continue
        for name in frame.argument_names:
            listed.setdefault(anchor_key(name), ExtractedEntity(name=name, type="other"))
        kept.append(frame)
    return Extraction(entities=list(listed.values()), frames=kept)
