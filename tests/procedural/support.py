"""Helpers of the procedural tests: consenting subjects, suite sessions, running jobs in-process."""

from __future__ import annotations

from typing import Any

from apps.procedural.suite.tasks import FAMILIES, TrainingSession
from mirix_saas.celery import app
from tests.factories import Tenant
from tests.providers.openai_stub import OpenAIStub


def consenting_subject(tenant: Tenant, external_id: str, *, cross_domain: bool = True) -> str:
    tenant.subject(external_id, kind="agent")
    purposes = {"learn_skills": True, "cross_domain_generalization": cross_domain}
    response = tenant.client().put(f"/v1/subjects/{external_id}/consent", {"purposes": purposes}, format="json")
    assert response.status_code == 200, response.content
    return external_id


def post_session(tenant: Tenant, external_id: str, body: dict[str, Any]) -> dict[str, Any]:
    response = tenant.client().post(f"/v1/subjects/{external_id}/sessions", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()  # type: ignore[no-any-return]


def helpful(domain: str, n: int, *, scec: bool) -> dict[str, Any]:
    return TrainingSession(domain, n, FAMILIES[domain].lesson, with_scec=scec).payload()


def harmful(domain: str, n: int, *, scec: bool) -> dict[str, Any]:
    return TrainingSession(domain, n, FAMILIES[domain].trap_lesson, with_scec=scec).payload()


def run_job(task_name: str, tenant: Tenant, job_id: str, **kwargs: str) -> None:
    """Run a job's task in this process, as a worker would."""
    app.loader.import_default_modules()
    app.tasks[task_name].apply(kwargs={"organization_id": str(tenant.id), "job_id": job_id, **kwargs}).get()


def job(tenant: Tenant, job_id: str) -> dict[str, Any]:
    return tenant.client().get(f"/v1/jobs/{job_id}").json()  # type: ignore[no-any-return]


def use_stub(tenant: Tenant, stub: OpenAIStub) -> None:
    """The organization's own model endpoint: the local OpenAI stub, through the real SDK."""
    response = tenant.client().put(
        "/v1/provider-config", {"api_key": "sk-org", "base_url": stub.url, "model": "gpt-test"}, format="json"
    )
    assert response.status_code == 200, response.content


def subject_id(tenant: Tenant, external_id: str) -> str:
    return tenant.client().get(f"/v1/subjects/{external_id}").json()["id"]  # type: ignore[no-any-return]
