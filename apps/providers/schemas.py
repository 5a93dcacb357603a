"""The structured outputs of the write path's decisions (docs/architecture.md, "Evidence plane"). Framework-free.

Every model that a language model fills in is written for OpenAI's strict JSON-schema mode:
every field is required (nullable where a value may be absent), no extra keys, no defaults.
Checks the schema cannot express (non-empty text, ISO event times) are validators, so a reply
that breaks them is a malformed reply and is retried like invalid JSON.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field

from apps.language.dates import parse_event_time
from apps.language.facts import normalize_attribute

# The Knowledge Vault is chosen before any model sees the input, by a deterministic detector.
MemoryType = Literal["core", "episodic", "semantic", "procedural", "resource"]
MEMORY_TYPES: tuple[MemoryType, ...] = ("core", "episodic", "semantic", "procedural", "resource")


def _stripped_non_empty(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("must not be empty")
    return value


def _iso_event_time(value: str | None) -> str | None:
    if value is not None:
        parse_event_time(value)
    return value


def _canonical_memory_types(value: list[MemoryType]) -> list[MemoryType]:
    return [memory_type for memory_type in MEMORY_TYPES if memory_type in value]


Text = Annotated[str, AfterValidator(_stripped_non_empty)]
Attribute = Annotated[str, AfterValidator(_stripped_non_empty), AfterValidator(normalize_attribute)]


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CitedDraft(_Output):
    """A writer's draft, citing the input messages it comes from (its provenance)."""

    source_message_ids: list[str] = Field(description="Ids of the messages this comes from.")


class RouteDecision(_Output):
    """The Meta Memory Manager's choice: which memory types this input updates."""

    memory_types: Annotated[list[MemoryType], AfterValidator(_canonical_memory_types)] = Field(
        description="The memory types to update; empty when nothing is worth remembering."
    )
    reason: str = Field(description="One short sentence: why these types.")


class CoreDraft(CitedDraft):
    label: Literal["persona", "human"] = Field(
        description="'human' for lasting facts about the user, 'persona' for the agent's own identity and style."
    )
    text: Text = Field(description="New lines to append to the block, each a complete statement.")


class EpisodicDraft(CitedDraft):
    actor: Text = Field(description="Who did it or will do it: the speaker's name, or the person named.")
    event_type: Text = Field(description="A short label for the kind of event, e.g. 'trip', 'purchase'.")
    summary: Text = Field(description="One or two sentences saying what happened or is planned.")
    details: Text = Field(
        description="Everything concrete, verbatim: complete lists, names, counts, titles, places, prices, dates."
    )
    event_time: Annotated[str | None, AfterValidator(_iso_event_time)] = Field(
        description=(
            "When it happened or is planned to happen (not when it was said), resolved against the message "
            "timestamp: ISO 8601 YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS, or reduced to YYYY-MM, YYYY-Www or YYYY "
            "when only that is known; null when unknown."
        )
    )
    status: Literal["planned", "done"] = Field(description="'planned' for future or intended events.")


class SemanticDraft(CitedDraft):
    name: Text = Field(description="The entity or concept the knowledge is about, as named in the input.")
    attribute: Attribute = Field(
        description=(
            "Which fact about the entity this is, so that a new value replaces only the old value of the same "
            "fact: a short lowercase name such as 'home city', 'job', 'diet', 'pet: dog', 'schedule: call'."
        )
    )
    summary: Text = Field(description="One sentence of what is known about it.")
    details: Text = Field(description="Every concrete fact, verbatim: names, counts, titles, places, dates.")
    source: Text = Field(description="Who or what stated it: the speaker's name, a document title or a URL.")


class ProceduralDraft(CitedDraft):
    title: Text = Field(description="What the procedure achieves, e.g. 'How to repot a cactus'.")
    summary: Text = Field(description="One sentence: when and why to use it.")
    steps: list[Text] = Field(description="The steps in order, each complete and verbatim where possible.")
    domain: Text = Field(description="The field it belongs to, e.g. 'cooking', 'software', 'gardening'.")


class CoreDrafts(_Output):
    drafts: list[CoreDraft]


class EpisodicDrafts(_Output):
    drafts: list[EpisodicDraft]


class SemanticDrafts(_Output):
    drafts: list[SemanticDraft]


class ProceduralDrafts(_Output):
    drafts: list[ProceduralDraft]


class InputMessage(BaseModel):
    """One message of a write call, already redacted (vault values never reach a writer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    message_id: str = Field(min_length=1)
    role: Literal["user", "assistant", "system", "tool"]
    name: str | None = None  # the speaker's display name, when the conversation has one
    content: str
    timestamp: AwareDatetime  # the mention time: when it was said or written


class WriterInput(BaseModel):
    """What the router and every writer read: the messages, and related stored memories."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: list[InputMessage] = Field(min_length=1)
    related_memories: list[str] = Field(default_factory=list)

    @property
    def message_ids(self) -> list[str]:
        return [message.message_id for message in self.messages]
