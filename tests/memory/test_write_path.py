"""The write path end to end through the API with the local providers."""

from __future__ import annotations

import logging
from datetime import datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections

from apps.memory.models import EpisodicEvent, SemanticItem, VaultEntry
from apps.memory.selectors import chunk_records
from apps.providers.interfaces import MeteringContext
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, complete_writes, make_tenant
from tests.memory.conversation import SECRET_PASSWORD, SESSIONS


def _write_sessions(tenant: Tenant, external_id: str = "maya") -> list[dict]:  # type: ignore[type-arg]
    tenant.subject(external_id)
    results = []
    for number, session in enumerate(SESSIONS, start=1):
        results.append(tenant.write(external_id, {"messages": session, "session_id": f"session-{number}"}))
    return results


def _all_rows_as_text() -> str:
    """Every row of every table in the database (as the owner), as one string."""
    chunks = []
    with connections["owner"].cursor() as cursor:
        cursor.execute(
            "SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        )
        for schema, table in cursor.fetchall():
            cursor.execute(f'SELECT t::text FROM "{schema}"."{table}" t')
            chunks += [row[0] for row in cursor.fetchall()]
    return "\n".join(chunks)


def test_conversation_lands_in_the_right_stores_with_event_and_mention_time() -> None:
    tenant = make_tenant()
    results = _write_sessions(tenant)
    assert "episodic" in results[0]["routed_types"]
    client = tenant.client()
    episodic = client.get("/v1/subjects/maya/memories?type=episodic&limit=200").json()["results"]
    by_message = {tuple(e["provenance"]["source_message_ids"]): e["content"] for e in episodic}

    race = by_message[("s1:1",)]
    assert race["event_time"].startswith("2023-05-07") and race["event_time_precision"] == "day"
    assert race["mention_time"].startswith("2023-05-08T18:02")
    assert "1 hour 42 minutes" in race["details"] and "Tom" in race["details"]
    assert race["status"] == "done"

    wedding = by_message[("s2:1",)]
    assert wedding["status"] == "planned"
    assert wedding["event_time"].startswith("2023-07")  # the planned date, not the mention date
    assert wedding["mention_time"].startswith("2023-06-14")

    dresses = by_message[("s2:2",)]
    assert "$240" in dresses["details"] and "3" in dresses["details"]
    assert dresses["event_time"].startswith("2023-06-10")  # last Saturday before 2023-06-14

    sessions = {e["provenance"]["session_id"] for e in episodic}
    assert {"session-1", "session-2"} <= sessions

    procedural = client.get("/v1/subjects/maya/memories?type=procedural").json()["results"]
    assert len(procedural) == 1
    steps = procedural[0]["content"]["steps"]
    assert len(steps) == 3 and "100 grams" in steps[0] and "16 hours" in steps[1]

    core = client.get("/v1/subjects/maya/core").json()["results"]
    assert any("pediatric nurse" in block["content"]["value"] for block in core)


def test_a_password_lands_only_in_the_vault_encrypted(caplog: pytest.LogCaptureFixture) -> None:
    tenant = make_tenant()
    with caplog.at_level(logging.DEBUG):
        _write_sessions(tenant)
    with organization_scope(tenant.id):
        vault = list(VaultEntry.objects.all())
    assert [(v.entry_type, v.source_message_ids) for v in vault] == [("credential", ["s1:3"])]
    assert SECRET_PASSWORD.encode() not in bytes(vault[0].ciphertext)
    # Nowhere in the database in clear: not in any store, job, audit entry or graph.
    assert SECRET_PASSWORD not in _all_rows_as_text()
    assert SECRET_PASSWORD not in caplog.text
    # The other stores keep a placeholder where the value was.
    with organization_scope(tenant.id):
        texts = [e.details for e in EpisodicEvent.objects.all()] + [s.details for s in SemanticItem.objects.all()]
    assert any("[vault:credential#1]" in t for t in texts)
    # Only vault:read reads it back, and the read is audited.
    reader = tenant.issue_key(["vault:read"])
    listed = tenant.client(reader).get("/v1/subjects/maya/vault").json()["results"]
    assert listed[0]["caption"] and "value" not in listed[0]
    entry = tenant.client(reader).get(f"/v1/subjects/maya/vault/{vault[0].id}").json()
    assert entry["value"] == SECRET_PASSWORD
    from apps.audit.models import AuditEntry

    with organization_scope(tenant.id):
        assert AuditEntry.objects.filter(action="vault.read", target_ids__contains=[str(vault[0].id)]).count() == 1
    no_vault_scope = tenant.issue_key(["memories:read"])
    assert tenant.client(no_vault_scope).get(f"/v1/subjects/maya/vault/{vault[0].id}").status_code == 403


def test_write_returns_ids_and_an_indexing_job_published_after_commit() -> None:
    tenant = make_tenant()
    result = _write_sessions(tenant)[0]
    assert result["job_id"]
    job = tenant.client().get(f"/v1/jobs/{result['job_id']}").json()
    # Completed by the worker (here in process), so the job is at its indexing (ADR 0031, 0054).
    assert job["kind"] == "memory.write" and job["status"] == "indexing"
    for record in result["records"]:
        if record["type"] == "vault":
            continue
        got = tenant.client().get(f"/v1/subjects/maya/memories/{record['type']}/{record['id']}")
        assert got.status_code == 200 and got.json()["provenance"]["chunk_id"] == result["chunk_id"]


def test_updates_append_a_superseding_row_and_keep_history() -> None:
    tenant = make_tenant()
    _write_sessions(tenant)
    client = tenant.client()
    original = client.get("/v1/subjects/maya/memories?type=episodic").json()["results"][0]
    first = client.patch(
        f"/v1/subjects/maya/memories/episodic/{original['id']}",
        {"changes": {"summary": "Maya ran Bay to Breakers with Tom."}},
        format="json",
    )
    assert first.status_code == 200 and first.json()["supersedes"] == original["id"]
    # The old row is unchanged and still readable.
    again = client.get(f"/v1/subjects/maya/memories/episodic/{original['id']}").json()
    assert again["content"] == original["content"]
    second = client.patch(
        f"/v1/subjects/maya/memories/episodic/{first.json()['id']}", {"changes": {"status": "done"}}, format="json"
    )
    history = client.get(f"/v1/subjects/maya/memories/episodic/{original['id']}/history").json()["results"]
    assert [h["id"] for h in history] == [second.json()["id"], first.json()["id"], original["id"]]
    # Listing shows current rows only, unless asked.
    current = {r["id"] for r in client.get("/v1/subjects/maya/memories?type=episodic&limit=200").json()["results"]}
    assert original["id"] not in current and second.json()["id"] in current
    everything = client.get("/v1/subjects/maya/memories?type=episodic&include_superseded=true&limit=200").json()
    assert original["id"] in {r["id"] for r in everything["results"]}
    # A superseded row cannot be updated again (no forks), and unknown fields are refused.
    stale = client.patch(
        f"/v1/subjects/maya/memories/episodic/{original['id']}", {"changes": {"summary": "x"}}, format="json"
    )
    assert stale.status_code == 409
    bad = client.patch(
        f"/v1/subjects/maya/memories/episodic/{second.json()['id']}", {"changes": {"mention_time": "x"}}, format="json"
    )
    assert bad.status_code == 400 and "Updatable fields" in bad.json()["error"]["message"]


def test_the_application_role_cannot_rewrite_evidence() -> None:
    import os

    import psycopg

    tenant = make_tenant()
    _write_sessions(tenant)
    with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
        conn.execute("SELECT set_config('app.organization_id', %s, true)", (str(tenant.id),))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE memory_episodic_event SET summary = 'rewritten'")
        conn.rollback()
        conn.execute("SELECT set_config('app.organization_id', %s, true)", (str(tenant.id),))
        assert conn.execute("UPDATE memory_episodic_event SET index_status = 'pending'").rowcount > 0


def test_document_upload_becomes_a_resource_in_object_storage() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    body = b"Garden journal\nThe tomatoes need 2 litres of water a day. Gate code: my password is Sunfl0wer-88!\n"
    response = tenant.client().post(
        "/v1/subjects/maya/memories",
        {"file": SimpleUploadedFile("garden.txt", body, "text/plain"), "title": "Garden journal"},
        format="multipart",
    )
    assert response.status_code == 202, response.content
    records = {r["type"]: r["id"] for r in response.json()["records"]}
    complete_writes(tenant.id)
    resource = tenant.client().get(f"/v1/subjects/maya/memories/resource/{records['resource']}").json()
    assert resource["content"]["title"] == "Garden journal" and resource["content"]["size_bytes"] == len(body)
    assert "Sunfl0wer-88!" not in resource["content"]["extracted_text"]
    assert "vault" in records
    content = tenant.client().get(f"/v1/subjects/maya/resources/{records['resource']}/content")
    assert content.status_code == 200 and content.content == body
    hits = (
        tenant.client()
        .post("/v1/subjects/maya/memories/resource/search", {"query": "how much water for tomatoes"}, format="json")
        .json()["results"]
    )
    assert hits[0]["record"]["id"] == records["resource"] and hits[0]["keyword_rank"] == 1


def test_procedural_search_ranks_by_meaning_and_words() -> None:
    tenant = make_tenant()
    _write_sessions(tenant)
    hits = tenant.client().post(
        "/v1/subjects/maya/memories/procedural/search", {"query": "cold brew coffee recipe"}, format="json"
    )
    assert hits.status_code == 200
    assert hits.json()["results"][0]["record"]["content"]["title"]
    assert hits.json()["results"][0]["vector_rank"] == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "exactly one of"),
        ({"messages": []}, "exactly one of"),
        ({"messages": [{"role": "user", "content": ""}]}, "content"),
        ({"messages": [{"role": "robot", "content": "hi"}]}, "role"),
        ({"messages": [{"role": "user", "content": "hi", "timestamp": "yesterday-ish"}]}, "timestamp"),
        ({"messages": [{"role": "user", "content": "x" * 100_001}]}, "content"),
        ({"messages": [{"role": "user", "content": "hi"}] * 201}, "messages"),
        ({"text": "hi", "messages": [{"role": "user", "content": "hi"}]}, "exactly one of"),
    ],
)
def test_bad_input_is_a_clear_400_and_writes_nothing(body: dict, message: str) -> None:  # type: ignore[type-arg]
    tenant = make_tenant()
    tenant.subject("maya")
    response = tenant.client().post("/v1/subjects/maya/memories", body, format="json")
    assert response.status_code == 400, response.content
    assert message in str(response.json()["error"]), response.json()
    with organization_scope(tenant.id):
        assert not EpisodicEvent.objects.exists() and not VaultEntry.objects.exists()


