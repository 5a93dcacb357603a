"""LLM and embedding providers (architecture §13). With no variables set: both ``local``."""

from __future__ import annotations

from mirix_saas.settings.env import MissingSetting, env_bool, env_int, env_optional, env_str

_PROVIDERS = ("local", "openai")


def _choice(name: str, options: tuple[str, ...] = _PROVIDERS) -> str:
    """The variable's value, one of ``options`` (the first is the default)."""
    value = env_str(name, options[0]).strip().lower()
    if value not in options:
        raise MissingSetting(f"environment variable {name} must be one of {', '.join(options)}, got {value!r}")
    return value


def _seconds(name: str, default: float) -> float:
    raw = env_optional(name)
    try:
        value = float(raw) if raw is not None else default
    except ValueError as exc:
        raise MissingSetting(f"environment variable {name} must be a number of seconds, got {raw!r}") from exc
    if value <= 0:
        raise MissingSetting(f"environment variable {name} must be positive, got {raw!r}")
    return value


LLM_PROVIDER = _choice("MIRIX_LLM_PROVIDER")
EMBEDDING_PROVIDER = _choice("MIRIX_EMBEDDING_PROVIDER")
# The vector dimension is fixed per deployment: every stored embedding has it.
EMBEDDING_DIMENSION = env_int("MIRIX_EMBEDDING_DIMENSION", 384)
# The local embedder's weights (ADR 0091): int8 (about twice as fast) or float32. Each is its
# own embedding model: after changing it, `manage.py reembed` re-embeds the stored rows.
LOCAL_EMBEDDING_PRECISION = _choice("MIRIX_LOCAL_EMBEDDING_PRECISION", ("int8", "float32"))

_USES_OPENAI = "openai" in (LLM_PROVIDER, EMBEDDING_PROVIDER)
OPENAI_BASE_URL = env_optional("MIRIX_OPENAI_BASE_URL")  # None: api.openai.com
OPENAI_API_KEY = env_str("MIRIX_OPENAI_API_KEY") if _USES_OPENAI else env_optional("MIRIX_OPENAI_API_KEY")
OPENAI_MODEL = env_str("MIRIX_OPENAI_MODEL", "gpt-4.1-mini")
OPENAI_EMBEDDING_MODEL = env_str("MIRIX_OPENAI_EMBEDDING_MODEL", "text-embedding-3-small")
OPENAI_TIMEOUT_SECONDS = _seconds("MIRIX_OPENAI_TIMEOUT_SECONDS", 60.0)
# Attempts per call (first try included) and the first backoff delay, doubled per retry.
OPENAI_MAX_ATTEMPTS = env_int("MIRIX_OPENAI_MAX_ATTEMPTS", 3)
OPENAI_RETRY_BASE_SECONDS = _seconds("MIRIX_OPENAI_RETRY_BASE_SECONDS", 0.5)
# Lets an organization's own endpoint be 127.0.0.1/::1 over plain http: for local development
# and tests only (the local and test settings turn it on). Any other non-public address is
# refused whatever this says.
PROVIDERS_ALLOW_LOOPBACK = env_bool("MIRIX_PROVIDERS_ALLOW_LOOPBACK", False)
