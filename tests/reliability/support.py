"""Shared parts of the reliability tests: a real API server, graph and evidence snapshots."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import requests

from apps.graph import adapter
from apps.memory.models import STORES
from apps.tenancy.scope import organization_scope
from infra.embedded import postgres
from tests.processes import ROOT, stop_process_group, wait_for

ALL_ANCHORS = "MATCH (a:Anchor) RETURN properties(a)"
ALL_FRAMES = "MATCH (f:Frame) RETURN properties(f)"
ALL_ARMS = "MATCH (f:Frame)-[r:ARM]->(a:Anchor) RETURN f.frame_id, a.key"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def message(text: str, *, n: int, name: str = "Maya") -> dict[str, str]:
    return {"id": f"m{n}", "role": "user", "name": name, "timestamp": "2023-05-08T10:00:00Z", "content": text}


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]

    def post(self, path: str, key: str, body: dict[str, Any], timeout: float = 60) -> requests.Response:
        return requests.post(
            f"{self.url}{path}", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=timeout
        )


@contextmanager
def api_server(
    *,
    workers: int = 2,
    threads: int = 8,
    env: dict[str, str] | None = None,
    name: str = "api",
    ready_timeout: float = 90,
) -> Iterator[Server]:
    """gunicorn with the service's configuration (``infra.gunicorn_config``) serving the test
    settings on a free port (the test's database, unless ``env`` points it elsewhere); stopped
    (and reaped) on exit."""
    port = free_port()
    log = open(ROOT / "var" / f"test-server-{name}.log", "wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "python:infra.gunicorn_config",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            str(workers),
            "-k",
            "gthread",
            "--threads",
            str(threads),
            "--control-socket",
            str(ROOT / "var" / f"test-server-{name}.ctl"),
        ],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "mirix_saas.settings.test", **(env or {})},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server = Server(url=f"http://127.0.0.1:{port}", process=process)

    def up() -> bool:
        assert process.poll() is None, (ROOT / "var" / f"test-server-{name}.log").read_text()
        try:
            return requests.get(f"{server.url}/healthz", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    try:
        wait_for(up, timeout=ready_timeout, interval=0.3)
        yield server
    finally:
        stop_process_group(process)
        log.close()


@dataclass(frozen=True)
class GraphSnapshot:
    anchors: list[dict[str, Any]]
    frames: list[dict[str, Any]]
    arms: list[tuple[str, str]]

    def duplicate_anchor_keys(self) -> list[tuple[str, str]]:
        """(subject, key) pairs held by more than one anchor: the graph's identity of an anchor."""
        return [key for key, n in Counter((a["subject_id"], a["key"]) for a in self.anchors).items() if n > 1]

    def duplicate_frame_ids(self) -> list[str]:
        return [frame_id for frame_id, n in Counter(f["frame_id"] for f in self.frames).items() if n > 1]

    def arms_match_frames(self) -> bool:
        """Every frame has exactly the arm edges its ``arms`` property lists."""
        counts = Counter(frame_id for frame_id, _ in self.arms)
        return all(counts[f["frame_id"]] == len(f["arms"]) for f in self.frames)


def graph_snapshot(organization_id: uuid.UUID) -> GraphSnapshot:
    with organization_scope(organization_id):
        anchors = [
            r[0] for r in adapter.cypher(organization_id=organization_id, query=ALL_ANCHORS, params={}, returns=["a"])
        ]
        frames = [
            r[0] for r in adapter.cypher(organization_id=organization_id, query=ALL_FRAMES, params={}, returns=["f"])
        ]
        arms = adapter.cypher(organization_id=organization_id, query=ALL_ARMS, params={}, returns=["f", "k"])
    return GraphSnapshot(anchors=anchors, frames=frames, arms=[(str(f), str(k)) for f, k in arms])


def rows_by_chunk(organization_id: uuid.UUID) -> dict[str, Counter[str]]:
    """chunk id → store → how many rows of that store the chunk wrote."""
    found: dict[str, Counter[str]] = {}
    with organization_scope(organization_id):
        for store, model in STORES.items():
            for chunk_id in model.objects.values_list("chunk_id", flat=True):
                found.setdefault(str(chunk_id), Counter())[store] += 1
    return found


def stored_as_answered(responses: list[dict[str, Any]], organization_id: uuid.UUID) -> None:
    """Every accepted write's records exist, once each, and nothing else was stored."""
    expected: dict[str, Counter[str]] = {}
    for body in responses:
        expected[str(body["chunk_id"])] = Counter(record["type"] for record in body["records"])
    assert len(expected) == len(responses), "two writes answered with one chunk id"
    assert rows_by_chunk(organization_id) == expected
    with organization_scope(organization_id):
        for body in responses:
            for record in body["records"]:
                assert STORES[record["type"]].objects.filter(id=record["id"]).count() == 1


@dataclass
class Cluster:
    """A throwaway embedded Postgres of this test's own (never the shared one)."""

    data_dir: Path
    database: str
    env: dict[str, str]

    def sql(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """As the superuser, beneath RLS."""
        with psycopg.connect(self.env["DATABASE_ADMIN_URL"], autocommit=True) as conn:
            return conn.execute(query, params).fetchall()

    def restart(self, *, down_seconds: float) -> None:
        """Stop (fast: sessions are terminated, open transactions roll back), stay down, start.
        The start runs in a process of its own: pgserver keeps one server object per process."""
        postgres.stop_postgres(self.data_dir)
        time.sleep(down_seconds)
        start = f"from pathlib import Path; from infra.embedded import postgres; postgres.ensure_postgres(Path({str(self.data_dir)!r}))"
        subprocess.run([sys.executable, "-c", start], cwd=ROOT, check=True, timeout=120)


@contextmanager
def throwaway_postgres(database: str) -> Iterator[Cluster]:
    """Initialise and start a cluster in a fresh directory, bootstrap and migrate ``database``
    with the test settings; stop it and delete the directory on exit."""
    root = Path(tempfile.mkdtemp(prefix="mirix-throwaway-pg-"))
    root.chmod(0o755)  # run as root, the server runs as a system user that must reach it
    data_dir = root / "data"
    try:
        server = postgres.ensure_postgres(data_dir)
        postgres.bootstrap_cluster(server.superuser_url())
        postgres.bootstrap_database(server.superuser_url(), database)
        env = {
            "DATABASE_URL": server.url(role=postgres.APP_ROLE, database=database),
            "DATABASE_OWNER_URL": server.url(role=postgres.OWNER_ROLE, database=database),
            "DATABASE_ADMIN_URL": server.superuser_url(database),
            "DJANGO_SETTINGS_MODULE": "mirix_saas.settings.test",
            "MIRIX_TEST_KEEP_ENV": "1",
        }
        manage(env, "migrate", "--database", "owner", "-v", "0")
        yield Cluster(data_dir=data_dir, database=database, env=env)
    finally:
        postgres.stop_postgres(data_dir)
        shutil.rmtree(root, ignore_errors=True)


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
