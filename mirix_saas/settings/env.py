"""The one helper through which settings read the environment.

Required variables fail loudly at start-up with the variable's name, never later.
"""

from __future__ import annotations

import os


class MissingSetting(RuntimeError):
    pass


def env_str(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None or value == "":
        raise MissingSetting(f"environment variable {name} is required")
    return value


def env_optional(name: str) -> str | None:
    return os.environ.get(name) or None


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise MissingSetting(f"environment variable {name} must be a boolean, got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise MissingSetting(f"environment variable {name} must be an integer, got {raw!r}") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]
