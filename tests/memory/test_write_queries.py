"""An accepted one-message write runs a pinned number of SQL statements: what the request
does before it answers is bounded, and a change that adds a round trip shows here."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import Tenant, complete_writes, make_tenant

# The key lookup (1); in the request's transaction (13): BEGIN, the scope, the subject, its
# shared lock, the erasure and consent checks, the episodic row (no savepoint: nothing it
# writes supersedes), the webhook subscribers, the job with its task, the pending write, the
# deferred-key check with the audit chain's lock and its head (one round trip) and the
# entry, COMMIT; the usage counter after the response (4: BEGIN, the scope with
# synchronous_commit off, the upsert, COMMIT). The key's last use was touched by the first
# write in this process and is not touched again within the minute.
WRITE_STATEMENTS = 18
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


# What the worker runs per write it completes and indexes, beyond what a batch costs once: the
# difference between a batch of 6 writes and one of 2 in an organization that has written
# before, each write a message to a new subject of its own (the same message, so that every
# write routes and indexes alike). Per write: the subject's write lock and its savepoint, the
# writers' one read of the subject's current core blocks and one of its facts, its core block and fact, the
# webhook subscribers of the new rows, its job turned indexing, the graph's reads and writes of
# its anchors, the adjacency index, and the two stores' rows marked indexed. What a batch does
# once (its usage rows, its rows listed, its jobs settled and audited) does not count. The
# message is the subject's own unnamed turn, so its "I" is the subject's anchor (ADR 0095).
# 63 before the usage rows, records and jobs were batched; 20 before ADR 0077; 19 before ADR 0095.
WORKER_STATEMENTS_PER_WRITE = 21


def _worker_statements(tenant: Tenant, first: int, writes: int) -> list[str]:
    client = tenant.client()
    for n in range(first, first + writes):
        tenant.subject(f"s{n}")
        assert client.post(f"/v1/subjects/s{n}/memories", WRITE, format="json").status_code == 202
    with CaptureQueriesContext(connection) as queries:
        assert complete_writes(tenant.id, index=True) == writes
    return [q["sql"][:160] for q in queries.captured_queries]


def test_the_worker_runs_a_pinned_number_of_statements_per_write() -> None:
    tenant = make_tenant()
    _worker_statements(tenant, 0, 1)  # the organization's first write creates its graph
    small, large = _worker_statements(tenant, 1, 2), _worker_statements(tenant, 3, 6)
    assert (len(large) - len(small)) / 4 <= WORKER_STATEMENTS_PER_WRITE, "\n".join(large)
    assert sum(s.startswith('INSERT INTO "providers_provider_usage"') for s in large) == 2  # one per transaction


# Writes to one subject: its current core blocks and facts are read once per batch, not by each
# write (ADR 0077). Per write beyond the batch: its savepoint, its core block and fact, the
# webhook subscribers, and its share of the graph's and the adjacency index's writes.
WORKER_STATEMENTS_PER_WRITE_TO_ONE_SUBJECT = 7


def _statements_completing(tenant: Tenant, writes: int) -> list[str]:
    client = tenant.client()
    for n in range(writes):
        message = {"role": "user", "content": f"I started pottery class number {n} on Thursdays."}
        assert client.post("/v1/subjects/maya/memories", {"messages": [message]}, format="json").status_code == 202
    with CaptureQueriesContext(connection) as queries:
        assert complete_writes(tenant.id, index=True) == writes
    return [q["sql"] for q in queries.captured_queries]


def test_a_batch_reads_its_subjects_current_rows_once() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    _statements_completing(tenant, 1)  # the graph, the core block
    small, large = _statements_completing(tenant, 2), _statements_completing(tenant, 6)
    assert (len(large) - len(small)) / 4 <= WORKER_STATEMENTS_PER_WRITE_TO_ONE_SUBJECT, "\n".join(large)
    for table in ("memory_core_block", "memory_semantic_item"):
        # current_rows: the rows no row of the subject supersedes
        reads = [
            s
            for s in large
            if s.startswith("SELECT") and f'FROM "{table}"' in s and 'U0."supersedes_id" IS NOT NULL' in s
        ]
        assert len(reads) == 1, "\n".join(reads)
