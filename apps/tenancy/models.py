from __future__ import annotations

import re
import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from apps.tenancy.managers import OrganizationManager, TenantScopedManager

# The name of an organization's AGE graph: generated here, never taken from input, and
# checked against this pattern wherever it is placed into SQL (``apps.graph.adapter``).
GRAPH_NAME_PATTERN = re.compile(r"^g_[0-9a-f]{32}$")
# What a subject's external id may be (the customer's own id, placed in URLs).
EXTERNAL_ID_PATTERN = r"^[A-Za-z0-9._:@+\-]{1,200}$"
EXTERNAL_ID_RULE = "Use 1-200 characters from letters, digits and . _ : @ + -"


def new_graph_name() -> str:
    return f"g_{uuid.uuid4().hex}"


class Organization(models.Model):
    """A tenant. Its AGE graph is named on the server (``g_<hex>``) with it and created on its
    first write (ADR 0050)."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        OFFBOARDING = "offboarding"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    graph_name = models.CharField(max_length=63, unique=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    monthly_request_quota = models.PositiveBigIntegerField(null=True, blank=True)
    # A write to an unknown subject external_id creates the subject (ADR 0039); off, such a
    # write is a 404 like every read, and subjects come only from POST /v1/subjects.
    subjects_created_on_write = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OrganizationManager()

    class Meta:
        db_table = "tenancy_organization"

    def __str__(self) -> str:
        return self.slug


class TenantModel(models.Model):
    """Base of every tenant-owned model: an organization column, RLS, a fail-closed manager."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")

    objects = TenantScopedManager()

    class Meta:
        abstract = True


class Subject(TenantModel):
    """Whose memory it is: an end user or an agent, addressed by the customer's own id."""

    class Kind(models.TextChoices):
        USER = "user"
        AGENT = "agent"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    external_id = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    display_name = models.CharField(max_length=200, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "tenancy_subject"
        constraints = [
            models.UniqueConstraint(fields=["organization", "external_id"], name="subject_external_id_unique")
        ]
        indexes = [models.Index(fields=["organization", "created_at", "id"], name="subject_org_created")]

    def __str__(self) -> str:
        return f"{self.kind}:{self.external_id}"


class Membership(TenantModel):
    """A console staff user's membership of an organization."""

    class Role(models.TextChoices):
        OWNER = "owner"
        ADMIN = "admin"
        VIEWER = "viewer"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "tenancy_membership"
        constraints = [models.UniqueConstraint(fields=["organization", "user"], name="membership_unique")]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.organization_id} ({self.role})"


class ApiKey(TenantModel):
    """An API key. Only its clear lookup id and an HMAC-SHA256 of the whole key are stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    lookup_id = models.CharField(max_length=32, unique=True)
    key_hash = models.CharField(max_length=64)
    scopes = ArrayField(models.CharField(max_length=40))
    rate_limit_per_minute = models.PositiveIntegerField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    rotated_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "tenancy_api_key"

    def __str__(self) -> str:
        return f"{self.name} ({self.lookup_id})"


class IdempotencyRecord(TenantModel):
    """The stored answer to the first request made with an ``Idempotency-Key`` (ADR 0038):
    a retry with the same key and the same request is answered from here, for 24 hours."""

    id = models.BigAutoField(primary_key=True)
    key = models.CharField(max_length=255)
    # The subject the answer is about, if any: erasing the subject erases its stored answers.
    subject = models.ForeignKey(Subject, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    request_hash = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField()
    response = models.JSONField(encoder=DjangoJSONEncoder)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        db_table = "tenancy_idempotency_record"
        constraints = [models.UniqueConstraint(fields=["organization", "key"], name="idempotency_key_unique")]
        indexes = [models.Index(fields=["organization", "expires_at"], name="idempotency_expiry")]

    def __str__(self) -> str:
        return f"{self.key} → {self.status_code}"
