"""Erasing an organization: its objects, its graph and every row it owns go; its receipt and
its audit log stay; other organizations are untouched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connections
from django.test import override_settings

from apps.audit.models import AuditEntry
from apps.erasure.models import ErasureRequest
from apps.erasure.receipt import receipt_sha256
from apps.erasure.services import organization_erase
from apps.graph.adapter import graph_exists
from apps.tenancy.models import Organization
from tests.erasure.planting import plant, subject_counts
from tests.erasure.support import database_text, run_erasure, storage_text
from tests.factories import make_tenant


@pytest.fixture
def storage_root(tmp_path: Path) -> Iterator[Path]:
    with override_settings(OBJECT_STORAGE="filesystem", OBJECT_STORAGE_ROOT=tmp_path / "objects"):
        yield tmp_path / "objects"


def _rows_of(organization_id: object) -> dict[str, int]:
    counts = {}
    with connections["owner"].cursor() as cursor:
        cursor.execute(
            """SELECT c.table_name FROM information_schema.columns c
               WHERE c.table_schema = 'public' AND c.column_name = 'organization_id'"""
        )
        for (table,) in cursor.fetchall():
            cursor.execute(f'SELECT count(*) FROM "{table}" WHERE organization_id = %s', [organization_id])
            counts[table] = cursor.fetchone()[0]
    return counts


def test_organization_erasure_removes_everything_and_keeps_a_receipt(storage_root: Path) -> None:
    tenant, neighbour = make_tenant(), make_tenant()
    ana = plant(tenant, "ana")
    plant(tenant, "bob")
    eve = plant(neighbour, "eve")
    erased_subject = tenant.client().delete("/v1/subjects/bob").json()["erasure_request_id"]
    run_erasure(erased_subject)
    eve_before = subject_counts(eve.subject_id)
    graph_name = tenant.organization.graph_name
    planted_rows = _rows_of(tenant.id)

    request = organization_erase(organization_id=tenant.id)
    assert request.kind == ErasureRequest.Kind.ORGANIZATION and request.status == ErasureRequest.Status.COMPLETED
    assert request.receipt_sha256 == receipt_sha256(request.receipt)
    counts = request.counts
    assert counts["objects"] == 1 and counts["graph_vertices"] == 3 and counts["graph_edges"] == 2
    assert counts["tenancy_organization"] == 1 and counts["tenancy_subject"] == 1
    assert counts["memory_episodic_event"] == planted_rows["memory_episodic_event"]
    assert counts["erasure_request"] == 1  # bob's request; its receipt is folded into this one

    assert not Organization.objects.dangerously_across_organizations().filter(id=tenant.id).exists()
    assert not graph_exists(graph_name, using="owner")
    remaining = {table: n for table, n in _rows_of(tenant.id).items() if n}
    assert set(remaining) == {"audit_entry", "erasure_request"} and remaining["erasure_request"] == 1
    assert ana.canary not in database_text().lower() and ana.canary not in storage_text(storage_root)
    assert eve.canary in database_text().lower() and subject_counts(eve.subject_id) == eve_before
    audit = AuditEntry.objects.dangerously_across_organizations().filter(organization_id=tenant.id)
    assert audit.filter(action="erasure.organization.completed").get().target_ids == [
        str(request.id),
        f"receipt:sha256:{request.receipt_sha256}",
    ]
    call_command("audit_verify")
    # The organization's keys stopped working; a second call returns the same receipt.
    assert tenant.client().get("/v1/subjects").status_code == 401
    again = organization_erase(organization_id=tenant.id)
    assert again.id == request.id and again.receipt_sha256 == request.receipt_sha256
