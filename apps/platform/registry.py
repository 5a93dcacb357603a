"""Registering a named extension: how a lower layer lets the capabilities above it extend it
without importing them. Each registry is a module-level dict owned by the lower layer (the
erasure steps, the organization lifecycle hooks, the search extensions) and filled in the
capabilities' ``AppConfig.ready``."""

from __future__ import annotations

from typing import Protocol, TypeVar


class Named(Protocol):
    @property
    def name(self) -> str: ...


NamedT = TypeVar("NamedT", bound=Named)


def named_register(registry: dict[str, NamedT], item: NamedT, *, kind: str) -> NamedT:
    """Add ``item`` under its name. Registering the same item again is a no-op (``ready`` may
    run twice in a test process); another item under a taken name raises."""
    existing = registry.get(item.name)
    if existing is not None and existing != item:
        raise ValueError(f"{item.name!r} is already registered as {kind}")
    registry[item.name] = item
    return item
