"""Who may see and change which organization in the console: the one place that decides it.

A superuser sees every organization; any other staff user sees the organizations they hold a
membership of, and nothing else: an organization that is not theirs is reported as missing
(404), never as forbidden, so its existence does not leak. Owners and admins may act; viewers
only read. Platform pages (organizations that have been offboarded) are for superusers only.

Memberships and organizations are read on the owner connection: deciding which organizations
a user may enter is a platform read that precedes any organization's scope.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from apps.platform.errors import Forbidden, NotFound
from apps.tenancy.models import Membership, Organization

User = AbstractBaseUser | AnonymousUser
ACTING_ROLES = frozenset({Membership.Role.OWNER, Membership.Role.ADMIN})


@dataclass(frozen=True)
class OrganizationAccess:
    organization: Organization
    role: str | None  # the user's membership role; None for a superuser without one
    superuser: bool

    @property
    def can_act(self) -> bool:
        return self.superuser or self.role in ACTING_ROLES

    @property
    def can_offboard(self) -> bool:
        return self.superuser


def is_console_user(user: User) -> bool:
    """May sign in to the console at all: an active staff user or superuser."""
    return bool(user.is_active and (getattr(user, "is_superuser", False) or getattr(user, "is_staff", False)))


def _is_superuser(user: User) -> bool:
    return is_console_user(user) and bool(getattr(user, "is_superuser", False))


def _memberships(user: User) -> dict[uuid.UUID, str]:
    if not is_console_user(user) or user.pk is None:
        return {}
    rows = Membership.objects.dangerously_across_organizations().filter(user_id=user.pk)
    return dict(rows.values_list("organization_id", "role"))


def organizations_visible(user: User) -> list[Organization]:
    organizations = Organization.objects.dangerously_across_organizations().order_by("name", "slug")
    if _is_superuser(user):
        return list(organizations)
    return list(organizations.filter(id__in=list(_memberships(user))))


def organization_access(user: User, organization_id: uuid.UUID) -> OrganizationAccess:
    """The user's access to one organization, or ``NotFound`` when it is not theirs to see."""
    role = _memberships(user).get(organization_id)
    superuser = _is_superuser(user)
    if role is None and not superuser:
        raise NotFound("Organization not found.")
    organization = Organization.objects.dangerously_across_organizations().filter(id=organization_id).first()
    if organization is None:
        raise NotFound("Organization not found.")
    return OrganizationAccess(organization=organization, role=role, superuser=superuser)


def require_action(access: OrganizationAccess) -> None:
    if not access.can_act:
        raise Forbidden("Your role in this organization is read-only; ask an owner or admin.")


def require_superuser(user: User) -> None:
    """Platform pages: invisible (404) to everyone but superusers."""
    if not _is_superuser(user):
        raise NotFound("Page not found.")
