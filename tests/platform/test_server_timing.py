"""The `Server-Timing` header of an API request: the phases of a real search and write."""

from __future__ import annotations

from django.test import override_settings

from apps.platform.timing import parse_server_timing
from tests.factories import make_tenant

MESSAGE = {"role": "user", "content": "I adopted a beagle named Biscuit in Lisbon last week."}


def test_a_request_that_asks_gets_its_phases_and_one_that_does_not_gets_none() -> None:
    tenant = make_tenant()
    client = tenant.client()
    written = client.post(
        "/v1/subjects/maya/memories", {"messages": [MESSAGE]}, format="json", HTTP_X_SERVER_TIMING="1"
    )
    assert written.status_code == 202, written.content  # accepted; the worker routes and embeds (ADR 0054)
    write = parse_server_timing(written["Server-Timing"])
    # The write path's own phases, the database's, and the end of the transaction.
    assert {"auth", "sql", "audit", "commit", "total"} <= set(write)
    assert "routing" not in write and "embedding" not in write
    assert sum(ms for name, ms in write.items() if name != "total") <= write["total"] + 0.1

    searched = client.post(
        "/v1/subjects/maya/search", {"query": "Which dog did I adopt?"}, format="json", HTTP_X_SERVER_TIMING="1"
    )
    assert searched.status_code == 200
    search = parse_server_timing(searched["Server-Timing"])
    assert {"auth", "embedding", "sql", "retrieval", "serialization", "audit", "commit", "total"} <= set(search)
    assert "routing" not in search

    plain = client.post("/v1/subjects/maya/search", {"query": "Which dog did I adopt?"}, format="json")
    assert plain.status_code == 200 and "Server-Timing" not in plain


def test_the_deployment_decides_whether_requests_may_ask() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    search = {"query": "Which dog?"}
    with override_settings(SERVER_TIMING="off"):
        asked = tenant.client().post("/v1/subjects/maya/search", search, format="json", HTTP_X_SERVER_TIMING="1")
        assert asked.status_code == 200 and "Server-Timing" not in asked
    with override_settings(SERVER_TIMING="always"):
        unasked = tenant.client().post("/v1/subjects/maya/search", search, format="json")
        assert "total" in parse_server_timing(unasked["Server-Timing"])
    # A refused request is timed too (what it cost to refuse it).
    refused = tenant.client("mx_live_not-a-key").post(
        "/v1/subjects/maya/search", search, format="json", HTTP_X_SERVER_TIMING="1"
    )
    assert refused.status_code == 401 and "total" in parse_server_timing(refused["Server-Timing"])
