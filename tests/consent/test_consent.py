"""Consent: defaults, versioned history with actor and time, enforcement on every write path,
and withdrawal erasing what the purpose covered (through the erasure job)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from apps.consent.checks import ConsentRequired, consent_require
from apps.consent.purposes import LEARN_SKILLS, PURPOSES
from apps.erasure.models import ErasureRequest
from apps.memory import services as memory_services
from apps.memory.models import VaultEntry
from apps.tenancy.models import ApiKey, Subject
from apps.tenancy.scope import organization_scope
from tests.erasure.planting import graph_counts, plant, subject_counts
from tests.erasure.support import database_text, erasure_request, run_erasure, storage_text
from tests.factories import Tenant, make_tenant

CHAT = {"messages": [{"role": "user", "content": "Yesterday I hiked Mount Tam with Leo."}]}
SECRET_CHAT = {"messages": [{"role": "user", "content": "My password for the bank is Zq-88-Lumen!"}]}


@pytest.fixture(autouse=True)
def storage_root(tmp_path: Path) -> Iterator[Path]:
    with override_settings(OBJECT_STORAGE="filesystem", OBJECT_STORAGE_ROOT=tmp_path / "objects"):
        yield tmp_path / "objects"


def _put(tenant: Tenant, external_id: str, key: str | None = None, **purposes: bool):  # type: ignore[no-untyped-def]
    return tenant.client(key).put(f"/v1/subjects/{external_id}/consent", {"purposes": purposes}, format="json")


def _key_id(tenant: Tenant, key: str) -> str:
    lookup = key[len("mx_live_") :][:12]
    return str(ApiKey.objects.dangerously_across_organizations().get(lookup_id=lookup).id)


def test_a_new_subject_has_the_documented_defaults() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    body = tenant.client(tenant.issue_key(["memories:read"])).get("/v1/subjects/ana/consent").json()
    assert body["subject"] == "ana" and body["history"] == []
    states = {p["purpose"]: p for p in body["purposes"]}
    assert list(states) == list(PURPOSES)
    assert {name: s["granted"] for name, s in states.items()} == {
        "store_conversations": True,
        "store_sensitive_values": True,
        "learn_skills": False,
        "cross_domain_generalization": False,
    }
    assert all(s["is_default"] and s["version"] == 0 and s["changed_at"] is None for s in states.values())


def test_every_change_is_a_new_version_with_its_actor_and_time() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    first_key, second_key = tenant.issue_key(["memories:write"]), tenant.issue_key(["memories:write"])
    assert _put(tenant, "ana", first_key, learn_skills=True).status_code == 200
    assert _put(tenant, "ana", second_key, learn_skills=False, cross_domain_generalization=True).status_code == 200
    unchanged = _put(tenant, "ana", first_key, cross_domain_generalization=True)  # no change: no new version
    assert unchanged.status_code == 200 and unchanged.json()["erasure_request_id"] is None
    body = tenant.client().get("/v1/subjects/ana/consent").json()
    history = [(h["purpose"], h["version"], h["granted"], h["actor"]) for h in body["history"]]
    assert history == [
        ("learn_skills", 1, True, f"api_key:{_key_id(tenant, first_key)}"),
        ("learn_skills", 2, False, f"api_key:{_key_id(tenant, second_key)}"),
        ("cross_domain_generalization", 1, True, f"api_key:{_key_id(tenant, second_key)}"),
    ]
    times = [h["created_at"] for h in body["history"]]
    assert times == sorted(times) and all(times)
    states = {p["purpose"]: p for p in body["purposes"]}
    assert states["learn_skills"]["granted"] is False and states["learn_skills"]["version"] == 2
    assert states["learn_skills"]["changed_by"] == f"api_key:{_key_id(tenant, second_key)}"
    assert states["cross_domain_generalization"]["granted"] is True
    assert states["store_conversations"]["is_default"] is True
    with organization_scope(tenant.id):
        from apps.audit.models import AuditEntry

        assert AuditEntry.objects.filter(action="consent.update").count() == 3


def test_unknown_purposes_are_refused() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    response = _put(tenant, "ana", store_everything=True)
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"purposes": ["store_everything"]}


def _nothing_stored(tenant: Tenant, external_id: str, storage_root: Path) -> None:
    with organization_scope(tenant.id):
        from apps.tenancy.models import Subject

        subject_id = Subject.objects.get(external_id=external_id).id
    counts = subject_counts(subject_id)
    assert {k: v for k, v in counts.items() if k != "consent_records" and k != "jobs"} == dict.fromkeys(
        [k for k in counts if k not in ("consent_records", "jobs")], 0
    )
    assert counts["jobs"] == 0
    assert storage_text(storage_root) == ""


@pytest.mark.parametrize(
    "path,payload,kwargs",
    [
        ("memories", CHAT, {"format": "json"}),
        ("memories", {"text": "We moved to Lisbon in 2021."}, {"format": "json"}),
        ("memories/batch", {"chunks": [{"text": "We moved to Lisbon in 2021."}]}, {"format": "json"}),
        ("memories", {"file": "document"}, {"format": "multipart"}),
    ],
    ids=["chat", "text", "batch", "document"],
)
def test_writes_without_consent_are_refused_and_store_nothing(
    path: str,
    payload: dict,
    kwargs: dict,
    storage_root: Path,  # type: ignore[type-arg]
) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    assert _put(tenant, "ana", store_conversations=False).status_code == 200
    if "file" in payload:
        payload = {"file": SimpleUploadedFile("notes.txt", b"Repot the fern in spring.", "text/plain")}
    response = tenant.client().post(f"/v1/subjects/ana/{path}", payload, **kwargs)
    assert response.status_code == 403, response.content
    error = response.json()["error"]
    assert error["code"] == "consent_required"
    assert error["details"]["missing_purpose"] == "store_conversations"
    _nothing_stored(tenant, "ana", storage_root)


def _service_write(subject: Subject, write: str, content: str) -> None:
    """A memory write service called directly, as a worker or another app would."""
    message = {"role": "user", "content": content, "timestamp": datetime(2024, 3, 2, tzinfo=UTC).isoformat()}
    if write == "messages":
        memory_services.memory_write_messages(
            subject=subject, messages=memory_services.incoming_messages([message]), source_kind="chat"
        )
    elif write == "document":
        memory_services.memory_write_document(
            subject=subject, filename="notes.txt", content_type="text/plain", data=content.encode()
        )
    else:
        memory_services.memory_batch_create(
            subject=subject, chunks=[{"messages": [message], "source_kind": "chat", "session_id": ""}], session_id=""
        )


@pytest.mark.parametrize("write", ["messages", "document", "batch"])
@pytest.mark.parametrize(
    "withdrawn,content",
    [
        ("store_conversations", "We moved to Lisbon in 2021."),
        ("store_sensitive_values", SECRET_CHAT["messages"][0]["content"]),
    ],
)
def test_the_write_services_refuse_without_consent_and_store_nothing(
    write: str, withdrawn: str, content: str, storage_root: Path
) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    assert _put(tenant, "ana", **{withdrawn: False}).status_code == 200
    with pytest.raises(ConsentRequired) as refused, organization_scope(tenant.id):
        _service_write(Subject.objects.get(external_id="ana"), write, content)
    assert refused.value.details["missing_purpose"] == withdrawn
    _nothing_stored(tenant, "ana", storage_root)


@pytest.mark.parametrize("path", ["memories", "memories/batch", "document"])
def test_sensitive_values_need_their_own_consent(path: str, storage_root: Path) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    assert _put(tenant, "ana", store_sensitive_values=False).status_code == 200
    client = tenant.client()
    if path == "document":
        upload = SimpleUploadedFile("keys.txt", b"The api key is sk-live-4fG7hJ2kL9mN3pQ8", "text/plain")
        response = client.post("/v1/subjects/ana/memories", {"file": upload}, format="multipart")
    elif path == "memories/batch":
        response = client.post(f"/v1/subjects/ana/{path}", {"chunks": [SECRET_CHAT]}, format="json")
    else:
        response = client.post(f"/v1/subjects/ana/{path}", SECRET_CHAT, format="json")
    assert response.status_code == 403, response.content
    assert response.json()["error"]["details"]["missing_purpose"] == "store_sensitive_values"
    _nothing_stored(tenant, "ana", storage_root)
    # Without a sensitive value the same subject's writes go through.
    assert client.post("/v1/subjects/ana/memories", CHAT, format="json").status_code == 202


def test_withdrawing_store_conversations_erases_what_it_covered_and_keeps_the_vault(storage_root: Path) -> None:
    tenant = make_tenant()
    ana = plant(tenant, "ana")
    bob = plant(tenant, "bob")
    bob_before = subject_counts(bob.subject_id)
    planted = subject_counts(ana.subject_id)
    response = _put(tenant, "ana", store_conversations=False)
    assert response.status_code == 200
    body = response.json()
    assert body["erasure_request_id"] and body["job_id"]
    request = run_erasure(body["erasure_request_id"])
    assert request.kind == ErasureRequest.Kind.CONSENT_WITHDRAWAL and request.purposes == ["store_conversations"]
    assert request.status == ErasureRequest.Status.COMPLETED and request.receipt_sha256

    after = subject_counts(ana.subject_id)
    for store in ("core", "episodic", "semantic", "procedural", "resource", "webhook_events"):
        assert after[store] == 0, store
        assert request.counts[store] == planted[store], store
    assert request.counts["ingestion_batches"] == 1 and after["ingestion_batches"] == 1  # pending; done one kept
    assert after["anchor_vectors"] == 0
    assert graph_counts(tenant, ana.subject_id) == {"graph_vertices": 0, "graph_edges": 0}
    assert request.counts["objects"] == 1 and ana.canary not in storage_text(storage_root)
    # What other purposes cover stays: the vault, the consent history, the subject.
    assert after["vault"] == planted["vault"] > 0 and "vault" not in request.counts
    assert after["consent_records"] == planted["consent_records"] + 1
    assert tenant.client().get("/v1/subjects/ana").status_code == 200
    # The canary is left only in the provenance (session id) of the vault entries.
    remaining = [line for line in database_text().lower().splitlines() if ana.canary in line]
    assert remaining and all(line.startswith("public.memory_vault_entry:") for line in remaining)
    assert subject_counts(bob.subject_id) == bob_before
    # And nothing new can be stored until consent is granted again.
    refused = tenant.client().post("/v1/subjects/ana/memories", CHAT, format="json")
    assert refused.status_code == 403
    assert _put(tenant, "ana", store_conversations=True).status_code == 200
    assert tenant.client().post("/v1/subjects/ana/memories", CHAT, format="json").status_code == 202


def test_withdrawing_store_sensitive_values_erases_the_vault_only() -> None:
    tenant = make_tenant()
    ana = plant(tenant, "ana")
    planted = subject_counts(ana.subject_id)
    body = _put(tenant, "ana", store_sensitive_values=False).json()
    request = run_erasure(body["erasure_request_id"])
    after = subject_counts(ana.subject_id)
    assert after["vault"] == 0 and request.counts["vault"] == planted["vault"]
    assert not VaultEntry.objects.dangerously_across_organizations().filter(subject_id=ana.subject_id).exists()
    assert after["episodic"] == planted["episodic"] and after["resource"] == planted["resource"]
    # The pending batch is cancelled (it could hold secrets); the finished one holds no content.
    assert request.counts["ingestion_batches"] == 1 and after["ingestion_batches"] == 1


def test_granting_again_waits_for_the_withdrawal_erasure() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    withdrawn = _put(tenant, "ana", store_conversations=False).json()
    early = _put(tenant, "ana", store_conversations=True)
    assert early.status_code == 409
    assert early.json()["error"]["details"] == {
        "purpose": "store_conversations",
        "erasure_request_id": withdrawn["erasure_request_id"],
    }
    run_erasure(withdrawn["erasure_request_id"])
    assert erasure_request(withdrawn["erasure_request_id"]).status == ErasureRequest.Status.COMPLETED
    assert _put(tenant, "ana", store_conversations=True).status_code == 200


def test_consent_require_guards_later_capabilities() -> None:
    tenant = make_tenant()
    subject = tenant.subject("ana")
    with organization_scope(tenant.id):
        with pytest.raises(ConsentRequired) as refused:
            consent_require(subject=subject, purpose=LEARN_SKILLS)
    assert refused.value.details["missing_purpose"] == LEARN_SKILLS
    _put(tenant, "ana", learn_skills=True)
    with organization_scope(tenant.id):
        consent_require(subject=subject, purpose=LEARN_SKILLS)
        with pytest.raises(ValueError):
            consent_require(subject=subject, purpose="sell_data")


def test_another_organization_neither_reads_nor_changes_consent() -> None:
    tenant, intruder = make_tenant(), make_tenant()
    tenant.subject("ana")
    assert intruder.client().get("/v1/subjects/ana/consent").status_code == 404
    assert _put(intruder, "ana", store_conversations=False).status_code == 404
    assert tenant.client().get("/v1/subjects/ana/consent").json()["history"] == []
    assert not ErasureRequest.objects.dangerously_across_organizations().exists()


def test_a_withdrawal_waits_for_the_write_in_flight_and_later_writes_see_it() -> None:
    import threading

    from django.db import connection

    from apps.consent.checks import consent_check_memory_write

    tenant = make_tenant()
    subject = tenant.subject("ana")
    checked, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def write_in_flight() -> None:
        try:
            with organization_scope(tenant.id):
                consent_check_memory_write(subject=subject, texts=[CHAT["messages"][0]["content"]])
                checked.set()
                release.wait(timeout=30)  # e.g. the model calls of a write
        finally:
            connection.close()

    def withdraw() -> None:
        try:
            outcome["response"] = _put(tenant, "ana", store_conversations=False)
        finally:
            connection.close()

    writer = threading.Thread(target=write_in_flight)
    writer.start()
    assert checked.wait(timeout=30)
    withdrawer = threading.Thread(target=withdraw)
    withdrawer.start()
    withdrawer.join(timeout=1.5)
    assert withdrawer.is_alive()  # waiting for the write to commit
    release.set()
    writer.join(timeout=30)
    withdrawer.join(timeout=30)
    assert outcome["response"].status_code == 200  # type: ignore[attr-defined]
    refused = tenant.client().post("/v1/subjects/ana/memories", CHAT, format="json")
    assert refused.status_code == 403
