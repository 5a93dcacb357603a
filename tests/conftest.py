"""Test harness: two suites, one marker.

Tests marked ``unit`` (pure cores, and adapters driven against local servers) touch no
database, broker or cache: they get no database fixture, and any database access fails.
``make test-unit`` runs only them, under ``mirix_saas.settings.unit``, which starts nothing.

Every other test runs against the embedded Postgres. Requests and tasks run as the application
role in transactions of their own (that is what RLS needs), so tests cannot hide inside one
rolled-back transaction. Instead the database is created fresh and migrated as the owner once
per run (on the first test that needs it), and after each such test every table is truncated
and every graph dropped, as the owner.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.core.management import call_command
from django.db import connections
from psycopg.conninfo import make_conninfo
from pytest_django.fixtures import Settings

from apps.providers.config import OpenAIConfig
from apps.providers.interfaces import MeteringContext
from infra.embedded import postgres
from tests.clock import SkippingClock
from tests.metering import RecordingMeter
from tests.providers.openai_stub import OpenAIStub, deployment_settings
from tests.tls_server import TlsServer

UNIT = "unit"


def uses_database(item: pytest.Item) -> bool:
    return item.get_closest_marker(UNIT) is None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A unit run (settings without a database) refuses to start tests that need one."""
    if not getattr(settings, "UNIT_SUITE", False):
        return
    needing = [item.nodeid for item in items if uses_database(item)]
    if needing:
        shown = "\n  ".join(needing[:10]) + ("\n  …" if len(needing) > 10 else "")
        raise pytest.UsageError(
            f"{len(needing)} selected tests use the database, which mirix_saas.settings.unit does not have:\n  "
            f"{shown}\nSelect the unit tests with `-m unit` (make test-unit), or run these with make test."
        )


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
def _database(request: pytest.FixtureRequest, django_db_blocker: pytest.FixtureRequest) -> Iterator[None]:
    """Database access for tests that are not ``unit``; a clean database and cache after each."""
    if not uses_database(request.node):
        yield
        return
    request.getfixturevalue("django_db_setup")
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
def clock() -> SkippingClock:
    """A clock whose sleeps return at once and move its time forward instead (see tests/clock.py).
    Install it where the code under test reads its clock: ``monkeypatch.setattr(module, "clock", clock)``."""
    return SkippingClock()


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """The local OpenAI-compatible server (tests/providers/openai_stub.py), scripted per test."""
    stub = OpenAIStub()
    try:
        yield stub
    finally:
        stub.close()


@pytest.fixture
def stub_config(openai_stub: OpenAIStub) -> OpenAIConfig:
    """An openai provider configuration that talks to the stub, with fast retries."""
    return OpenAIConfig(
        model="gpt-test",
        api_key="sk-test-key",
        base_url=openai_stub.url,
        timeout_seconds=2.0,
        max_attempts=3,
        retry_base_delay_seconds=0.001,
    )


@pytest.fixture
def openai_deployment(openai_stub: OpenAIStub, settings: Settings) -> OpenAIStub:
    """The deployment's model provider is the openai provider, pointed at the stub."""
    for name, value in deployment_settings(openai_stub).items():
        setattr(settings, name, value)
    return openai_stub


@pytest.fixture
def meter() -> RecordingMeter:
    return RecordingMeter()


@pytest.fixture
def metering(meter: RecordingMeter) -> MeteringContext:
    """Metering of a random organization into ``meter`` (no database)."""
    return MeteringContext(organization_id=uuid.uuid4(), meter=meter)


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[TlsServer]:
    """HTTPS on 127.0.0.1 for hooks.test (self-signed): for the clients that pin a checked address."""
    server = TlsServer(tmp_path)
    yield server
    server.server.shutdown()
    server.server.server_close()
