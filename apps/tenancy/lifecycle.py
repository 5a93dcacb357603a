"""Organization lifecycle hooks: what the capabilities above tenancy do when an organization
is offboarded.

Tenancy is the lowest domain layer, so it never calls the capabilities that keep resources
of their own per organization (the graph app keeps each organization's AGE graph, created on
its first write: ADR 0050). Each of them registers its hooks in its ``AppConfig.ready``::

    from apps.tenancy.lifecycle import OrganizationHooks, organization_hooks_register

    organization_hooks_register(OrganizationHooks(name="graph", offboarded=...))

Tenancy runs them inside the owner transaction (``transaction.atomic(using="owner")``) that
deletes the organization row, before the delete, in reverse registration order. A hook that
raises rolls the whole change back, so the row and every resource go together or not at all.
Creating an organization creates nothing but its rows: a capability creates what it keeps
when the organization first needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from apps.platform.registry import named_register
from apps.tenancy.models import Organization


@dataclass(frozen=True)
class OrganizationHooks:
    name: str  # unique
    offboarded: Callable[[Organization], None]


_HOOKS: dict[str, OrganizationHooks] = {}


def organization_hooks_register(hooks: OrganizationHooks) -> OrganizationHooks:
    return named_register(_HOOKS, hooks, kind="organization hooks")


def organization_offboarded(organization: Organization) -> None:
    for hooks in reversed(list(_HOOKS.values())):
        hooks.offboarded(organization)
