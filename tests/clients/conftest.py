"""One real service stack for every client test: gunicorn (the service's configuration) and a
Celery worker on the real broker, over the suite's embedded Postgres, with two organizations.

The tests of this package share that world (built once, reset when the package ends), so the
per-test reset of tests/conftest.py is replaced here; each test uses subjects of its own."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import _clear_cache as clear_cache
from tests.conftest import _reset_database as reset_database
from tests.conftest import uses_database
from tests.factories import Tenant, make_tenant
from tests.processes import celery_worker, purge_queues
from tests.reliability.support import api_server

_names = itertools.count(1)


@dataclass
class Stack:
    url: str
    owner: Tenant
    intruder: Tenant

    def env(self, key: str | None = None) -> dict[str, str]:
        """The environment a client process (the CLI, the MCP server) runs with."""
        return {**os.environ, "MIRIX_API_KEY": key or self.owner.key, "MIRIX_BASE_URL": self.url}


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_names)}-{os.getpid()}"


@pytest.fixture(autouse=True)
def _database(request: pytest.FixtureRequest, django_db_blocker: Any) -> Iterator[None]:
    if not uses_database(request.node):
        yield
        return
    request.getfixturevalue("django_db_setup")
    with django_db_blocker.unblock():
        yield


@pytest.fixture(scope="package")
def stack(django_db_setup: None, django_db_blocker: Any) -> Iterator[Stack]:
    with django_db_blocker.unblock():
        try:
            # The per-key limit is tested with a key of its own; job polls must not meet the default.
            unthrottled = {"MIRIX_API_KEY_RATE_PER_MINUTE": "100000"}
            with (
                api_server(workers=1, threads=4, name="clients", env=unthrottled) as server,
                celery_worker(name="clients"),
            ):
                yield Stack(
                    url=server.url, owner=make_tenant("clients-owner"), intruder=make_tenant("clients-intruder")
                )
        finally:
            purge_queues()
            reset_database()
            clear_cache()
