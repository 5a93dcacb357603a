"""Real processes for tests: a Celery worker on the real (embedded Redis) broker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[1]


def purge_queues() -> None:
    """Empty every queue, and forget the messages a killed worker never acknowledged (a later
    worker with a short visibility timeout would otherwise be handed another test's message)."""
    from mirix_saas.celery import app

    with app.connection_for_write() as conn:
        channel = conn.default_channel
        for queue in settings.CELERY_QUEUES:
            channel.queue_purge(queue)
        channel.client.delete(channel.unacked_key, channel.unacked_index_key)


@contextmanager
def celery_worker(
    *, queues: list[str] | None = None, concurrency: int = 1, name: str = "w1", env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """A worker process with the test settings (and ``env`` on top); stopped (and reaped) on
    exit, unless the test killed it first."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "mirix_saas.settings.test",
        "MIRIX_TEST_KEEP_ENV": "1",
        **(env or {}),
    }
    log = open(worker_log_path(name), "wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "mirix_saas",
            "worker",
            "-n",
            f"{name}@%h",
            "-Q",
            ",".join(queues or settings.CELERY_QUEUES),
            "-c",
            str(concurrency),
            "-P",
            "prefork",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-l",
            "INFO",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        stop_process_group(process)
        log.close()


def worker_log_path(name: str) -> Path:
    return ROOT / "var" / f"test-worker-{name}.log"


def worker_log(name: str) -> str:
    """What the worker ``name`` (of ``celery_worker``) has logged so far."""
    return worker_log_path(name).read_text(errors="replace")


def stop_process_group(process: subprocess.Popen[bytes], *, timeout: float = 20) -> None:
    """SIGTERM a process started in a session of its own (and its children), SIGKILL after
    ``timeout``; reaped either way. Nothing happens to one that already exited."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_for(predicate, *, timeout: float = 60.0, interval: float = 0.2):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError("condition not met in time")
