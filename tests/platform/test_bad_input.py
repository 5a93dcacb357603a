"""Inputs the red-team pass still got a 500, an HTML page or a wrong stored value for: each is
now a 4xx in the one error shape whose message says what to change, with nothing stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from apps.platform.middleware import MAX_PATH_BYTES
from apps.tenancy.api.serializers import MAX_SUBJECT_METADATA_BYTES
from tests.factories import Tenant, make_tenant
from tests.fuzz.test_openapi_fuzz import organization_state
from tests.reliability.support import api_server

MESSAGES = '[{"role": "user", "content": "I moved to Lisbon last May."}]'
DEEP = "[" * 5000 + "]" * 5000


@pytest.fixture
def tenant() -> Tenant:
    tenant = make_tenant()
    tenant.subject("ana")
    return tenant


def _error(response: Any, status: int, code: str, hint: str) -> None:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == code and error["request_id"], error
    assert hint in error["message"], error


def _stored_nothing(tenant: Tenant, before: dict[str, Any]) -> None:
    changed = {table for table, rows in organization_state(tenant.id).items() if rows != before[table]}
    assert changed <= {"tenancy_apikey"}, changed


JSON_CASES = {
    "json nested 5,000 deep": (
        "/v1/subjects",
        f'{{"external_id": "b", "kind": "user", "metadata": {{"x": {DEEP}}}}}',
        "64 levels",
    ),
    "a number no float holds": (
        "/v1/subjects/ana/memories",
        f'{{"messages": {MESSAGES}, "session_id": 1e999999}}',
        "too large for a 64-bit float",
    ),
    "a negative one": ("/v1/subjects/ana/memories", f'{{"messages": {MESSAGES}, "session_id": -1e400}}', "1e400"),
    "NaN": ("/v1/subjects/ana/memories", f'{{"messages": {MESSAGES}, "session_id": NaN}}', "NaN is not valid JSON"),
}


@pytest.mark.parametrize("case", list(JSON_CASES))
def test_json_python_cannot_hold_is_a_400_naming_the_problem(tenant: Tenant, case: str) -> None:
    path, body, hint = JSON_CASES[case]
    before = organization_state(tenant.id)
    response = tenant.client().post(path, body, content_type="application/json")
    _error(response, 400, "malformed_request", hint)
    _stored_nothing(tenant, before)


def test_subject_metadata_over_its_limit_is_a_400_naming_the_limit(tenant: Tenant) -> None:
    before = organization_state(tenant.id)
    body = {"external_id": "big", "kind": "user", "metadata": {"blob": "m" * (2 * 1024 * 1024)}}
    response = tenant.client().post("/v1/subjects", body, format="json")
    _error(response, 400, "validation_error", "")
    assert str(MAX_SUBJECT_METADATA_BYTES) in json.dumps(response.json()["error"]["details"])
    _stored_nothing(tenant, before)
    fits = {"external_id": "small", "kind": "user", "metadata": {"blob": "m" * (MAX_SUBJECT_METADATA_BYTES - 100)}}
    assert tenant.client().post("/v1/subjects", fits, format="json").status_code == 201


@pytest.mark.parametrize(
    "path", ["/v1/subjects/a%00b", "/v1/subjects/ana/memories/episodic?cursor=x%00y", "/v1/subjects?kind%00=user"]
)
def test_a_nul_in_the_path_or_query_is_a_400(tenant: Tenant, path: str) -> None:
    _error(tenant.client().get(path), 400, "malformed_request", "NUL character (%00)")


def test_a_path_over_the_limit_is_a_json_414(tenant: Tenant) -> None:
    response = tenant.client().get("/v1/subjects/" + "a" * 5000)
    _error(response, 414, "uri_too_long", f"at most {MAX_PATH_BYTES}")


def test_a_text_document_with_a_raw_nul_byte_is_a_400_with_nothing_stored(tenant: Tenant) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    before = organization_state(tenant.id)
    upload = SimpleUploadedFile("notes.txt", b"first line\nsecond\x00line\n", content_type="text/plain")
    response = tenant.client().post("/v1/subjects/ana/memories", {"file": upload}, format="multipart")
    _error(response, 400, "validation_error", "NUL byte at offset 17")
    _stored_nothing(tenant, before)


def test_a_form_field_with_a_nul_is_a_400_with_nothing_stored(tenant: Tenant) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    before = organization_state(tenant.id)
    upload = SimpleUploadedFile("notes.txt", b"a clean text", content_type="text/plain")
    response = tenant.client().post(
        "/v1/subjects/ana/memories", {"file": upload, "title": "bad\x00title"}, format="multipart"
    )
    _error(response, 400, "malformed_request", "'title' holds a NUL character")
    _stored_nothing(tenant, before)


# --- through a real server: what gunicorn itself answers ----------------------------------------


@pytest.fixture(scope="module")
def server(django_db_setup: None) -> Iterator[str]:
    with api_server(workers=1, threads=2, name="bad-input") as running:
        yield running.url


@pytest.mark.slow
@pytest.mark.parametrize(
    ("length", "limit"),
    [(5 * 1024, f"at most {MAX_PATH_BYTES}"), (9 * 1024, "longer than 8190 bytes")],
    ids=["5 KB: the application's limit", "9 KB: the server's limit"],
)
def test_a_long_path_through_the_server_is_a_json_414(server: str, tenant: Tenant, length: int, limit: str) -> None:
    response = requests.get(
        f"{server}/v1/subjects/{'a' * length}", headers={"Authorization": f"Bearer {tenant.key}"}, timeout=30
    )
    assert response.status_code == 414, response.text[:300]
    assert response.headers["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == "uri_too_long" and limit in error["message"] and error["request_id"]


@pytest.mark.slow
def test_a_nul_and_malformed_http_through_the_server_are_json(server: str, tenant: Tenant) -> None:
    nul = requests.get(f"{server}/v1/subjects/a%00b", headers={"Authorization": f"Bearer {tenant.key}"}, timeout=30)
    assert nul.status_code == 400 and nul.json()["error"]["code"] == "malformed_request"
    # A request line gunicorn cannot parse never reaches the application: still the one shape.
    host, port = server.removeprefix("http://").split(":")
    import socket

    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"GET /v1/subjects HTTP/9.9\r\nHost: x\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"Content-Type: application/json" in head, answer[:300]
    assert json.loads(body)["error"]["code"] == "malformed_request"
