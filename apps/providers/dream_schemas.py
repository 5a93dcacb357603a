"""The types of the semantic AutoDream decision (docs/architecture.md, "Consolidation plane"):
is a pair of anchors one entity, and if so which of the two existing names represents it.
Framework-free.

The reply of a model is constrained to the pair: its JSON schema lists the two names as the
only values the representative may take (strict structured outputs), and the caller checks
the name again (``apps.dream.candidates.decision_outcome``), so an invented representative
never merges anything. The ``local`` decision lives beside dream (``apps.dream.local``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from apps.providers.schemas import Text


class DreamAnchor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Text
    aliases: list[str] = Field(default_factory=list)
    mention_count: int = 0
    mentions: list[str] = Field(default_factory=list)  # a few short texts that mention the anchor
    frames: list[str] = Field(default_factory=list)  # ids of the frames the anchor is an arm of


class DreamQuestion(BaseModel):
    """One candidate pair: two anchors of one type."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    first: DreamAnchor
    second: DreamAnchor
    namesakes: list[str] = Field(default_factory=list)  # other names of the type resembling either

    @property
    def names(self) -> tuple[str, str]:
        return self.first.name, self.second.name


class DreamVerdict(BaseModel):
    """A model's reply; ``representative`` is one of the two names, or null when not the same."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    same_entity: bool = Field(description="True only when both names denote one and the same real-world entity.")
    representative: str | None = Field(
        description="When same_entity is true, the exact name (one of the two given) that should represent it; else null."
    )


def verdict_schema(question: DreamQuestion) -> dict[str, Any]:
    """DreamVerdict's strict JSON schema with the representative restricted to the pair's names."""
    return {
        "type": "object",
        "properties": {
            "same_entity": {"type": "boolean", "description": DreamVerdict.model_fields["same_entity"].description},
            "representative": {
                "anyOf": [{"type": "string", "enum": list(dict.fromkeys(question.names))}, {"type": "null"}],
                "description": DreamVerdict.model_fields["representative"].description,
            },
        },
        "required": ["same_entity", "representative"],
        "additionalProperties": False,
    }
