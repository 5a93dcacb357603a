"""The SQL of one search over the API is pinned: serialization reads in bulk (no query per row
or fact), and the count does not grow with the subject's history."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import make_tenant
from tests.retrieval.test_search import _history

# The key lookup and the scope (3; the key's last use was touched by the first search in
# this process); the subject (1); whether its graph is being rebuilt (1, ADR 0096); the graph
# lanes in a savepoint (17: anchor recall, anchor
# rows of both types in one statement and frames, co-participants, the relation lane, cited
# rows with the anchors they mention, neighbours); provenance, attributes and passages in one
# statement (1); the audit entry (2: the deferred-key check, the chain's lock and its head in
# one round trip, then the entry) and the commit; the usage counter
# after the response (4: BEGIN, the scope with synchronous_commit off, the upsert, COMMIT).
SEARCH_QUERIES = 30
QUESTION = "How many dresses did Maya buy?"


def _queries_of_one_search(repeats: int) -> tuple[int, int, list[str]]:
    tenant = make_tenant()
    _history(tenant, repeats)
    client = tenant.client()
    assert client.post("/v1/subjects/maya/search", {"query": QUESTION}, format="json").status_code == 200
    # A fresh connection: one past CONN_MAX_AGE would be reopened during the measured request,
    # and its set-up statements counted.
    connection.close()
    connection.ensure_connection()
    with CaptureQueriesContext(connection) as queries:
        response = client.post("/v1/subjects/maya/search", {"query": QUESTION}, format="json")
    assert response.status_code == 200
    body = response.json()
    return len(queries), len(body["rows"]) + len(body["facts"]), [q["sql"][:120] for q in queries.captured_queries]


def test_one_search_runs_a_pinned_number_of_queries_at_any_history_size() -> None:
    small, small_items, statements = _queries_of_one_search(1)
    larger, larger_items, larger_statements = _queries_of_one_search(3)
    assert small_items and larger_items
    assert small == SEARCH_QUERIES, "\n".join(statements)
    assert larger == SEARCH_QUERIES, "\n".join(larger_statements)
