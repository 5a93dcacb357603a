"""The unit suite (``make test-unit``): pure cores only, nothing started or connected.

The service URLs point at a closed loopback port, whatever the environment says, so a unit
run can neither start the embedded Postgres or Redis nor reach a real one; the harness also
refuses database access to every test (tests/conftest.py) and refuses to run a test that is
not marked ``unit``.
"""

import os

from mirix_saas.settings.test_environment import apply_test_defaults

for _name, _value in {
    "DATABASE_URL": "postgresql://unit@127.0.0.1:1/unit",
    "DATABASE_OWNER_URL": "postgresql://unit@127.0.0.1:1/unit",
    "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",
    "CACHE_URL": "redis://127.0.0.1:1/1",
}.items():
    os.environ[_name] = _value
os.environ.pop("DATABASE_ADMIN_URL", None)
apply_test_defaults()

from mirix_saas.settings.base import *  # noqa: F403

# Read by tests/conftest.py: this run has no database.
UNIT_SUITE = True
