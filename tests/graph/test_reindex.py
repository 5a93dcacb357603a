"""Re-indexing a subject's graph from nothing (ADR 0096): the rows are untouched, the graph is
rebuilt to what indexing the rows gives today, nothing of another subject or organization
moves, a resumed job does not start over, and the command queues a job per subject."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.graph import adapter, indexing
from apps.graph.models import AnchorFrame, AnchorRow, AnchorVector
from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import job_create
from apps.memory.models import EpisodicEvent, IndexedRecord, SemanticItem
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, complete_writes, make_tenant
from tests.processes import celery_worker, purge_queues
from workers.maintenance import graph_reindex_subject

SAID = "2024-03-04T09:00:00+00:00"
TURNS = [
    "I live in Porto and pay 900 euros rent.",
    "My sister Ines adopted a beagle called Moss.",
    "I moved to Lisbon last week.",
]

_ANCHORS = "MATCH (a:Anchor) WHERE a.subject_id = $subject_id RETURN a.key"
_FRAMES = "MATCH (f:Frame) WHERE f.subject_id = $subject_id RETURN f.frame_id"


def _said(tenant: Tenant, external_id: str) -> Subject:
    subject = tenant.subject(external_id)
    for number, text in enumerate(TURNS, start=1):
        message = {"id": f"m{number}", "role": "user", "content": text, "timestamp": SAID}
        tenant.write(external_id, {"messages": [message]}, index=True)
    return subject


def _graph(tenant: Tenant, subject: Subject) -> tuple[set[str], set[str], int]:
    """The subject's anchor keys, frame ids and adjacency rows."""
    params = {"subject_id": str(subject.id)}
    with organization_scope(tenant.id):
        anchors = {
            r[0] for r in adapter.cypher(organization_id=tenant.id, query=_ANCHORS, params=params, returns=["k"])
        }
        frames = {r[0] for r in adapter.cypher(organization_id=tenant.id, query=_FRAMES, params=params, returns=["f"])}
        side = sum(m.objects.filter(subject_id=subject.id).count() for m in (AnchorVector, AnchorFrame, AnchorRow))
    return anchors, frames, side


def _rows(tenant: Tenant, subject: Subject) -> list[tuple[Any, ...]]:
    with organization_scope(tenant.id):
        return sorted(
            (str(row.id), row.summary, row.index_status)
            for model in (EpisodicEvent, SemanticItem)
            for row in model.objects.filter(subject_id=subject.id)
        )


def _reindex(tenant: Tenant, subject: Subject, result: dict[str, Any] | None = None) -> Job:
    with organization_scope(tenant.id):
        job = job_create(organization_id=tenant.id, kind="graph.reindex", subject_id=subject.id)
        if result is not None:
            Job.objects.filter(id=job.id).update(result=result)
    graph_reindex_subject.apply(
        kwargs={"organization_id": str(tenant.id), "job_id": str(job.id), "subject_id": str(subject.id)}
    )
    with organization_scope(tenant.id):
        return Job.objects.get(id=job.id)


def test_a_reindex_rebuilds_the_same_graph_from_the_untouched_rows() -> None:
    tenant = make_tenant()
    subject, other = _said(tenant, "ana"), _said(tenant, "ben")
    elsewhere = make_tenant()
    foreign = _said(elsewhere, "ana")
    before, rows = _graph(tenant, subject), _rows(tenant, subject)
    untouched = (_graph(tenant, other), _graph(elsewhere, foreign))
    assert before[0] and before[1] and before[2]
    job = _reindex(tenant, subject)
    assert job.status == Job.Status.SUCCEEDED, job.error_message
    assert job.result["phase"] == "done" and job.result["rows"] == len(rows) == job.result["indexed"]
    assert job.result["cleared"] >= len(before[0]) + len(before[1])
    assert _graph(tenant, subject) == before  # frame ids are deterministic: the same graph again
    assert _rows(tenant, subject) == rows  # same rows, same texts, indexed again
    assert {status for _, _, status in rows} == {IndexedRecord.IndexStatus.INDEXED}
    assert (_graph(tenant, other), _graph(elsewhere, foreign)) == untouched


