"""Deleting rows through the API: gone from their store, search, lists and the graph; a receipt,
an audit entry and a ``memory.deleted`` webhook; its own scope; nothing of another organization."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from apps.audit.models import AuditEntry
from apps.erasure.receipt import receipt_sha256
from apps.graph import adapter as graph
from apps.graph.models import AnchorFrame, AnchorRow
from apps.memory.models import EpisodicEvent, ResourceItem
from apps.resources.storage import storage
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant
from tests.memory.conversation import SESSIONS
from tests.webhooks.conftest import pipeline, receiver, webhook_queue  # noqa: F401  (fixtures)
from tests.webhooks.support import Pipeline, Receiver, make_endpoint

DELETE_MANY = "/v1/subjects/maya/memories/delete"


@pytest.fixture
def storage_root(tmp_path: Path) -> Iterator[Path]:
    with override_settings(OBJECT_STORAGE="filesystem", OBJECT_STORAGE_ROOT=tmp_path / "objects"):
        yield tmp_path / "objects"


def _history(tenant: Tenant) -> None:
    tenant.subject("maya")
    for session in SESSIONS:
        tenant.write("maya", {"messages": session}, index=True)


def _search(tenant: Tenant, query: str) -> dict[str, Any]:
    response = tenant.client().post("/v1/subjects/maya/search", {"query": query}, format="json")
    assert response.status_code == 200, response.content
    return response.json()  # type: ignore[no-any-return]


def _frames(tenant: Tenant) -> dict[str, list[str]]:
    """Every frame of the subject: its citations, by frame id (through the graph itself)."""
    with organization_scope(tenant.id):
        rows = graph.cypher(
            organization_id=tenant.id,
            query="MATCH (f:Frame) RETURN [f.frame_id, f.citations]",
            params={},
            returns=["f"],
        )
    return {frame_id: [str(c) for c in citations] for ((frame_id, citations),) in rows}


def _anchor_keys(tenant: Tenant) -> set[str]:
    with organization_scope(tenant.id):
        rows = graph.cypher(organization_id=tenant.id, query="MATCH (a:Anchor) RETURN a.key", params={}, returns=["k"])
    return {str(k) for (k,) in rows}


def _delete_key(tenant: Tenant) -> str:
    return tenant.issue_key(["memories:read", "memories:delete"])


def test_bulk_delete_removes_the_rows_from_lists_search_and_the_graph(pipeline: Pipeline, receiver: Receiver) -> None:  # noqa: F811
    tenant = make_tenant()
    _history(tenant)
    make_endpoint(tenant, receiver.url(), event_types=["memory.deleted"])
    buy = next(f for f in _search(tenant, "How many dresses did Maya buy?")["facts"] if f["predicate"] == "buy")
    cited = sorted(set(buy["citations"]))
    with organization_scope(tenant.id):
        types = {str(i): "episodic" for i in EpisodicEvent.objects.filter(id__in=cited).values_list("id", flat=True)}
    ids = [{"type": types.get(c, "semantic"), "id": c} for c in cited]
    frames_before, anchors_before = _frames(tenant), _anchor_keys(tenant)
    citing = {f for f, citations in frames_before.items() if set(citations) & set(cited)}
    left_empty = {f for f in citing if set(frames_before[f]) <= set(cited)}
    assert left_empty, "the buy frame cites only these rows"
    missing = {"type": "episodic", "id": str(uuid.uuid4())}

    response = tenant.client(_delete_key(tenant)).post(DELETE_MANY, {"ids": [*ids, missing]}, format="json")

    assert response.status_code == 200, response.content
    receipt = response.json()
    assert sorted(r["id"] for r in receipt["deleted"]) == cited
    assert receipt["not_found"] == [missing]
    assert receipt["counts"]["episodic"] + receipt["counts"]["semantic"] == len(cited)
    assert receipt["counts"]["graph_frames"] == len(left_empty)
    assert receipt["counts"]["anchor_rows"] > 0
    body = {k: v for k, v in receipt.items() if k != "receipt_sha256"}
    assert receipt["receipt_sha256"] == receipt_sha256(body)
    # Gone from reads, search and the graph; the frames that still cite other rows keep them.
    for row in ids:
        got = tenant.client().get(f"/v1/subjects/maya/memories/{row['type']}/{row['id']}")
        assert got.status_code == 404
    listed = tenant.client().get("/v1/subjects/maya/memories?type=episodic&limit=200").json()["results"]
    assert not {r["id"] for r in listed} & set(cited)
    after = _search(tenant, "How many dresses did Maya buy?")
    assert not {r["id"] for r in after["rows"]} & set(cited)
    assert not any(set(f["citations"]) & set(cited) for f in after["facts"])
    frames_after = _frames(tenant)
    assert not set(frames_after) & left_empty
    assert not any(set(c) & set(cited) for c in frames_after.values())
    for frame_id in citing - left_empty:
        assert frames_after[frame_id] == [c for c in frames_before[frame_id] if c not in cited]
    with organization_scope(tenant.id):
        assert not AnchorRow.objects.filter(row_id__in=cited).exists()
        assert not AnchorFrame.objects.filter(frame_id__in=left_empty).exists()
        # An anchor left with no mention and no frame went; every remaining anchor is mentioned.
        mentioned = set(AnchorRow.objects.values_list("anchor_key", flat=True))
        framed = set(AnchorFrame.objects.values_list("anchor_key", flat=True))
        entry = AuditEntry.objects.filter(action="memory.delete").get()
    assert _anchor_keys(tenant) <= mentioned | framed
    assert len(anchors_before - _anchor_keys(tenant)) == receipt["counts"]["graph_anchors"]
    assert set(cited) <= set(entry.target_ids)
    assert f"receipt:sha256:{receipt['receipt_sha256']}" in entry.target_ids
    # The webhook, delivered to the local receiver.
    pipeline.run_until(lambda: receiver.requests)
    message = json.loads(receiver.requests[0].body)
    assert message["type"] == "memory.deleted"
    assert sorted(r["id"] for r in message["data"]["records"]) == cited
    assert message["data"]["receipt_sha256"] == receipt["receipt_sha256"]


def test_single_delete_answers_a_receipt_and_an_unknown_row_is_a_404() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    written = tenant.client().post("/v1/subjects/maya/memories", {"messages": SESSIONS[0]}, format="json").json()
    row = next(r for r in written["records"] if r["type"] == "episodic")
    client = tenant.client(_delete_key(tenant))

    deleted = client.delete(f"/v1/subjects/maya/memories/episodic/{row['id']}")
    assert deleted.status_code == 200, deleted.content
    assert deleted.json()["deleted"] == [{"type": "episodic", "id": row["id"]}]
    assert deleted.json()["counts"]["episodic"] == 1

    again = client.delete(f"/v1/subjects/maya/memories/episodic/{row['id']}")
    assert again.status_code == 404 and again.json()["error"]["code"] == "not_found"
    bad_type = client.delete(f"/v1/subjects/maya/memories/widgets/{row['id']}")
    assert bad_type.status_code == 400 and "type must be one of" in bad_type.json()["error"]["message"]


def test_deleting_the_newest_value_makes_the_previous_one_current_again() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    client = tenant.client()
    written = client.post("/v1/subjects/maya/memories", {"messages": SESSIONS[0]}, format="json").json()
    first = next(r for r in written["records"] if r["type"] == "episodic")["id"]
    url = "/v1/subjects/maya/memories/episodic/{}"
    second = client.patch(url.format(first), {"changes": {"summary": "v2"}}, format="json").json()["id"]
    third = client.patch(url.format(second), {"changes": {"summary": "v3"}}, format="json").json()["id"]
    assert client.get(url.format(first)).json()["current"] is False
    deleter = tenant.client(_delete_key(tenant))

    # The middle of the chain: the newest value now supersedes the oldest.
    middle = deleter.delete(url.format(second)).json()
    assert middle["relinked"] == [{"type": "episodic", "id": third, "supersedes": first}]
    history = [r["id"] for r in client.get(url.format(third) + "/history").json()["results"]]
    assert sorted(history) == sorted([first, third])
    assert client.get(url.format(third)).json()["current"] is True
    # The newest: the oldest is current again, and listed as such.
    deleter.delete(url.format(third))
    assert client.get(url.format(first)).json()["current"] is True
    listed = client.get("/v1/subjects/maya/memories?type=episodic").json()["results"]
    assert first in {r["id"] for r in listed}


def test_a_document_goes_with_its_passages_and_its_stored_bytes(storage_root: Path) -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    upload = SimpleUploadedFile("notes.txt", b"Repotting: water the fern first, then move it to a bigger pot.")
    written = tenant.client().post("/v1/subjects/maya/memories", {"file": upload}, format="multipart")
    assert written.status_code == 202, written.content
    resource_id = next(r["id"] for r in written.json()["records"] if r["type"] == "resource")
    with organization_scope(tenant.id):
        key = ResourceItem.objects.get(id=resource_id).object_key
        passages = {str(i) for i in EpisodicEvent.objects.filter(resource_id=resource_id).values_list("id", flat=True)}
    assert storage().exists(key)

    response = tenant.client(_delete_key(tenant)).post(
        DELETE_MANY, {"ids": [{"type": "resource", "id": resource_id}]}, format="json"
    )

    assert response.status_code == 200, response.content
    receipt = response.json()
    assert receipt["counts"]["resource"] == 1 and receipt["counts"]["objects"] == 1
    assert {r["id"] for r in receipt["deleted"]} == {resource_id, *passages}
    assert not storage().exists(key)
    with organization_scope(tenant.id):
        assert not EpisodicEvent.objects.filter(resource_id=resource_id).exists()
    assert tenant.client().get(f"/v1/subjects/maya/resources/{resource_id}/content").status_code == 404


def test_more_than_a_thousand_rows_is_a_400_that_says_to_page() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    ids = [{"type": "episodic", "id": str(uuid.uuid4())} for _ in range(1001)]
    response = tenant.client(_delete_key(tenant)).post(DELETE_MANY, {"ids": ids}, format="json")
    assert response.status_code == 400
    assert "At most 1000 rows per call" in response.json()["error"]["message"]
    assert "pages" in response.json()["error"]["message"]


def test_read_and_write_keys_get_403_and_another_organization_404_and_nothing_changes() -> None:
    tenant, intruder = make_tenant(), make_tenant()
    tenant.subject("maya")
    written = tenant.client().post("/v1/subjects/maya/memories", {"messages": SESSIONS[0]}, format="json").json()
    row = next(r for r in written["records"] if r["type"] == "episodic")
    single = f"/v1/subjects/maya/memories/episodic/{row['id']}"
    body = {"ids": [{"type": "episodic", "id": row["id"]}]}
    for scopes in (["memories:read"], ["memories:write"], ["memories:read", "memories:write", "admin"]):
        client = tenant.client(tenant.issue_key(scopes))
        for response in (client.delete(single), client.post(DELETE_MANY, body, format="json")):
            assert response.status_code == 403, (scopes, response.content)
            assert "memories:delete" in response.json()["error"]["message"]
    for response in (intruder.client().delete(single), intruder.client().post(DELETE_MANY, body, format="json")):
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    intruder.subject("maya")  # the same external id in the other organization: its own subject
    assert intruder.client().delete(single).status_code == 404
    own = intruder.client().post(DELETE_MANY, body, format="json")
    assert own.status_code == 200 and own.json()["deleted"] == [] and own.json()["not_found"] == body["ids"]
    assert tenant.client().get(single).status_code == 200
    with organization_scope(tenant.id):
        assert not AuditEntry.objects.filter(action="memory.delete").exists()
