"""Test harness: the embedded Postgres, a fresh database per run, real commits per test.

Requests and tasks run as the application role in transactions of their own (that is what
RLS needs), so tests cannot hide inside one rolled-back transaction. Instead the database is
created fresh and migrated as the owner once per run, and after each test every table is
truncated and every graph dropped, as the owner.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.core.management import call_command
from django.db import connections
from psycopg.conninfo import make_conninfo

from infra.embedded import postgres
from tests.tls_server import TlsServer


@pytest.fixture(scope="session")
def django_db_setup(django_db_blocker: pytest.FixtureRequest) -> Iterator[None]:
    admin_url = os.environ["DATABASE_ADMIN_URL"]
    database = connections["default"].settings_dict["NAME"]
    with django_db_blocker.unblock():  # type: ignore[attr-defined]
        for conn in connections.all():
            conn.close()
        maintenance_url = make_conninfo(admin_url, dbname="postgres")
        postgres.drop_database_by_url(maintenance_url, database)
        postgres.bootstrap_database(maintenance_url, database)
        call_command("migrate", database="owner", verbosity=0)
    yield


def _reset_database() -> None:
    owner = connections["owner"]
    with owner.cursor() as cursor:
        cursor.execute("SELECT name FROM ag_catalog.ag_graph")
        graphs = [row[0] for row in cursor.fetchall()]
        cursor.execute('SET search_path = ag_catalog, "$user", public')
        for graph in graphs:
            cursor.execute("SELECT ag_catalog.drop_graph(%s, true)", [graph])
        cursor.execute("RESET search_path")
        cursor.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'django_migrations'"
        )
        tables = [row[0] for row in cursor.fetchall()]
        if tables:
            cursor.execute("TRUNCATE " + ", ".join(f'public."{t}"' for t in tables) + " RESTART IDENTITY CASCADE")


def _clear_cache() -> None:
    client = redis.Redis.from_url(os.environ["CACHE_URL"])
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        client.delete(*keys)


@pytest.fixture(autouse=True)
def _database(django_db_setup: None, django_db_blocker: pytest.FixtureRequest) -> Iterator[None]:
    with django_db_blocker.unblock():  # type: ignore[attr-defined]
        try:
            yield
        finally:
            for conn in connections.all():
                if conn.in_atomic_block:
                    conn.close()
            _reset_database()
            _clear_cache()


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[TlsServer]:
    """HTTPS on 127.0.0.1 for hooks.test (self-signed): for the clients that pin a checked address."""
    server = TlsServer(tmp_path)
    yield server
    server.server.shutdown()
    server.server.server_close()
