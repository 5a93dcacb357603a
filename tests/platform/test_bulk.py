"""rows_update: many rows of a tenant table, each with values of its own, in one statement."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.memory.models import EpisodicEvent
from apps.platform.bulk import rows_update
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant

MESSAGES = [
    {"role": "user", "content": "I adopted a beagle named Pixel last spring."},
    {"role": "user", "content": "My sister Ana moved to Porto for her new job."},
    {"role": "user", "content": "We hiked the Rota Vicentina in October."},
]


def _rows(tenant) -> list[EpisodicEvent]:  # type: ignore[no-untyped-def]
    tenant.subject("maya")
    response = tenant.client().post("/v1/subjects/maya/memories", {"messages": MESSAGES}, format="json")
    assert response.status_code == 202, response.content
    with organization_scope(tenant.id):
        rows = list(EpisodicEvent.objects.order_by("created_at", "id"))
    assert len(rows) == 3 and all(row.embedding is None for row in rows)  # accepted, not completed yet
    return rows


def test_each_row_gets_its_own_values_of_every_type_in_one_statement() -> None:
    # Text, a null timestamp, a text array and a vector: the columns the worker completes on
    # the accepted messages' rows (evidence is append-only once completed).
    tenant = make_tenant()
    rows = _rows(tenant)
    dimension = 384
    for n, row in enumerate(rows):
        row.summary = f"summary {n}"
        row.event_time = None
        row.source_message_ids = [f"m{n}", "shared"]
        row.embedding = [float(n)] * dimension
    with organization_scope(tenant.id), CaptureQueriesContext(connection) as queries:
        updated = rows_update(
            rows, ["summary", "event_time", "source_message_ids", "embedding"], organization_id=tenant.id
        )
    assert updated == len(rows)
    assert sum(q["sql"].startswith("UPDATE") for q in queries.captured_queries) == 1
    with organization_scope(tenant.id):
        stored = {row.id: row for row in EpisodicEvent.objects.all()}
    for n, row in enumerate(rows):
        again = stored[row.id]
        assert again.summary == f"summary {n}" and again.event_time is None
        assert again.source_message_ids == [f"m{n}", "shared"]
        assert list(again.embedding) == [float(n)] * dimension


def test_rows_of_another_organization_are_left_alone() -> None:
    owner, other = make_tenant(), make_tenant()
    rows = _rows(owner)
    before = {row.id: row.summary for row in rows}
    for row in rows:
        row.summary = "overwritten"
    with organization_scope(other.id):
        assert rows_update(rows, ["summary"], organization_id=other.id) == 0
    with organization_scope(owner.id):
        # The scope and the organization disagree: row-level security still refuses the rows.
        assert rows_update(rows, ["summary"], organization_id=other.id) == 0
        assert {row.id: row.summary for row in EpisodicEvent.objects.all()} == before
