"""SEDM's arithmetic (docs/architecture.md, "Consolidation plane"): admission score, weight update, merge, general weight.
Framework-free; every constant is an argument (the deployment's values are settings).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ArmRun:
    """One replay of one arm: its reward in [0, 1], latency in seconds, tokens used."""

    reward: float
    latency_seconds: float
    tokens: int


@dataclass(frozen=True)
class AdmissionScore:
    delta_reward: float
    delta_latency: float  # seconds
    delta_tokens: float  # thousands of tokens
    score: float
    admitted: bool
    initial_weight: float


def admission_score(
    *,
    without: Sequence[ArmRun],
    with_item: Sequence[ArmRun],
    lambda_latency: float,
    lambda_tokens: float,
    eta: float,
) -> AdmissionScore:
    """S = ΔR − λ_L·ΔL − λ_T·ΔT over paired runs (B with the item minus A without), averaged
    over runs; admit iff S ≥ η; w0 = max(0, S). ΔT is counted in thousands of tokens."""
    if not without or len(without) != len(with_item):
        raise ValueError("admission needs the same positive number of runs in each arm")
    pairs = list(zip(without, with_item, strict=True))
    delta_r = statistics.fmean(b.reward - a.reward for a, b in pairs)
    delta_l = statistics.fmean(b.latency_seconds - a.latency_seconds for a, b in pairs)
    delta_t = statistics.fmean((b.tokens - a.tokens) / 1000.0 for a, b in pairs)
    score = delta_r - lambda_latency * delta_l - lambda_tokens * delta_t
    return AdmissionScore(
        delta_reward=delta_r,
        delta_latency=delta_l,
        delta_tokens=delta_t,
        score=score,
        admitted=score >= eta,
        initial_weight=max(0.0, score),
    )


def realized_utility(
    *, reward: float, latency_seconds: float, tokens: int, baseline: float, lambda_latency: float, lambda_tokens: float
) -> float:
    """The utility one use of an item realized: reward above the baseline, less its costs."""
    return (reward - baseline) - lambda_latency * latency_seconds - lambda_tokens * tokens / 1000.0


@dataclass(frozen=True)
class WeightUpdate:
    previous: float
    weight: float
    mean_utility: float
    use_frequency: float


def updated_weight(
    *, weight: float, utilities: Sequence[float], uses: int, events: int, alpha: float, beta: float, ceiling: float
) -> WeightUpdate:
    """w ← w + α·Ū − β·f_use, clamped to [0, ceiling]. Ū is the mean realized utility of the
    item's uses since the last update; f_use the share of the period's feedback events that
    used it. An item without uses in the period keeps its weight."""
    if not utilities or events <= 0:
        return WeightUpdate(previous=weight, weight=weight, mean_utility=0.0, use_frequency=0.0)
    mean = statistics.fmean(utilities)
    frequency = uses / events
    new = min(ceiling, max(0.0, weight + alpha * mean - beta * frequency))
    return WeightUpdate(previous=weight, weight=new, mean_utility=mean, use_frequency=frequency)


def merged_weight(weights_and_evidence: Sequence[tuple[float, frozenset[str]]]) -> float:
    """The weight of a merge of items: each item's weight counts once per piece of evidence
    only it holds, and evidence several items share is counted once, at the mean weight of
    the items sharing it — so merging never adds up the same support twice."""
    support: dict[str, list[float]] = {}
    for index, (weight, evidence) in enumerate(weights_and_evidence):
        for piece in evidence or frozenset({f"item:{index}"}):
            support.setdefault(piece, []).append(weight)
    if not support:
        return 0.0
    return statistics.fmean(statistics.fmean(weights) for weights in support.values())


def general_weight(*, specific_weight: float, alpha: float) -> float:
    """w_general = α·w_specific with α < 1: a conservative prior for the abstracted form."""
    if not 0.0 < alpha < 1.0:
        raise ValueError("the general-form factor must be in (0, 1)")
    return alpha * specific_weight


def should_demote(negative_streak: int, *, patience: int) -> bool:
    """Consistently harmful: the last ``patience`` updates all realized negative utility."""
    return negative_streak >= patience
