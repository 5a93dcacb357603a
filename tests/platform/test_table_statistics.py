"""Planner statistics refreshed when writes make them due (ADR 0083)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connections

from apps.graph import services as graph_services
from apps.platform.table_statistics import statistics_due, statistics_refresh
from apps.tenancy.scope import organization_scope
from tests.factories import complete_writes, make_tenant

PROBE = "stats_probe"


def _owner(statement: str) -> list[tuple[object, ...]]:
    with connections["owner"].cursor() as cursor:
        cursor.execute(statement)
        return list(cursor.fetchall()) if cursor.description else []


@pytest.fixture
def probe_table() -> Iterator[str]:
    _owner(f"CREATE TABLE {PROBE} (id int)")
    try:
        yield PROBE
    finally:
        _owner(f"DROP TABLE IF EXISTS {PROBE}")


def _insert(rows: int) -> None:
    # The writing session reports its counts when its transaction ends (forced: at once).
    _owner(f"INSERT INTO {PROBE} SELECT generate_series(1, {rows}); SELECT pg_stat_force_next_flush()")


def _analyzed() -> bool:
    [(last,)] = _owner(f"SELECT last_analyze FROM pg_stat_user_tables WHERE relname = '{PROBE}'")
    return last is not None


def test_a_table_past_autovacuums_threshold_is_analyzed_once(probe_table: str) -> None:
    _insert(200)  # past 50 + 10 % of a table autovacuum has not counted yet
    assert statistics_due([probe_table, "memory_episodic_event"]) == [probe_table]
    assert statistics_refresh([probe_table]) == [probe_table]
    assert _analyzed()
    assert statistics_due([probe_table]) == []
    assert statistics_refresh([probe_table]) == []


def test_a_table_below_the_threshold_is_left_to_autovacuum(probe_table: str) -> None:
    _insert(10)
    assert statistics_due([probe_table]) == []
    assert statistics_refresh([probe_table]) == []
    assert not _analyzed()


def test_the_tables_own_threshold_counts(probe_table: str) -> None:
    _owner(f"ALTER TABLE {PROBE} SET (autovacuum_analyze_threshold = 5, autovacuum_analyze_scale_factor = 0)")
    _insert(10)
    assert statistics_due([probe_table]) == [probe_table]


def test_indexing_refreshes_the_statistics_after_its_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[tuple[str, ...], bool]] = []

    def record(tables: tuple[str, ...]) -> list[str]:
        # Run on commit: the indexed rows are committed, so they are visible to ANALYZE.
        calls.append((tables, connections["default"].in_atomic_block))
        return []

    monkeypatch.setattr(graph_services, "statistics_refresh", record)
    tenant = make_tenant()
    response = tenant.client().post(
        "/v1/subjects/maya/memories", {"messages": [{"role": "user", "content": "I moved to Porto."}]}, format="json"
    )
    assert response.status_code == 202, response.content
    complete_writes(tenant.id)
    with organization_scope(tenant.id):
        graph_services.index_chunk(chunk_id=response.json()["chunk_id"])
    assert calls == [(graph_services.STATISTICS_TABLES, False)]
    assert set(graph_services.STATISTICS_TABLES) >= {"memory_episodic_event", "graph_anchor_row"}