def test_unsupported_and_oversized_documents_are_refused() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    client = tenant.client()
    image = client.post(
        "/v1/subjects/maya/memories", {"file": SimpleUploadedFile("x.png", b"\x89PNG", "image/png")}, format="multipart"
    )
    assert image.status_code == 400 and "Unsupported document type" in image.json()["error"]["message"]
    binary = client.post(
        "/v1/subjects/maya/memories",
        {"file": SimpleUploadedFile("x.txt", b"\xff\xfe\x00", "text/plain")},
        format="multipart",
    )
    assert binary.status_code == 400 and "UTF-8" in binary.json()["error"]["message"]
    huge = client.post("/v1/subjects/maya/memories", {"text": "x" * (11 * 1024 * 1024)}, format="json")
    assert huge.status_code in (400, 413)
    # An unknown subject is created by its first write unless the organization turned that
    # off (tests/tenancy/test_subjects_on_first_write.py); off, the write is a 404.
    client.patch("/v1/organization", {"subjects_created_on_write": False}, format="json")
    unknown = client.post("/v1/subjects/nobody/memories", {"text": "hello"}, format="json")
    assert unknown.status_code == 404


def test_list_filters_by_time_and_session_and_pages() -> None:
    tenant = make_tenant()
    _write_sessions(tenant)
    client = tenant.client()
    july = client.get(
        "/v1/subjects/maya/memories?type=episodic&event_after=2023-07-01T00:00:00Z&event_before=2023-08-01T00:00:00Z"
    )
    assert [e["provenance"]["source_message_ids"] for e in july.json()["results"]] == [["s2:1"]]
    session = client.get("/v1/subjects/maya/memories?type=episodic&session_id=session-3").json()["results"]
    assert {e["provenance"]["session_id"] for e in session} == {"session-3"}
    seen, url = [], "/v1/subjects/maya/memories?type=episodic&limit=2"
    while url:
        page = client.get(url).json()
        seen += [r["id"] for r in page["results"]]
        url = page["next_cursor"] and f"/v1/subjects/maya/memories?type=episodic&limit=2&cursor={page['next_cursor']}"
    assert len(seen) == len(set(seen)) >= 5
    assert client.get("/v1/subjects/maya/memories?type=vault").status_code == 400
    assert client.get("/v1/subjects/maya/memories?type=semantic&event_after=2023-01-01T00:00:00Z").status_code == 400
    assert datetime.fromisoformat(july.json()["results"][0]["content"]["mention_time"]).year == 2023


