"""Connections to one database: the application role, the owner role, and a read replica.

``default`` is the non-superuser application role without BYPASSRLS that owns no tables;
every request and task runs on it inside a transaction that sets ``app.organization_id``.
``owner`` owns the schema: migrations, graph DDL and platform-level operations use it.
The application role's statements are cancelled after ``DATABASE_STATEMENT_TIMEOUT_SECONDS``
(the owner's migrations and maintenance are not); the backend refuses a commit after the
request's budget (``apps.platform.database``).

``replica`` is the application role on a streaming replica (``DATABASE_REPLICA_URL``); the
search and answer views read there while the replica keeps up (``apps.platform.replica``,
ADR 0051). Without the variable it is the primary's connection settings and never chosen.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from mirix_saas.settings.components.timeouts import DATABASE_STATEMENT_TIMEOUT_SECONDS
from mirix_saas.settings.env import env_int, env_optional, env_str


def database_from_url(url: str) -> dict[str, Any]:
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ValueError(f"unsupported database URL scheme {parts.scheme!r}")
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    host = query.pop("host", None) or parts.hostname or ""
    return {
        "ENGINE": "apps.platform.database",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": env_int("DATABASE_CONN_MAX_AGE", 60),
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": query,
    }


def with_statement_timeout(database: dict[str, Any], seconds: int) -> dict[str, Any]:
    """``database`` whose sessions cancel any statement running longer than ``seconds`` (0: never)."""
    if seconds <= 0:
        return database
    options = dict(database["OPTIONS"])
    options["options"] = f"{options.get('options', '')} -c statement_timeout={seconds * 1000}".strip()
    return {**database, "OPTIONS": options}


def with_connect_timeout(database: dict[str, Any], seconds: int) -> dict[str, Any]:
    """``database`` whose connection attempts give up after ``seconds`` unless its URL says otherwise."""
    return {**database, "OPTIONS": {"connect_timeout": str(seconds), **database["OPTIONS"]}}


DATABASE_URL = env_str("DATABASE_URL")
DATABASE_REPLICA_URL = env_optional("DATABASE_REPLICA_URL")
DATABASES = {
    "default": with_statement_timeout(database_from_url(DATABASE_URL), DATABASE_STATEMENT_TIMEOUT_SECONDS),
    "owner": database_from_url(env_optional("DATABASE_OWNER_URL") or DATABASE_URL),
    "replica": with_connect_timeout(
        with_statement_timeout(
            database_from_url(DATABASE_REPLICA_URL or DATABASE_URL), DATABASE_STATEMENT_TIMEOUT_SECONDS
        ),
        env_int("DATABASE_REPLICA_CONNECT_TIMEOUT_SECONDS", 2),
    ),
}
DATABASE_ROUTERS = ["apps.platform.db_router.OwnerMigratesRouter", "apps.platform.db_router.ReplicaReadsRouter"]
# An organization reads from the primary for this long after its last write committed.
DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS = env_int("DATABASE_REPLICA_READ_YOUR_WRITES_SECONDS", 5)
# Reads go to the primary while the replica replays more than this far behind it.
DATABASE_REPLICA_MAX_LAG_MS = env_int("DATABASE_REPLICA_MAX_LAG_MS", 1000)
# Each process measures the replica's state at most this often.
DATABASE_REPLICA_CHECK_MS = env_int("DATABASE_REPLICA_CHECK_MS", 1000)
