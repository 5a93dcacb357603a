from __future__ import annotations

import pytest

from apps.platform.errors import MissingTenantScope
from apps.tenancy.api.base import OrganizationApiView
from apps.tenancy.models import ApiKey, Subject
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant


def test_manager_fails_closed_without_scope() -> None:
    with pytest.raises(MissingTenantScope):
        list(Subject.objects.all())
    with pytest.raises(MissingTenantScope):
        ApiKey.objects.filter(name="x").exists()


def test_manager_filters_by_scope_and_named_escape_hatches() -> None:
    a, b = make_tenant(), make_tenant()
    a.subject("alice")
    b.subject("bob")
    with organization_scope(a.id):
        assert [s.external_id for s in Subject.objects.all()] == ["alice"]
        # An explicit organization other than the scope: the ORM filter and RLS both refuse it.
        assert list(Subject.objects.for_organization(b.id)) == []
    with organization_scope(b.id):
        assert [s.external_id for s in Subject.objects.for_organization(b.id)] == ["bob"]
    everyone = Subject.objects.dangerously_across_organizations().order_by("external_id")
    assert [s.external_id for s in everyone] == ["alice", "bob"]


def test_nested_scopes_restore_the_outer_scope() -> None:
    a, b = make_tenant(), make_tenant()
    a.subject("alice")
    b.subject("bob")
    with organization_scope(a.id):
        with organization_scope(b.id):
            assert [s.external_id for s in Subject.objects.all()] == ["bob"]
        assert [s.external_id for s in Subject.objects.all()] == ["alice"]


def test_views_cannot_replace_the_tenant_scoping() -> None:
    with pytest.raises(TypeError, match="must not override"):
        type("Sneaky", (OrganizationApiView,), {"get_queryset": lambda self: None})
    with pytest.raises(TypeError, match="must not override"):
        type("Sneaky", (OrganizationApiView,), {"initial": lambda self, request: None})
