"""Erasing a subject leaves no trace of it anywhere; everything else stays as it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings

from apps.erasure.models import ErasureRequest
from apps.erasure.receipt import receipt_sha256
from apps.memory.models import VaultEntry
from apps.memory.selectors import vault_value
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from apps.webhooks import services as webhook_services
from tests.erasure.planting import graph_counts, plant, subject_counts
from tests.erasure.support import database_text, erasure_request, redis_text, run_erasure, storage_text
from tests.factories import make_tenant


@pytest.fixture
def storage_root(tmp_path: Path) -> Iterator[Path]:
    """Object storage of this test's own, so a scan sees only what these tests wrote."""
    with override_settings(OBJECT_STORAGE="filesystem", OBJECT_STORAGE_ROOT=tmp_path / "objects"):
        yield tmp_path / "objects"


def _subscribe(tenant) -> None:  # type: ignore[no-untyped-def]
    """A webhook endpoint that receives memory text: events then hold the subject's content."""
    webhook_services.webhook_endpoint_create(
        organization_id=tenant.id,
        url="http://127.0.0.1:9/mirix",
        event_types=["*"],
        include_content_for=["memory.created"],
    )


def test_erasure_leaves_no_trace_and_touches_nothing_else(storage_root: Path) -> None:
    tenant, neighbour = make_tenant(), make_tenant()
    _subscribe(tenant)
    ana = plant(tenant, "ana")
    bob = plant(tenant, "bob")  # same organization, other subject
    eve = plant(neighbour, "ana")  # other organization, same external id
    planted = subject_counts(ana.subject_id)
    planted_graph = graph_counts(tenant, ana.subject_id)
    bob_before, eve_before = subject_counts(bob.subject_id), subject_counts(eve.subject_id)
    everything = database_text().lower()
    for sample in (ana, bob, eve):
        assert sample.canary in everything
    assert ana.canary in storage_text(storage_root)
    assert all(planted[store] > 0 for store in ("core", "episodic", "semantic", "procedural", "resource", "vault")), (
        planted
    )
    assert planted["ingestion_batches"] == 2 and planted["webhook_events"] > 0
    assert planted_graph == {"graph_vertices": 3, "graph_edges": 2}

    accepted = tenant.client().delete("/v1/subjects/ana")
    assert accepted.status_code == 202, accepted.content
    body = accepted.json()
    assert set(body) == {"erasure_request_id", "job_id", "status"} and body["status"] == "pending"

    done = run_erasure(body["erasure_request_id"])
    assert done.status == ErasureRequest.Status.COMPLETED

    # No trace: every table of every schema (the graph's included), the object store, Redis.
    everything = database_text().lower()
    assert ana.canary not in everything
    assert ana.password.lower() not in everything
    assert ana.canary not in storage_text(storage_root)
    assert ana.canary not in redis_text().lower()
    assert subject_counts(ana.subject_id) == dict.fromkeys(planted, 0)
    assert graph_counts(tenant, ana.subject_id) == {"graph_vertices": 0, "graph_edges": 0}
    assert not Subject.objects.dangerously_across_organizations().filter(id=ana.subject_id).exists()
    assert not VaultEntry.objects.dangerously_across_organizations().filter(subject_id=ana.subject_id).exists()

    # Ciphertext hides from a scan: decrypt every vault value left in the organization.
    with organization_scope(tenant.id):
        for entry in VaultEntry.objects.select_related("subject"):
            value = vault_value(subject=entry.subject, entry_id=entry.id)[1]
            assert ana.canary not in value.lower() and value != ana.password

    # Everyone else's data is intact, and still readable (their vault values decrypt).
    assert bob.canary in everything and eve.canary in everything
    assert subject_counts(bob.subject_id) == bob_before
    assert subject_counts(eve.subject_id) == eve_before
    for sample, owner in ((bob, tenant), (eve, neighbour)):
        with organization_scope(owner.id):
            subject = Subject.objects.get(id=sample.subject_id)
            values = {
                vault_value(subject=subject, entry_id=e.id)[1] for e in VaultEntry.objects.filter(subject=subject)
            }
        assert sample.password in values

    # The receipt: what was planted, per store; its hash over the canonical JSON; audited.
    receipt = tenant.client().get(f"/v1/erasure-requests/{done.id}").json()
    assert receipt["status"] == "completed"
    counts = receipt["counts"]
    for store, planted_count in planted.items():
        assert counts.get(store, 0) == planted_count, store
    assert counts["graph_vertices"] == 3 and counts["graph_edges"] == 2
    assert counts["objects"] == 1 and counts["subjects"] == 1
    assert receipt["receipt"]["counts"] == counts
    assert receipt["receipt_sha256"] == receipt_sha256(receipt["receipt"]) == done.receipt_sha256
    assert receipt["receipt"]["subject_id"] == str(ana.subject_id)
    with organization_scope(tenant.id):
        from apps.audit.models import AuditEntry

        completed = AuditEntry.objects.get(action="erasure.subject.completed")
    assert completed.target_ids == [str(done.id), f"receipt:sha256:{done.receipt_sha256}"]
    call_command("audit_verify")


def test_a_repeated_delete_returns_the_same_request(storage_root: Path) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    first = tenant.client().delete("/v1/subjects/ana")
    again = tenant.client().delete("/v1/subjects/ana")
    assert first.status_code == again.status_code == 202
    assert again.json() == first.json()
    run_erasure(first.json()["erasure_request_id"])
    # Erased: the tombstone (a keyed hash of the external id) still answers, with the receipt.
    after = tenant.client().delete("/v1/subjects/ana")
    assert after.status_code == 200
    assert after.json()["erasure_request_id"] == first.json()["erasure_request_id"]
    assert after.json()["status"] == "completed"
    assert tenant.client().get("/v1/subjects/ana").status_code == 404
    # The customer may create the subject again; it is a new subject.
    assert (
        tenant.client().post("/v1/subjects", {"external_id": "ana", "kind": "user"}, format="json").status_code == 201
    )
    fresh = tenant.client().delete("/v1/subjects/ana")
    assert fresh.status_code == 202 and fresh.json()["erasure_request_id"] != first.json()["erasure_request_id"]


def test_another_organizations_key_erases_nothing(storage_root: Path) -> None:
    tenant, intruder = make_tenant(), make_tenant()
    ana = plant(tenant, "ana")
    before = subject_counts(ana.subject_id)
    response = intruder.client().delete("/v1/subjects/ana")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert not ErasureRequest.objects.dangerously_across_organizations().exists()
    assert subject_counts(ana.subject_id) == before
    assert ana.canary in storage_text(storage_root)


def test_writes_are_refused_while_the_subject_is_being_erased(storage_root: Path) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    request_id = tenant.client().delete("/v1/subjects/ana").json()["erasure_request_id"]
    refused = tenant.client().post("/v1/subjects/ana/memories", {"text": "I like tea."}, format="json")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "erasure_in_progress"
    assert refused.json()["error"]["details"]["erasure_request_id"] == request_id
    consent = tenant.client().put("/v1/subjects/ana/consent", {"purposes": {"learn_skills": True}}, format="json")
    assert consent.status_code == 409
    assert erasure_request(request_id).status == ErasureRequest.Status.PENDING
