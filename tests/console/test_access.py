"""The access module: which organizations a user sees, and what they may do there."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from apps.console.access import (
    is_console_user,
    organization_access,
    organizations_visible,
    require_action,
    require_superuser,
)
from apps.platform.errors import Forbidden, NotFound
from apps.tenancy.models import Membership
from tests.console.conftest import make_staff
from tests.factories import Tenant


def test_staff_see_only_their_organizations(tenant: Tenant, other_tenant: Tenant) -> None:
    staff = make_staff(tenant)
    assert [o.id for o in organizations_visible(staff.user)] == [tenant.id]
    assert organization_access(staff.user, tenant.id).organization.id == tenant.id
    with pytest.raises(NotFound):
        organization_access(staff.user, other_tenant.id)


def test_superusers_see_every_organization(tenant: Tenant, other_tenant: Tenant) -> None:
    admin = make_staff(superuser=True)
    assert {o.id for o in organizations_visible(admin.user)} == {tenant.id, other_tenant.id}
    access = organization_access(admin.user, other_tenant.id)
    assert access.superuser and access.role is None and access.can_act and access.can_offboard
    require_superuser(admin.user)


def test_a_missing_organization_is_not_found_even_for_superusers(tenant: Tenant) -> None:
    with pytest.raises(NotFound):
        organization_access(make_staff(superuser=True).user, uuid.uuid4())


@pytest.mark.parametrize(
    ("role", "can_act"),
    [(Membership.Role.OWNER, True), (Membership.Role.ADMIN, True), (Membership.Role.VIEWER, False)],
)
def test_roles_decide_who_may_act(tenant: Tenant, role: str, can_act: bool) -> None:
    access = organization_access(make_staff(tenant, role=role).user, tenant.id)
    assert access.can_act is can_act and not access.can_offboard
    if can_act:
        require_action(access)
    else:
        with pytest.raises(Forbidden):
            require_action(access)


def test_members_who_are_not_staff_or_are_inactive_see_nothing(tenant: Tenant) -> None:
    staff = make_staff(tenant)
    staff.user.is_staff = False
    staff.user.save()
    assert not is_console_user(staff.user) and organizations_visible(staff.user) == []
    with pytest.raises(NotFound):
        organization_access(staff.user, tenant.id)
    inactive = get_user_model().objects.create_superuser(username="gone", email="g@example.com", password="x")
    inactive.is_active = False
    assert not is_console_user(inactive) and not is_console_user(AnonymousUser())
    with pytest.raises(NotFound):
        require_superuser(inactive)


def test_platform_pages_are_for_superusers_only(tenant: Tenant) -> None:
    with pytest.raises(NotFound):
        require_superuser(make_staff(tenant, role=Membership.Role.OWNER).user)
