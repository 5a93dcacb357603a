"""Subject export: everything stored about the subject, machine-readable; secrets only for a
key with vault:read, and every value read audited."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import override_settings

from apps.audit.models import AuditEntry
from apps.memory.models import STORES
from tests.erasure.planting import plant, subject_counts
from tests.factories import make_tenant


@pytest.fixture(autouse=True)
def _own_storage(tmp_path: Path) -> Iterator[None]:
    with override_settings(OBJECT_STORAGE="filesystem", OBJECT_STORAGE_ROOT=tmp_path / "objects"):
        yield


def test_export_holds_everything_about_the_subject_and_nothing_else() -> None:
    tenant = make_tenant()
    ana = plant(tenant, "ana")
    bob = plant(tenant, "bob")
    counts = subject_counts(ana.subject_id)
    response = tenant.client(tenant.issue_key(["admin"])).get("/v1/subjects/ana/export")
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    export = response.json()
    text = json.dumps(export)
    assert bob.canary not in text

    assert export["format"] == "mirix.subject-export/1" and export["includes_secrets"] is False
    assert export["subject"]["external_id"] == "ana" and export["subject"]["id"] == str(ana.subject_id)
    for store, rows in export["memories"].items():
        assert len(rows) == counts[store], store  # superseded rows included
    assert set(export["memories"]) == set(STORES) - {"vault"}
    assert any(row["supersedes_id"] for row in export["memories"]["episodic"])
    assert all("embedding" not in row and "search_vector" not in row for row in export["memories"]["episodic"])
    assert "content_base64" not in export["memories"]["resource"][0]
    # Without vault:read: captions, never values.
    assert len(export["vault"]) == counts["vault"]
    assert all("value" not in entry and "ciphertext" not in entry for entry in export["vault"])
    assert ana.password not in text and {entry["caption"] for entry in export["vault"]} >= {"password"}
    # The graph, every row referencing the subject, the audit entries about the subject.
    assert len(export["graph"]["vertices"]) == 3 and len(export["graph"]["edges"]) == 2
    records = export["records"]
    assert len(records["consent_records"]) == 1 and records["consent_records"][0]["purpose"] == "learn_skills"
    assert len(records["jobs"]) == counts["jobs"] and len(records["ingestion_batches"]) == 2
    assert {e["action"] for e in export["audit_entries"]} >= {"memory.write", "memory.batch", "consent.update"}
    assert all(e["subject_id"] == str(ana.subject_id) for e in export["audit_entries"])
    assert export["erasure_requests"] == []

    exported = AuditEntry.objects.dangerously_across_organizations().get(action="subject.export")
    assert exported.subject_id == ana.subject_id and exported.target_ids == []


def test_export_with_vault_read_holds_the_values_and_audits_each_read() -> None:
    tenant = make_tenant()
    ana = plant(tenant, "ana")
    export = tenant.client(tenant.issue_key(["admin", "vault:read"])).get("/v1/subjects/ana/export").json()
    assert export["includes_secrets"] is True
    values = {entry["value"] for entry in export["vault"]}
    assert ana.password in values
    document = base64.b64decode(export["memories"]["resource"][0]["content_base64"]).decode()
    assert ana.canary in document and "Shed-42!" in document
    exported = AuditEntry.objects.dangerously_across_organizations().get(action="subject.export")
    assert sorted(exported.target_ids) == sorted(entry["id"] for entry in export["vault"])


def test_export_of_another_organizations_subject_is_not_found() -> None:
    tenant, intruder = make_tenant(), make_tenant()
    tenant.subject("ana")
    response = intruder.client().get("/v1/subjects/ana/export")
    assert response.status_code == 404
