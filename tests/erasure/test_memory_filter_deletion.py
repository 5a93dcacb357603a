"""Deleting a subject's rows by filter: in the call up to 1,000 matches, by a job beyond."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from apps.audit.models import AuditEntry
from apps.memory.models import EpisodicEvent, SemanticItem, VaultEntry
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant
from tests.memory.conversation import SESSIONS
from tests.processes import celery_worker, purge_queues, wait_for

DELETE_MANY = "/v1/subjects/maya/memories/delete"


def _delete_key(tenant: Tenant) -> str:
    return tenant.issue_key(["memories:read", "memories:delete"])


def _write(tenant: Tenant, session: list[dict[str, str]], source: str) -> list[dict[str, Any]]:
    written = tenant.write("maya", {"messages": session, "metadata": {"source": source}}, index=True)
    return written["records"]  # type: ignore[no-any-return]


def _listed(tenant: Tenant) -> set[str]:
    page = tenant.client().get("/v1/subjects/maya/memories", {"include_superseded": "true", "limit": 200}).json()
    return {r["id"] for r in page["results"]}


def _facts(subject: Any, count: int, source: str, supersedes: SemanticItem | None = None) -> list[SemanticItem]:
    rows = [
        SemanticItem(
            organization_id=subject.organization_id,
            subject=subject,
            source_kind="api",
            chunk_id=uuid.uuid4(),
            name=f"fact {i}",
            summary=f"fact {i} of {source}",
            details="",
            source="test",
            metadata={"source": source},
            supersedes=supersedes,
        )
        for i in range(count)
    ]
    return SemanticItem.objects.bulk_create(rows)


def test_a_filter_deletes_only_its_matches_history_included_and_search_no_longer_finds_them() -> None:
    tenant = make_tenant()
    subject = tenant.subject("maya")
    imported = _write(tenant, SESSIONS[0], "import")
    kept = _write(tenant, SESSIONS[1], "chat")
    with organization_scope(tenant.id):
        (old,) = _facts(subject, 1, "import")
        (new,) = _facts(subject, 1, "import", supersedes=old)  # a chain: old is superseded
    vault = {r["id"] for r in imported if r["type"] == "vault"}
    assert vault, "the session stores a secret"
    gone = {r["id"] for r in imported if r["type"] != "vault"} | {str(old.id), str(new.id)}
    query = SESSIONS[0][0]["content"]
    assert gone & set(
        json.dumps(tenant.client().post("/v1/subjects/maya/search", {"query": query}, format="json").json()).split('"')
    )

    response = tenant.client(_delete_key(tenant)).post(
        DELETE_MANY, {"filters": {"metadata.source": "import"}}, format="json"
    )

    assert response.status_code == 200, response.content
    receipt = response.json()
    assert {r["id"] for r in receipt["deleted"]} >= gone
    assert str(old.id) in {r["id"] for r in receipt["deleted"]}  # superseded rows go too
    assert receipt["not_found"] == [] and len(receipt["receipt_sha256"]) == 64
    listed = _listed(tenant)
    assert not listed & gone and {r["id"] for r in kept} <= listed
    found = tenant.client().post("/v1/subjects/maya/search", {"query": query}, format="json")
    assert found.status_code == 200 and not gone & set(json.dumps(found.json()).split('"'))
    with organization_scope(tenant.id):
        # The vault is not in the filter language (as in the listing): its entries stay.
        assert {str(i) for i in VaultEntry.objects.filter(subject=subject).values_list("id", flat=True)} == vault
        entry = AuditEntry.objects.get(action="memory.delete")
        assert set(entry.target_ids) >= gone


def test_no_match_is_a_receipt_of_nothing_and_bad_bodies_are_400s() -> None:
    tenant = make_tenant()
    subject = tenant.subject("maya")
    with organization_scope(tenant.id):
        _facts(subject, 3, "chat")
    client = tenant.client(_delete_key(tenant))

    nothing = client.post(DELETE_MANY, {"filters": {"metadata.source": "import"}}, format="json")
    assert nothing.status_code == 200, nothing.content
    assert nothing.json()["deleted"] == [] and set(nothing.json()["counts"].values()) == {0}

    both = client.post(
        DELETE_MANY,
        {"ids": [{"type": "semantic", "id": str(uuid.uuid4())}], "filters": {"metadata.source": "chat"}},
        format="json",
    )
    neither = client.post(DELETE_MANY, {}, format="json")
    for response in (both, neither):
        assert response.status_code == 400, response.content
        message = json.dumps(response.json()["error"])
        assert "ids" in message and "filters" in message
    bad = client.post(DELETE_MANY, {"filters": {"metadata.source": {"near": "x"}}}, format="json")
    assert bad.status_code == 400 and "filters.metadata.source" in json.dumps(bad.json()["error"])
    vault = client.post(DELETE_MANY, {"filters": {"type": "vault"}}, format="json")
    assert vault.status_code == 400 and "filters.type" in json.dumps(vault.json()["error"])
    assert len(_listed(tenant)) == 3


def test_read_key_403_and_another_organization_404_and_nothing_changes() -> None:
    tenant, intruder = make_tenant(), make_tenant()
    subject = tenant.subject("maya")
    with organization_scope(tenant.id):
        _facts(subject, 2, "import")
    body = {"filters": {"metadata.source": "import"}}
    read = tenant.client(tenant.issue_key(["memories:read"])).post(DELETE_MANY, body, format="json")
    assert read.status_code == 403 and "memories:delete" in read.json()["error"]["message"]
    other = intruder.client().post(DELETE_MANY, body, format="json")
    assert other.status_code == 404 and other.json()["error"]["code"] == "not_found"
    intruder.subject("maya")  # its own subject of the same external id: nothing of the tenant's matches
    own = intruder.client().post(DELETE_MANY, body, format="json")
    assert own.status_code == 200 and own.json()["deleted"] == []
    assert len(_listed(tenant)) == 2


@pytest.mark.slow
def test_more_than_a_thousand_matches_are_deleted_by_a_job_in_batches() -> None:
    purge_queues()
    tenant = make_tenant()
    subject = tenant.subject("maya")
    with organization_scope(tenant.id):
        _facts(subject, 1500, "import")
        survivors = {str(r.id) for r in _facts(subject, 5, "chat")}
        EpisodicEvent.objects.filter(subject=subject).delete()

    response = tenant.client(_delete_key(tenant)).post(
        DELETE_MANY, {"filters": {"metadata.source": "import"}}, format="json"
    )

    assert response.status_code == 202, response.content
    job_id = response.json()["job"]["id"]
    assert response["Location"] == f"/v1/jobs/{job_id}"
    with celery_worker(queues=["maintenance"]):
        done = wait_for(
            lambda: (j := tenant.client().get(f"/v1/jobs/{job_id}").json())["status"] in ("succeeded", "failed") and j,
            timeout=180,
        )
    assert done["status"] == "succeeded", done
    assert done["result"]["deleted"] == 1500 and done["result"]["counts"]["semantic"] == 1500
    assert done["result"]["batches"] == 2 and len(done["result"]["receipt_sha256"]) == 2
    assert _listed(tenant) == survivors
    with organization_scope(tenant.id):
        assert SemanticItem.objects.filter(subject=subject, metadata__source="import").count() == 0
        batches = AuditEntry.objects.filter(action="memory.delete", actor__startswith="task:")
        assert sorted(len(e.target_ids) - 1 for e in batches) == [500, 1000]
