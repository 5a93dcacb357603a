"""The audit log: export as JSON lines (or pages) per organization and time range, a chain
a copy can be verified against, and tampering that the verify command and endpoint catch."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connections, transaction
from django.utils import timezone

from apps.audit.chain import GENESIS, entry_hash
from apps.audit.models import AuditEntry
from tests.factories import Tenant, make_tenant


def _lines(response) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    text = b"".join(response.streaming_content).decode()
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def _activity(tenant: Tenant, count: int) -> None:
    for number in range(count):
        assert (
            tenant.client()
            .post("/v1/subjects", {"external_id": f"s{number}", "kind": "user"}, format="json")
            .status_code
            == 201
        )


def test_export_streams_the_organizations_entries_in_chain_order() -> None:
    tenant, other = make_tenant(), make_tenant()
    _activity(tenant, 3)
    _activity(other, 2)
    entries = _lines(tenant.client().get("/v1/audit-log"))
    assert [e["action"] for e in entries[:3]] == ["subject.create"] * 3
    assert {e["organization_id"] for e in entries} == {str(tenant.id)}
    assert [e["sequence"] for e in entries] == list(range(1, len(entries) + 1))
    # Every field the chain covers is there: a copy verifies away from the service.
    previous = GENESIS
    for e in entries:
        fields = {k: e[k] for k in ("organization_id", "actor", "action", "subject_id", "target_ids", "request_id")}
        fields["created_at"] = e["created_at"].replace("Z", "+00:00")
        assert e["previous_hash"] == previous
        assert entry_hash(sequence=e["sequence"], fields=fields, previous_hash=previous) == e["entry_hash"]
        previous = e["entry_hash"]
    # The export itself is audited.
    assert (
        AuditEntry.objects.dangerously_across_organizations()
        .filter(organization_id=tenant.id, action="audit.export")
        .exists()
    )


def test_export_of_a_time_range_and_in_pages() -> None:
    tenant = make_tenant()
    _activity(tenant, 3)
    rows = list(
        AuditEntry.objects.dangerously_across_organizations().filter(organization_id=tenant.id).order_by("sequence")
    )
    since, until = rows[1].created_at, rows[2].created_at
    ranged = _lines(tenant.client().get("/v1/audit-log", {"since": since.isoformat(), "until": until.isoformat()}))
    assert [e["sequence"] for e in ranged] == [rows[1].sequence]
    later = _lines(tenant.client().get("/v1/audit-log", {"since": (timezone.now() + timedelta(days=1)).isoformat()}))
    assert later == []
    page = tenant.client().get("/v1/audit-log", {"limit": 2}).json()
    assert [e["sequence"] for e in page["results"]] == [1, 2] and page["next_cursor"]
    rest = tenant.client().get("/v1/audit-log", {"limit": 2, "cursor": page["next_cursor"]}).json()
    assert rest["results"][0]["sequence"] == 3
    resumed = tenant.client().get("/v1/audit-log", {"limit": 2, "after_sequence": 2}).json()
    assert resumed["results"][0]["sequence"] == 3
    bad = tenant.client().get("/v1/audit-log", {"since": until.isoformat(), "until": since.isoformat()})
    assert bad.status_code == 400


def test_another_organizations_key_exports_only_its_own_log() -> None:
    tenant, intruder = make_tenant(), make_tenant()
    _activity(tenant, 2)
    text = b"".join(intruder.client().get("/v1/audit-log").streaming_content).decode()
    assert str(tenant.id) not in text
    status = intruder.client().get("/v1/audit-log/verify").json()
    assert status["status"] == "intact"


def _tamper(entry: AuditEntry, *, action: str) -> None:
    """As the table owner, with the append-only trigger off for this transaction only."""
    with transaction.atomic(using="owner"), connections["owner"].cursor() as cursor:
        cursor.execute("ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_append_only")
        cursor.execute("UPDATE audit_entry SET action = %s WHERE id = %s", [action, entry.id])
        cursor.execute("ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_append_only")


def test_tampering_is_named_by_the_verify_command_and_endpoint() -> None:
    tenant, bystander = make_tenant(), make_tenant()
    _activity(tenant, 3)
    _activity(bystander, 1)
    call_command("audit_verify")
    assert tenant.client().get("/v1/audit-log/verify").json()["status"] == "intact"
    victim = AuditEntry.objects.dangerously_across_organizations().get(organization_id=tenant.id, sequence=2)
    _tamper(victim, action="subject.read")

    with pytest.raises(CommandError) as failed:
        call_command("audit_verify")
    message = str(failed.value)
    assert f"organization {tenant.id}: first broken link at entry 2 (id {victim.id}" in message
    assert str(bystander.id) not in message

    status = tenant.client().get("/v1/audit-log/verify").json()
    assert status["status"] == "broken"
    assert status["first_broken"]["sequence"] == 2 and status["first_broken"]["id"] == victim.id
    assert status["entries"] >= 4 and status["head_hash"]
    assert bystander.client().get("/v1/audit-log/verify").json()["status"] == "intact"


def test_the_application_role_still_cannot_change_the_log() -> None:
    tenant = make_tenant()
    _activity(tenant, 1)
    from django.db import DatabaseError

    from apps.tenancy.scope import organization_scope

    with pytest.raises(DatabaseError), organization_scope(tenant.id):
        AuditEntry.objects.filter(sequence=1).update(action="x")
