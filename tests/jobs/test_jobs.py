from __future__ import annotations

import uuid

import pytest

from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import job_create
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app
from tests.factories import make_tenant
from tests.processes import celery_worker, purge_queues, wait_for
from workers.maintenance import graph_check_task


def _job(tenant, job_id: str) -> dict:  # type: ignore[no-untyped-def]
    return tenant.client().get(f"/v1/jobs/{job_id}").json()


@pytest.mark.slow
def test_job_runs_on_a_real_worker_exactly_once_in_effect() -> None:
    purge_queues()
    tenant = make_tenant()
    with celery_worker():
        accepted = tenant.client().post("/v1/graph/check")
        assert accepted.status_code == 202
        job_id = accepted.json()["job_id"]
        done = wait_for(lambda: (j := _job(tenant, job_id))["status"] == "succeeded" and j)
        assert done["result"] == {"graph": "not_created", "vertices": 0}  # nothing written yet (ADR 0050)
        assert done["attempts"] == 1 and done["started_at"] and done["finished_at"] and done["error"] is None
        # A redelivered message for a finished job changes nothing.
        app.send_task(task_names.GRAPH_CHECK, kwargs={"organization_id": str(tenant.id), "job_id": job_id})
        second = tenant.client().post("/v1/graph/check").json()["job_id"]
        wait_for(lambda: _job(tenant, second)["status"] == "succeeded")
        assert _job(tenant, job_id)["attempts"] == 1


def test_enqueue_happens_only_after_commit() -> None:
    tenant = make_tenant()
    sent: list[str] = []
    original = app.send_task
    app.send_task = lambda name, **kw: sent.append(name)  # type: ignore[method-assign, assignment, return-value]
    try:
        from apps.jobs.services import job_enqueue_on_commit

        with pytest.raises(RuntimeError), organization_scope(tenant.id):
            job = job_create(organization_id=tenant.id, kind="graph.check")
            job_enqueue_on_commit(job=job, task_name=task_names.GRAPH_CHECK)
            raise RuntimeError("rolled back")
        assert sent == []
        with organization_scope(tenant.id):
            job = job_create(organization_id=tenant.id, kind="graph.check")
            job_enqueue_on_commit(job=job, task_name=task_names.GRAPH_CHECK)
            assert sent == []
        assert sent == [task_names.GRAPH_CHECK]
    finally:
        app.send_task = original  # type: ignore[method-assign]


def test_a_failing_job_is_recorded_without_raw_error_text(monkeypatch: pytest.MonkeyPatch) -> None:
    tenant = make_tenant()
    with organization_scope(tenant.id):
        job = job_create(organization_id=tenant.id, kind="graph.check")

    def explode(**_: object) -> dict:
        raise ValueError("memory text: my secret diary entry")

    monkeypatch.setattr("workers.maintenance.graph_check", explode)
    graph_check_task.apply(kwargs={"organization_id": str(tenant.id), "job_id": str(job.id)})
    body = _job(tenant, str(job.id))
    assert body["status"] == "failed"
    assert body["error"] == {"code": "ValueError", "message": "The job failed; the error has been logged."}


def test_job_of_another_organization_is_not_found() -> None:
    a, b = make_tenant(), make_tenant()
    with organization_scope(a.id):
        job = job_create(organization_id=a.id, kind="graph.check")
    assert b.client().get(f"/v1/jobs/{job.id}").status_code == 404
    assert a.client().get(f"/v1/jobs/{uuid.uuid4()}").status_code == 404
    with organization_scope(a.id):
        assert Job.objects.get(id=job.id).status == "queued"


def test_an_api_process_warms_its_request_path_before_its_first_request() -> None:
    """ADR 0052: the URL configuration, its reverse map and the task publisher's broker
    connection are ready before the first request, which would otherwise pay for them."""
    from django.core.handlers.wsgi import WSGIHandler
    from django.urls import get_resolver

    from mirix_saas.processes import _request_path_warm

    app.amqp._producer_pool = None  # as in a new process: no producer, no broker connection yet
    app._pool = None
    _request_path_warm(WSGIHandler())
    assert get_resolver()._populated
    with app.producer_or_acquire() as producer:  # the pooled producer the warm-up connected
        assert producer.connection.connected


def test_an_api_process_plans_a_read_of_every_table_before_its_first_request() -> None:
    """Its database session loads every table's catalog entries in one round trip, so the
    first write does not pay for them statement by statement."""
    from django.apps import apps
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from mirix_saas.processes import _catalog_warm

    with CaptureQueriesContext(connection) as queries:
        _catalog_warm()
    planned = [q["sql"] for q in queries.captured_queries if "LIMIT 0" in q["sql"]]
    assert len(planned) == 1
    tables = {model._meta.db_table for model in apps.get_models() if model._meta.managed}
    assert len(tables) > 30 and all(f'FROM "{table}" LIMIT 0' in planned[0] for table in tables)
