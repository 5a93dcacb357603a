"""A real graph outage (the organization's graph schema gone from under the application, so
every Cypher call fails in the database): writes are accepted and kept, the indexing job on
a real worker marks the rows, the beat sweep repairs them once the graph is back; searches
fall back to direct evidence and say so, instead of failing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.conf import settings
from django.db import connections
from psycopg import sql

from apps.jobs import task_names
from apps.jobs.models import Job
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app
from tests.factories import Tenant, make_tenant
from tests.memory.conversation import SESSIONS
from tests.processes import celery_worker, purge_queues, wait_for
from tests.reliability.support import graph_snapshot


@contextmanager
def graph_outage(tenant: Tenant) -> Iterator[None]:
    """Every read and write of the graph's tables fails for the application role (AGE finds a
    graph by its namespace's oid, so renaming the schema would not stop reads)."""
    tables = sql.SQL("ALL TABLES IN SCHEMA {}").format(sql.Identifier(tenant.graph()))
    role = sql.Identifier(settings.DATABASES["default"]["USER"])
    with connections["owner"].cursor() as cursor:
        cursor.execute(sql.SQL("REVOKE ALL ON {} FROM {}").format(tables, role).as_string(cursor.connection))
    try:
        yield
    finally:
        with connections["owner"].cursor() as cursor:
            grant = sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON {} TO {}").format(tables, role)
            cursor.execute(grant.as_string(cursor.connection))


def _rows(tenant: Tenant) -> list[tuple[Any, ...]]:
    """The indexed rows (episodic and semantic): id, text, index status."""
    with organization_scope(tenant.id):
        return [
            *EpisodicEvent.objects.order_by("id").values_list("id", "summary", "index_status"),
            *SemanticItem.objects.order_by("id").values_list("id", "summary", "index_status"),
        ]


def _job(tenant: Tenant, job_id: str) -> Job:
    with organization_scope(tenant.id):
        return Job.objects.get(id=job_id)


@pytest.mark.slow
def test_writes_during_a_graph_outage_are_kept_and_the_sweep_indexes_them_on_a_real_worker() -> None:
    purge_queues()
    tenant = make_tenant()
    tenant.subject("maya")
    with celery_worker(queues=["indexing"], name="graph-outage"):
        with graph_outage(tenant):
            written = tenant.client().post("/v1/subjects/maya/memories", {"messages": SESSIONS[0]}, format="json")
            assert written.status_code == 202  # fail-soft: the graph is not on the write's path
            job_id = written.json()["job_id"]
            wait_for(lambda: _job(tenant, job_id).status == Job.Status.FAILED, timeout=90)
            during = _rows(tenant)
            assert during and {status for _, _, status in during} == {"failed"}
            # Not findable, so not succeeded: the job names each row and why (ADR 0031).
            failed = _job(tenant, job_id)
            assert failed.error_code == "rows_not_indexed" and failed.result["rows_failed"] == len(during)
            assert {row["id"] for row in failed.result["rows_not_indexed"]} == {str(i) for i, _, _ in during}
            assert all(row["error"].endswith("indexing failed") for row in failed.result["rows_not_indexed"])
        assert graph_snapshot(tenant.id).anchors == []
        app.send_task(task_names.INDEX_SWEEP)  # what beat sends every five minutes
        wait_for(lambda: {status for _, _, status in _rows(tenant)} == {"indexed"}, timeout=90)
    after = _rows(tenant)
    assert [(i, s) for i, s, _ in after] == [(i, s) for i, s, _ in during]  # the evidence, unchanged
    graph = graph_snapshot(tenant.id)
    assert graph.anchors and graph.frames and graph.duplicate_anchor_keys() == []
    cited = {c for frame in graph.frames for c in frame["citations"]}
    assert cited and cited <= {str(i) for i, _, _ in after}
    purge_queues()


def test_searches_during_a_graph_outage_fall_back_to_direct_evidence_and_say_so() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    for session in SESSIONS:
        tenant.write("maya", {"messages": session}, index=True)
    question = {"query": "When did Maya run Bay to Breakers?"}
    healthy = tenant.client().post("/v1/subjects/maya/search", question, format="json").json()
    assert healthy["fallback"] is False and healthy["facts"]
    with graph_outage(tenant):
        response = tenant.client().post("/v1/subjects/maya/search", question, format="json")
        answer = tenant.client().post("/v1/subjects/maya/answer", {"query": question["query"]}, format="json")
    assert response.status_code == 200, response.content
    result = response.json()
    assert result["fallback"] is True and result["facts"] == []
    assert any("Bay to Breakers" in row["text"] for row in result["rows"])
    assert answer.status_code == 200, answer.content
    assert answer.json()["fallback"] is True
