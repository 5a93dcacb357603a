"""``PATCH /v1/subjects/{external_id}``: a display name or metadata changed, a renamed subject's
graph re-indexed (ADR 0095, ADR 0096), bad bodies refused whole, other tenants kept out."""

from __future__ import annotations

from typing import Any

from apps.audit.models import AuditEntry
from apps.jobs.models import Job
from apps.tenancy import services
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant
from workers.maintenance import graph_reindex_subject

SAID = "2024-03-04T09:00:00+00:00"


def _tenant(external_id: str, kind: str = "user") -> Tenant:
    tenant = make_tenant()
    with organization_scope(tenant.id):
        services.subject_create(organization_id=tenant.id, external_id=external_id, kind=kind)
    return tenant


def _patch(tenant: Tenant, external_id: str, body: Any, key: str | None = None) -> Any:
    return tenant.client(key).patch(f"/v1/subjects/{external_id}", body, format="json")


def _subject(tenant: Tenant, external_id: str) -> Subject:
    with organization_scope(tenant.id):
        return Subject.objects.get(external_id=external_id)


def _run(tenant: Tenant, job_id: str, subject: Subject) -> Job:
    graph_reindex_subject.apply(
        kwargs={"organization_id": str(tenant.id), "job_id": job_id, "subject_id": str(subject.id)}
    )
    with organization_scope(tenant.id):
        return Job.objects.get(id=job_id)


def test_naming_a_subject_with_an_opaque_id_reindexes_it_and_questions_reach_it_by_name() -> None:
    tenant = _tenant("u_8f3a91")
    for number, text in enumerate(["I live in Porto.", "I moved to Lisbon last week."], start=1):
        message = {"id": f"m{number}", "role": "user", "content": text, "timestamp": SAID}
        tenant.write("u_8f3a91", {"messages": [message]}, index=True)
    response = _patch(tenant, "u_8f3a91", {"display_name": "Ana Silva"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["display_name"] == "Ana Silva" and body["external_id"] == "u_8f3a91"
    assert body["graph_reindex_job_id"]
    subject = _subject(tenant, "u_8f3a91")
    assert subject.display_name == "Ana Silva"
    assert _run(tenant, body["graph_reindex_job_id"], subject).status == Job.Status.SUCCEEDED
    found = tenant.client().post("/v1/subjects/u_8f3a91/search", {"query": "Where does Ana live?"}, format="json")
    assert found.status_code == 200, found.content
    result = found.json()
    assert "Lisbon" in result["rows"][0]["text"] and result["fallback"] is False
    assert any(role["anchor"] == "ana silva" for fact in result["facts"] for role in fact["roles"])
    with organization_scope(tenant.id):
        assert AuditEntry.objects.filter(action="subject.update", subject_id=subject.id).count() == 1


def test_metadata_alone_or_the_same_name_queues_no_reindex() -> None:
    tenant = _tenant("ana")
    response = _patch(tenant, "ana", {"metadata": {"plan": "pro"}})
    assert response.status_code == 200, response.content
    assert response.json()["metadata"] == {"plan": "pro"} and response.json()["graph_reindex_job_id"] is None
    # "ana" already speaks as "ana": a display name of the same key still renames the anchor's text.
    assert _patch(tenant, "ana", {"display_name": "Ana"}).json()["graph_reindex_job_id"] is not None
    assert _patch(tenant, "ana", {"display_name": "Ana"}).json()["graph_reindex_job_id"] is None
    assert _subject(tenant, "ana").metadata == {"plan": "pro"}


def test_an_agent_subjects_name_is_not_its_users_voice() -> None:
    tenant = _tenant("helper", kind="agent")
    response = _patch(tenant, "helper", {"display_name": "Helper Bot"})
    assert response.status_code == 200, response.content
    assert response.json()["graph_reindex_job_id"] is None


def test_a_bad_body_is_refused_whole_with_what_to_send() -> None:
    tenant = _tenant("ana")
    cases: list[tuple[Any, str]] = [
        ({}, "Nothing to change"),
        ({"external_id": "bea"}, "an external id never changes"),
        ({"display_name": "x" * 201, "metadata": {"plan": "pro"}}, "display_name"),
        ({"metadata": "pro"}, "metadata"),
    ]
    for body, message in cases:
        response = _patch(tenant, "ana", body)
        assert response.status_code == 400, (body, response.content)
        assert message in response.content.decode(), (body, response.content)
    subject = _subject(tenant, "ana")
    assert (subject.display_name, subject.metadata) == ("", {})
    with organization_scope(tenant.id):
        assert not Job.objects.filter(kind="graph.reindex").exists()


def test_another_tenants_key_cannot_rename_the_subject() -> None:
    tenant, other = _tenant("ana"), make_tenant()
    response = _patch(other, "ana", {"display_name": "Mallory"})
    assert response.status_code == 404, response.content
    assert _subject(tenant, "ana").display_name == ""
    assert _patch(tenant, "nobody", {"display_name": "X"}).status_code == 404
