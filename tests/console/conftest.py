"""Console fixtures: staff users with memberships, signed-in test clients."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.test import Client

from apps.tenancy import services
from apps.tenancy.models import Membership
from tests.factories import Tenant, make_tenant

PASSWORD = "correct horse battery staple"
_users = itertools.count(1)


@dataclass
class Staff:
    user: AbstractUser
    password: str = PASSWORD

    def client(self, *, enforce_csrf: bool = False) -> Client:
        client = Client(enforce_csrf_checks=enforce_csrf)
        client.force_login(self.user)
        return client


def make_staff(tenant: Tenant | None = None, *, role: str = Membership.Role.ADMIN, superuser: bool = False) -> Staff:
    username = f"staff{next(_users)}"
    model = get_user_model()
    if superuser:
        user = model.objects.create_superuser(username=username, email=f"{username}@example.com", password=PASSWORD)
    else:
        user = model.objects.create_user(username=username, password=PASSWORD, is_staff=True)
    if tenant is not None:
        services.membership_create(organization_id=tenant.id, user_id=user.pk, role=role)
    return Staff(user=user)


@pytest.fixture
def tenant() -> Tenant:
    return make_tenant()


@pytest.fixture
def other_tenant() -> Tenant:
    return make_tenant()
