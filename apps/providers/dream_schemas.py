"""The semantic AutoDream decision (docs/architecture.md, "Consolidation plane"): is a pair of anchors one entity, and if so
which of the two existing names represents it. Framework-free.

The reply of a model is constrained to the pair: its JSON schema lists the two names as the
only values the representative may take (strict structured outputs), and the caller checks
the name again (``apps.dream.candidates.decision_outcome``), so an invented representative
never merges anything. The ``local`` rule is conservative: two names are one entity only when
one's key tokens contain the other's, around the same head word, with the same numbers, dates
and codes, and without a token that makes the longer name a different thing ("Caroline's mom").
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from apps.graph.keys import key_tokens, may_denote_same
from apps.providers.schemas import Text


class DreamAnchor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Text
    aliases: list[str] = Field(default_factory=list)
    mention_count: int = 0


class DreamQuestion(BaseModel):
    """One candidate pair: two anchors of one type."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    first: DreamAnchor
    second: DreamAnchor

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


# Tokens that make a longer name a different thing than the name it contains: relations,
# roles and parts ("Caroline's mom", "bottle cap" is caught by the head rule), and contrasts.
CONFLICT_TOKENS: frozenset[str] = frozenset(
    """
    ex former old new mini junior jr senior sr fake toy replica not non anti mom mum mother dad father
    sister brother son daughter wife husband partner friend boyfriend girlfriend kid child baby cousin aunt
    uncle niece nephew grandma grandpa grandmother grandfather parent family boss coworker colleague team
    club group class store shop company office school house home neighbor neighbour dog cat pet
    """.split()
)


def _forms(anchor: DreamAnchor) -> list[list[str]]:
    return [tokens for name in dict.fromkeys([anchor.name, *anchor.aliases]) if (tokens := key_tokens(name))]


def _contained(short: list[str], long: list[str]) -> bool:
    """``short`` names the same thing as ``long``: same head word, a subset of its tokens, and
    nothing in the difference that makes it a different thing."""
    if short[-1] != long[-1] or not set(short) <= set(long):
        return False
    return not (set(long) - set(short)) & CONFLICT_TOKENS


def local_verdict(question: DreamQuestion) -> DreamVerdict:
    """The deterministic decision: alias or key containment, equal numbers, no conflicting tokens."""
    first, second = question.first, question.second
    if not may_denote_same(first.name, second.name):
        return DreamVerdict(same_entity=False, representative=None)
    same = any(set(a) == set(b) or _contained(a, b) or _contained(b, a) for a in _forms(first) for b in _forms(second))
    if not same:
        return DreamVerdict(same_entity=False, representative=None)
    # The better-attested name represents the pair; on a tie the more specific (longer) one.
    chosen = max(
        (first, second),
        key=lambda anchor: (anchor.mention_count, len(key_tokens(anchor.name)), anchor.name == min(question.names)),
    )
    return DreamVerdict(same_entity=True, representative=chosen.name)
