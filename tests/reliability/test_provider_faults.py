"""The language model provider failing, through the real openai SDK against the local stub.
The request never waits on it (ADR 0054): the write is accepted with its messages' rows; in
the worker, errors, garbage and timeouts end after bounded retries with the messages kept as
they were said (nothing of what the writers before the failing one produced) and the job
failed, saying why, without the provider's text; during indexing the evidence stays, marked,
and is indexed once the provider answers again."""

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
from tests.factories import Tenant, complete_writes, make_tenant
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


def _only_the_message_kept(tenant: Tenant, response, started: float) -> None:  # type: ignore[no-untyped-def]
    """Accepted at once; once the worker ran, the message's own row and nothing the writers
    made, and the job failed with a clean reason."""
    assert response.status_code == 202, response.content
    assert time.monotonic() - started < 5  # the provider is not on the request's path
    complete_writes(tenant.id)
    # Bounded: every attempt waits at most the timeout (plus the work around it).
    assert time.monotonic() - started < ATTEMPTS * TIMEOUT * 3 * 2 + 20
    with organization_scope(tenant.id):
        counts = {name: model.objects.count() for name, model in STORES.items()}
        assert counts == {**dict.fromkeys(STORES, 0), "episodic": 1}
        row = EpisodicEvent.objects.get()
        assert row.event_type == "message" and row.summary == f"Ravi: {TEXT}" and row.index_status == "pending"
        job = Job.objects.get()
        assert job.status == Job.Status.INDEXING and "ProviderError" in job.result["writing_error"]
        text = json.dumps(job.result)
        assert "exploded" not in text and "Sure!" not in text and "Traceback" not in text
        assert WebhookEvent.objects.filter(event_type="memory.created").count() == 1  # the accepted row only
        assert AuditEntry.objects.filter(action="memory.write").count() == 1


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_failing_provider_keeps_the_message_and_fails_the_job_cleanly(
    openai_stub: OpenAIStub, tenant: Tenant, fault: str
) -> None:
    openai_stub.queue(*[FAULTS[fault]] * ATTEMPTS)
    started = time.monotonic()
    response = tenant.client().post(
        "/v1/subjects/ravi/memories", {"messages": [message(TEXT, n=1, name="Ravi")]}, format="json"
    )
    _only_the_message_kept(tenant, response, started)
    assert len(openai_stub.requests) == ATTEMPTS


def test_a_writer_failing_after_another_succeeded_keeps_nothing_the_writers_made(
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
    _only_the_message_kept(tenant, response, started)
    assert len(openai_stub.requests) == 2 + ATTEMPTS


def test_a_failing_provider_during_indexing_keeps_the_evidence_and_the_sweep_repairs_it(
    openai_stub: OpenAIStub, tenant: Tenant
) -> None:
    openai_stub.queue(json_reply({"memory_types": ["episodic"], "reason": "a trip"}), json_reply({"drafts": [EPISODE]}))
    written = tenant.client().post(
        "/v1/subjects/ravi/memories", {"messages": [message(TEXT, n=1, name="Ravi")]}, format="json"
    )
    assert written.status_code == 202
    chunk_id = written.json()["chunk_id"]
    complete_writes(tenant.id)
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