def test_a_graph_indexed_before_the_subject_had_a_voice_gains_its_anchor(monkeypatch: pytest.MonkeyPatch) -> None:
    tenant = make_tenant()
    with monkeypatch.context() as patched:  # indexed as before ADR 0095: "I" was no anchor
        patched.setattr(indexing, "subject_speaker_of", lambda subject: None)
        subject = _said(tenant, "ana")
    anchors, frames, _ = _graph(tenant, subject)
    assert "ana" not in anchors
    assert _reindex(tenant, subject).status == Job.Status.SUCCEEDED
    after, after_frames, _ = _graph(tenant, subject)
    assert "ana" in after and len(after_frames) > len(frames)
    response = tenant.client().post("/v1/subjects/ana/search", {"query": "Where do I live?"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert "Lisbon" in body["rows"][0]["text"], body["rows"][:3]
    assert any(role["anchor"] == "ana" for fact in body["facts"] for role in fact["roles"])


def test_a_resumed_reindex_that_reached_indexing_does_not_delete_again() -> None:
    tenant = make_tenant()
    subject = _said(tenant, "ana")
    before = _graph(tenant, subject)
    job = _reindex(tenant, subject, result={"phase": "index", "cleared": 7, "rows": 5, "indexed": 5})
    assert job.status == Job.Status.SUCCEEDED
    assert job.result == {"phase": "done", "cleared": 7, "rows": 5, "indexed": 5}  # nothing was left to index
    assert _graph(tenant, subject) == before


def test_the_command_queues_a_job_per_subject_of_the_organization_only() -> None:
    tenant, other = make_tenant(), make_tenant()
    for external_id in ("ana", "ben"):
        tenant.subject(external_id)
    other.subject("ana")
    out = StringIO()
    call_command("graph_reindex", "--organization", tenant.organization.slug, stdout=out)
    with organization_scope(tenant.id):
        jobs = list(Job.objects.filter(kind="graph.reindex"))
        subjects = dict(Subject.objects.values_list("id", "external_id"))
    assert sorted(subjects[job.subject_id] for job in jobs) == ["ana", "ben"]
    assert {job.task_name for job in jobs} == {task_names.GRAPH_REINDEX}
    assert all(job.task_kwargs["subject_id"] == str(job.subject_id) for job in jobs)
    assert out.getvalue().count("job ") == 2
    with organization_scope(other.id):
        assert not Job.objects.filter(kind="graph.reindex").exists()
    call_command("graph_reindex", "--organization", str(tenant.id), "--subject", "ben", stdout=StringIO())
    with organization_scope(tenant.id):
        assert Job.objects.filter(kind="graph.reindex").count() == 3


@pytest.mark.parametrize(
    ("arguments", "message"),
    [(["--organization", "no-such-org"], "no organization"), (["--subject", "nobody"], "no subject 'nobody'")],
)
def test_the_command_names_what_it_could_not_find(arguments: list[str], message: str) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    if "--organization" not in arguments:
        arguments = ["--organization", tenant.organization.slug, *arguments]
    with pytest.raises(CommandError, match=message):
        call_command("graph_reindex", *arguments, stdout=StringIO())


def test_the_command_waits_for_a_real_worker_and_shows_the_rows_it_indexed() -> None:
    tenant = make_tenant()
    subjects = [_said(tenant, "ana"), _said(tenant, "ben")]
    before = [_graph(tenant, subject) for subject in subjects]
    rows = sum(len(_rows(tenant, subject)) for subject in subjects)
    purge_queues()
    out, err = StringIO(), StringIO()
    with celery_worker(queues=["maintenance", "indexing"]):
        call_command("graph_reindex", "--organization", tenant.organization.slug, "--wait", stdout=out, stderr=err)
    with organization_scope(tenant.id):
        jobs = list(Job.objects.filter(kind="graph.reindex"))
    assert len(jobs) == 2 and {job.status for job in jobs} == {Job.Status.SUCCEEDED}
    assert sum(job.result["indexed"] for job in jobs) == rows
    assert f"{rows}/{rows}" in err.getvalue()  # the progress bar reached every row
    assert [_graph(tenant, subject) for subject in subjects] == before


def test_while_a_reindex_is_pending_search_is_direct_and_says_so() -> None:
    tenant = make_tenant()
    subject = _said(tenant, "ana")
    _said(tenant, "ben")

    def search(external_id: str) -> dict[str, Any]:
        response = tenant.client().post(
            f"/v1/subjects/{external_id}/search", {"query": "Where do I live?"}, format="json"
        )
        assert response.status_code == 200, response.content
        return response.json()  # type: ignore[no-any-return]

    assert search("ana")["fallback"] is False
    with organization_scope(tenant.id):
        job = job_create(organization_id=tenant.id, kind="graph.reindex", subject_id=subject.id)
    rebuilding = search("ana")
    assert rebuilding["fallback"] is True and not rebuilding["facts"]
    assert any("Lisbon" in row["text"] for row in rebuilding["rows"][:3])
    assert search("ben")["fallback"] is False  # another subject's graph is whole
    graph_reindex_subject.apply(
        kwargs={"organization_id": str(tenant.id), "job_id": str(job.id), "subject_id": str(subject.id)}
    )
    assert search("ana")["fallback"] is False


def test_a_write_in_flight_during_a_reindex_is_completed_and_indexed() -> None:
    tenant = make_tenant()
    subject = _said(tenant, "ana")
    message = {"id": "m9", "role": "user", "content": "I took up rowing on Saturdays.", "timestamp": SAID}
    accepted = tenant.client().post("/v1/subjects/ana/memories", {"messages": [message]}, format="json")
    assert accepted.status_code == 202, accepted.content
    with organization_scope(tenant.id):  # stored by the request, not yet completed by a worker
        assert EpisodicEvent.objects.filter(index_status=IndexedRecord.IndexStatus.WRITING).count() == 1
    job = _reindex(tenant, subject)
    assert job.status == Job.Status.SUCCEEDED and job.result["rows"] == len(_rows(tenant, subject)) - 1
    assert complete_writes(tenant.id, index=True) == 1
    with organization_scope(tenant.id):
        write_job = Job.objects.get(id=accepted.json()["job_id"])
    assert write_job.status == Job.Status.SUCCEEDED, write_job.error_message
    assert {status for _, _, status in _rows(tenant, subject)} == {IndexedRecord.IndexStatus.INDEXED}
