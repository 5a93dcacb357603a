"""Verified procedural memory (§8, §9): AutoDream trigger, SEDM admission and evolution constants.

Every value can be set with ``MIRIX_PROCEDURAL_<NAME>``. Latency is counted in seconds and
tokens in thousands in both the admission score and the realized utility.
"""

from __future__ import annotations

from mirix_saas.settings.env import MissingSetting, env_int, env_optional


def _number(name: str, default: float, *, low: float | None = None, high: float | None = None) -> float:
    raw = env_optional(f"MIRIX_PROCEDURAL_{name}")
    try:
        value = float(raw) if raw is not None else default
    except ValueError as exc:
        raise MissingSetting(f"MIRIX_PROCEDURAL_{name} must be a number, got {raw!r}") from exc
    if (low is not None and value < low) or (high is not None and value > high):
        raise MissingSetting(f"MIRIX_PROCEDURAL_{name} must be within [{low}, {high}], got {value}")
    return value


# Procedural AutoDream starts when this many sessions of a subject are pending.
PROCEDURAL_DREAM_THRESHOLD = env_int("MIRIX_PROCEDURAL_DREAM_THRESHOLD", 5)
# SCEC packages larger than this go to object storage; the row keeps the key.
PROCEDURAL_SCEC_INLINE_BYTES = env_int("MIRIX_PROCEDURAL_SCEC_INLINE_BYTES", 16_384)
PROCEDURAL_SCEC_MAX_BYTES = env_int("MIRIX_PROCEDURAL_SCEC_MAX_BYTES", 5 * 1024 * 1024)
# SEDM admission: S = ΔR − λ_L·ΔL − λ_T·ΔT, admit iff S ≥ η, w0 = max(0, S).
PROCEDURAL_LAMBDA_LATENCY = _number("LAMBDA_LATENCY", 0.01, low=0.0)  # per second
PROCEDURAL_LAMBDA_TOKENS = _number("LAMBDA_TOKENS", 0.05, low=0.0)  # per thousand tokens
PROCEDURAL_ETA = _number("ETA", 0.05)
PROCEDURAL_RUNS_PER_ARM = env_int("MIRIX_PROCEDURAL_RUNS_PER_ARM", 3)
# Weight of an item that entered without an SCEC (unverified): a neutral prior.
PROCEDURAL_NEUTRAL_WEIGHT = _number("NEUTRAL_WEIGHT", 0.5, low=0.0, high=1.0)
# Evolution: w ← w + α·Ū − β·f_use, in [0, WEIGHT_CEILING]; Ū is reward above the baseline less costs.
PROCEDURAL_ALPHA = _number("ALPHA", 0.2, low=0.0)
PROCEDURAL_BETA = _number("BETA", 0.02, low=0.0)
PROCEDURAL_REWARD_BASELINE = _number("REWARD_BASELINE", 0.5, low=0.0, high=1.0)
PROCEDURAL_WEIGHT_CEILING = _number("WEIGHT_CEILING", 1.0, low=0.0)
PROCEDURAL_DEMOTE_PATIENCE = env_int("MIRIX_PROCEDURAL_DEMOTE_PATIENCE", 2)
PROCEDURAL_ARCHIVE_BELOW = _number("ARCHIVE_BELOW", 0.05, low=0.0)
# General forms start at α_general · w_specific, α_general < 1.
PROCEDURAL_GENERAL_ALPHA = _number("GENERAL_ALPHA", 0.6, low=0.0, high=0.999)
# Near-duplicates: cosine similarity of skill embeddings at or above this, same domain and form.
PROCEDURAL_MERGE_SIMILARITY = _number("MERGE_SIMILARITY", 0.92, low=0.0, high=1.0)

if PROCEDURAL_RUNS_PER_ARM < 1 or PROCEDURAL_DREAM_THRESHOLD < 1:
    raise MissingSetting("MIRIX_PROCEDURAL_RUNS_PER_ARM and MIRIX_PROCEDURAL_DREAM_THRESHOLD must be >= 1")
