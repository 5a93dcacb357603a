"""An organization's graph is created on its first write, not with the organization (ADR 0050):
a new organization adds no relation to the catalog, every read before the first write answers
empty (200, never an error) without creating anything, the first indexing creates the graph
once even when two connections index the first rows at the same moment, and another
organization's key still reaches nothing."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, connections
from django.urls import reverse
from pytest_django.fixtures import Settings

from apps.dream.services import dream_run
from apps.erasure.services import organization_erase
from apps.graph import adapter
from apps.graph.services import adjacency_rebuild_missing, index_chunk, index_sweep
from apps.tenancy.models import Membership, Subject
from apps.tenancy.scope import organization_scope
from tests.console.conftest import make_staff
from tests.erasure.support import run_erasure
from tests.factories import Tenant, complete_writes, make_tenant

MESSAGE = {
    "role": "user",
    "name": "Maya",
    "timestamp": "2024-05-08T10:00:00Z",
    "content": "Yesterday I went hiking with my sister Leah at Mount Tam.",
}
OTHER_MESSAGE = {
    "role": "user",
    "name": "Tom",
    "timestamp": "2024-05-09T10:00:00Z",
    "content": "On Friday I played chess with my friend Omar at the Oakland library.",
}


def _relations(schema: str) -> int:
    with connections["owner"].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s",
            [schema],
        )
        return int(cursor.fetchone()[0])


def _catalog_relations() -> int:
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_class")
        return int(cursor.fetchone()[0])


def _has_graph(tenant: Tenant) -> bool:
    return adapter.graph_exists(tenant.organization.graph_name, using="owner")


def _write(tenant: Tenant, external_id: str, message: dict[str, str]) -> str:
    response = tenant.client().post(f"/v1/subjects/{external_id}/memories", {"messages": [message]}, format="json")
    assert response.status_code == 202, response.content
    complete_writes(tenant.id)  # what the worker does before it indexes (ADR 0054)
    return str(response.json()["chunk_id"])


def _index(tenant: Tenant, chunk_id: str) -> dict[str, Any]:
    with organization_scope(tenant.id):
        return index_chunk(chunk_id=chunk_id)  # type: ignore[arg-type]


def test_a_new_organization_adds_no_relation_until_it_writes() -> None:
    make_tenant()  # the first organization of the run pays for the plans and caches it warms
    before = _catalog_relations()
    tenant = make_tenant()
    tenant.subject("maya")
    assert _catalog_relations() == before
    assert not _has_graph(tenant) and _relations(tenant.organization.graph_name) == 0


def test_the_first_indexing_creates_the_graph_with_labels_indexes_and_grants() -> None:
    tenant = make_tenant()
    chunk_id = _write(tenant, "maya", MESSAGE)
    assert not _has_graph(tenant)  # the rows are stored; the graph waits for the indexer
    before = _catalog_relations()
    assert _index(tenant, chunk_id)["failed"] == 0
    graph = tenant.organization.graph_name
    assert _has_graph(tenant) and _relations(graph) >= 20  # label tables, their indexes, sequences
    assert _catalog_relations() - before >= 30  # with their TOAST tables
    with connections["owner"].cursor() as cursor:
        cursor.execute(
            "SELECT l.name, l.kind FROM ag_catalog.ag_label l JOIN ag_catalog.ag_graph g ON g.graphid = l.graph"
            " WHERE g.name = %s",
            [graph],
        )
        labels = set(cursor.fetchall())
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = %s", [graph])
        indexes = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT has_schema_privilege('mirix_app', %s, 'USAGE')", [graph])
        usage = cursor.fetchone()
    assert {("Anchor", "v"), ("Frame", "v"), ("ARM", "e")} <= labels
    assert any("USING gin (properties)" in i and '"Anchor"' in i for i in indexes)
    assert any(i.startswith("CREATE UNIQUE INDEX") and '"key"' in i and '"Anchor"' in i for i in indexes)
    assert any(i.startswith("CREATE UNIQUE INDEX") and '"frame_id"' in i for i in indexes)
    assert usage == (True,)
    anchors = tenant.client().get("/v1/subjects/maya/graph/anchors").json()["results"]
    assert {"leah", "mount tam"} <= {a["key"] for a in anchors}


def _first_row_reads(tenant: Tenant) -> dict[str, Any]:
    """Every read path, on an organization with rows written but nothing indexed (no graph)."""
    client = tenant.client()
    seen: dict[str, Any] = {}
    for name, response in (
        ("anchors", client.get("/v1/subjects/maya/graph/anchors")),
        ("frames", client.get("/v1/subjects/maya/graph/frames")),
        ("frames_of_anchor", client.get("/v1/subjects/maya/graph/frames", {"anchor": "leah"})),
        ("search_graph", client.post("/v1/subjects/maya/search", {"query": "Who is Leah?"}, format="json")),
        ("search_flat", client.post("/v1/subjects/maya/search", {"query": "Leah", "mode": "flat"}, format="json")),
        ("answer", client.post("/v1/subjects/maya/answer", {"query": "Where did Maya hike?"}, format="json")),
        ("export", client.get("/v1/subjects/maya/export")),
        ("usage", client.get("/v1/usage")),
        ("readyz", client.get("/readyz")),
    ):
        assert response.status_code == 200, (name, response.content[:300])
        seen[name] = response.json()
    missing = client.get("/v1/subjects/maya/graph/frames/f-none")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    with organization_scope(tenant.id):
        subject = Subject.objects.get(external_id="maya")
    staff = make_staff(tenant, role=Membership.Role.VIEWER).client()
    page = staff.get(reverse("console:subject-graph", kwargs={"org_id": tenant.id, "subject_id": subject.id}))
    assert page.status_code == 200, page.content[:300]
    check = client.post("/v1/graph/check")
    assert check.status_code == 202
    from workers.maintenance import graph_check_task

    graph_check_task.apply(kwargs={"organization_id": str(tenant.id), "job_id": check.json()["job_id"]})
    seen["graph_check"] = client.get(f"/v1/jobs/{check.json()['job_id']}").json()
    with organization_scope(tenant.id):
        seen["sweep"] = (adjacency_rebuild_missing(), index_sweep(organization_id=tenant.id))
        seen["dream"] = dream_run(subject=subject, chunk_ids=[], final=True)
        seen["graph_created"] = adapter.graph_created(organization_id=tenant.id)
    return seen


def test_every_read_before_the_first_indexing_is_empty_and_creates_nothing() -> None:
    tenant = make_tenant()
    _write(tenant, "maya", MESSAGE)
    seen = _first_row_reads(tenant)
    assert seen["anchors"] == {"results": [], "next_cursor": None}
    assert seen["frames"]["results"] == [] and seen["frames_of_anchor"]["results"] == []
    assert seen["search_graph"]["mode"] == "graph" and seen["search_graph"]["fallback"] is False
    assert any("Leah" in row["text"] for row in seen["search_flat"]["rows"])  # the evidence is there
    assert "answer" in seen["answer"]
    assert seen["export"]["graph"] == {"vertices": [], "edges": []} and seen["export"]["memories"]["episodic"]
    assert seen["readyz"]["status"] == "ready"
    assert seen["graph_check"]["status"] == "succeeded"
    assert seen["graph_check"]["result"] == {"graph": "not_created", "vertices": 0}
    assert seen["sweep"] == ([], 0)
    assert seen["dream"]["merged"] == 0 and seen["dream"]["pairs_considered"] == 0
    assert seen["graph_created"] is False
    assert not _has_graph(tenant) and _relations(tenant.organization.graph_name) == 0


def test_erasing_a_subject_or_the_organization_before_any_graph_exists() -> None:
    tenant = make_tenant()
    _write(tenant, "maya", MESSAGE)
    _write(tenant, "tom", OTHER_MESSAGE)
    accepted = tenant.client().delete("/v1/subjects/maya")
    assert accepted.status_code == 202, accepted.content
    done = run_erasure(accepted.json()["erasure_request_id"])
    assert done.status == "completed" and not done.counts.get("graph_vertices")
    assert not _has_graph(tenant)
    request = organization_erase(organization_id=tenant.id)
    assert request.status == "completed" and request.counts.get("graph_vertices", 0) == 0
    assert request.counts["tenancy_subject"] == 1
    assert not _has_graph(tenant)


def test_another_organizations_key_reaches_nothing_and_creates_nothing() -> None:
    owner, intruder = make_tenant(), make_tenant()
    chunk_id = _write(owner, "maya", MESSAGE)
    for path in ("/v1/subjects/maya/graph/anchors", "/v1/subjects/maya/graph/frames", "/v1/subjects/maya/export"):
        assert intruder.client().get(path).status_code == 404, path
    assert intruder.client().post("/v1/subjects/maya/search", {"query": "Leah"}, format="json").status_code == 404
    with organization_scope(intruder.id), pytest.raises(adapter.CrossTenantGraphAccess):
        adapter.graph_ensure(organization_id=owner.id)
    assert not _has_graph(owner) and not _has_graph(intruder)
    # Once the owner's graph exists, the intruder still reads none of it.
    _index(owner, chunk_id)
    assert _has_graph(owner)
    assert intruder.client().get("/v1/subjects/maya/graph/anchors").status_code == 404
    with organization_scope(intruder.id), pytest.raises(adapter.CrossTenantGraphAccess):
        adapter.cypher(organization_id=owner.id, query="MATCH (n) RETURN n", params={}, returns=["n"])


def _waiting_for_the_graph_lock() -> int:
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        return int(cursor.fetchone()[0])


def test_two_connections_indexing_the_first_rows_at_once_create_the_graph_once(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = make_tenant()
    chunks = [_write(tenant, "maya", MESSAGE), _write(tenant, "tom", OTHER_MESSAGE)]
    # The first creator holds the lock for a second: the other indexer must wait for it and
    # then find the graph, not create it again (AGE refuses a second create_graph of a name).
    settings.FAULT_PAUSES = {"graph.before_create": 3.0}
    created: list[str] = []
    real_create = adapter.graph_create

    def counting_create(graph_name: str) -> None:
        created.append(graph_name)
        real_create(graph_name)

    monkeypatch.setattr(adapter, "graph_create", counting_create)
    results: list[dict[str, Any]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(chunks))

    def index(chunk_id: str) -> None:
        try:
            barrier.wait()
            results.append(_index(tenant, chunk_id))
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            for alias in ("default", "owner"):
                connections[alias].close()

    threads = [threading.Thread(target=index, args=(chunk_id,)) for chunk_id in chunks]
    for thread in threads:
        thread.start()
    waited = 0
    deadline = time.monotonic() + 30
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        waited = max(waited, _waiting_for_the_graph_lock())
        time.sleep(0.05)
    for thread in threads:
        thread.join()
    assert errors == []
    assert waited >= 1  # the two really met at the lock
    assert created == [tenant.organization.graph_name]
    assert [r["failed"] for r in results] == [0, 0] and all(r["anchors_created"] for r in results)
    with organization_scope(tenant.id):
        keys = {
            row[0]
            for row in adapter.cypher(
                organization_id=tenant.id, query="MATCH (a:Anchor) RETURN a.key", params={}, returns=["k"]
            )
        }
    assert {"leah", "omar"} <= keys
    connection.close()
