"""Fill in the service URLs from the embedded stack when none are configured.

Called by every entry point (``manage.py``, wsgi/asgi, the Celery app, the test settings)
before Django reads its settings. With ``DATABASE_URL`` (and ``DATABASE_OWNER_URL``) or
``CELERY_BROKER_URL`` set, the matching embedded service is neither started nor used.
"""

from __future__ import annotations

import os
from pathlib import Path

from infra.embedded import postgres, redis

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VAR_DIR = PROJECT_ROOT / "var"
DEFAULT_DATABASE = "mirix"


def worker_concurrency() -> int:
    """Celery pool processes of the stack's worker: ``MIRIX_WORKER_CONCURRENCY``, else 2."""
    return int(os.environ.get("MIRIX_WORKER_CONCURRENCY", "2"))


def var_dir() -> Path:
    return Path(os.environ.get("MIRIX_VAR_DIR", DEFAULT_VAR_DIR))


def postgres_dir() -> Path:
    return var_dir() / "postgres"


def redis_dir() -> Path:
    return var_dir() / "redis"


def embedded_postgres(database: str) -> tuple[postgres.EmbeddedPostgres, bool]:
    """Start (if needed) and bootstrap the embedded cluster and ``database``; True when this
    call started the cluster or created the database (its schema may then be missing or old)."""
    started = not postgres.is_running(postgres_dir())
    server = postgres.ensure_postgres(postgres_dir())
    postgres.bootstrap_cluster(server.superuser_url())
    created = postgres.bootstrap_database(server.superuser_url(), database)
    return server, started or created


def configure_embedded_environment(*, database: str | None = None) -> bool:
    """Set the URLs of the embedded services in ``os.environ`` unless already configured; True
    when the embedded database was just started or created, so that migrations may be due."""
    fresh = False
    if not os.environ.get("DATABASE_URL"):
        name = database or os.environ.get("MIRIX_DATABASE_NAME", DEFAULT_DATABASE)
        server, fresh = embedded_postgres(name)
        os.environ["DATABASE_URL"] = server.url(role=postgres.APP_ROLE, database=name)
        os.environ["DATABASE_OWNER_URL"] = server.url(role=postgres.OWNER_ROLE, database=name)
        os.environ["DATABASE_ADMIN_URL"] = server.superuser_url(name)
    if not os.environ.get("CELERY_BROKER_URL"):
        redis.ensure_redis(redis_dir())
        os.environ["CELERY_BROKER_URL"] = redis.broker_url(redis_dir())
        os.environ.setdefault("CACHE_URL", redis.cache_url(redis_dir()))
    return fresh
