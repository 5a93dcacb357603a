"""Fail-closed managers for tenant-owned models.

``Model.objects`` raises without an organization in scope and always filters by it. The two
escape hatches are named for what they do:

- ``for_organization(id)`` — an explicit organization, for code that holds the id but runs
  outside a request scope (it still runs under RLS, so the database must agree);
- ``dangerously_across_organizations()`` — every organization, on the owner connection, for
  platform operations only (offboarding, sweeps over organizations, the console).
"""

from __future__ import annotations

import uuid
from typing import TypeVar

from django.db import models

from apps.tenancy.scope import current_organization_id

M = TypeVar("M", bound=models.Model)


class TenantScopedManager(models.Manager[M]):
    organization_field = "organization_id"

    def get_queryset(self) -> models.QuerySet[M]:
        return self.for_organization(current_organization_id())

    def for_organization(self, organization_id: uuid.UUID) -> models.QuerySet[M]:
        return super().get_queryset().filter(**{self.organization_field: organization_id})

    def dangerously_across_organizations(self) -> models.QuerySet[M]:
        return super().get_queryset().using("owner")


class OrganizationManager(TenantScopedManager[M]):
    organization_field = "id"
