"""The console through Django's test client: no page of an organization is reachable by staff
of another one (every URL pattern, so a new page cannot escape), CSRF, sign-in throttling,
and every staff action in the audit log with the staff user as actor."""

from __future__ import annotations

import io
import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connections, transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, reverse

from apps.audit.models import AuditEntry
from apps.audit.selectors import audit_verify
from apps.console import urls as console_urls
from apps.console.views.base import OrganizationView, PlatformView
from apps.erasure.models import ErasureRequest
from apps.jobs.models import Job
from apps.memory.models import EpisodicEvent, IndexedRecord
from apps.tenancy.models import ApiKey, Membership, Organization
from apps.tenancy.scope import organization_scope
from tests.console.conftest import PASSWORD, make_staff
from tests.console.support import World, populate
from tests.factories import Tenant
from tests.memory.conversation import SECRET_PASSWORD

PUBLIC = {"login", "logout", "index"}
# A receipt to download exists once its erasure completes; the world's has not run.
RECEIPTS = {"erasure-receipt", "offboarded-receipt"}


def _patterns(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _patterns(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern


PATTERNS = list(_patterns(console_urls.urlpatterns))


def _url(pattern: URLPattern, route: str, world: World) -> str:
    wanted = set(re.findall(r"<(?:\w+:)?(\w+)>", route))
    kwargs = {k: v for k, v in world.url_kwargs().items() if k in wanted}
    assert set(kwargs) == wanted, f"no test object for {wanted - set(kwargs)} in {route}"
    return reverse(f"console:{pattern.name}", kwargs=kwargs)


def _view(pattern: URLPattern) -> type:
    return pattern.callback.view_class  # type: ignore[attr-defined,no-any-return]


@pytest.fixture
def world(tenant: Tenant) -> World:
    return populate(tenant)


def _audit(tenant: Tenant) -> list[AuditEntry]:
    with organization_scope(tenant.id):
        return list(AuditEntry.objects.for_organization(tenant.id).order_by("sequence"))


def test_every_console_page_is_guarded_by_the_base_views() -> None:
    names = {pattern.name for _, pattern in PATTERNS}
    assert {"api-keys", "subject", "subject-frame", "audit-chain", "erasure-detail", "webhook-endpoint"} <= names
    for route, pattern in PATTERNS:
        view = _view(pattern)
        if pattern.name in PUBLIC:
            continue
        if "<uuid:org_id>" in route:
            assert issubclass(view, OrganizationView) or pattern.name == "organization-offboard", route
        else:
            assert issubclass(view, PlatformView) and view.superuser_only, route
        if hasattr(view, "post"):
            assert "POST" in view.audit_actions, route


def test_staff_of_another_organization_get_404_on_every_page(world: World, other_tenant: Tenant) -> None:
    outsider = make_staff(other_tenant, role=Membership.Role.OWNER).client()
    checked = 0
    before = len(_audit(world.tenant))
    for route, pattern in PATTERNS:
        if pattern.name in PUBLIC:
            continue
        url = _url(pattern, route, world)
        for method in ("get", "post"):
            response = getattr(outsider, method)(url, {"confirm": world.tenant.organization.slug, "name": "x"})
            assert response.status_code == 404, (method, url, response.status_code)
            body = response.content.decode()
            assert world.tenant.organization.name not in body and world.subject.external_id not in body
            checked += 1
    assert checked >= 40
    # Nothing happened in the organization: no key, no erasure, no audit entry.
    assert len(_audit(world.tenant)) == before
    assert Organization.objects.dangerously_across_organizations().filter(id=world.tenant.id).exists()
    with organization_scope(world.tenant.id):
        assert ApiKey.objects.filter(revoked_at__isnull=False).count() == 0


def test_own_staff_can_open_every_page(world: World) -> None:
    admin = make_staff(superuser=True).client()
    member = make_staff(world.tenant, role=Membership.Role.VIEWER).client()
    opened = 0
    for route, pattern in PATTERNS:
        view = _view(pattern)
        if not hasattr(view, "get") or pattern.name == "logout":
            continue
        url = _url(pattern, route, world)
        if "<uuid:org_id>" in route:
            response = member.get(url)
            expected = 404 if pattern.name in RECEIPTS else 200
            assert response.status_code == expected, (url, response.status_code, response.content[:500])
            opened += 1
        if pattern.name in {"offboarded-detail", *RECEIPTS}:
            continue  # names an organization offboarding; the one in the world is a subject's
        response = admin.get(url)
        assert response.status_code in (200, 302), (url, response.status_code)
    assert opened >= 15


def test_a_frame_page_shows_the_rows_it_cites(world: World) -> None:
    client = make_staff(world.tenant).client()
    page = client.get(
        reverse(
            "console:subject-frame",
            kwargs={"org_id": world.tenant.id, "subject_id": world.subject.id, "frame_id": world.frame["frame_id"]},
        )
    ).content.decode()
    for row_id in world.frame["citations"]:
        assert f'id="row-{row_id}"' in page
    missing = client.get(
        reverse(
            "console:subject-frame",
            kwargs={"org_id": world.tenant.id, "subject_id": world.subject.id, "frame_id": "no-such-frame"},
        )
    )
    assert missing.status_code == 404


def test_viewers_cannot_act(world: World) -> None:
    viewer = make_staff(world.tenant, role=Membership.Role.VIEWER).client()
    url = reverse("console:api-key-revoke", kwargs={"org_id": world.tenant.id, "api_key_id": world.api_key_id})
    assert viewer.post(url).status_code == 403
    with organization_scope(world.tenant.id):
        assert ApiKey.objects.get(id=world.api_key_id).revoked_at is None


def test_forms_require_a_csrf_token(tenant: Tenant) -> None:
    staff = make_staff(tenant)
    client = staff.client(enforce_csrf=True)
    url = reverse("console:api-keys", kwargs={"org_id": tenant.id})
    refused = client.post(url, {"name": "ci", "scopes": ["memories:read"]})
    assert refused.status_code == 403
    with organization_scope(tenant.id):
        assert not ApiKey.objects.filter(name="ci").exists()
    page = client.get(url)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert token is not None
    accepted = client.post(url, {"name": "ci", "scopes": ["memories:read"], "csrfmiddlewaretoken": token.group(1)})
    assert accepted.status_code == 200
    with organization_scope(tenant.id):
        assert ApiKey.objects.filter(name="ci").count() == 1
    login = Client(enforce_csrf_checks=True).post(
        reverse("console:login"), {"username": staff.user.username, "password": PASSWORD}
    )
    assert login.status_code == 403


def test_sign_in_is_throttled_per_username_and_address(tenant: Tenant, settings: Any) -> None:
    settings.CONSOLE_LOGIN_MAX_FAILURES = 3
    staff = make_staff(tenant)
    url = reverse("console:login")
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(3):
        response = client.post(url, {"username": staff.user.username, "password": "wrong"})
        assert response.status_code == 401
        assert b"Wrong username or password" in response.content
    locked = client.post(url, {"username": staff.user.username, "password": PASSWORD})
    assert locked.status_code == 429 and b"Too many failed sign-ins" in locked.content
    assert "_auth_user_id" not in client.session
    # Another address is not locked out, and a success there clears only its own count.
    elsewhere = Client(REMOTE_ADDR="198.51.100.9")
    response = elsewhere.post(url, {"username": staff.user.username, "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == reverse("console:index")
    assert client.post(url, {"username": staff.user.username, "password": PASSWORD}).status_code == 429


def test_sign_in_and_out(tenant: Tenant) -> None:
    staff = make_staff(tenant)
    client = Client()
    page = client.get(reverse("console:api-keys", kwargs={"org_id": tenant.id}))
    assert page.status_code == 302 and page["Location"].startswith(reverse("console:login"))
    next_url = reverse("console:subjects", kwargs={"org_id": tenant.id})
    response = client.post(
        reverse("console:login"), {"username": staff.user.username, "password": PASSWORD, "next": next_url}
    )
    assert response.status_code == 302 and response["Location"] == next_url
    offsite = Client().post(
        reverse("console:login"),
        {"username": staff.user.username, "password": PASSWORD, "next": "https://evil.example/"},
    )
    assert offsite["Location"] == reverse("console:index")
    assert client.get(next_url).status_code == 200
    assert client.post(reverse("console:logout")).status_code == 302
    assert client.get(next_url).status_code == 302


def test_every_staff_action_is_audited_with_the_staff_user_as_actor(world: World) -> None:
    staff = make_staff(world.tenant, role=Membership.Role.OWNER)
    client = staff.client()
    org = world.tenant.id
    before = len(_audit(world.tenant))

    def post(name: str, data: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        response = client.post(reverse(f"console:{name}", kwargs={"org_id": org, **kwargs}), data or {})
        assert response.status_code in (200, 302), (name, response.status_code, response.content[:400])
        return response

    created = post("api-keys", {"name": "console key", "scopes": ["memories:read", "admin"]})
    secret = re.search(r'id="issued-secret">([^<]+)<', created.content.decode())
    assert secret is not None and world.tenant.client(secret.group(1)).get("/v1/subjects").status_code == 200
    with organization_scope(org):
        new_key = ApiKey.objects.get(name="console key")
    post("api-key-rotate", api_key_id=new_key.id)
    post("api-key-revoke", api_key_id=new_key.id)
    assert world.tenant.client(secret.group(1)).get("/v1/subjects").status_code == 401
    post("subject-consent", {"store_conversations": "on"}, subject_id=world.subject.id)  # withdraws the others' grants
    post("webhooks", {"url": "http://127.0.0.1:9/other", "event_types": ["subject.erased"]})
    post("webhook-endpoint-enabled", {"enabled": "false"}, endpoint_id=world.endpoint_id)
    post("webhook-endpoint-enabled", {"enabled": "true"}, endpoint_id=world.endpoint_id)
    post("webhook-endpoint-rotate", endpoint_id=world.endpoint_id)
    post("webhook-endpoint-ping", endpoint_id=world.endpoint_id)
    with organization_scope(org):
        EpisodicEvent.objects.filter(subject=world.subject).update(index_status=IndexedRecord.IndexStatus.FAILED)
    post("jobs-retry-indexing")
    post("subject-erase", {"confirm": world.subject.external_id}, subject_id=world.subject.id)

    entries = [e for e in _audit(world.tenant)[before:] if e.action.startswith("console.")]
    actions = [e.action for e in entries]
    assert actions == [
        "console.api_key.create",
        "console.api_key.rotate",
        "console.api_key.revoke",
        "console.consent.update",
        "console.webhook_endpoint.create",
        "console.webhook_endpoint.update",
        "console.webhook_endpoint.update",
        "console.webhook_endpoint.rotate_secret",
        "console.webhook_endpoint.ping",
        "console.indexing.retry",
        "console.subject.erase",
    ]
    assert {e.actor for e in entries} == {f"staff:{staff.user.pk}"}
    assert entries[0].target_ids == [str(new_key.id)]
    assert entries[-1].subject_id == world.subject.id
    with organization_scope(org):
        assert not EpisodicEvent.objects.filter(index_status=IndexedRecord.IndexStatus.FAILED).exists()
        request = ErasureRequest.objects.get(id=uuid.UUID(entries[-1].target_ids[0]))
    assert request.requested_by == f"staff:{staff.user.pk}"
    assert audit_verify(organization_id=org) is None


def test_a_refused_action_writes_nothing(world: World) -> None:
    client = make_staff(world.tenant).client()
    before = len(_audit(world.tenant))
    url = reverse("console:subject-erase", kwargs={"org_id": world.tenant.id, "subject_id": world.subject.id})
    response = client.post(url, {"confirm": "not the id"})
    assert response.status_code == 400 and b"exactly" in response.content
    bad = client.post(reverse("console:webhooks", kwargs={"org_id": world.tenant.id}), {"url": "http://10.0.0.1/x"})
    assert bad.status_code == 400
    replay = client.post(
        reverse("console:webhook-delivery-replay", kwargs={"org_id": world.tenant.id, "delivery_id": world.delivery_id})
    )
    assert replay.status_code == 409 and b"still scheduled" in replay.content
    assert len(_audit(world.tenant)) == before


def test_rotating_a_key_twice_in_the_console_is_refused(tenant: Tenant) -> None:
    client = make_staff(tenant, role=Membership.Role.OWNER).client()
    with organization_scope(tenant.id):
        key = ApiKey.objects.get()
    url = reverse("console:api-key-rotate", kwargs={"org_id": tenant.id, "api_key_id": key.id})
    assert client.post(url, {"overlap_seconds": "60"}).status_code == 200
    again = client.post(url, {"overlap_seconds": "60"})
    assert again.status_code == 409 and b"already rotated" in again.content
    with organization_scope(tenant.id):
        assert ApiKey.objects.filter(rotated_from=key).count() == 1
    assert [e.action for e in _audit(tenant)].count("console.api_key.rotate") == 1


def test_offboarding_is_for_superusers_and_leaves_a_receipt(tenant: Tenant, other_tenant: Tenant) -> None:
    owner = make_staff(tenant, role=Membership.Role.OWNER).client()
    url = reverse("console:organization-offboard", kwargs={"org_id": tenant.id})
    assert owner.post(url, {"confirm": tenant.organization.slug}).status_code == 404
    admin = make_staff(superuser=True)
    client = admin.client()
    assert client.post(url, {"confirm": "wrong"}).status_code == 400
    response = client.post(url, {"confirm": tenant.organization.slug})
    assert response.status_code == 302
    assert not Organization.objects.dangerously_across_organizations().filter(id=tenant.id).exists()
    receipt = client.get(response["Location"])
    assert receipt.status_code == 200 and b"hash verifies" in receipt.content
    assert owner.get(reverse("console:organization", kwargs={"org_id": tenant.id})).status_code == 404
    assert owner.get(response["Location"]).status_code == 404
    entries = _audit(tenant)
    assert [e.action for e in entries][-3:] == [
        "erasure.organization.started",
        "erasure.organization.completed",
        "console.organization.offboard",
    ]
    assert entries[-1].actor == f"staff:{admin.user.pk}"
    assert audit_verify(organization_id=tenant.id) is None
    assert Organization.objects.dangerously_across_organizations().filter(id=other_tenant.id).exists()


def test_the_audit_page_filters_and_the_chain_page_reports_a_break(world: World) -> None:
    client = make_staff(world.tenant).client()
    url = reverse("console:audit", kwargs={"org_id": world.tenant.id})
    page = client.get(url, {"action": "memory.", "subject": world.subject.external_id}).content.decode()
    rows = re.findall(r"<code>([a-z_.]+)</code></td>", page)
    assert rows and all(action.startswith("memory.") for action in rows)
    assert client.get(url, {"subject": "nobody-by-that-name"}).status_code == 400
    assert client.get(url, {"since": "2030-01-02T00:00", "until": "2030-01-01T00:00"}).status_code == 400
    chain = reverse("console:audit-chain", kwargs={"org_id": world.tenant.id})
    assert b"intact" in client.get(chain).content
    # As the table owner, with the append-only trigger off for this transaction only.
    with transaction.atomic(using="owner"), connections["owner"].cursor() as cursor:
        cursor.execute("ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_append_only")
        cursor.execute(
            "UPDATE audit_entry SET action = 'tampered' WHERE organization_id = %s AND sequence = 2", [world.tenant.id]
        )
        cursor.execute("ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_append_only")
    broken = client.get(chain).content.decode()
    assert "broken" in broken and "#2" in broken


def test_the_demo_seed_prints_a_staff_user_who_can_sign_in() -> None:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    printed = out.getvalue()
    password = re.search(r"user 'staff'\s+password '([^']+)'", printed)
    assert password is not None and "/console/" in printed
    client = Client()
    response = client.post(reverse("console:login"), {"username": "staff", "password": password.group(1)})
    assert response.status_code == 302
    organizations = client.get(reverse("console:index")).content.decode()
    demo = Organization.objects.dangerously_across_organizations().get(slug="demo")
    assert f"/console/orgs/{demo.id}/" in organizations


def test_the_subject_export_leaves_vault_values_out_and_is_audited(world: World) -> None:
    staff = make_staff(world.tenant)
    url = reverse("console:subject-export", kwargs={"org_id": world.tenant.id, "subject_id": world.subject.id})
    response = staff.client().get(url)
    assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment;")
    data = json.loads(response.content)
    assert data["subject"]["external_id"] == world.subject.external_id
    assert data["memories"]["episodic"] and data["vault"] and "value" not in data["vault"][0]
    assert SECRET_PASSWORD not in response.content.decode()
    entry = _audit(world.tenant)[-1]
    assert entry.action == "console.subject.export" and entry.subject_id == world.subject.id
    assert entry.actor == f"staff:{staff.user.pk}"


def test_a_failed_indexing_job_is_retried_for_its_subject(world: World) -> None:
    org = world.tenant.id
    with organization_scope(org):
        Job.objects.filter(id=world.job_id).update(status=Job.Status.FAILED, error_code="GraphError")
        failed = EpisodicEvent.objects.filter(subject=world.subject)
        failed.update(index_status=IndexedRecord.IndexStatus.FAILED, index_attempts=5)
        chunks = set(failed.values_list("chunk_id", flat=True))
        jobs_before = Job.objects.filter(kind="memory.index").count()
    client = make_staff(world.tenant).client()
    jobs_page = client.get(reverse("console:jobs", kwargs={"org_id": org}), {"status": "failed"}).content.decode()
    assert str(world.job_id) in jobs_page and "GraphError" in jobs_page
    retry = reverse("console:job-retry", kwargs={"org_id": org, "job_id": world.job_id})
    assert client.post(retry).status_code == 302
    with organization_scope(org):
        statuses = set(
            EpisodicEvent.objects.filter(subject=world.subject).values_list("index_status", "index_attempts")
        )
        assert statuses == {(IndexedRecord.IndexStatus.PENDING, 0)}
        queued = Job.objects.filter(kind="memory.index").count() - jobs_before
    assert queued == len(chunks)
    succeeded = reverse("console:job-retry", kwargs={"org_id": org, "job_id": world.job_id})
    with organization_scope(org):
        Job.objects.filter(id=world.job_id).update(status=Job.Status.SUCCEEDED)
    assert client.post(succeeded).status_code == 409
