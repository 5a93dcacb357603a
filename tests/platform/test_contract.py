"""One naming scheme through the HTTP API (ADR 0040): ``query`` everywhere (``question`` a
deprecated alias), ``limit`` and ``token_budget`` on every search, PATCH answers 200 with the
new row, one listing of every store with cursors across stores, ``GET /v1/jobs`` with its
filters, one page shape on every list, rate-limit headers on every answer; and another
organization's key on each of them is a 404 that changes nothing."""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from apps.jobs.models import Job
from apps.jobs.services import job_create
from apps.language.words import count_tokens
from apps.procedural.services import skill_create
from apps.tenancy.scope import organization_scope
from apps.tenancy.selectors import subject_get
from tests.authz import ENDPOINTS, EXTRA_OBJECTS, organization_snapshot, tenant_objects
from tests.factories import Tenant, complete_writes, make_tenant, written_answer

MESSAGES = [
    {"role": "user", "name": "Ana", "content": "Yesterday I hiked Mount Tam with Leo.", "timestamp": "2024-03-02T10:00:00Z"},
    {"role": "user", "name": "Ana", "content": "I work as a pediatric nurse in Oakland.", "timestamp": "2024-03-02T10:01:00Z"},
    {"role": "user", "name": "Ana", "timestamp": "2024-03-02T10:02:00Z",
     "content": "How I make cold brew: first grind 100 grams of coffee coarsely, then steep it in 1 litre of "
     "water for 16 hours, then strain it through a paper filter."},
]  # fmt: skip


def _write(tenant: Tenant, subject: str = "ana") -> dict[str, Any]:
    client = tenant.client()
    written = client.post(f"/v1/subjects/{subject}/memories", {"messages": MESSAGES}, format="json")
    assert written.status_code == 202, written.content
    document = SimpleUploadedFile("notes.txt", b"Repotting: water the plant first, then move it.", "text/plain")
    uploaded = client.post(f"/v1/subjects/{subject}/memories", {"file": document}, format="multipart")
    assert uploaded.status_code == 202, uploaded.content
    complete_writes(tenant.id)  # what the worker does (ADR 0054)
    return {"chat": written_answer(tenant.id, written.json()), "document": uploaded.json()}


@pytest.fixture
def ana() -> Tenant:
    tenant = make_tenant()
    tenant.subject("ana")
    _write(tenant)
    return tenant


# --- query, and question as its deprecated alias ------------------------------------------------


def test_answer_takes_query_and_question_as_a_deprecated_alias(ana: Tenant) -> None:
    client = ana.client()
    current = client.post("/v1/subjects/ana/answer", {"query": "Where did Ana hike?"}, format="json")
    assert current.status_code == 200, current.content
    assert "Deprecation" not in current.headers and "Link" not in current.headers

    aliased = client.post("/v1/subjects/ana/answer", {"question": "Where did Ana hike?"}, format="json")
    assert aliased.status_code == 200, aliased.content
    assert aliased.json()["answer"] == current.json()["answer"]
    assert aliased.headers["Deprecation"].startswith("@") and int(aliased.headers["Deprecation"][1:]) > 0
    assert aliased.headers["Link"] == '</v1/docs#operation/search_answer>; rel="deprecation"; type="text/html"'
    assert client.get("/v1/docs").status_code == 200  # the link's page exists


def test_answer_with_both_names_is_a_400_naming_them() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    before = organization_snapshot(tenant.id)
    both = tenant.client().post("/v1/subjects/ana/answer", {"query": "Where?", "question": "Where?"}, format="json")
    assert both.status_code == 400
    error = both.json()["error"]
    assert error["code"] == "validation_error" and "'query'" in error["message"] and "'question'" in error["message"]
    assert error["request_id"] and "question" in error["details"]
    neither = tenant.client().post("/v1/subjects/ana/answer", {"mode": "flat"}, format="json")
    assert neither.status_code == 400 and "query" in neither.json()["error"]["details"]
    assert organization_snapshot(tenant.id) == before


# --- limit and token_budget on every search -----------------------------------------------------


def _skill(tenant: Tenant) -> None:
    from apps.consent.services import consent_update

    with organization_scope(tenant.id):
        subject = subject_get(external_id="ana")
        consent_update(subject=subject, changes={"learn_skills": True})
        for name, text in (
            ("Cold brew", "Grind 100 grams of coffee coarse and steep it in cold water for 16 hours."),
            ("Espresso", "Tamp 18 grams of fine coffee and pull 36 grams in 28 seconds."),
        ):
            skill_create(subject=subject, name=name, domain="coffee", text=text, citations=(), job=None)


