"""Oversized requests through a real server: a clear 413 (body over the server's limit) or
400 (a field over its own limit) with a message naming the limit, and nothing stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from apps.memory.api.serializers import MAX_CHUNKS, MAX_MESSAGE_CHARS, MAX_MESSAGES, MAX_TEXT_CHARS
from apps.memory.services import MAX_DOCUMENT_BYTES
from tests.factories import Tenant, make_tenant
from tests.fuzz.test_openapi_fuzz import organization_state
from tests.reliability.support import api_server


@pytest.fixture(scope="module")
def server(django_db_setup: None) -> Iterator[str]:
    with api_server(workers=1, threads=1, name="oversized") as running:
        yield running.url


@pytest.fixture
def tenant() -> Tenant:
    tenant = make_tenant("oversized")
    tenant.subject("mia")
    return tenant


def _message(content: str) -> dict[str, str]:
    return {"role": "user", "content": content}


def _post(server: str, tenant: Tenant, path: str, **kwargs: Any) -> requests.Response:
    headers = {"Authorization": f"Bearer {tenant.key}", **kwargs.pop("headers", {})}
    return requests.post(f"{server}/v1/subjects/mia{path}", headers=headers, timeout=120, **kwargs)


BODY_LIMIT = 10 * 1024 * 1024  # DATA_UPLOAD_MAX_MEMORY_SIZE

CASES: dict[str, tuple[str, dict[str, Any], int, str]] = {
    "json body over the server limit": (
        "/memories",
        {"data": json.dumps({"text": "x" * (BODY_LIMIT + 1024)}), "headers": {"Content-Type": "application/json"}},
        413,
        "larger than",
    ),
    "one message over its limit": (
        "/memories",
        {"json": {"messages": [_message("y" * (MAX_MESSAGE_CHARS + 1))]}},
        400,
        str(MAX_MESSAGE_CHARS),
    ),
    "too many messages": (
        "/memories",
        {"json": {"messages": [_message("hello") for _ in range(MAX_MESSAGES + 1)]}},
        400,
        str(MAX_MESSAGES),
    ),
    "plain text over its limit": (
        "/memories",
        {"json": {"text": "z" * (MAX_TEXT_CHARS + 1)}},
        400,
        str(MAX_TEXT_CHARS),
    ),
    "document over its limit": (
        "/memories",
        {"files": {"file": ("big.txt", b"w" * (MAX_DOCUMENT_BYTES + 1), "text/plain")}},
        400,
        str(MAX_DOCUMENT_BYTES),
    ),
    "too many chunks in a batch": (
        "/memories/batch",
        {"json": {"chunks": [{"text": "hi"} for _ in range(MAX_CHUNKS + 1)]}},
        400,
        str(MAX_CHUNKS),
    ),
    "search query over its limit": ("/search", {"json": {"query": "q" * 2001}}, 400, "2000"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_an_oversized_request_is_refused_clearly_and_stores_nothing(server: str, tenant: Tenant, case: str) -> None:
    path, request, status, limit = CASES[case]
    before = organization_state(tenant.id)
    response = _post(server, tenant, path, **request)
    assert response.status_code == status, response.text[:2000]
    error = response.json()["error"]
    assert error["code"] in {"payload_too_large", "validation_error"}
    assert limit in json.dumps(error), error  # the message names the limit to stay under
    after = organization_state(tenant.id)
    # Only the key's last use moves; no memory, job, chunk or audit entry is written.
    changed = {table for table in after if after[table] != before[table]}
    assert changed <= {"tenancy_apikey"}, changed
