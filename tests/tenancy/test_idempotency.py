"""Idempotency-Key through the API: a retry replays the first answer and writes nothing; another
request under the key is a 422; a retry while the first runs is a 409; a failed first attempt
stores nothing; the beat purge removes what has expired."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from apps.memory.models import STORES
from apps.tenancy.models import IdempotencyRecord
from apps.tenancy.scope import organization_scope
from tests.erasure.support import database_text, run_erasure
from tests.factories import Tenant, complete_writes, make_tenant
from workers.maintenance import idempotency_purge_task

WRITE = {"messages": [{"role": "user", "content": "I adopted a cat named Miso last week."}]}


def _rows(tenant: Tenant) -> int:
    with organization_scope(tenant.id):
        return sum(model.objects.count() for model in STORES.values())


def _post(client: APIClient, key: str, body: dict[str, Any], path: str = "/v1/subjects/ana/memories") -> Any:
    return client.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_a_retry_with_the_key_replays_the_first_answer_and_writes_nothing() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    first = _post(tenant.client(), "write-1", WRITE)
    assert first.status_code == 202, first.content
    assert "Idempotent-Replayed" not in first.headers
    rows = _rows(tenant)

    retry = _post(tenant.client(), "write-1", WRITE)

    assert retry.status_code == 202
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json() == first.json() and retry["Location"] == first["Location"]
    assert _rows(tenant) == rows  # one set of rows
    # Another key is another write.
    assert _post(tenant.client(), "write-2", WRITE).status_code == 202
    assert _rows(tenant) > rows


def test_a_batch_replays_the_same_batch_and_job() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    body = {"chunks": [{"text": "We moved to Lisbon in 2021."}]}
    first = _post(tenant.client(), "batch-1", body, "/v1/subjects/ana/memories/batch")
    retry = _post(tenant.client(), "batch-1", body, "/v1/subjects/ana/memories/batch")
    assert first.status_code == retry.status_code == 202
    assert retry.json() == first.json() and retry.headers["Idempotent-Replayed"] == "true"


def test_a_retry_of_a_waited_write_waits_for_the_same_job() -> None:
    """The stored answer is the acceptance (202); a retry with ``wait=true`` waits for the
    same job as the first request did, and answers 201 with every row once it finished."""
    tenant = make_tenant()
    tenant.subject("ana")
    waited = "/v1/subjects/ana/memories?wait=true&wait_timeout=0.2"
    first = _post(tenant.client(), "waited-1", WRITE, waited)  # no worker: the wait runs out
    assert first.status_code == 202, first.content
    assert first.json()["job"]["status"] == "queued"
    assert complete_writes(tenant.id, index=True) == 1  # the worker's part, in process
    rows = _rows(tenant)

    retry = _post(tenant.client(), "waited-1", WRITE, waited)

    assert retry.status_code == 201, retry.content
    assert retry.headers["Idempotent-Replayed"] == "true"
    answer = retry.json()
    assert answer["job_id"] == first.json()["job_id"] and answer["job"]["status"] == "succeeded"
    assert {record["id"] for record in first.json()["records"]} < {record["id"] for record in answer["records"]}
    assert _rows(tenant) == rows  # nothing written twice


def test_a_retry_of_a_waited_batch_waits_for_the_same_job() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    body, waited = {"chunks": [{"text": "We moved to Lisbon in 2021."}]}, "/v1/subjects/ana/memories/batch?wait=true"
    first = _post(tenant.client(), "batch-w", body, f"{waited}&wait_timeout=0.2")
    retry = _post(tenant.client(), "batch-w", body, f"{waited}&wait_timeout=0.2")
    assert first.status_code == retry.status_code == 202  # no worker: both waits run out
    assert retry.headers["Idempotent-Replayed"] == "true" and retry["Location"] == first["Location"]
    # The stored acceptance has no ``job`` nor ``records``: the retry waited, as the first did.
    assert retry.json() == first.json() and retry.json()["job"]["status"] == "queued"


def test_a_multipart_retry_with_a_new_boundary_is_the_same_request() -> None:
    tenant = make_tenant()
    tenant.subject("ana")

    def upload() -> Any:
        document = SimpleUploadedFile("notes.txt", b"Repotting: water first, then move the plant.", "text/plain")
        return tenant.client().post(
            "/v1/subjects/ana/memories", {"file": document}, format="multipart", HTTP_IDEMPOTENCY_KEY="doc-1"
        )

    first = upload()
    rows = _rows(tenant)
    retry = upload()  # the test client draws the boundary again
    assert first.status_code == retry.status_code == 202
    assert retry.headers["Idempotent-Replayed"] == "true" and retry.json() == first.json()
    assert _rows(tenant) == rows


def test_the_key_with_another_request_is_a_422_and_writes_nothing() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    tenant.subject("bo")
    assert _post(tenant.client(), "k", WRITE).status_code == 202
    rows = _rows(tenant)
    other_body = _post(tenant.client(), "k", {"text": "Something else entirely."})
    other_path = _post(tenant.client(), "k", WRITE, "/v1/subjects/bo/memories")
    for response in (other_body, other_path):
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["code"] == "unprocessable" and "use a new key" in error["message"]
    assert _rows(tenant) == rows


def test_a_key_longer_than_255_characters_is_a_400() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    refused = _post(tenant.client(), "k" * 256, WRITE)
    assert refused.status_code == 400
    assert "at most 255" in refused.json()["error"]["message"]
    assert _rows(tenant) == 0
    assert _post(tenant.client(), "k" * 255, WRITE).status_code == 202


def test_a_failed_first_attempt_stores_nothing_and_the_key_can_be_retried() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    failed = _post(tenant.client(), "retry-me", {"messages": []})
    assert failed.status_code == 400
    with organization_scope(tenant.id):
        assert not IdempotencyRecord.objects.exists()
    assert _post(tenant.client(), "retry-me", WRITE).status_code == 202


def test_a_retry_while_the_first_is_in_flight_is_a_409(settings: Any) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    settings.FAULT_PAUSES = {"memory.write.before_commit": 3}
    answers: dict[str, Any] = {}

    def first() -> None:
        try:
            answers["first"] = _post(tenant.client(), "slow", WRITE)
        finally:
            connection.close()

    thread = threading.Thread(target=first)
    thread.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # until the first holds the key (it is paused before commit)
        with organization_scope(tenant.id):
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")
                if cursor.fetchone()[0]:  # type: ignore[index]
                    break
        time.sleep(0.05)
    concurrent = _post(tenant.client(), "slow", WRITE)
    thread.join()

    assert concurrent.status_code == 409, concurrent.content
    assert "still in progress" in concurrent.json()["error"]["message"]
    assert answers["first"].status_code == 202
    rows = _rows(tenant)
    replay = _post(tenant.client(), "slow", WRITE)
    assert replay.headers["Idempotent-Replayed"] == "true" and replay.json() == answers["first"].json()
    assert _rows(tenant) == rows


def test_keys_are_per_organization_and_another_organization_changes_nothing() -> None:
    tenant, intruder = make_tenant(), make_tenant()
    tenant.subject("ana")
    first = _post(tenant.client(), "shared", WRITE)
    assert first.status_code == 202
    with organization_scope(tenant.id):
        stored = list(IdempotencyRecord.objects.values_list("key", "request_hash", "status_code"))
    rows = _rows(tenant)
    # The intruder's subject does not exist for the owner's path: no replay of the owner's answer.
    intruder.subject("other")
    for path in ("/v1/subjects/other/memories", "/v1/subjects/ana/memories/batch"):
        response = _post(intruder.client(), "shared", WRITE, path)
        assert "Idempotent-Replayed" not in response.headers
        assert str(first.json()["chunk_id"]) not in response.content.decode()
    with organization_scope(tenant.id):
        assert list(IdempotencyRecord.objects.values_list("key", "request_hash", "status_code")) == stored
    assert _rows(tenant) == rows


def test_an_answer_that_carries_a_secret_refuses_a_key() -> None:
    tenant = make_tenant()
    refused = tenant.client().post(
        "/v1/api-keys", {"name": "k", "scopes": ["memories:read"]}, format="json", HTTP_IDEMPOTENCY_KEY="key-1"
    )
    assert refused.status_code == 400 and "carries a secret" in refused.json()["error"]["message"]


def test_the_beat_purge_removes_expired_answers_only() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    assert _post(tenant.client(), "old", WRITE).status_code == 202
    assert _post(tenant.client(), "new", {"text": "Another note."}).status_code == 202
    with organization_scope(tenant.id):
        IdempotencyRecord.objects.filter(key="old").update(expires_at=timezone.now() - timedelta(seconds=1))
    assert idempotency_purge_task.apply().get() == 1
    with organization_scope(tenant.id):
        assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["new"]
    # An expired key is a new request again.
    again = _post(tenant.client(), "old", WRITE)
    assert again.status_code == 202 and "Idempotent-Replayed" not in again.headers


def test_erasing_the_subject_erases_its_stored_answers() -> None:
    tenant = make_tenant()
    created = tenant.client().post(
        "/v1/subjects",
        {"external_id": "ana", "kind": "user", "display_name": "Ana Canarysurname"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="create-ana",
    )
    assert created.status_code == 201
    assert _post(tenant.client(), "write-ana", WRITE).status_code == 202
    assert _post(tenant.client(), "other", WRITE, "/v1/subjects/bo/memories").status_code == 202
    erased = tenant.client().delete("/v1/subjects/ana")
    assert erased.status_code == 202, erased.content
    run_erasure(erased.json()["erasure_request_id"])
    with organization_scope(tenant.id):
        assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["other"]
    assert "Canarysurname" not in database_text()