def test_every_search_takes_limit_and_token_budget(ana: Tenant) -> None:
    client = ana.client()
    evidence = client.post("/v1/subjects/ana/search", {"query": "What does Ana do?", "mode": "flat"}, format="json")
    assert evidence.status_code == 200 and len(evidence.json()["rows"]) > 1
    one = client.post("/v1/subjects/ana/search", {"query": "What does Ana do?", "mode": "flat", "limit": 1})
    assert one.status_code == 200 and len(one.json()["rows"]) == 1
    assert one.json()["rows"][0]["id"] == evidence.json()["rows"][0]["id"]
    budget = count_tokens(evidence.json()["rows"][0]["text"])
    tight = client.post(
        "/v1/subjects/ana/search", {"query": "What does Ana do?", "mode": "flat", "token_budget": budget}
    )
    assert tight.status_code == 200 and 1 <= len(tight.json()["rows"]) < len(evidence.json()["rows"])
    assert tight.json()["budget"]["tokens_returned"] <= budget
    too_many = client.post("/v1/subjects/ana/search", {"query": "x", "limit": 10_000}, format="json")
    assert too_many.status_code == 400 and "limit" in too_many.json()["error"]["details"]

    for store in ("procedural", "resource"):
        url = f"/v1/subjects/ana/memories/{store}/search"
        hits = client.post(url, {"query": "coffee water plant", "limit": 1}, format="json")
        assert hits.status_code == 200, hits.content
        assert len(hits.json()["results"]) == 1 and hits.json()["next_cursor"] is None
        nothing = client.post(url, {"query": "coffee water plant", "token_budget": 1}, format="json")
        assert nothing.status_code == 200
        if store == "procedural":  # no row's content fits one token
            assert nothing.json()["results"] == []
        else:  # a resource's best passage is cut to the budget
            assert all(e["tokens"] <= 1 for hit in nothing.json()["results"] for e in hit["excerpts"])

    _skill(ana)
    skills = client.post("/v1/subjects/ana/skills/search", {"query": "coffee", "limit": 1}, format="json").json()
    assert len(skills["results"]) == 1
    everything = client.post("/v1/subjects/ana/skills/search", {"query": "coffee"}, format="json").json()
    assert len(everything["results"]) == 2
    first_text = everything["results"][0]["skill"]["text"]
    budgeted = client.post(
        "/v1/subjects/ana/skills/search", {"query": "coffee", "token_budget": count_tokens(first_text)}, format="json"
    ).json()
    assert [r["skill"]["text"] for r in budgeted["results"]] == [first_text]


# --- PATCH answers 200 with the new row ---------------------------------------------------------


def test_patch_answers_200_with_the_new_row(ana: Tenant) -> None:
    client = ana.client()
    [row] = [r for r in client.get("/v1/subjects/ana/memories?type=episodic").json()["results"] if "Tam" in str(r)]
    patched = client.patch(
        f"/v1/subjects/ana/memories/episodic/{row['id']}",
        {"changes": {"summary": "Ana hiked Mount Tamalpais with Leo."}},
        format="json",
    )
    assert patched.status_code == 200, patched.content
    new = patched.json()
    assert new["id"] != row["id"] and new["supersedes"] == row["id"] and new["current"] is True
    assert new["content"]["summary"] == "Ana hiked Mount Tamalpais with Leo." and new["type"] == "episodic"
    fetched = client.get(f"/v1/subjects/ana/memories/episodic/{new['id']}").json()
    assert fetched["content"] == new["content"]


# --- one listing of every store -----------------------------------------------------------------


def _pages(client: APIClient, url: str) -> tuple[list[dict[str, Any]], int]:
    rows: list[dict[str, Any]] = []
    cursor: str | None = None
    pages = 0
    while True:
        separator = "&" if "?" in url else "?"
        response = client.get(f"{url}{separator}cursor={cursor}" if cursor else url)
        assert response.status_code == 200, response.content
        body = response.json()
        assert set(body) == {"results", "next_cursor"}
        rows += body["results"]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            return rows, pages


