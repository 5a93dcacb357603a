"""An accepted one-message write runs a pinned number of SQL statements: what the request
does before it answers is bounded, and a change that adds a round trip shows here."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import make_tenant

# The key lookup (1); in the request's transaction (14): BEGIN, the scope, the subject, its
# shared lock, the erasure and consent checks, the episodic row (no savepoint: nothing it
# writes supersedes), the webhook subscribers, the job with its task, the pending write, the
# deferred-key check with the audit chain's lock (one round trip), the chain's head and the
# entry, COMMIT; the usage counter after the response (4: BEGIN, the scope with
# synchronous_commit off, the upsert, COMMIT). The key's last use was touched by the first
# write in this process and is not touched again within the minute.
WRITE_STATEMENTS = 19
WRITE = {"messages": [{"role": "user", "content": "I started a pottery class on Thursdays."}]}


def _statements_of_one_write() -> list[str]:
    tenant = make_tenant()
    tenant.subject("maya")
    client = tenant.client()
    assert client.post("/v1/subjects/maya/memories", WRITE, format="json").status_code == 202
    connection.close()
    connection.ensure_connection()
    with CaptureQueriesContext(connection) as queries:
        response = client.post("/v1/subjects/maya/memories", WRITE, format="json")
        assert response.status_code == 202, response.content
        response.close()
    return [q["sql"][:160] for q in queries.captured_queries]


def test_one_accepted_write_runs_a_pinned_number_of_statements() -> None:
    statements = _statements_of_one_write()
    assert len(statements) == WRITE_STATEMENTS, "\n".join(statements)
    assert not any(s.startswith("SAVEPOINT") for s in statements)
