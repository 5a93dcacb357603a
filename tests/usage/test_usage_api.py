"""GET /v1/usage through the HTTP API against the real database: what was counted, per key and
day, over a range; bad ranges are 400s; another organization sees only its own."""

from __future__ import annotations

import os
import threading
import uuid
from datetime import date, timedelta
from functools import partial
from typing import Any

import psycopg
from django.conf import settings
from django.db import connections, transaction
from django.test import override_settings
from django.utils import timezone

from apps.jobs.models import Job
from apps.language.words import count_tokens
from apps.memory.models import STORES
from apps.providers.local_embedder import MODEL_NAMES
from apps.providers.local_usage import ANSWERER, MEMORY_WRITER
from apps.providers.minilm_onnx import weights_path
from apps.providers.models import ProviderUsage
from apps.providers.services import DatabaseUsageMeter
from apps.tenancy.models import ApiKey
from apps.tenancy.scope import organization_scope
from apps.usage.models import UsageCounter
from apps.usage.services import usage_count
from tests.factories import Tenant, complete_writes, make_tenant
from tests.processes import wait_for
from tests.providers.openai_stub import OpenAIStub, deployment_settings, json_reply
from tests.retrieval.test_answering import ingest_conversation, row_id_containing
from workers.indexing import ingest_batch

MINILM = MODEL_NAMES["int8"]  # the deployment's default precision (ADR 0091)

MESSAGES = [{"role": "user", "content": "I adopted a cat named Miso last Sunday."}]


def _key_id(secret: str) -> uuid.UUID:
    lookup = secret[len(settings.API_KEY_PREFIX) :][:12]
    return ApiKey.objects.dangerously_across_organizations().get(lookup_id=lookup).id


def _usage(tenant: Tenant, query: str = "", key: str | None = None) -> Any:
    response = tenant.client(key).get(f"/v1/usage{query}")
    assert response.status_code == 200, response.content
    return response.json()


def _today(report: dict[str, Any]) -> dict[str, Any]:
    today = timezone.now().date().isoformat()
    [day] = [d for d in report["days"] if d["date"] == today]
    return day


def _counters(tenant: Tenant) -> list[tuple[Any, ...]]:
    return sorted(
        UsageCounter.objects.dangerously_across_organizations()
        .filter(organization_id=tenant.id)
        .values_list("day", "api_key_id", "operation", "requests", "errors", "rows_written")
    )


def test_requests_and_rows_are_counted_per_key_and_operation() -> None:
    tenant = make_tenant()
    writer = tenant.issue_key(["memories:read", "memories:write"])
    reader = tenant.issue_key(["memories:read"])
    tenant.subject("ana")
    written = tenant.client(writer).post("/v1/subjects/ana/memories", {"messages": MESSAGES}, format="json")
    assert written.status_code == 202, written.content
    rows = len(written.json()["records"])
    assert rows > 0
    for _ in range(2):
        assert tenant.client(reader).get("/v1/subjects/ana/memories?type=episodic").status_code == 200
    bad = tenant.client(writer).post("/v1/subjects/ana/memories", {"messages": []}, format="json")
    assert bad.status_code == 400
    refused = tenant.client(reader).post("/v1/subjects/ana/memories", {"messages": MESSAGES}, format="json")
    assert refused.status_code == 403

    report = _usage(tenant)
    day = _today(report)
    by_key = {k["api_key_id"]: k for k in day["keys"]}
    write_key = by_key[str(_key_id(writer))]
    assert write_key["operations"] == {"POST /v1/subjects/{external_id}/memories": 2}
    assert (write_key["requests"], write_key["errors"], write_key["rows_written"]) == (2, 1, rows)
    assert write_key["name"] == ApiKey.objects.dangerously_across_organizations().get(id=_key_id(writer)).name
    read_key = by_key[str(_key_id(reader))]
    # The refused write (403) never reached the scope: not counted.
    assert read_key["operations"] == {"GET /v1/subjects/{external_id}/memories": 2}
    assert (read_key["requests"], read_key["errors"], read_key["rows_written"]) == (2, 0, 0)
    assert (day["requests"], day["errors"], day["rows_written"]) == (4, 1, rows)
    assert {k["api_key_id"]: k["requests"] for k in report["keys"]} == {
        str(_key_id(writer)): 2,
        str(_key_id(reader)): 2,
    }

    # The report's own request is counted once it has been answered.
    again = _today(_usage(tenant))
    admin = {k["api_key_id"]: k for k in again["keys"]}[str(_key_id(tenant.key))]
    assert admin["operations"] == {"GET /v1/usage": 1}


