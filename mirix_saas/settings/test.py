"""The test suite: always the embedded Postgres, a database of its own, a Redis db of its own."""

import os

from infra.embedded import redis as embedded_redis
from infra.embedded.environment import configure_embedded_environment, redis_dir
from mirix_saas.settings.env import env_bool
from mirix_saas.settings.test_environment import apply_test_defaults

TEST_DATABASE = os.environ.get("MIRIX_TEST_DATABASE", "mirix_test")
for _name in ("DATABASE_URL", "DATABASE_OWNER_URL", "DATABASE_ADMIN_URL", "CELERY_BROKER_URL", "CACHE_URL"):
    if not os.environ.get("MIRIX_TEST_KEEP_ENV"):
        os.environ.pop(_name, None)
configure_embedded_environment(database=TEST_DATABASE)
# Concurrent test runs pick their own pair of Redis dbs (broker, cache) so that their
# workers never consume each other's messages.
_REDIS_DB = int(os.environ.get("MIRIX_TEST_REDIS_DB", "2"))
os.environ["CELERY_BROKER_URL"] = embedded_redis.broker_url(redis_dir(), db=_REDIS_DB)
os.environ["CACHE_URL"] = embedded_redis.cache_url(redis_dir(), db=_REDIS_DB + 1)
# Child processes (workers, servers) started by tests inherit the same environment.
os.environ["MIRIX_TEST_KEEP_ENV"] = "1"
apply_test_defaults()

from mirix_saas.settings.base import *  # noqa: F403

# Servers and workers the tests start load the models on first use, as most tests need few of
# them; the tests of the warm start turn it on (MIRIX_WARM_START=on).
WARM_START = env_bool("MIRIX_WARM_START", False)
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Concurrent test runs (one database each) must not see each other's cache keys.
CACHES["default"]["KEY_PREFIX"] = f"test-{TEST_DATABASE}"
# Crash tests hold one worker at a named point (apps.platform.faults) and kill it there.
FAULT_PAUSES = {
    point: float(seconds)
    for point, _, seconds in (item.partition("=") for item in os.environ.get("MIRIX_TEST_FAULT_PAUSES", "").split(","))
    if point and seconds
}
# Stepwise jobs: a killed worker's job is found within seconds, not a minute.
JOBS_HEARTBEAT_SECONDS = 1
JOBS_STALE_SECONDS = 3
JOBS_SWEEP_SECONDS = 2