def test_a_write_is_accepted_with_its_messages_rows_and_completed_by_its_job() -> None:
    """ADR 0054: the request stores each message as its episodic row and answers 202 with
    them and the job; the job writes the other typed rows, embeds and indexes, and the rows
    accepted keep their ids."""
    tenant = make_tenant()
    tenant.subject("maya")
    client = tenant.client()
    response = client.post("/v1/subjects/maya/memories", {"messages": SESSIONS[0]}, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert response["Location"] == f"/v1/jobs/{body['job_id']}"
    assert body["job"]["id"] == body["job_id"] and body["job"]["status"] == "queued"
    accepted = [r["id"] for r in body["records"] if r["type"] == "episodic"]
    assert len(accepted) == len([m for m in SESSIONS[0] if m["content"].strip()])
    row = client.get(f"/v1/subjects/maya/memories/episodic/{accepted[0]}")
    assert row.status_code == 200 and row.json()["provenance"]["chunk_id"] == body["chunk_id"]
    with organization_scope(tenant.id):
        assert {e.index_status for e in EpisodicEvent.objects.all()} == {"writing"}
        assert not SemanticItem.objects.exists()
    # Searchable at once by its words (not yet by meaning nor through the graph), without errors.
    for mode in ("graph", "flat"):
        searched = client.post("/v1/subjects/maya/search", {"query": "Bay to Breakers", "mode": mode}, format="json")
        assert searched.status_code == 200, (mode, searched.content)
    flat = client.post("/v1/subjects/maya/search", {"query": "Bay to Breakers", "mode": "flat"}, format="json")
    assert {row["id"] for row in flat.json()["rows"]} & set(accepted), flat.json()
    # Another organization's key sees neither the rows nor the job.
    other = make_tenant()
    assert other.client().get(f"/v1/jobs/{body['job_id']}").status_code == 404
    assert other.client().get(f"/v1/subjects/maya/memories/episodic/{accepted[0]}").status_code == 404

    assert complete_writes(tenant.id, index=True) == 1
    job = client.get(f"/v1/jobs/{body['job_id']}").json()
    assert job["status"] == "succeeded" and "semantic" in job["result"]["routed_types"]
    with organization_scope(tenant.id):
        assert {e.index_status for e in EpisodicEvent.objects.all()} == {"indexed"}
        assert set(accepted) <= {str(i) for i in EpisodicEvent.objects.values_list("id", flat=True)}
        assert EpisodicEvent.objects.filter(embedding__isnull=True).count() == 0
        assert SemanticItem.objects.exists()
        every_row = {(memory_type, str(row_id)) for memory_type, row_id in chunk_records(chunk_ids=[body["chunk_id"]])}
    # The job names every row of the write: a client whose wait ran out follows it and has them all.
    assert {(r["type"], r["id"]) for r in job["result"]["records"]} == every_row
    assert {("episodic", row_id) for row_id in accepted} < every_row
    assert "semantic" in {memory_type for memory_type, _ in every_row}


def test_writes_accepted_together_are_completed_with_one_embedding_call() -> None:
    from apps.memory.services import memory_complete_writes
    from apps.providers.registry import embedder

    class Counting:
        def __init__(self) -> None:
            self.inner, self.calls = embedder(), 0
            self.model_name, self.dimension = self.inner.model_name, self.inner.dimension

        def embed(self, texts: list[str], *, metering: MeteringContext | None = None) -> list[list[float]]:
            self.calls += 1
            return self.inner.embed(texts, metering=metering)

    tenant = make_tenant()
    for name in ("maya", "omar", "lena"):
        response = tenant.client().post(f"/v1/subjects/{name}/memories", {"messages": SESSIONS[0]}, format="json")
        assert response.status_code == 202, response.content
    counting = Counting()
    with organization_scope(tenant.id):
        completed = memory_complete_writes(embedder=counting)  # type: ignore[arg-type]
    assert len(completed) == 3 and counting.calls == 1
    assert all("semantic" in {r.memory_type for r in write.records} for write in completed)


def test_the_worker_completing_a_subjects_writes_does_not_hold_back_new_writes_to_it() -> None:
    """The worker's batch holds its pending rows to commit, not their subject: a new write to
    the subject (which takes the subject FOR KEY SHARE) is accepted meanwhile."""
    import threading

    from django.db import connection

    from apps.memory.services import memory_complete_writes

    tenant = make_tenant()
    subject = tenant.subject("maya")
    client = tenant.client()
    assert client.post("/v1/subjects/maya/memories", {"messages": SESSIONS[0]}, format="json").status_code == 202
    completing, release, completed = threading.Event(), threading.Event(), []

    def worker() -> None:
        try:
            with organization_scope(tenant.id):
                completed.extend(memory_complete_writes())
                completing.set()
                release.wait(timeout=60)  # the batch's transaction stays open until released
        finally:
            completing.set()
            connection.close()

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert completing.wait(timeout=60) and len(completed) == 1
        with organization_scope(tenant.id), connections["default"].cursor() as cursor:
            # NOWAIT: fails at once if the worker's transaction holds the subject.
            cursor.execute("SELECT 1 FROM tenancy_subject WHERE id = %s FOR KEY SHARE NOWAIT", [subject.id])
            assert cursor.fetchone() == (1,)
        response = client.post("/v1/subjects/maya/memories", {"messages": SESSIONS[1]}, format="json")
        assert response.status_code == 202, response.content
    finally:
        release.set()
        thread.join(timeout=60)
    assert complete_writes(tenant.id) == 1  # the write accepted meanwhile
