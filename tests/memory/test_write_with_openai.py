"""The write path through the real OpenAI SDK against a local OpenAI-compatible stub."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import override_settings

from apps.graph.services import index_chunks
from apps.jobs.models import Job
from apps.memory.models import CoreBlock, EpisodicEvent, SemanticItem, VaultEntry
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant
from tests.providers.openai_stub import OpenAIStub, chat_reply, json_reply

pytestmark = pytest.mark.usefixtures("openai_deployment")

PASSWORD = "Tangerine-Kite-77!"
MESSAGES = [
    {
        "id": "m1",
        "role": "user",
        "name": "Ravi",
        "timestamp": "2024-02-12T08:00:00Z",
        "content": f"Last Friday I flew to Denver for the robotics meetup. My password for the meetup site is {PASSWORD}",
    },
]
EPISODE = {
    "source_message_ids": ["m1"],
    "actor": "Ravi",
    "event_type": "trip",
    "summary": "Ravi flew to Denver for the robotics meetup.",
    "details": "Flew to Denver on Friday 2024-02-09 for the robotics meetup.",
    "event_time": "2024-02-09",
    "status": "done",
}


@pytest.fixture
def tenant() -> Tenant:
    tenant = make_tenant()
    tenant.subject("ravi")
    return tenant


def test_openai_routing_and_writing_store_rows_and_never_see_the_password(
    openai_stub: OpenAIStub, tenant: Tenant
) -> None:
    openai_stub.queue(json_reply({"memory_types": ["episodic"], "reason": "a trip"}), json_reply({"drafts": [EPISODE]}))
    written = tenant.write("ravi", {"messages": MESSAGES})
    assert sorted(r["type"] for r in written["records"]) == ["episodic", "vault"]
    assert [r.path for r in openai_stub.requests] == ["/v1/chat/completions", "/v1/chat/completions"]
    for request in openai_stub.requests:
        assert request.body["model"] == "gpt-test"
        assert request.body["response_format"]["type"] == "json_schema"
        prompt = json.dumps(request.body)
        assert PASSWORD not in prompt and "[vault:credential#1]" in prompt
    with organization_scope(tenant.id):
        row = EpisodicEvent.objects.get()
        assert row.event_time is not None and row.event_time.date().isoformat() == "2024-02-09"
        assert row.mention_time.isoformat().startswith("2024-02-12")


def test_a_malformed_reply_is_retried_then_the_job_fails_with_the_messages_kept(
    openai_stub: OpenAIStub, tenant: Tenant
) -> None:
    """The writers run in the worker (ADR 0054): when they fail, the write's messages stay
    stored as they were said and are indexed, and the job fails saying why."""
    openai_stub.queue(json_reply({"memory_types": ["episodic"], "reason": "a trip"}))
    openai_stub.queue(*(chat_reply("this is not json") for _ in range(3)))
    written = tenant.write("ravi", {"messages": MESSAGES})
    assert len(openai_stub.requests) == 4  # one route, three attempts at writing
    with override_settings(LLM_PROVIDER="local"), organization_scope(tenant.id):  # the graph's extractor
        index_chunks(chunk_ids=[uuid.UUID(written["chunk_id"])])
    job = tenant.client().get(f"/v1/jobs/{written['job_id']}").json()
    assert job["status"] == "failed" and job["error"]["code"] == "writing_failed", job
    assert "ProviderError" in job["result"]["writing_error"] and "not json" not in json.dumps(job)
    with organization_scope(tenant.id):
        row = EpisodicEvent.objects.get()
        assert row.event_type == "message" and row.index_status == "indexed" and row.embedding is not None
        assert PASSWORD not in row.details and VaultEntry.objects.count() == 1
        assert not CoreBlock.objects.exists()
        assert Job.objects.get().id == uuid.UUID(written["job_id"])


def test_a_malformed_reply_then_a_good_one_succeeds(openai_stub: OpenAIStub, tenant: Tenant) -> None:
    openai_stub.queue(
        json_reply({"memory_types": ["episodic"], "reason": "a trip"}),
        json_reply({"drafts": [{**EPISODE, "event_time": "last friday"}]}),  # violates the schema's ISO rule
        json_reply({"drafts": [EPISODE]}),
    )
    tenant.write("ravi", {"messages": MESSAGES})
    with organization_scope(tenant.id):
        assert EpisodicEvent.objects.count() == 1


def _fact(attribute: str, summary: str) -> dict[str, object]:
    return {
        "source_message_ids": ["m1"],
        "name": "Ravi",
        "attribute": attribute,
        "summary": summary,
        "details": summary,
        "source": "Ravi",
    }


def test_the_openai_writer_chooses_the_attribute_and_a_fact_supersedes_only_its_own(
    openai_stub: OpenAIStub, tenant: Tenant
) -> None:
    def write(content: str, *facts: dict[str, object]) -> None:
        openai_stub.queue(
            json_reply({"memory_types": ["semantic"], "reason": "facts"}), json_reply({"drafts": list(facts)})
        )
        message = {"id": "m1", "role": "user", "name": "Ravi", "timestamp": "2024-02-12T08:00:00Z", "content": content}
        tenant.write("ravi", {"messages": [message]})

    write(
        "I live in Denver and I'm a welder.",
        _fact("Home_City", "Ravi lives in Denver."),
        _fact("Employer", "Ravi is a welder."),
    )
    write("We moved to Austin.", _fact("home city", "Ravi moved from Denver to Austin."))
    schema = openai_stub.requests[-1].body["response_format"]["json_schema"]["schema"]
    assert "attribute" in json.dumps(schema)
    rows = tenant.client().get("/v1/subjects/ravi/memories?type=semantic").json()["results"]
    current = {row["content"]["attribute"]: row["content"]["summary"] for row in rows}
    assert current == {"home city": "Ravi moved from Denver to Austin.", "job": "Ravi is a welder."}
    with organization_scope(tenant.id):
        old = SemanticItem.objects.get(summary="Ravi lives in Denver.")
        assert SemanticItem.objects.get(supersedes=old).attribute == "home city"