def test_storage_and_quota_are_reported() -> None:
    tenant = make_tenant(monthly_request_quota=50)
    tenant.subject("ana")
    assert tenant.client().post("/v1/subjects/ana/memories", {"messages": MESSAGES}, format="json").status_code == 202
    report = _usage(tenant)
    with organization_scope(tenant.id):
        expected = {name: model.objects.count() for name, model in STORES.items()}
    stores = {s["name"]: s for s in report["storage"]["stores"]}
    assert {name: s["rows"] for name, s in stores.items()} == expected
    assert report["storage"]["rows"] == sum(expected.values()) > 0
    assert all(s["bytes"] > 0 for s in stores.values() if s["rows"])
    assert report["storage"]["bytes"] == sum(s["bytes"] for s in stores.values())
    # Nothing is indexed yet: the organization's AGE graph is created on its first indexing (ADR 0050).
    assert report["storage"]["graph"]["bytes"] == 0
    quota = report["quota"]
    # The write and this report: two requests against the month's quota.
    assert (quota["monthly_limit"], quota["used"], quota["left"]) == (50, 2, 48)
    assert quota["resets_at"].endswith("T00:00:00Z") and quota["resets_at"][8:10] == "01"


def test_model_tokens_per_day_split_local_and_provider() -> None:
    tenant, other = make_tenant(), make_tenant()
    meter = DatabaseUsageMeter()
    key = _key_id(tenant.key)
    record = partial(meter.record, organization_id=tenant.id, api_key_id=None)
    record(purpose="route", model="gpt-test", prompt_tokens=120, completion_tokens=15)
    record(purpose="answer", model="gpt-test", prompt_tokens=80, completion_tokens=5, api_key_id=key)
    record(purpose="embed", model=MINILM, prompt_tokens=9, completion_tokens=0)
    meter.record(
        organization_id=other.id,
        api_key_id=None,
        purpose="route",
        model="gpt-test",
        prompt_tokens=999,
        completion_tokens=9,
    )
    day = _today(_usage(tenant))
    tokens = day["model_tokens"]
    assert tokens["provider"] == {"calls": 2, "prompt_tokens": 200, "completion_tokens": 20}
    assert tokens["local"] == {"calls": 1, "prompt_tokens": 9, "completion_tokens": 0}
    by_key = {entry["api_key_id"]: entry for entry in day["key_tokens"]}
    assert set(by_key) == {str(key), None}  # the background work is the null key's
    assert by_key[str(key)]["provider"] == {"calls": 1, "prompt_tokens": 80, "completion_tokens": 5}
    assert by_key[str(key)]["local"] == {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    assert by_key[None]["provider"] == {"calls": 1, "prompt_tokens": 120, "completion_tokens": 15}
    assert by_key[None]["local"] == {"calls": 1, "prompt_tokens": 9, "completion_tokens": 0}
    assert by_key[None]["name"] == ""


def _answer_reply(tenant: Tenant, *, prompt_tokens: int) -> Any:
    adopted = row_id_containing(tenant, "adopted a beagle puppy")
    reply = {"answer": "4 March 2023", "cited_row_ids": [adopted], "needs_more": None}
    return json_reply(reply, prompt_tokens=prompt_tokens, completion_tokens=prompt_tokens // 10)


def test_each_keys_answer_calls_are_its_own_tokens(openai_stub: OpenAIStub) -> None:
    tenant, other = make_tenant(), make_tenant()
    ingest_conversation(tenant)
    ingest_conversation(other)
    first, second = tenant.issue_key(["memories:read"]), tenant.issue_key(["memories:read"])
    outsider = other.issue_key(["memories:read"])
    question = {"query": "When did Priya adopt Biscuit?"}
    with override_settings(**deployment_settings(openai_stub, OPENAI_MAX_ATTEMPTS=1)):
        for who, key, tokens in ((tenant, first, 40), (tenant, second, 300), (other, outsider, 5000)):
            openai_stub.queue(_answer_reply(who, prompt_tokens=tokens))
            response = who.client(key).post("/v1/subjects/priya/answer", question, format="json")
            assert response.status_code == 200, response.content
    assert len(openai_stub.requests) == 3  # one model call per answer

    day = _today(_usage(tenant))
    assert day["model_tokens"]["provider"] == {"calls": 2, "prompt_tokens": 340, "completion_tokens": 34}
    by_key = {entry["api_key_id"]: entry for entry in day["key_tokens"]}
    # Provider tokens are the two answers' (the writes and their indexing ran locally, ADR 0049);
    # nothing of the other organization's.
    assert {k for k, e in by_key.items() if e["provider"]["calls"]} == {str(_key_id(first)), str(_key_id(second))}
    assert by_key[str(_key_id(first))]["provider"] == {"calls": 1, "prompt_tokens": 40, "completion_tokens": 4}
    assert by_key[str(_key_id(second))]["provider"] == {"calls": 1, "prompt_tokens": 300, "completion_tokens": 30}
    assert by_key[str(_key_id(first))]["name"].startswith("key-")

    narrowed = _today(_usage(tenant, f"?key={_key_id(second)}"))
    assert [entry["api_key_id"] for entry in narrowed["key_tokens"]] == [str(_key_id(second))]
    assert narrowed["model_tokens"] == day["model_tokens"]  # the day's totals stay the organization's

    theirs = _today(_usage(other))
    assert [e["api_key_id"] for e in theirs["key_tokens"] if e["provider"]["calls"]] == [str(_key_id(outsider))]
    assert theirs["model_tokens"]["provider"]["prompt_tokens"] == 5000


def test_a_date_range_reports_every_day_of_it_and_only_those() -> None:
    tenant = make_tenant()
    key = _key_id(tenant.key)
    today = timezone.now().date()
    for days_ago, operation in ((10, "GET /v1/subjects"), (40, "POST /v1/subjects")):
        usage_count(
            organization_id=tenant.id,
            api_key_id=key,
            day=today - timedelta(days=days_ago),
            operation=operation,
            failed=False,
            rows_written=0,
        )

    default = _usage(tenant)
    assert (default["from"], default["to"]) == ((today - timedelta(days=29)).isoformat(), today.isoformat())
    assert len(default["days"]) == 30
    assert [d["date"] for d in default["days"] if d["requests"]] == [(today - timedelta(days=10)).isoformat()]

    first, last = today - timedelta(days=45), today - timedelta(days=35)
    ranged = _usage(tenant, f"?from={first.isoformat()}&to={last.isoformat()}")
    assert [d["date"] for d in ranged["days"]] == [(first + timedelta(days=n)).isoformat() for n in range(11)]
    assert [(d["date"], d["requests"]) for d in ranged["days"] if d["requests"]] == [
        ((today - timedelta(days=40)).isoformat(), 1)
    ]
    assert ranged["keys"][0]["operations"] == {"POST /v1/subjects": 1}


def test_the_key_filter_narrows_requests_to_one_key() -> None:
    tenant = make_tenant()
    reader = tenant.issue_key(["memories:read"])
    assert tenant.client(reader).get("/v1/subjects").status_code == 200
    assert tenant.client().get("/v1/subjects").status_code == 200
    report = _usage(tenant, f"?key={_key_id(reader)}")
    assert report["key"] == str(_key_id(reader))
    assert [k["api_key_id"] for k in _today(report)["keys"]] == [str(_key_id(reader))]
    assert _today(report)["requests"] == 1


def _error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()["error"]
    assert set(body) == {"code", "message", "details", "request_id"}
    return body


def test_bad_parameters_are_400s_that_say_what_to_change() -> None:
    tenant = make_tenant()
    client = tenant.client()
    today = timezone.now().date()
    cases = {
        "?from=2026-13-01": "from",
        "?to=yesterday": "to",
        "?key=not-a-uuid": "key",
        f"?from={today.isoformat()}&to={(today - timedelta(days=1)).isoformat()}": "swap them",
        f"?from={(today - timedelta(days=92)).isoformat()}&to={today.isoformat()}": "at most 92",
        f"?to={(today + timedelta(days=3)).isoformat()}": "in the future",
        "?to=0001-01-01": "",  # the earliest day there is: its 30-day default does not underflow
    }
    for query, hint in cases.items():
        response = client.get(f"/v1/usage{query}")
        if not hint:
            assert response.status_code == 200 and response.json()["days"][0]["date"] == "0001-01-01"
            continue
        body = _error(response, 400)
        assert hint in body["message"] or hint in body["details"], (query, body)
    longest = client.get(f"/v1/usage?from={(today - timedelta(days=91)).isoformat()}&to={today.isoformat()}")
    assert longest.status_code == 200 and len(longest.json()["days"]) == 92
    assert date.fromisoformat(longest.json()["from"]) == today - timedelta(days=91)


def test_a_key_without_admin_is_refused() -> None:
    tenant = make_tenant()
    key = tenant.issue_key(["memories:read", "memories:write", "vault:read"])
    body = _error(tenant.client(key).get("/v1/usage"), 403)
    assert "admin" in body["message"]


def test_another_organization_sees_only_its_own_usage() -> None:
    owner, intruder = make_tenant(), make_tenant()
    owner.subject("ana")
    assert owner.client().post("/v1/subjects/ana/memories", {"messages": MESSAGES}, format="json").status_code == 202
    assert _usage(owner)["storage"]["rows"] > 0
    before = _counters(owner)

    report = _usage(intruder)
    assert all(k["api_key_id"] != str(_key_id(owner.key)) for d in report["days"] for k in d["keys"])
    assert report["storage"]["rows"] == 0
    assert str(owner.id) not in str(report)
    body = _error(intruder.client().get(f"/v1/usage?key={_key_id(owner.key)}"), 404)
    assert "No API key" in body["message"]
    assert _counters(owner) == before  # the intruder's calls were counted as its own
    assert [c[2:5] for c in _counters(intruder)] == [("GET /v1/usage", 2, 1)]  # the 404 is an error


def test_the_count_is_written_after_the_requests_own_commit() -> None:
    """With the counter row locked elsewhere, a request's own write is committed and visible
    while its count waits: counting never holds the request's transaction or its locks."""
    tenant = make_tenant()
    tenant.subject("first")  # makes the counter row of POST /v1/subjects exist
    assert tenant.client().post("/v1/subjects", {"external_id": "a", "kind": "user"}, format="json").status_code == 201
    owner = connections["owner"]
    done = threading.Event()
    statuses: list[int] = []

    def create() -> None:
        try:
            response = tenant.client().post("/v1/subjects", {"external_id": "b", "kind": "user"}, format="json")
            statuses.append(response.status_code)
        finally:
            connections.close_all()
            done.set()

    with transaction.atomic(using="owner"), owner.cursor() as cursor:
        cursor.execute(
            "SELECT requests FROM usage_counter WHERE organization_id = %s AND operation = %s FOR UPDATE",
            [tenant.id, "POST /v1/subjects"],
        )
        assert cursor.fetchone() == (1,)
        worker = threading.Thread(target=create)
        worker.start()

        def created() -> bool:
            with psycopg.connect(os.environ["DATABASE_OWNER_URL"]) as other:
                row = other.execute(
                    "SELECT count(*) FROM tenancy_subject WHERE organization_id = %s AND external_id = 'b'",
                    [tenant.id],
                ).fetchone()
            return row == (1,)

        wait_for(created, timeout=30, interval=0.1)
        assert not done.is_set()  # answered and committed; its count waits for the lock
    worker.join(timeout=30)
    assert done.is_set() and statuses == [201]
    assert [c[2:4] for c in _counters(tenant) if c[2] == "POST /v1/subjects"] == [("POST /v1/subjects", 2)]


def _queue_trip(openai: OpenAIStub) -> dict[str, str]:
    """Queue the provider's routing and writing of one message (120 prompt and 14 completion
    tokens in all) and return the message."""
    episode = {
        "source_message_ids": ["m1"],
        "actor": "Ravi",
        "event_type": "trip",
        "summary": "Ravi flew to Denver for the robotics meetup.",
        "details": "Flew to Denver on Friday for the robotics meetup.",
        "event_time": "2024-02-09",
        "status": "done",
    }
    openai.queue(
        json_reply({"memory_types": ["episodic"], "reason": "a trip"}, prompt_tokens=50, completion_tokens=5),
        json_reply({"drafts": [episode]}, prompt_tokens=70, completion_tokens=9),
    )
    return {"id": "m1", "role": "user", "content": "Last Friday I flew to Denver for the robotics meetup."}


def test_a_writes_routing_and_writing_are_the_writing_keys_tokens(openai_deployment: OpenAIStub) -> None:
    tenant = make_tenant()
    writer = tenant.issue_key(["memories:write"])
    tenant.subject("ravi")
    message = _queue_trip(openai_deployment)
    response = tenant.client(writer).post("/v1/subjects/ravi/memories", {"messages": [message]}, format="json")
    assert response.status_code == 202, response.content
    assert openai_deployment.requests == []  # routing and writing are the worker's (ADR 0054)
    complete_writes(tenant.id)
    assert len(openai_deployment.requests) == 2  # metered to the key whose request wrote

    day = _today(_usage(tenant))
    [entry] = [e for e in day["key_tokens"] if e["api_key_id"] == str(_key_id(writer))]
    assert entry["provider"] == {"calls": 2, "prompt_tokens": 120, "completion_tokens": 14}


def test_a_batch_is_credited_to_the_key_that_submitted_it(openai_deployment: OpenAIStub) -> None:
    """Key B submits a batch; its worker's writes (rows, routing and writing tokens) show
    under B in GET /v1/usage, not under A, nor as background, nor in another organization."""
    tenant, other = make_tenant(), make_tenant()
    first, second = tenant.issue_key(["memories:write"]), tenant.issue_key(["memories:write"])
    tenant.subject("ravi")
    message = _queue_trip(openai_deployment)
    accepted = tenant.client(second).post(
        "/v1/subjects/ravi/memories/batch", {"chunks": [{"messages": [message]}]}, format="json"
    )
    assert accepted.status_code == 202, accepted.content
    job_id, batch_id = accepted.json()["job_id"], accepted.json()["batch_id"]
    with organization_scope(tenant.id):
        assert Job.objects.get(id=job_id).api_key_id == _key_id(second)
    before = _today(_usage(tenant))
    assert {k["api_key_id"]: k["rows_written"] for k in before["keys"]}.get(str(_key_id(second))) == 0

    ingest_batch.apply(kwargs={"organization_id": str(tenant.id), "job_id": job_id, "batch_id": batch_id})
    assert len(openai_deployment.requests) == 2  # the worker's routing and writing
    job = tenant.client().get(f"/v1/jobs/{job_id}").json()
    written = job["result"]["records_written"]
    assert written > 0

    day = _today(_usage(tenant))
    by_key = {k["api_key_id"]: k for k in day["keys"]}
    credited = by_key[str(_key_id(second))]
    assert credited["rows_written"] == written
    assert credited["operations"] == {"POST /v1/subjects/{external_id}/memories/batch": 1}  # no request added
    assert str(_key_id(first)) not in by_key or by_key[str(_key_id(first))]["rows_written"] == 0
    tokens = {entry["api_key_id"]: entry for entry in day["key_tokens"]}
    assert tokens[str(_key_id(second))]["provider"] == {"calls": 2, "prompt_tokens": 120, "completion_tokens": 14}
    assert str(_key_id(first)) not in tokens
    assert None not in tokens or tokens[None]["provider"]["calls"] == 0  # nothing of it is background
    narrowed = _today(_usage(tenant, f"?key={_key_id(second)}"))
    assert [k["rows_written"] for k in narrowed["keys"]] == [written]

    theirs = _today(_usage(other))
    assert theirs["rows_written"] == 0 and theirs["model_tokens"]["provider"]["calls"] == 0
    assert other.client().get(f"/v1/usage?key={_key_id(second)}").status_code == 404


def _local(tenant: Tenant, secret: str) -> dict[str, int]:
    day = _today(_usage(tenant))
    entry = next((e for e in day["key_tokens"] if e["api_key_id"] == str(_key_id(secret))), None)
    return entry["local"] if entry else {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}


def _minilm_tokens(text: str) -> int:
    """The tokens MiniLM reads of ``text``, from the model's reference tokenizer (the one the
    sentence-transformers pipeline loads with the weights), not the embedder's own."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(weights_path()), local_files_only=True)
    return len(tokenizer(text, truncation=True, max_length=256)["input_ids"])


def test_a_search_meters_its_query_embedding_to_the_calling_key() -> None:
    tenant, other = make_tenant(), make_tenant()
    reader = tenant.issue_key(["memories:read"])
    tenant.subject("ana")
    query = "Which cat did Ana adopt last Sunday, and what is its name?"
    before = _local(tenant, reader)
    response = tenant.client(reader).post("/v1/subjects/ana/search", {"query": query}, format="json")
    assert response.status_code == 200, response.content
    after = _local(tenant, reader)
    assert after["calls"] - before["calls"] == 1
    assert after["prompt_tokens"] - before["prompt_tokens"] == _minilm_tokens(query) > len(query.split())
    # A repeated query is answered from the organization's query-embedding cache: nothing is read again.
    again = tenant.client(reader).post("/v1/subjects/ana/search", {"query": query}, format="json")
    assert again.status_code == 200, again.content
    assert _local(tenant, reader) == after
    # The per-store search embeds its query too.
    store_query = "Which runbook covers restarting the ingest service?"
    store = tenant.client(reader).post(
        "/v1/subjects/ana/memories/procedural/search", {"query": store_query}, format="json"
    )
    assert store.status_code == 200, store.content
    assert _local(tenant, reader)["prompt_tokens"] - after["prompt_tokens"] == _minilm_tokens(store_query)
    # Another organization's key: the subject is not there, and nothing is metered to anyone.
    refused = other.client().post("/v1/subjects/ana/search", {"query": query}, format="json")
    assert refused.status_code == 404
    assert _today(_usage(other))["model_tokens"]["local"]["calls"] == 0
    assert _local(tenant, reader)["calls"] == after["calls"] + 1


def test_an_answer_meters_each_searchs_query_embedding_and_the_local_answerer() -> None:
    tenant = make_tenant()
    ingest_conversation(tenant)
    reader = tenant.issue_key(["memories:read"])
    question = "When did Priya adopt Biscuit?"
    response = tenant.client(reader).post("/v1/subjects/priya/answer", {"query": question}, format="json")
    assert response.status_code == 200, response.content
    with organization_scope(tenant.id):
        used = ProviderUsage.objects.filter(api_key_id=_key_id(reader)).order_by("created_at")
        embeds = [u.prompt_tokens for u in used if u.purpose == "embed"]
        answers = [u for u in used if u.purpose == "answer"]
    assert len(embeds) == response.json()["searches"] >= 1
    assert embeds[0] == _minilm_tokens(question)
    assert answers and all(u.model == ANSWERER and u.prompt_tokens > count_tokens(question) for u in answers)


def test_a_local_write_meters_the_tokens_its_pipeline_read() -> None:
    tenant = make_tenant()
    writer = tenant.issue_key(["memories:write"])
    tenant.subject("ana")
    # Accepted (202), then completed as the worker does: the worker's calls are the writing key's.
    answer = tenant.write("ana", {"messages": MESSAGES}, key=writer)
    with organization_scope(tenant.id):
        used = list(ProviderUsage.objects.filter(api_key_id=_key_id(writer)))
    routed = [u for u in used if u.purpose == "route"]
    assert [(u.model, u.prompt_tokens, u.completion_tokens) for u in routed] == [
        (MEMORY_WRITER, count_tokens(MESSAGES[0]["content"]), 0)
    ]
    written = {u.purpose for u in used if u.purpose.startswith("write.")}
    assert {f"write.{t}" for t in answer["routed_types"] if t != "resource"} <= written
    # The rows' embeddings are the writing key's too; the report counts all of it as local.
    assert any(u.purpose == "embed" and u.model == MINILM for u in used)
    local = _local(tenant, writer)
    assert local["calls"] == len(used) and local["prompt_tokens"] == sum(u.prompt_tokens for u in used)
