"""Reads from a real streaming replica of the embedded Postgres (ADR 0051).

The module starts a hot standby of the test cluster (``pg_basebackup -R`` from the wheel's
binaries, its own socket directory and port) and points the ``replica`` alias at it. Whether a
search was served by the replica is seen in the data: with the standby's replay paused, a row
written on the primary is missing from what the replica returns and present in what the primary
returns.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connections
from pytest_django.fixtures import Settings

from apps.audit.models import AuditEntry
from apps.language.pipeline import spacy_pipeline
from apps.platform.replica import REPLICA_ALIAS, forget_replica_state
from apps.providers.registry import embedder
from apps.tenancy.scope import organization_scope
from infra.embedded import postgres
from infra.embedded.environment import postgres_dir
from tests.factories import Tenant, make_tenant

STANDBY_PORT = 5433
TIMEOUT_SECONDS = 30
WINDOW_SECONDS = 1  # read-your-writes, shortened for the test
QUESTION = "What did Maya do?"
RACE = "Yesterday I ran the Bay to Breakers race with my brother Tom."
BEAGLE = "Last week I adopted a beagle puppy called Biscuit from the shelter."


def _wait(what: str, condition: Any) -> None:
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _one(url: str, query: str) -> Any:
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return row[0]


class Standby:
    def __init__(self, primary: postgres.EmbeddedPostgres, server: postgres.EmbeddedPostgres) -> None:
        self.primary, self.server = primary, server

    def superuser(self, query: str) -> Any:
        return _one(self.server.superuser_url(), query)

    def catch_up(self) -> None:
        """Wait until the standby has replayed everything the primary has written so far."""
        target = _one(self.primary.superuser_url(), "SELECT pg_current_wal_lsn()::text")
        _wait(
            "replay",
            lambda: self.superuser(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn"),
        )

    def pause(self) -> None:
        self.catch_up()
        self.superuser("SELECT pg_wal_replay_pause()::text")
        _wait("a paused replay", lambda: self.superuser("SELECT pg_get_wal_replay_pause_state()") == "paused")

    def resume(self) -> None:
        self.superuser("SELECT pg_wal_replay_resume()::text")
        self.catch_up()


@pytest.fixture(scope="module")
def standby(django_db_setup: None) -> Iterator[Standby]:
    """A hot standby of the test cluster, streaming; stopped and removed after the module."""
    # The models load now, not inside the first request's time budget (a loaded machine).
    spacy_pipeline()
    embedder().embed(["warm"])
    primary = postgres.EmbeddedPostgres(
        data_dir=postgres_dir().resolve(), socket_dir=Path(connections["default"].settings_dict["HOST"])
    )
    root = Path(tempfile.mkdtemp(prefix="mirix-standby-", dir="/tmp"))
    data_dir = root / "data"
    try:
        server = postgres.start_standby(primary, data_dir, root / "socket", port=STANDBY_PORT)
        standby = Standby(primary, server)
        _wait("streaming", lambda: standby.superuser("SELECT count(*) FROM pg_stat_wal_receiver") == 1)
        _wait(
            "streaming",
            lambda: standby.superuser("SELECT status FROM pg_stat_wal_receiver") == "streaming",
        )
        yield standby
    finally:
        if (data_dir / "PG_VERSION").exists():
            postgres.stop_postgres(data_dir)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def replica_alias(standby: Standby, settings: Settings) -> Iterator[Standby]:
    """The ``replica`` alias on the standby, as ``DATABASE_REPLICA_URL`` makes it."""
    replica = connections[REPLICA_ALIAS]
    saved = dict(replica.settings_dict)
    replica.close()
    replica.settings_dict.update(HOST=str(standby.server.socket_dir), PORT=str(standby.server.port))
    settings.DATABASE_REPLICA_URL = standby.server.url(role=postgres.APP_ROLE, database=saved["NAME"])
    settings.DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS = WINDOW_SECONDS
    settings.DATABASE_REPLICA_MAX_LAG_MS = 60_000
    forget_replica_state()
    standby.catch_up()
    yield standby
    if postgres.is_running(standby.server.data_dir) and standby.superuser("SELECT pg_is_wal_replay_paused()"):
        standby.resume()
    replica.close()
    replica.settings_dict.clear()
    replica.settings_dict.update(saved)
    forget_replica_state()


def _write(tenant: Tenant, message_id: str, content: str, *, indexed: bool = False) -> None:
    """One message written through the API and completed as the worker would; ``indexed``: and
    its graph built (graph searches)."""
    message = {"id": message_id, "role": "user", "name": "Maya", "timestamp": "2023-05-08T18:02:00Z"}
    tenant.write("maya", {"messages": [{**message, "content": content}]}, index=indexed)


def _texts(tenant: Tenant, mode: str = "flat") -> str:
    response = tenant.client().post("/v1/subjects/maya/search", {"query": QUESTION, "mode": mode}, format="json")
    assert response.status_code == 200, response.content
    return " ".join(row["text"] for row in response.json()["rows"])


def _searches_audited(tenant: Tenant, alias: str) -> int:
    with organization_scope(tenant.id, using=alias):
        return AuditEntry.objects.for_organization(tenant.id).using(alias).filter(action="memory.search").count()


def _let_the_window_pass() -> None:
    time.sleep(WINDOW_SECONDS + 0.2)


def test_the_replica_alias_is_the_application_role_on_a_standby_with_age(standby: Standby) -> None:
    assert standby.superuser("SHOW session_preload_libraries") == "age"  # copied by the base backup
    with connections[REPLICA_ALIAS].cursor() as cursor:
        cursor.execute("SELECT current_user, pg_is_in_recovery(), '{\"ready\": true}'::ag_catalog.agtype::text")
        assert cursor.fetchone() == (postgres.APP_ROLE, True, '{"ready": true}')
        cursor.execute("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user")
        assert cursor.fetchone() == (False,)


def test_searches_read_from_the_replica_and_their_audit_entries_land_on_the_primary(standby: Standby) -> None:
    tenant = make_tenant()
    _write(tenant, "m1", RACE, indexed=True)
    _let_the_window_pass()
    standby.pause()
    # Written on the primary while the standby replays nothing: the replica cannot have it.
    _write(tenant, "m2", BEAGLE, indexed=True)
    _let_the_window_pass()
    texts = _texts(tenant, "graph")  # the graph's reads (AGE, the adjacency index) too
    assert "Bay to Breakers" in texts and "Biscuit" not in texts  # the replica's rows
    # The search's own audit entry went to the primary; the paused standby has not seen it.
    assert _searches_audited(tenant, "default") == 1
    assert _searches_audited(tenant, REPLICA_ALIAS) == 0
    answered = tenant.client().post("/v1/subjects/maya/answer", {"query": "What race did Maya run?"}, format="json")
    assert answered.status_code == 200, answered.content
    standby.resume()
    assert "Biscuit" in _texts(tenant, "graph")  # replayed, and read there again
    assert _searches_audited(tenant, REPLICA_ALIAS) >= 1


def test_an_organization_that_just_wrote_reads_from_the_primary(standby: Standby) -> None:
    tenant, other = make_tenant(), make_tenant()
    _write(tenant, "m1", RACE)
    _let_the_window_pass()
    standby.pause()
    _write(tenant, "m2", BEAGLE)  # committed just now: the next reads go to the primary
    assert "Biscuit" in _texts(tenant)
    _let_the_window_pass()
    _write(other, "m1", BEAGLE)  # another organization's write pins that one only
    assert "Biscuit" not in _texts(tenant)  # the window has passed: the paused replica again
    # Another organization's key reaches no subject of this one on the replica either.
    outsider = make_tenant()
    response = outsider.client().post("/v1/subjects/maya/search", {"query": QUESTION}, format="json")
    assert response.status_code == 404


def test_a_lagging_replica_sends_reads_to_the_primary(standby: Standby, settings: Settings) -> None:
    settings.DATABASE_REPLICA_MAX_LAG_MS = 300
    settings.DATABASE_REPLICA_CHECK_MS = 50
    tenant = make_tenant()
    _write(tenant, "m1", RACE)
    _let_the_window_pass()
    assert tenant.client().get("/readyz").json()["replica"] == {"status": "streaming", "lag_ms": 0.0}
    standby.pause()
    _write(tenant, "m2", BEAGLE)
    _let_the_window_pass()
    assert "Biscuit" in _texts(tenant)  # the replica lags by more than the window: the primary
    ready = tenant.client().get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    assert ready.json()["replica"]["status"] == "lagging" and ready.json()["replica"]["lag_ms"] > 300
    standby.resume()
    time.sleep(0.1)
    assert tenant.client().get("/readyz").json()["replica"]["status"] == "streaming"


def test_a_stopped_replica_sends_reads_to_the_primary(standby: Standby, settings: Settings) -> None:
    settings.DATABASE_REPLICA_CHECK_MS = 60_000  # the state measured below stays until a request fails
    tenant = make_tenant()
    _write(tenant, "m1", RACE)
    _let_the_window_pass()
    assert "Bay to Breakers" in _texts(tenant)
    assert tenant.client().get("/readyz").json()["replica"]["status"] == "streaming"
    postgres.stop_postgres(standby.server.data_dir)
    # Measured as streaming a moment ago: the request that finds it down reads from the primary.
    assert "Bay to Breakers" in _texts(tenant)
    ready = tenant.client().get("/readyz")
    assert ready.status_code == 200 and ready.json()["replica"] == {"status": "unreachable", "lag_ms": None}
    forget_replica_state()  # measured again: still down
    assert "Bay to Breakers" in _texts(tenant)
    assert tenant.client().get("/readyz").json()["replica"]["status"] == "unreachable"
