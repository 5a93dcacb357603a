from __future__ import annotations

from django.db import connection

from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant


def test_create_get_and_list_subjects() -> None:
    tenant = make_tenant()
    client = tenant.client()
    created = client.post(
        "/v1/subjects", {"external_id": "user-42", "kind": "user", "display_name": "Ada"}, format="json"
    )
    assert created.status_code == 201
    assert created.json()["external_id"] == "user-42" and created.json()["kind"] == "user"
    fetched = client.get("/v1/subjects/user-42")
    assert fetched.status_code == 200 and fetched.json()["id"] == created.json()["id"]
    client.post("/v1/subjects", {"external_id": "agent-1", "kind": "agent"}, format="json")
    listed = client.get("/v1/subjects").json()
    assert [s["external_id"] for s in listed["results"]] == ["user-42", "agent-1"]
    assert [s["external_id"] for s in client.get("/v1/subjects?kind=agent").json()["results"]] == ["agent-1"]


def test_list_paginates_with_an_opaque_cursor() -> None:
    tenant = make_tenant()
    for i in range(5):
        tenant.subject(f"s{i}")
    client = tenant.client()
    seen: list[str] = []
    url = "/v1/subjects?limit=2"
    while True:
        page = client.get(url).json()
        seen += [s["external_id"] for s in page["results"]]
        if not page["next_cursor"]:
            break
        url = f"/v1/subjects?limit=2&cursor={page['next_cursor']}"
    assert seen == [f"s{i}" for i in range(5)]
    bad = client.get("/v1/subjects?cursor=not-a-cursor")
    assert bad.status_code == 400 and "cursor" in bad.json()["error"]["message"]


def test_external_id_is_unique_per_organization_only() -> None:
    a, b = make_tenant(), make_tenant()
    assert a.client().post("/v1/subjects", {"external_id": "same", "kind": "user"}, format="json").status_code == 201
    duplicate = a.client().post("/v1/subjects", {"external_id": "same", "kind": "agent"}, format="json")
    assert duplicate.status_code == 409 and duplicate.json()["error"]["code"] == "conflict"
    assert b.client().post("/v1/subjects", {"external_id": "same", "kind": "user"}, format="json").status_code == 201


def test_bad_input_is_a_clear_400_and_writes_nothing() -> None:
    tenant = make_tenant()
    client = tenant.client()
    cases = [
        {"external_id": "", "kind": "user"},
        {"external_id": "a/b", "kind": "user"},
        {"external_id": "x" * 201, "kind": "user"},
        {"external_id": "ok", "kind": "robot"},
        {"kind": "user"},
        {"external_id": "ok", "kind": "user", "metadata": "not an object"},
    ]
    for body in cases:
        response = client.post("/v1/subjects", body, format="json")
        assert response.status_code == 400, body
        error = response.json()["error"]
        assert error["code"] == "validation_error" and error["details"], body
    malformed = client.post("/v1/subjects", "{not json", content_type="application/json")
    assert malformed.status_code == 400 and malformed.json()["error"]["code"] == "malformed_request"
    with organization_scope(tenant.id):
        assert Subject.objects.count() == 0


def test_alternating_organizations_on_one_pooled_connection_never_mix() -> None:
    a, b = make_tenant(), make_tenant()
    a.subject("only-a")
    b.subject("only-b")
    backends = set()
    for _ in range(10):
        for tenant, own in ((a, "only-a"), (b, "only-b")):
            listed = [s["external_id"] for s in tenant.client().get("/v1/subjects").json()["results"]]
            assert listed == [own]
            backends.add(connection.connection.info.backend_pid if connection.connection else None)
            with connection.cursor() as cursor:  # nothing of the request's scope survives it
                cursor.execute("SELECT current_setting('app.organization_id', true)")
                assert cursor.fetchone()[0] in ("", None)
    assert len(backends) == 1  # truly the same server connection throughout
