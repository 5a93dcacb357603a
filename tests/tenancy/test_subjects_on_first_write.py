"""A write to an unknown subject creates it (kind from the body, default user); reads of an
unknown subject stay 404; the organization can turn it off; two concurrent first writes make
one subject."""

from __future__ import annotations

import threading
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from apps.audit.models import AuditEntry
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, make_tenant

WRITE = {"text": "I adopted a cat named Miso last week."}


def _subjects(tenant: Tenant) -> list[tuple[str, str]]:
    with organization_scope(tenant.id):
        return list(Subject.objects.order_by("external_id").values_list("external_id", "kind"))


def test_a_first_write_creates_the_subject_and_reads_of_unknown_subjects_stay_404() -> None:
    tenant = make_tenant()
    client = tenant.client()
    for path in ("/v1/subjects/ana", "/v1/subjects/ana/memories?type=episodic", "/v1/subjects/ana/core"):
        assert client.get(path).status_code == 404
    assert client.post("/v1/subjects/ana/search", {"query": "cat"}, format="json").status_code == 404
    assert _subjects(tenant) == []

    written = client.post("/v1/subjects/ana/memories", WRITE, format="json")
    assert written.status_code == 202, written.content
    agent = client.post("/v1/subjects/bot-7/memories", {**WRITE, "subject_kind": "agent"}, format="json")
    assert agent.status_code == 202, agent.content
    batch = client.post(
        "/v1/subjects/cy/memories/batch",
        {"chunks": [{"text": "We moved to Lisbon in 2021."}], "subject_kind": "agent"},
        format="json",
    )
    assert batch.status_code == 202, batch.content
    upload = SimpleUploadedFile("notes.txt", b"Repotting: water first.", "text/plain")
    document = client.post("/v1/subjects/dee/memories", {"file": upload}, format="multipart")
    assert document.status_code == 202, document.content

    assert _subjects(tenant) == [("ana", "user"), ("bot-7", "agent"), ("cy", "agent"), ("dee", "user")]
    got = client.get("/v1/subjects/ana")
    assert got.status_code == 200 and got.json()["kind"] == "user"
    # The kind names the subject it creates; an existing subject keeps its own.
    assert (
        client.post("/v1/subjects/ana/memories", {**WRITE, "subject_kind": "agent"}, format="json").status_code == 202
    )
    assert ("ana", "user") in _subjects(tenant)
    with organization_scope(tenant.id):
        created = AuditEntry.objects.filter(action="subject.create").count()
    assert created == 4


def test_bad_input_creates_no_subject() -> None:
    tenant = make_tenant()
    client = tenant.client()
    bad_kind = client.post("/v1/subjects/ana/memories", {**WRITE, "subject_kind": "robot"}, format="json")
    assert bad_kind.status_code == 400 and "subject_kind" in str(bad_kind.json()["error"])
    bad_body = client.post("/v1/subjects/ana/memories", {"messages": []}, format="json")
    assert bad_body.status_code == 400
    bad_id = client.post("/v1/subjects/has%20space/memories", WRITE, format="json")
    assert bad_id.status_code == 400 and "1-200 characters" in bad_id.json()["error"]["message"]
    assert _subjects(tenant) == []


def test_the_organization_can_turn_it_off() -> None:
    tenant = make_tenant()
    admin = tenant.client()
    assert admin.get("/v1/organization").json()["subjects_created_on_write"] is True
    reader = tenant.client(tenant.issue_key(["memories:read", "memories:write"]))
    assert reader.patch("/v1/organization", {"subjects_created_on_write": False}, format="json").status_code == 403
    bad = admin.patch("/v1/organization", {"subjects_created_on_write": False, "name": "x"}, format="json")
    assert bad.status_code == 400
    for not_a_boolean in (0.0, 0, "false", None):  # a JSON boolean only, whatever else reads as false
        refused = admin.patch("/v1/organization", {"subjects_created_on_write": not_a_boolean}, format="json")
        assert refused.status_code == 400 and "subjects_created_on_write" in refused.content.decode()
    assert admin.get("/v1/organization").json()["subjects_created_on_write"] is True  # nothing changed

    off = admin.patch("/v1/organization", {"subjects_created_on_write": False}, format="json")
    assert off.status_code == 200 and off.json()["subjects_created_on_write"] is False
    refused = admin.post("/v1/subjects/ana/memories", WRITE, format="json")
    assert refused.status_code == 404
    assert "POST /v1/subjects" in refused.json()["error"]["message"]
    batch = admin.post("/v1/subjects/ana/memories/batch", {"chunks": [WRITE]}, format="json")
    assert batch.status_code == 404
    assert _subjects(tenant) == []
    # Another organization's setting is its own.
    other = make_tenant()
    assert other.client().get("/v1/organization").json()["subjects_created_on_write"] is True
    assert other.client().post("/v1/subjects/ana/memories", WRITE, format="json").status_code == 202
    assert _subjects(tenant) == [] and _subjects(other) == [("ana", "user")]

    admin.patch("/v1/organization", {"subjects_created_on_write": True}, format="json")
    assert admin.post("/v1/subjects/ana/memories", WRITE, format="json").status_code == 202


def test_another_organizations_first_write_creates_its_own_subject_only() -> None:
    tenant, intruder = make_tenant(), make_tenant()
    tenant.subject("ana")
    assert tenant.client().post("/v1/subjects/ana/memories", WRITE, format="json").status_code == 202
    owner_rows = tenant.client().get("/v1/subjects/ana/memories?type=episodic").json()["results"]
    written = intruder.client().post("/v1/subjects/ana/memories", {"text": "I live in Oslo."}, format="json")
    assert written.status_code == 202
    theirs = intruder.client().get("/v1/subjects/ana/memories?type=episodic").json()["results"]
    assert not {r["id"] for r in theirs} & {r["id"] for r in owner_rows}
    assert tenant.client().get("/v1/subjects/ana/memories?type=episodic").json()["results"] == owner_rows
    with organization_scope(tenant.id):
        owner_subject = Subject.objects.get(external_id="ana").id
    with organization_scope(intruder.id):
        assert Subject.objects.get(external_id="ana").id != owner_subject


def test_concurrent_first_writes_make_one_subject() -> None:
    tenant = make_tenant()
    count = 4
    barrier = threading.Barrier(count)
    answers: list[Any] = [None] * count

    def write(index: int) -> None:
        try:
            barrier.wait()
            answers[index] = tenant.client().post(
                "/v1/subjects/zoe/memories", {"text": f"Note {index}: I like tea."}, format="json"
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert [a.status_code for a in answers] == [202] * count, [a.content for a in answers]
    assert _subjects(tenant) == [("zoe", "user")]
    listed = tenant.client().get("/v1/subjects/zoe/memories?type=episodic&limit=200").json()["results"]
    assert len({r["provenance"]["chunk_id"] for r in listed}) == count  # every write landed on it
    with organization_scope(tenant.id):
        assert AuditEntry.objects.filter(action="subject.create").count() == 1
