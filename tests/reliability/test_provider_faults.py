"""The language model provider failing, through the real openai SDK against the local stub:
errors, garbage and timeouts become one clean 502 after bounded retries, with nothing of the
write stored (not even what the writers before the failing one produced); during indexing
the evidence stays, marked, and is indexed once the provider answers again."""

from __future__ import annotations

import json
import time

import pytest
from django.test import override_settings
from pytest_django.fixtures import Settings

from apps.audit.models import AuditEntry
from apps.graph.services import index_chunk, index_sweep_chunks
from apps.jobs.models import Job
from apps.memory.models import STORES, EpisodicEvent
from apps.tenancy.scope import organization_scope
from apps.webhooks.models import WebhookEvent
from apps.webhooks.services import webhook_endpoint_create
from tests.factories import Tenant, make_tenant
from tests.providers.openai_stub import (
    OpenAIStub,
    StubReply,
    chat_reply,
    dropped_connection,
    error_reply,
    json_reply,
)
from tests.reliability.support import graph_snapshot, message

ATTEMPTS = 3
TIMEOUT = 0.5
TEXT = "Last Friday I flew to Denver with Tom for the robotics meetup."
EPISODE = {
    "source_message_ids": ["m1"],
    "actor": "Ravi",
    "event_type": "trip",
    "summary": "Ravi flew to Denver with Tom for the robotics meetup.",
    "details": "Flew to Denver with Tom on Friday 2024-02-09 for the robotics meetup.",
    "event_time": "2024-02-09",
    "status": "done",
}
FAULTS: dict[str, StubReply] = {
    "server error": error_reply(500),
    "rate limited": error_reply(429, headers={"retry-after": "0"}),
    "html instead of json": StubReply(body="<html><body>upstream exploded</body></html>"),
    "truncated json": StubReply(body='{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"ind'),
    "reply without choices": StubReply(body={"id": "chatcmpl-1", "object": "chat.completion", "choices": []}),
    "content that is not json": chat_reply("Sure! Here are the memory types: episodic"),
    "json of the wrong shape": json_reply({"types": "episodic", "why": 42}),
    "timeout": StubReply(body={}, delay_seconds=TIMEOUT * 3),
    "dropped connection": dropped_connection(),
}


@pytest.fixture(autouse=True)
def deployment(openai_deployment: OpenAIStub, settings: Settings) -> None:
    settings.OPENAI_MAX_ATTEMPTS = ATTEMPTS
    settings.OPENAI_TIMEOUT_SECONDS = TIMEOUT


@pytest.fixture
def tenant() -> Tenant:
    tenant = make_tenant()
    tenant.subject("ravi")
    webhook_endpoint_create(  # subscribed: a stored write would leave a memory.created event
        organization_id=tenant.id, url="http://127.0.0.1:9/mirix", event_types=["*"], include_content_for=[]
    )
    return tenant


def _nothing_stored(tenant: Tenant) -> None:
    with organization_scope(tenant.id):
        assert {name: model.objects.count() for name, model in STORES.items()} == dict.fromkeys(STORES, 0)
        assert not Job.objects.exists()
        assert not WebhookEvent.objects.exists()
        assert not AuditEntry.objects.filter(action="memory.write").exists()


def _clean_502(response, started: float) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == 502, response.content
    error = response.json()["error"]
    assert error["code"] == "provider_error" and error["details"]["attempts"] == ATTEMPTS
    text = json.dumps(error)
    assert "exploded" not in text and "Sure!" not in text and "Traceback" not in text
    # Bounded: every attempt waits at most the timeout (plus the work around it).
    assert time.monotonic() - started < ATTEMPTS * TIMEOUT * 3 + 10


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_failing_provider_is_a_clean_502_with_nothing_stored(
    openai_stub: OpenAIStub, tenant: Tenant, fault: str
) -> None:
    openai_stub.queue(*[FAULTS[fault]] * ATTEMPTS)
    started = time.monotonic()
    response = tenant.client().post(
        "/v1/subjects/ravi/memories", {"messages": [message(TEXT, n=1, name="Ravi")]}, format="json"
    )
    _clean_502(response, started)
    assert len(openai_stub.requests) == ATTEMPTS
    _nothing_stored(tenant)


def test_a_writer_failing_after_another_succeeded_stores_nothing_of_the_write(
    openai_stub: OpenAIStub, tenant: Tenant
) -> None:
    openai_stub.queue(
        json_reply({"memory_types": ["episodic", "semantic"], "reason": "a trip and a fact"}),
        json_reply({"drafts": [EPISODE]}),  # the episodic writer succeeds
        *[FAULTS["timeout"]] * ATTEMPTS,  # the semantic writer never answers in time
    )
    started = time.monotonic()
    response = tenant.client().post(
        "/v1/subjects/ravi/memories", {"messages": [message(TEXT, n=1, name="Ravi")]}, format="json"
    )
    _clean_502(response, started)
    assert len(openai_stub.requests) == 2 + ATTEMPTS
    _nothing_stored(tenant)


def test_a_failing_provider_during_indexing_keeps_the_evidence_and_the_sweep_repairs_it(
    openai_stub: OpenAIStub, tenant: Tenant
) -> None:
    openai_stub.queue(json_reply({"memory_types": ["episodic"], "reason": "a trip"}), json_reply({"drafts": [EPISODE]}))
    written = tenant.client().post(
        "/v1/subjects/ravi/memories", {"messages": [message(TEXT, n=1, name="Ravi")]}, format="json"
    )
    assert written.status_code == 201
    chunk_id = written.json()["chunk_id"]
    openai_stub.queue(*[FAULTS["truncated json"]] * (2 * ATTEMPTS))  # the batch, then the row alone
    with organization_scope(tenant.id):
        result = index_chunk(chunk_id=chunk_id)
        row = EpisodicEvent.objects.get()
        assert result["failed"] == 1
        assert (row.index_status, row.index_attempts) == ("failed", 1)
        assert "truncated" not in row.index_error and "chatcmpl" not in row.index_error
        assert [str(c) for c in index_sweep_chunks()] == [chunk_id]
    assert graph_snapshot(tenant.id).anchors == []  # nothing half-written in the graph
    with override_settings(LLM_PROVIDER="local"), organization_scope(tenant.id):  # the provider is back
        assert index_chunk(chunk_id=chunk_id)["failed"] == 0
        assert EpisodicEvent.objects.get().index_status == "indexed"
        assert EpisodicEvent.objects.get().summary == EPISODE["summary"]  # the evidence, unchanged
    graph = graph_snapshot(tenant.id)
    assert graph.anchors and graph.duplicate_anchor_keys() == []