def test_memories_without_type_lists_every_store_with_cursors_across_stores(ana: Tenant) -> None:
    client = ana.client()
    _write(ana)  # a second write: more rows, at other times
    by_store = {
        store: client.get(f"/v1/subjects/ana/memories?type={store}&limit=200").json()["results"]
        for store in ("core", "episodic", "semantic", "procedural", "resource")
    }
    expected = {(store, row["id"]) for store, rows in by_store.items() for row in rows}
    assert len({store for store, _ in expected}) >= 4, by_store.keys()

    everything, one_page = _pages(client, "/v1/subjects/ana/memories?limit=200")
    assert one_page == 1 and {(row["type"], row["id"]) for row in everything} == expected
    paged, pages = _pages(client, "/v1/subjects/ana/memories?limit=2")
    assert pages == (len(expected) + 1) // 2 and pages > 3
    assert [(row["type"], row["id"]) for row in paged] == [(row["type"], row["id"]) for row in everything]
    keys = [(datetime.fromisoformat(row["created_at"]), row["type"], row["id"]) for row in paged]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert "vault" not in {row["type"] for row in paged}
    # Filters still apply across stores; an episodic-only filter says to pass the type.
    assert _pages(client, "/v1/subjects/ana/memories?session_id=none-such")[0] == []
    refused = client.get("/v1/subjects/ana/memories?event_after=2024-01-01T00:00:00Z")
    assert refused.status_code == 400 and "type=episodic" in refused.json()["error"]["message"]
    forged = client.get("/v1/subjects/ana/memories?cursor=bm90LWEtY3Vyc29y")
    assert forged.status_code == 400 and "next_cursor" in forged.json()["error"]["message"]


# --- GET /v1/jobs -------------------------------------------------------------------------------


def test_jobs_are_listed_with_filters_and_pages() -> None:
    tenant = make_tenant()
    ana, ben = tenant.subject("ana"), tenant.subject("ben")
    with organization_scope(tenant.id):
        jobs = [
            job_create(organization_id=tenant.id, kind="graph.check"),
            job_create(organization_id=tenant.id, kind="memory.batch_ingest", subject_id=ana.id),
            job_create(organization_id=tenant.id, kind="memory.batch_ingest", subject_id=ben.id),
            job_create(organization_id=tenant.id, kind="dream.semantic", subject_id=ana.id),
        ]
        Job.objects.filter(id=jobs[1].id).update(status=Job.Status.FAILED, error_code="x", error_message="broke")
        middle = Job.objects.get(id=jobs[2].id).created_at
    client = tenant.client()

    def listed(**params: Any) -> list[str]:
        response = client.get("/v1/jobs", params)
        assert response.status_code == 200, response.content
        return [job["id"] for job in response.json()["results"]]

    ids = [str(job.id) for job in jobs]
    assert listed() == ids[::-1]  # newest first
    assert listed(status="failed") == [ids[1]]
    assert listed(kind="memory.batch_ingest") == [ids[2], ids[1]]
    assert listed(subject="ana") == [ids[3], ids[1]]
    assert listed(subject="ana", kind="dream.semantic") == [ids[3]]
    assert listed(created_before=middle.isoformat()) == [ids[1], ids[0]]
    assert listed(created_after=middle.isoformat()) == [ids[3], ids[2]]
    paged, pages = _pages(client, "/v1/jobs?limit=3")
    assert [job["id"] for job in paged] == ids[::-1] and pages == 2
    assert paged[-2]["error"] == {"code": "x", "message": "broke"} and paged[-2]["status"] == "failed"

    unknown = client.get("/v1/jobs", {"subject": "nobody"})
    assert unknown.status_code == 404 and "nobody" in unknown.json()["error"]["message"]
    bad = client.get("/v1/jobs", {"status": "exploded"})
    assert bad.status_code == 400 and "status" in bad.json()["error"]["details"]
    backwards = client.get("/v1/jobs", {"created_after": middle.isoformat(), "created_before": middle.isoformat()})
    assert backwards.status_code == 400

    intruder = make_tenant()
    assert intruder.client().get("/v1/jobs").json() == {"results": [], "next_cursor": None}
    assert intruder.client().get("/v1/jobs", {"subject": "ana"}).status_code == 404


# --- one page shape on every list route ---------------------------------------------------------


def _matches(schema_path: str, route: str) -> bool:
    """The schema's ``/v1/subjects/{external_id}`` covers the registry's ``/v1/subjects/{subject}``."""
    pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(schema_path))
    return re.fullmatch(pattern, route) is not None


