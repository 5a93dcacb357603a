"""The dream API: a round as a job on a real worker and broker, its result summary, the merges
list, the dream.completed event, tenant isolation, bad input; and the batch ingestion job
invoking rounds after every five chunks and after the last."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from apps.dream.models import DreamMerge, DreamRound
from apps.jobs.models import Job
from apps.tenancy.scope import organization_scope
from apps.webhooks import services as webhook_services
from apps.webhooks.models import WebhookEvent
from tests.dream.support import Spec, add_anchors, in_scope
from tests.factories import Tenant, make_tenant
from tests.processes import celery_worker, purge_queues, wait_for


def _world(tenant: Tenant) -> uuid.UUID:
    subject = tenant.subject("caroline")
    with in_scope(subject):
        built = add_anchors(
            subject,
            [
                Spec("steel bottle", "object"),
                Spec("stainless steel bottle", "object"),
                Spec("10 gallons", "object"),
                Spec("20 gallons", "object"),
            ],
        )
    return built.chunk_id


def _job(tenant: Tenant, job_id: str) -> dict[str, Any]:
    return tenant.client().get(f"/v1/jobs/{job_id}").json()  # type: ignore[no-any-return]


def test_a_dream_round_runs_as_a_job_with_a_summary_and_its_merges_are_listed() -> None:
    purge_queues()
    tenant = make_tenant()
    webhook_services.webhook_endpoint_create(
        organization_id=tenant.id,
        url="http://127.0.0.1:9/dream",
        event_types=["dream.completed"],
        include_content_for=[],
    )
    chunk = _world(tenant)
    accepted = tenant.client().post(
        "/v1/subjects/caroline/dream", {"chunk_ids": [str(chunk)], "final": True}, format="json"
    )
    assert accepted.status_code == 202, accepted.content
    job_id = accepted.json()["job_id"]
    assert _job(tenant, job_id)["status"] == "queued"
    with celery_worker(queues=["dream"]):
        done = wait_for(lambda: (j := _job(tenant, job_id))["status"] in ("succeeded", "failed") and j, timeout=180)
    assert done["status"] == "succeeded", done
    result = done["result"]
    for name in ("pairs_considered", "verified", "merged", "rejected", "cached", "skipped_by_cap"):
        assert isinstance(result[name], int), name
    assert result["merged"] == 1 and result["rejected"] == 1 and result["skipped_by_cap"] == 0
    assert [r["kind"] for r in result["rounds"]] == ["final", "repair"]  # the final round merged: one repair round

    merges = tenant.client().get("/v1/subjects/caroline/dream/merges").json()["results"]
    assert [(m["source_name"], m["target_name"]) for m in merges] == [("steel bottle", "stainless steel bottle")]
    assert merges[0]["job_id"] == job_id and merges[0]["undone_at"] is None
    with organization_scope(tenant.id):
        event = WebhookEvent.objects.get(event_type="dream.completed")
        rounds = set(DreamRound.objects.filter(job_id=job_id).values_list("kind", flat=True))
    assert event.payload["merges"] == [merges[0]["id"]] and event.payload["job_id"] == job_id
    assert event.content is None  # the endpoint did not opt in to names
    assert rounds == {"final", "repair"}


def test_another_organizations_key_finds_nothing_and_queues_nothing() -> None:
    owner, other = make_tenant(), make_tenant()
    chunk = _world(owner)
    with organization_scope(owner.id):
        merge_count = DreamMerge.objects.count()
    posted = other.client().post("/v1/subjects/caroline/dream", {"chunk_ids": [str(chunk)]}, format="json")
    listed = other.client().get("/v1/subjects/caroline/dream/merges")
    assert posted.status_code == 404 and listed.status_code == 404
    assert posted.json()["error"]["code"] == listed.json()["error"]["code"] == "not_found"
    assert str(chunk) not in posted.content.decode() + listed.content.decode()
    other.subject("caroline")  # the same external id in the other organization: the chunk is not theirs
    foreign = other.client().post("/v1/subjects/caroline/dream", {"chunk_ids": [str(chunk)]}, format="json")
    assert foreign.status_code == 400 and foreign.json()["error"]["details"]["unknown"] == [str(chunk)]
    for tenant in (owner, other):
        with organization_scope(tenant.id):
            assert not Job.objects.filter(kind="dream.semantic").exists()
    with organization_scope(owner.id):
        assert DreamMerge.objects.count() == merge_count == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"chunk_ids": ["not-a-uuid"]}, "chunk_ids"),
        ({"chunk_ids": []}, "chunk_ids"),
        ({"chunk_ids": [str(uuid.uuid4())]}, "unknown"),
        ({"chunk_ids": [str(uuid.uuid4())] * 101}, "chunk_ids"),
    ],
)
def test_bad_requests_are_refused_with_a_clear_message(body: dict[str, Any], field: str) -> None:
    tenant = make_tenant()
    _world(tenant)
    response = tenant.client().post("/v1/subjects/caroline/dream", body, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert field in error["details"] or field in error["message"]
    with organization_scope(tenant.id):
        assert not Job.objects.filter(kind="dream.semantic").exists()


@pytest.mark.slow
def test_batch_ingestion_invokes_a_round_after_every_five_chunks_and_after_the_last() -> None:
    purge_queues()
    tenant = make_tenant()
    tenant.subject("maya")
    facts = [
        "My steel bottle is green.",
        "I keep my stainless steel bottle in my backpack.",
        "Melanie works at the Boston library.",
        "My sister Anna lives in Lisbon.",
        "I bought 10 gallons of paint for the fence.",
        "The pottery class meets on Tuesdays.",
        "I run with John Smith every Sunday.",
    ]
    chunks = [{"text": fact, "session_id": f"s{n}"} for n, fact in enumerate(facts)]
    accepted = tenant.client().post("/v1/subjects/maya/memories/batch", {"chunks": chunks}, format="json")
    assert accepted.status_code == 202, accepted.content
    with celery_worker():
        wait_for(lambda: _job(tenant, accepted.json()["job_id"])["status"] == "succeeded", timeout=300)

        def dreams_done() -> list[Job] | None:
            with organization_scope(tenant.id):
                jobs = list(Job.objects.filter(kind="dream.semantic").order_by("created_at"))
            return jobs if len(jobs) == 2 and all(j.status in ("succeeded", "failed") for j in jobs) else None

        jobs = wait_for(dreams_done, timeout=300)
    assert [j.status for j in jobs] == ["succeeded", "succeeded"], [j.error_code for j in jobs]
    with organization_scope(tenant.id):
        kinds = [set(DreamRound.objects.filter(job=j).values_list("kind", flat=True)) for j in jobs]
        frontier = DreamRound.objects.get(job=jobs[0], kind="intermediate").chunk_ids
    assert "intermediate" in kinds[0] and "final" in kinds[1]
    assert 1 <= len(frontier) <= 5  # the chunks of the first five that hold episodic or semantic rows
