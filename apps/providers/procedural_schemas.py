"""Inputs and strict structured outputs of procedural AutoDream and SEDM replay. Framework-free.

Replies are written for OpenAI's strict JSON-schema mode (every field required, nullable where
absent, no extra keys). They are proposals: the procedural app checks every quote against
the transcript or the skill text before anything is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from apps.providers.schemas import Text

Outcome = Literal["success", "failure", "unclear"]
ExperienceKind = Literal["lesson", "mistake"]
CurationAction = Literal["create", "edit", "delete", "covered", "not_worth", "defer"]


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- distill ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionStep:
    index: int
    kind: str  # thought | action | tool_call | tool_result | message
    content: str
    tool: str | None = None


@dataclass(frozen=True)
class DistillInput:
    """One task session as the distiller reads it; ``outcome`` is the caller's own claim."""

    session_id: str
    task: str
    domain: str
    steps: tuple[SessionStep, ...]
    final_output: str
    outcome: str | None

    @property
    def transcript(self) -> str:
        """Everything a quote may come from: the task, every step, the final output."""
        lines = [self.task, *(step.content for step in self.steps), self.final_output]
        return "\n".join(lines)


class DistilledExperience(_Output):
    kind: ExperienceKind = Field(description="'lesson' to reuse, or 'mistake' to avoid.")
    text: Text = Field(description="The lesson or mistake as one reusable instruction, for future tasks.")
    quote: Text = Field(description="The transcript passage it rests on, copied verbatim.")


class DistillReply(_Output):
    outcome: Outcome = Field(description="How the session ended, judged from the transcript.")
    outcome_quote: str = Field(description="The transcript passage that shows the outcome, copied verbatim.")
    experiences: list[DistilledExperience] = Field(description="At most 5 experiences worth keeping.")


# -- curate -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CurationSkill:
    skill_id: str
    name: str
    domain: str
    text: str


@dataclass(frozen=True)
class CurationExperience:
    experience_id: str
    kind: str
    domain: str
    text: str
    verification: str  # admitted (A/B-verified) or unverified


@dataclass(frozen=True)
class CurateInput:
    skills: tuple[CurationSkill, ...]
    experiences: tuple[CurationExperience, ...]


class Citation(_Output):
    experience_id: str = Field(description="The id of a cited experience from the input.")
    quote: str = Field(description="The exact text this experience contributed to the skill, copied from 'text'.")


class CurationDecision(_Output):
    action: CurationAction = Field(
        description=(
            "'create' a skill, 'edit' an existing one (its full new text), 'delete' one, or mark experiences "
            "'covered' (a skill already says it), 'not_worth' a skill, or 'defer' (decide later)."
        )
    )
    skill_id: str | None = Field(description="The skill edited or deleted; null otherwise.")
    experience_ids: list[str] = Field(description="The experiences this decision is about.")
    name: str | None = Field(description="A created or edited skill's name; null otherwise.")
    domain: str | None = Field(description="A created skill's domain; null otherwise.")
    text: str | None = Field(description="A created or edited skill's full text; null otherwise.")
    citations: list[Citation] = Field(description="For create and edit: what each experience added.")


class CurateReply(_Output):
    decisions: list[CurationDecision]


# -- abstract -----------------------------------------------------------------------------


class AbstractReply(_Output):
    general_text: Text = Field(
        description=(
            "The skill with every named entity replaced by a typed placeholder such as <PERSON>, <ORG>, <GPE>, "
            "<PRODUCT>, and every number by <NUMBER>; the steps and their order unchanged."
        )
    )
    entities: list[list[str]] = Field(description="Each replaced entity as [surface text, type].")


# -- replay -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayRequest:
    """One arm of one A/B replay inside an SCEC: the task, and the item in its slot or not."""

    task: str
    inputs: dict[str, Any]
    tool_summaries: tuple[str, ...]
    seed: int
    executor: str | None  # the SCEC's deterministic executor, for the local provider
    item: str | None = None
    config: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReplayResult:
    output: str
    tokens: int
    model: str  # the model (or executor) and its version that produced it


class ReplayOutput(_Output):
    output: str = Field(description="The final output of the task, exactly as the task asks for it.")
