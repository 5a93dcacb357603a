"""HEAD, OPTIONS and methods without a handler: checked and audited like the method they
stand for, or refused (ADR 0024). The full routes × methods × scope sets sweep is in
``test_authorization_matrix.py``; these pin the findings one by one."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections
from django.test.utils import CaptureQueriesContext
from rest_framework.request import Request
from rest_framework.response import Response

from apps.audit.models import AuditEntry
from apps.tenancy.api.base import OrganizationApiView
from apps.tenancy.authentication import ApiKeyPrincipal
from apps.tenancy.permissions import HasRequiredScopes
from tests.factories import Tenant, make_tenant


def _vault_entry(tenant: Tenant) -> tuple[str, str]:
    subject = tenant.subject("ana")
    written = tenant.client().post(
        f"/v1/subjects/{subject.external_id}/memories",
        {"messages": [{"role": "user", "content": "My password is Tr0ub4dor&3x, keep it safe."}]},
        format="json",
    )
    assert written.status_code == 202, written.content
    entry = next(r["id"] for r in written.json()["records"] if r["type"] == "vault")
    return subject.external_id, entry


def _actions(tenant: Tenant, action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.dangerously_across_organizations().filter(organization_id=tenant.id, action=action))


def test_head_on_a_vault_entry_without_vault_read_is_refused_and_decrypts_nothing() -> None:
    tenant = make_tenant()
    external_id, entry = _vault_entry(tenant)
    client = tenant.client(tenant.issue_key(["memories:read"]))
    with CaptureQueriesContext(connections["default"]) as queries:
        response = client.head(f"/v1/subjects/{external_id}/vault/{entry}")
    assert response.status_code == 403
    # Opening a value reads the organization's data key; nothing did.
    assert not [q for q in queries.captured_queries if "vault_organizationdatakey" in q["sql"]]
    assert not [q for q in queries.captured_queries if "memory_vaultentry" in q["sql"]]
    assert _actions(tenant, "vault.read") == []


def test_head_on_a_vault_entry_with_vault_read_is_answered_and_audited_as_get() -> None:
    tenant = make_tenant()
    external_id, entry = _vault_entry(tenant)
    client = tenant.client(tenant.issue_key(["vault:read"]))
    head = client.head(f"/v1/subjects/{external_id}/vault/{entry}")
    assert head.status_code == 200 and head.content == b""
    [audited] = _actions(tenant, "vault.read")
    assert audited.target_ids == [entry] and audited.actor.startswith("api_key:")
    get = client.get(f"/v1/subjects/{external_id}/vault/{entry}")
    assert get.json()["value"] == "Tr0ub4dor&3x"
    assert len(_actions(tenant, "vault.read")) == 2


@pytest.mark.parametrize(
    ("path", "action"),
    [
        ("/v1/audit-log?limit=10", "audit.export"),
        ("/v1/subjects/ana/export", "subject.export"),
        ("/v1/api-keys", None),
    ],
)
def test_head_on_admin_reads_needs_admin(path: str, action: str | None) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    reader = tenant.client(tenant.issue_key(["memories:read", "memories:write", "vault:read"]))
    refused = reader.head(path)
    assert refused.status_code == 403
    if action:
        assert _actions(tenant, action) == []
    admin = tenant.client(tenant.issue_key(["admin"]))
    assert admin.head(path).status_code == 200
    if action:
        assert len(_actions(tenant, action)) == 1


def test_options_answers_the_allowed_methods_only_and_the_same_for_any_id() -> None:
    tenant = make_tenant()
    external_id, entry = _vault_entry(tenant)
    intruder = make_tenant()
    mine = tenant.client(tenant.issue_key(["memories:read"])).options(f"/v1/subjects/{external_id}/vault/{entry}")
    theirs = intruder.client().options(f"/v1/subjects/{external_id}/vault/{entry}")
    nowhere = intruder.client().options("/v1/subjects/nobody/vault/00000000-0000-0000-0000-000000000000")
    for response in (mine, theirs, nowhere):
        assert response.status_code == 200
        assert response.json() == {"methods": ["GET", "HEAD", "OPTIONS"]}
        assert response["Allow"] == "GET, HEAD, OPTIONS"
    assert _actions(tenant, "vault.read") == []
    assert tenant.client().options("/v1/subjects").json() == {"methods": ["GET", "POST", "HEAD", "OPTIONS"]}
    # A key is still needed.
    assert tenant.client("mx_live_nope").options("/v1/subjects").status_code == 401


@pytest.mark.parametrize("method", ["put", "patch", "delete", "trace"])
def test_a_method_without_a_handler_is_a_405_in_the_error_shape(method: str) -> None:
    tenant = make_tenant()
    external_id, entry = _vault_entry(tenant)
    response = getattr(tenant.client(), method)(f"/v1/subjects/{external_id}/vault/{entry}")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert response["Allow"] == "GET, HEAD, OPTIONS"


def test_a_handler_without_declared_scopes_cannot_be_defined() -> None:
    with pytest.raises(TypeError, match=r"required_scopes for \['GET'\]"):

        class Unscoped(OrganizationApiView):
            def get(self, request: Request) -> Response:
                return Response({})


def test_head_and_options_cannot_be_overridden() -> None:
    for name in ("head", "options"):
        with pytest.raises(TypeError, match="must not override"):
            type("Override", (OrganizationApiView,), {name: lambda self, request, *a, **k: Response({})})


def test_a_view_without_declarations_grants_nothing(rf: Any) -> None:
    """The second line behind the class check: a view without ``scopes_for`` grants nothing."""

    class Bare:
        allowed_methods = ["GET"]

    request = Request(rf.get("/"))
    request.auth = ApiKeyPrincipal(
        api_key_id=uuid.uuid4(),
        organization_id=uuid.uuid4(),
        scopes=frozenset({"admin"}),
        rate_limit_per_minute=None,
        monthly_request_quota=None,
    )
    assert HasRequiredScopes().has_permission(request, Bare()) is False


def test_a_resource_read_is_audited_for_get_and_head() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    written = tenant.client().post(
        "/v1/subjects/ana/memories",
        {"file": SimpleUploadedFile("notes.txt", b"Water first, then move the plant.", "text/plain")},
        format="multipart",
    )
    resource = next(r["id"] for r in written.json()["records"] if r["type"] == "resource")
    client = tenant.client(tenant.issue_key(["memories:read"]))
    assert client.get(f"/v1/subjects/ana/resources/{resource}/content").content == b"Water first, then move the plant."
    assert client.head(f"/v1/subjects/ana/resources/{resource}/content").status_code == 200
    assert [e.target_ids for e in _actions(tenant, "resource.read")] == [[resource], [resource]]
