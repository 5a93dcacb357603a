"""Timeouts answer in the JSON error shape with ``Retry-After``, and nothing of a request the
client is told failed is stored (found by the red-team pass: a slow first write was killed by
gunicorn's default 30 s timeout after it committed; the client got an HTML 500 and a retry
stored the row twice)."""

from __future__ import annotations

import os
import threading
from typing import Any

import psycopg
import pytest
import requests
from django.conf import Settings, settings
from django.db import connections

from infra import gunicorn_config
from tests.factories import Tenant, make_tenant
from tests.fuzz.test_openapi_fuzz import organization_state
from tests.reliability.support import api_server

MESSAGE = {"messages": [{"role": "user", "content": "I moved to Lisbon last May and I love the trams."}]}


def _changed(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {table for table in after if after[table] != before[table]}


def _assert_timeout_answer(status: int, headers: Any, body: dict[str, Any], cause: str) -> None:
    assert status == 503, body
    assert int(headers["Retry-After"]) >= 1
    error = body["error"]
    assert error["code"] == "request_timeout" and error["request_id"]
    assert cause in error["message"] and "nothing" in error["message"]


def test_the_timeouts_nest_budget_inside_server_and_statement_inside_budget() -> None:
    assert settings.DATABASE_STATEMENT_TIMEOUT_SECONDS < settings.REQUEST_BUDGET_SECONDS
    assert gunicorn_config.timeout >= settings.REQUEST_BUDGET_SECONDS + 30
    with connections["default"].cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == f"{settings.DATABASE_STATEMENT_TIMEOUT_SECONDS}s"
    with connections["owner"].cursor() as cursor:  # migrations and maintenance are not cut short
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"


def test_a_write_past_its_budget_is_a_503_and_rolled_back_and_its_retry_stores_it_once(
    settings: Settings,
) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    before = organization_state(tenant.id)
    settings.REQUEST_BUDGET_SECONDS = 1
    settings.FAULT_PAUSES = {"memory.write.before_commit": 1.5}

    response = tenant.client().post("/v1/subjects/ana/memories", MESSAGE, format="json")

    _assert_timeout_answer(response.status_code, response, response.json(), "1 s budget")
    # No row, chunk, job or audit entry: only the key's last use moves.
    assert _changed(before, organization_state(tenant.id)) <= {"tenancy_apikey"}
    settings.FAULT_PAUSES, settings.REQUEST_BUDGET_SECONDS = {}, 60
    retried = tenant.client().post("/v1/subjects/ana/memories", MESSAGE, format="json")
    assert retried.status_code == 202, retried.content
    after = organization_state(tenant.id)
    chunk = retried.json()["chunk_id"]
    assert [row for row in after["memory_episodic_event"] if chunk in row] == after["memory_episodic_event"]
    assert len(after["memory_episodic_event"]) == 1


def _hold_subject_row(tenant: Tenant, external_id: str, held: threading.Event, release: threading.Event) -> None:
    with psycopg.connect(os.environ["DATABASE_ADMIN_URL"]) as conn:
        conn.execute(
            "SELECT 1 FROM tenancy_subject WHERE organization_id = %s AND external_id = %s FOR UPDATE",
            (tenant.id, external_id),
        )
        held.set()
        release.wait(30)


def test_a_statement_past_the_statement_timeout_is_a_503_with_nothing_stored(settings: Settings) -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    before = organization_state(tenant.id)
    held, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_subject_row, args=(tenant, "ana", held, release))
    holder.start()
    connection = connections["default"]
    try:
        assert held.wait(30)
        with connection.cursor() as cursor:  # this process's session only, then back to the setting
            cursor.execute("SET statement_timeout = '1s'")
        settings.DATABASE_STATEMENT_TIMEOUT_SECONDS = 1
        # The write waits for the subject row (its consent check) longer than one statement may.
        response = tenant.client().post("/v1/subjects/ana/memories", MESSAGE, format="json")
    finally:
        release.set()
        holder.join()
        with connection.cursor() as cursor:
            cursor.execute("RESET statement_timeout")
    _assert_timeout_answer(response.status_code, response, response.json(), "1 s and was cancelled")
    assert _changed(before, organization_state(tenant.id)) <= {"tenancy_apikey"}


@pytest.mark.slow
def test_a_real_server_answers_a_write_past_its_budget_in_json_and_stores_nothing() -> None:
    tenant = make_tenant()
    tenant.subject("ana")
    before = organization_state(tenant.id)
    env = {"MIRIX_REQUEST_BUDGET_SECONDS": "2", "MIRIX_TEST_FAULT_PAUSES": "memory.write.before_commit=3"}
    with api_server(workers=1, threads=2, env=env, name="budget") as server:
        response = requests.post(
            f"{server.url}/v1/subjects/ana/memories",
            json=MESSAGE,
            headers={"Authorization": f"Bearer {tenant.key}"},
            timeout=60,
        )
        assert response.headers["Content-Type"] == "application/json", response.text[:500]
        _assert_timeout_answer(response.status_code, response.headers, response.json(), "2 s budget")
        # The worker was not killed (its timeout is the budget plus a margin): it serves on.
        assert requests.get(f"{server.url}/healthz", timeout=5).status_code == 200
    assert _changed(before, organization_state(tenant.id)) <= {"tenancy_apikey"}
