"""The evolution step from outcome feedback (docs/architecture.md, "Consolidation plane"):
framework-free. Each feedback's realized utility goes to the skills it used; each used skill
gets w ← w + α·Ū − β·f_use (``sedm.updated_weight``), a negative-utility streak that demotes
it once it reaches the patience, and an archive verdict below the threshold; a merge of
near-duplicates appends the lines of the absorbed skill that the survivor lacks.
``apps.procedural.evolution_store`` reads the feedback and skills and applies these.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from apps.procedural.sedm import realized_utility, should_demote, updated_weight


@dataclass(frozen=True)
class EvolutionSettings:
    baseline: float  # the reward a use must beat to count as useful
    lambda_latency: float  # utility lost per second
    lambda_tokens: float  # utility lost per thousand tokens
    alpha: float  # learning rate of the utility term
    beta: float  # weight of the use-frequency penalty
    ceiling: float  # the largest weight
    demote_patience: int  # negative updates in a row that demote a skill
    archive_below: float  # a weight under this archives the skill


@dataclass(frozen=True)
class Outcome:
    """One feedback: the skills a task used and what the task realized."""

    subject_id: uuid.UUID
    skill_ids: Sequence[str]
    reward: float
    latency_ms: int
    tokens: int


@dataclass
class Utilities:
    per_skill: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    events_per_subject: dict[uuid.UUID, int] = field(default_factory=lambda: defaultdict(int))


def outcome_utilities(outcomes: Iterable[Outcome], settings: EvolutionSettings) -> Utilities:
    """The utility each outcome realized, for every skill it used; how many outcomes each
    subject had in the period (the denominator of the use frequency)."""
    utilities = Utilities()
    for outcome in outcomes:
        utilities.events_per_subject[outcome.subject_id] += 1
        utility = realized_utility(
            reward=outcome.reward,
            latency_seconds=outcome.latency_ms / 1000.0,
            tokens=outcome.tokens,
            baseline=settings.baseline,
            lambda_latency=settings.lambda_latency,
            lambda_tokens=settings.lambda_tokens,
        )
        for skill_id in outcome.skill_ids:
            utilities.per_skill[skill_id].append(utility)
    return utilities


@dataclass(frozen=True)
class SkillStep:
    weight: float
    negative_streak: int
    demote: bool  # an active skill whose streak reached the patience
    archive: bool  # the new weight is under the archive threshold
    mean_utility: float
    use_frequency: float
    uses: int


def skill_step(
    *,
    weight: float,
    active: bool,
    negative_streak: int,
    utilities: Sequence[float],
    events: int,
    settings: EvolutionSettings,
) -> SkillStep:
    """One skill's update from the utilities of its uses in the period."""
    update = updated_weight(
        weight=weight,
        utilities=utilities,
        uses=len(utilities),
        events=events,
        alpha=settings.alpha,
        beta=settings.beta,
        ceiling=settings.ceiling,
    )
    streak = negative_streak + 1 if update.mean_utility < 0 else 0
    return SkillStep(
        weight=update.weight,
        negative_streak=streak,
        demote=active and should_demote(streak, patience=settings.demote_patience),
        archive=update.weight < settings.archive_below,
        mean_utility=update.mean_utility,
        use_frequency=update.use_frequency,
        uses=len(utilities),
    )


def merged_text(survivor: str, absorbed: str) -> str:
    """The survivor's text with the absorbed skill's non-blank lines it lacks appended."""
    lines = [line for line in absorbed.splitlines() if line.strip() and line not in survivor]
    return survivor + "\n" + "\n".join(lines) if lines else survivor