def test_every_list_route_answers_results_and_next_cursor() -> None:
    tenant = make_tenant()
    objects = tenant_objects(tenant)
    for extra in EXTRA_OBJECTS:
        objects.update(extra(tenant))
    schema = APIClient().get("/v1/schema", {"format": "json"}).json()
    components = schema["components"]["schemas"]
    list_paths = set()
    for path, operations in schema["paths"].items():
        response = operations.get("get", {}).get("responses", {}).get("200", {})
        ref = response.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref", "")
        if "results" in components.get(ref.rsplit("/", 1)[-1], {}).get("properties", {}):
            list_paths.add(path)
    assert len(list_paths) >= 15
    checked = set()
    for endpoint in ENDPOINTS:
        if endpoint.method != "GET":
            continue
        matches = {path for path in list_paths if _matches(path, endpoint.route.split("?")[0])}
        if not matches:
            continue
        response = tenant.client().get(endpoint.url(objects))
        assert response.status_code == 200, (endpoint.route, response.content[:300])
        body = response.json()
        assert set(body) == {"results", "next_cursor"}, endpoint.route
        assert isinstance(body["results"], list) and (
            body["next_cursor"] is None or isinstance(body["next_cursor"], str)
        )
        checked |= matches
    assert checked == list_paths  # every list route of the schema was called
    assert "/v1/audit-log" in checked


# --- rate-limit headers -------------------------------------------------------------------------


def test_answers_carry_the_rate_limit_headers() -> None:
    tenant = make_tenant()
    key = tenant.issue_key(["memories:read"], rate_limit=3)
    client = tenant.client(key)
    seen = []
    for _ in range(3):
        response = client.get("/v1/subjects")
        assert response.status_code == 200
        seen.append(response)
    assert [r.headers["X-RateLimit-Limit"] for r in seen] == ["3", "3", "3"]
    assert [r.headers["X-RateLimit-Remaining"] for r in seen] == ["2", "1", "0"]
    reset = int(seen[0].headers["X-RateLimit-Reset"])
    assert time.time() < reset <= time.time() + 61
    throttled = client.get("/v1/subjects")
    assert throttled.status_code == 429 and throttled.headers["X-RateLimit-Remaining"] == "0"
    assert throttled.headers["X-RateLimit-Reset"] == str(reset)
    # Every kind of answer carries them: a write, a 404, a stream.
    full = tenant.client()
    for response in (
        full.post("/v1/subjects", {"external_id": "new", "kind": "user"}, format="json"),
        full.get("/v1/subjects/nobody"),
        full.get("/v1/audit-log"),
    ):
        assert int(response.headers["X-RateLimit-Limit"]) > 0 and "X-RateLimit-Remaining" in response.headers
    assert "X-RateLimit-Limit" not in APIClient().get("/healthz").headers


# --- another organization's key -----------------------------------------------------------------


def test_another_organizations_key_is_a_404_on_each_new_and_changed_call(ana: Tenant) -> None:
    _skill(ana)
    with organization_scope(ana.id):
        job_create(organization_id=ana.id, kind="graph.check", subject_id=subject_get(external_id="ana").id)
    row = ana.client().get("/v1/subjects/ana/memories?type=episodic").json()["results"][0]
    intruder = make_tenant()
    intruder.subject("someone-else")
    before = organization_snapshot(ana.id)
    client = intruder.client()
    calls = [
        client.post("/v1/subjects/ana/answer", {"question": "Where did Ana hike?"}, format="json"),
        client.post("/v1/subjects/ana/answer", {"query": "Where did Ana hike?"}, format="json"),
        client.post("/v1/subjects/ana/search", {"query": "hike", "limit": 1, "token_budget": 50}, format="json"),
        client.post("/v1/subjects/ana/memories/procedural/search", {"query": "coffee", "token_budget": 50}),
        client.post("/v1/subjects/ana/memories/resource/search", {"query": "plant", "limit": 1}, format="json"),
        client.post("/v1/subjects/ana/skills/search", {"query": "coffee", "token_budget": 50}, format="json"),
        client.patch(f"/v1/subjects/ana/memories/episodic/{row['id']}", {"changes": {"summary": "x"}}, format="json"),
        client.get("/v1/subjects/ana/memories"),
        client.get("/v1/subjects/ana/memories?limit=1"),
        client.get(f"/v1/subjects/ana/memories/episodic/{row['id']}/history"),
        client.get("/v1/subjects/ana/core"),
        client.get("/v1/subjects/ana/vault"),
        client.get("/v1/subjects/ana/skills"),
        client.get("/v1/subjects/ana/dream/merges"),
        client.get("/v1/jobs", {"subject": "ana"}),
    ]
    for response in calls:
        assert response.status_code == 404, (response.request["PATH_INFO"], response.content[:200])
        assert response.json()["error"]["code"] == "not_found" and str(ana.id) not in response.content.decode()
    own = client.get("/v1/jobs").json()
    assert own == {"results": [], "next_cursor": None}
    assert organization_snapshot(ana.id) == before
