"""Metadata through the API: on every write route, on every row the write produced, on every
read, in the export; limits refused with nothing written; filters on the listing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from apps.memory.metadata import MAX_BYTES, MAX_KEYS
from apps.memory.models import STORES
from apps.memory.services import memory_batch_step
from apps.tenancy.scope import organization_scope
from tests.erasure.support import run_erasure
from tests.factories import Tenant, make_tenant, written_answer
from tests.memory.conversation import SESSIONS

TAGS = {"project": "apollo", "priority": 2, "urgent": True, "owner": None, "tags": ["travel", "work"]}


def _row_count(tenant: Tenant) -> int:
    with organization_scope(tenant.id):
        return sum(model.objects.count() for model in STORES.values())


def _stored_metadata(tenant: Tenant, records: list[dict[str, str]]) -> list[Any]:
    """The metadata column of each written row, read from its store."""
    with organization_scope(tenant.id):
        return [STORES[r["type"]].objects.get(id=r["id"]).metadata for r in records]


def _read_back(client: APIClient, records: list[dict[str, str]]) -> list[Any]:
    """Each written row's metadata as the API returns it (GET of the row; the vault's list)."""
    found = []
    vault = {e["id"]: e for e in client.get("/v1/subjects/maya/vault").json()["results"]}
    for record in records:
        if record["type"] == "vault":
            found.append(vault[record["id"]]["metadata"])
            continue
        response = client.get(f"/v1/subjects/maya/memories/{record['type']}/{record['id']}")
        assert response.status_code == 200, response.content
        found.append(response.json()["metadata"])
    return found


def test_messages_text_and_document_writes_tag_every_row_they_produce_and_reads_return_it() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    client = tenant.client()
    records = tenant.write("maya", {"messages": SESSIONS[0], "metadata": TAGS})["records"]
    assert {"episodic", "vault"} <= {r["type"] for r in records}  # the password went to the vault, tagged too
    assert _stored_metadata(tenant, records) == [TAGS] * len(records)
    assert _read_back(client, records) == [TAGS] * len(records)

    text = tenant.write("maya", {"text": "I moved to Porto in May.", "metadata": {"k": 1}})
    assert _read_back(client, text["records"]) == [{"k": 1}] * len(text["records"])

    upload = SimpleUploadedFile("notes.md", b"# Trip\n\nWe fly to Lisbon on 22 July.\n", content_type="text/markdown")
    document = client.post(
        "/v1/subjects/maya/memories", {"file": upload, "metadata": json.dumps({"source": "drive"})}, format="multipart"
    )
    assert document.status_code == 202, document.content
    records = written_answer(tenant.id, document.json())["records"]
    assert {"resource", "episodic"} <= {r["type"] for r in records}
    assert _read_back(client, records) == [{"source": "drive"}] * len(records)

    listed = client.get("/v1/subjects/maya/memories", {"type": "episodic", "limit": 200}).json()["results"]
    assert {json.dumps(r["metadata"], sort_keys=True) for r in listed} == {
        json.dumps(m, sort_keys=True) for m in (TAGS, {"k": 1}, {"source": "drive"})
    }
    # A write without metadata stores an empty object.
    bare = tenant.write("maya", {"text": "I like green tea."})
    assert _stored_metadata(tenant, bare["records"]) == [{}] * len(bare["records"])


def test_a_batch_tags_each_chunks_rows_with_its_own_metadata_or_the_batchs() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    body = {
        "metadata": {"import": "nightly"},
        "chunks": [
            {"messages": SESSIONS[1], "metadata": {"import": "chunk", "n": 1}},
            {"messages": SESSIONS[2]},
        ],
    }
    accepted = tenant.client().post("/v1/subjects/maya/memories/batch", body, format="json")
    assert accepted.status_code == 202, accepted.content
    with organization_scope(tenant.id):  # the step the batch task runs, chunk by chunk
        first = memory_batch_step(batch_id=accepted.json()["batch_id"])
        second = memory_batch_step(batch_id=accepted.json()["batch_id"])
    assert second.finished and first.chunk_id and second.chunk_id
    with organization_scope(tenant.id):
        for chunk_id, expected in (
            (first.chunk_id, {"import": "chunk", "n": 1}),
            (second.chunk_id, {"import": "nightly"}),
        ):
            tags = [row.metadata for model in STORES.values() for row in model.objects.filter(chunk_id=chunk_id)]
            assert tags and all(t == expected for t in tags)


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        ({f"k{i}": i for i in range(MAX_KEYS + 1)}, f"at most {MAX_KEYS} are accepted"),
        ({"blob": "x" * MAX_BYTES}, f"at most {MAX_BYTES} are accepted"),
        ({"nested": {"a": 1}}, "a value is a string, number, boolean, null or a list of those"),
        ({"deep": [[1]]}, "a list nested in a list"),
        ("project=apollo", "must be a JSON object"),
    ],
)
def test_metadata_over_its_limits_or_of_the_wrong_shape_is_a_400_and_nothing_is_written(
    metadata: Any, says: str
) -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    client = tenant.client()
    before = _row_count(tenant)
    for path, body in (
        ("/v1/subjects/maya/memories", {"text": "I moved to Porto.", "metadata": metadata}),
        ("/v1/subjects/maya/memories/batch", {"chunks": [{"text": "I moved to Porto.", "metadata": metadata}]}),
        ("/v1/subjects/maya/memories/batch", {"chunks": [{"text": "I moved to Porto."}], "metadata": metadata}),
    ):
        response = client.post(path, body, format="json")
        assert response.status_code == 400, response.content
        assert says in json.dumps(response.json()["error"]["details"]), response.json()
    upload = SimpleUploadedFile("a.txt", b"Porto notes.", content_type="text/plain")
    document = client.post(
        "/v1/subjects/maya/memories",
        {"file": upload, "metadata": json.dumps(metadata) if not isinstance(metadata, str) else metadata},
        format="multipart",
    )
    assert document.status_code == 400, document.content
    assert _row_count(tenant) == before


def test_another_organizations_key_cannot_filter_the_subject_or_tag_its_rows() -> None:
    owner, other = make_tenant(), make_tenant()
    owner.subject("maya")
    before = _row_count(owner)
    intruder = other.client()
    listing = intruder.get(
        "/v1/subjects/maya/memories", {"type": "episodic", "filters": '{"metadata.project": "apollo"}'}
    )
    search = intruder.post(
        "/v1/subjects/maya/search", {"query": "moved", "filters": {"type": "episodic"}}, format="json"
    )
    assert [r.status_code for r in (listing, search)] == [404, 404]
    # A write names a subject of the writer's own organization (created on first write):
    # whatever it answers, the owner's subject gets no row and no tag.
    intruder.post("/v1/subjects/maya/memories", {"text": "I moved.", "metadata": TAGS}, format="json")
    intruder.post("/v1/subjects/maya/memories/batch", {"chunks": [{"text": "x"}], "metadata": TAGS}, format="json")
    assert _row_count(owner) == before
    with organization_scope(owner.id):
        assert not any(model.objects.filter(metadata__project="apollo").exists() for model in STORES.values())


def test_the_subject_export_holds_each_rows_metadata_and_erasure_takes_it() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    client = tenant.client()
    ids = {r["id"] for r in tenant.write("maya", {"messages": SESSIONS[0], "metadata": TAGS})["records"]}
    export = client.get("/v1/subjects/maya/export")
    assert export.status_code == 200, export.content
    data = export.json()
    exported = [row for rows in data["memories"].values() for row in rows] + data["vault"]
    assert ids <= {row["id"] for row in exported}
    assert all(row["metadata"] == TAGS for row in exported if row["id"] in ids)

    erased = client.delete("/v1/subjects/maya")
    assert erased.status_code == 202, erased.content
    assert run_erasure(erased.json()["erasure_request_id"]).status == "completed"
    with organization_scope(tenant.id):
        assert not any(model.objects.filter(metadata__project="apollo").exists() for model in STORES.values())
