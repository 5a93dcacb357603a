"""The outbox: an erasure runs even when its publish is lost or its job fails; running it
again changes nothing; a job that dies mid-way resumes without counting anything twice."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

from apps.audit.services import acting_as
from apps.erasure import registry
from apps.erasure import services as erasure_services
from apps.erasure.models import ErasureOutbox, ErasureRequest
from apps.erasure.registry import ErasureTarget
from apps.jobs import task_names
from apps.jobs.models import Job
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app
from tests.erasure.planting import plant, subject_counts
from tests.erasure.support import database_text, erasure_request, run_erasure
from tests.factories import make_tenant
from workers.erasure import drain_erasure_outbox
from workers.erasure import run_erasure as run_task


@pytest.fixture(autouse=True)
def _own_storage(tmp_path: Path) -> Iterator[None]:
    with override_settings(OBJECT_STORAGE="filesystem", OBJECT_STORAGE_ROOT=tmp_path / "objects"):
        yield


@pytest.fixture
def broker(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """Stands in for the broker: what was published, in order (nothing runs by itself)."""
    published: list[dict[str, str]] = []
    send_task = app.send_task

    def publish(name: str, kwargs: dict[str, Any], **options: Any) -> Any:
        if name != task_names.ERASURE_RUN:  # other tasks go to the broker, as before
            return send_task(name, kwargs=kwargs, **options)
        published.append(_strings(kwargs))
        return None

    monkeypatch.setattr(app, "send_task", publish)
    return published


def _strings(kwargs: dict[str, Any]) -> dict[str, str]:
    return {key: str(value) for key, value in kwargs.items()}


def _outbox() -> ErasureOutbox:
    return ErasureOutbox.objects.dangerously_across_organizations().get()


def _time_passes() -> None:
    """As if the kick's grace (or a lease) had run out."""
    ErasureOutbox.objects.dangerously_across_organizations().update(
        next_attempt_at=timezone.now() - timedelta(seconds=1)
    )


def test_an_erasure_whose_publish_was_lost_is_run_by_the_beat_drain(broker: list[dict[str, str]]) -> None:
    tenant = make_tenant()
    ana = plant(tenant, "ana")
    planted = subject_counts(ana.subject_id)
    accepted = tenant.client().delete("/v1/subjects/ana").json()
    assert broker == [  # the kick after commit...
        {
            "organization_id": str(tenant.id),
            "job_id": accepted["job_id"],
            "erasure_request_id": accepted["erasure_request_id"],
        }
    ]
    broker.clear()  # ...never reached a worker: the process died between commit and publish.
    assert _outbox().done_at is None and subject_counts(ana.subject_id) == planted

    assert drain_erasure_outbox.apply().get() == 0  # within the kick's grace: not yet
    _time_passes()
    assert drain_erasure_outbox.apply().get() == 1
    assert broker == [
        {
            "organization_id": str(tenant.id),
            "job_id": accepted["job_id"],
            "erasure_request_id": accepted["erasure_request_id"],
        }
    ]
    assert _outbox().publish_count == 1 and _outbox().next_attempt_at > timezone.now()
    assert drain_erasure_outbox.apply().get() == 0  # leased: not published again meanwhile

    run_task.apply(kwargs=broker[0]).get()
    done = erasure_request(accepted["erasure_request_id"])
    assert done.status == ErasureRequest.Status.COMPLETED
    assert subject_counts(ana.subject_id) == dict.fromkeys(planted, 0)
    assert _outbox().done_at is not None
    _time_passes()
    assert drain_erasure_outbox.apply().get() == 0  # done: never published again


def test_running_the_job_again_changes_nothing(broker: list[dict[str, str]]) -> None:
    tenant = make_tenant()
    plant(tenant, "ana")
    accepted = tenant.client().delete("/v1/subjects/ana").json()
    first = run_erasure(accepted["erasure_request_id"])
    before = database_text()
    run_task.apply(kwargs=broker[0]).get()  # the same message, delivered again
    assert database_text() == before
    # Even a new job for the finished request (say, republished by a drain) finds nothing to do.
    with organization_scope(tenant.id):
        job = Job.objects.create(organization_id=tenant.id, kind="erasure.subject")
    run_task.apply(kwargs={**broker[0], "job_id": str(job.id)}).get()
    again = erasure_request(first.id)
    assert (again.counts, again.receipt, again.receipt_sha256) == (first.counts, first.receipt, first.receipt_sha256)
    with organization_scope(tenant.id):
        assert Job.objects.get(id=job.id).result["receipt_sha256"] == first.receipt_sha256


def test_a_job_that_dies_midway_resumes_without_counting_twice(broker: list[dict[str, str]]) -> None:
    tenant = make_tenant()
    ana = plant(tenant, "ana")
    planted = subject_counts(ana.subject_id)
    request_id = tenant.client().delete("/v1/subjects/ana").json()["erasure_request_id"]
    organization_id = tenant.id
    steps = erasure_services.erasure_run(erasure_request_id=request_id)
    for _ in range(6):  # six steps commit, each in a transaction of its own...
        with organization_scope(organization_id), acting_as("task:test"):
            next(steps)
    steps.close()  # ...then the worker dies
    halfway = erasure_request(request_id)
    assert halfway.status == ErasureRequest.Status.RUNNING and halfway.steps_done
    assert subject_counts(ana.subject_id) != planted  # some of it is gone already

    done = run_erasure(request_id)  # the redelivered message
    assert done.status == ErasureRequest.Status.COMPLETED
    for store, count in planted.items():
        assert done.counts[store] == count, store
    assert subject_counts(ana.subject_id) == dict.fromkeys(planted, 0)


def test_a_failed_job_is_replaced_by_the_drain_and_the_erasure_completes(
    broker: list[dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant()
    ana = plant(tenant, "ana")
    request_id = tenant.client().delete("/v1/subjects/ana").json()["erasure_request_id"]
    graph_step = registry._ERASERS["graph"]

    def unavailable(target: ErasureTarget) -> registry.Counts:
        raise RuntimeError("graph unavailable")

    monkeypatch.setitem(registry._ERASERS, "graph", dataclasses.replace(graph_step, erase=unavailable))
    run_task.apply(kwargs=broker[0]).get()
    failed = erasure_request(request_id)
    with organization_scope(tenant.id):
        assert Job.objects.get(id=failed.job_id).status == Job.Status.FAILED
    assert failed.status == ErasureRequest.Status.RUNNING and "vault" in failed.steps_done

    monkeypatch.setitem(registry._ERASERS, "graph", graph_step)  # the graph is back
    broker.clear()
    _time_passes()
    assert drain_erasure_outbox.apply().get() == 1
    replaced = erasure_request(request_id)
    assert replaced.job_id != failed.job_id and broker[0]["job_id"] == str(replaced.job_id)
    run_task.apply(kwargs=broker[0]).get()
    done = erasure_request(request_id)
    assert done.status == ErasureRequest.Status.COMPLETED
    assert done.counts["graph_vertices"] == 3
    assert subject_counts(ana.subject_id)["episodic"] == 0
