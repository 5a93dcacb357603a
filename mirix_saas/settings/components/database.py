"""Two connections to one database: the application role and the owner role.

``default`` is the non-superuser application role without BYPASSRLS that owns no tables;
every request and task runs on it inside a transaction that sets ``app.organization_id``.
``owner`` owns the schema: migrations, graph DDL and platform-level operations use it.
The application role's statements are cancelled after ``DATABASE_STATEMENT_TIMEOUT_SECONDS``
(the owner's migrations and maintenance are not); the backend refuses a commit after the
request's budget (``apps.platform.database``).
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


DATABASE_URL = env_str("DATABASE_URL")
DATABASES = {
    "default": with_statement_timeout(database_from_url(DATABASE_URL), DATABASE_STATEMENT_TIMEOUT_SECONDS),
    "owner": database_from_url(env_optional("DATABASE_OWNER_URL") or DATABASE_URL),
}
DATABASE_ROUTERS = ["apps.platform.db_router.OwnerMigratesRouter"]
