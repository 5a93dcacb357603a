"""``make run`` end to end: a fresh var dir, every component up, all-green readiness, a key
that answers, a clean Ctrl-C with no orphans, and the data still there on the next start."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest
import requests

from tests.processes import ROOT, wait_for


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SERVICE_VARIABLES = {"DATABASE_URL", "DATABASE_OWNER_URL", "DATABASE_ADMIN_URL", "CELERY_BROKER_URL", "CACHE_URL"}


class Stack:
    def __init__(self, var_dir: Path, port: int, services: dict[str, str] | None = None) -> None:
        hidden = {*SERVICE_VARIABLES, "DJANGO_SETTINGS_MODULE", "MIRIX_TEST_KEEP_ENV"}
        env = {k: v for k, v in os.environ.items() if k not in hidden}
        env.update(
            MIRIX_VAR_DIR=str(var_dir), MIRIX_PORT=str(port), MIRIX_API_WORKERS="1", MIRIX_WORKER_CONCURRENCY="1"
        )
        env.update(services or {})
        self.port = port
        self.output: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "infra.embedded.stack"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def ready(self) -> bool:
        try:
            return requests.get(self.url("/readyz"), timeout=2).status_code == 200
        except (requests.ConnectionError, requests.Timeout):
            assert self.process.poll() is None, "".join(self.output)
            return False

    def descendants(self) -> list[psutil.Process]:
        return psutil.Process(self.process.pid).children(recursive=True)

    def interrupt(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=90)


@pytest.mark.slow
def test_make_run_starts_everything_and_stops_cleanly(tmp_path: Path) -> None:
    var_dir = tmp_path / "var"
    stack = Stack(var_dir, _free_port())
    try:
        wait_for(stack.ready, timeout=180, interval=0.5)
        checks = requests.get(stack.url("/readyz"), timeout=5).json()["checks"]
        assert checks == {"postgres": "ok", "pgvector": "ok", "age": "ok", "broker": "ok"}
        key = re.search(r"API key:\s+(mx_live_\w+)", "".join(stack.output))
        assert key, "".join(stack.output)
        # The banner names the port the stack listens on; the control socket is this stack's own.
        console = re.findall(r"console:?\s+(http://\S+/console/)", "".join(stack.output))
        assert console == [stack.url("/console/")] * 2, console
        assert (var_dir / "gunicorn.ctl").is_socket()
        headers = {"Authorization": f"Bearer {key.group(1)}"}
        created = requests.post(
            stack.url("/v1/subjects"), json={"external_id": "kept", "kind": "user"}, headers=headers, timeout=10
        )
        assert created.status_code == 201
        job = requests.post(stack.url("/v1/graph/check"), headers=headers, timeout=10).json()["job_id"]
        wait_for(
            lambda: (
                requests.get(stack.url(f"/v1/jobs/{job}"), headers=headers, timeout=5).json()["status"] == "succeeded"
            )
        )
        # The embedded servers are daemons, not children: find them by their data directory.
        services = [p for p in psutil.process_iter(["cmdline"]) if str(var_dir) in " ".join(p.info["cmdline"] or [])]
        children = stack.descendants()
        assert len(children) >= 3 and services
    finally:
        assert stack.interrupt() == 0, "".join(stack.output)
    survivors = [p for p in [*children, *services] if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert survivors == []

    again = Stack(var_dir, _free_port())
    try:
        wait_for(again.ready, timeout=180, interval=0.5)
        assert "Demo organization exists" in "".join(again.output)
        listed = requests.get(again.url("/v1/subjects"), headers=headers, timeout=10).json()
        assert [s["external_id"] for s in listed["results"]] == ["kept"]
    finally:
        assert again.interrupt() == 0


@pytest.mark.slow
def test_make_run_uses_configured_servers_and_starts_none_of_its_own(tmp_path: Path) -> None:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from infra.embedded import postgres

    database = "mirix_configured_servers"
    admin = make_conninfo(os.environ["DATABASE_ADMIN_URL"], dbname="postgres")
    postgres.drop_database_by_url(admin, database)
    postgres.bootstrap_database(admin, database)
    socket_dir = conninfo_to_dict(os.environ["DATABASE_URL"])["host"]
    services = {
        "DATABASE_URL": f"postgresql://{postgres.APP_ROLE}@/{database}?host={socket_dir}",
        "DATABASE_OWNER_URL": f"postgresql://{postgres.OWNER_ROLE}@/{database}?host={socket_dir}",
        "CELERY_BROKER_URL": os.environ["CELERY_BROKER_URL"].replace("virtual_host=2", "virtual_host=6"),
        "CACHE_URL": os.environ["CACHE_URL"].replace("db=3", "db=7"),
    }
    var_dir = tmp_path / "var"
    stack = Stack(var_dir, _free_port(), services)
    try:
        wait_for(stack.ready, timeout=180, interval=0.5)
        assert not (var_dir / "postgres").exists() and not (var_dir / "redis").exists()
        assert "configured / already running" in "".join(stack.output)
    finally:
        assert stack.interrupt() == 0, "".join(stack.output)
        postgres.drop_database_by_url(admin, database)
