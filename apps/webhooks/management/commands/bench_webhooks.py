"""Webhook delivery through a real Celery worker pool against a local receiver.

Two figures: deliveries/s for a burst of events (each emitted in a transaction of its own,
as the product does), and the end-to-end latency, p50/p95, from the commit of the change to
the receiver, for events emitted at a steady rate. The worker pool listens to a queue of its
own, so a running ``make run`` stack is not disturbed. With ``--write-docs`` the figures go
to docs/benchmarks.md.
"""

from __future__ import annotations

import logging
import os
import platform
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from argparse import ArgumentParser
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test import override_settings
from kombu import Queue

from apps.evaluation.report import write_section
from apps.platform.stats import percentile
from apps.tenancy import services as tenancy
from apps.tenancy.scope import organization_scope
from apps.webhooks import events
from apps.webhooks.services import webhook_endpoint_create, webhook_event_emit
from mirix_saas.celery import app


class _Receiver:
    """A local HTTP receiver that records when each message (by webhook-id) arrived."""

    def __init__(self) -> None:
        self.arrivals: dict[str, float] = {}
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._arrived:
                    receiver.arrivals.setdefault(self.headers["webhook-id"], time.time())
                    receiver._arrived.notify_all()
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait_for(self, message_ids: set[str], *, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while not message_ids <= self.arrivals.keys():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    missing = len(message_ids - self.arrivals.keys())
                    raise CommandError(f"{missing} webhook messages did not arrive within {timeout:.0f} s")
                self._arrived.wait(remaining)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def _worker_pool(*, queue: str, concurrency: int) -> Iterator[None]:
    log_path = Path(settings.BASE_DIR) / "var" / "bench-webhooks-worker.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "celery", "-A", "mirix_saas", "worker", "-n", f"bench-webhooks-{os.getpid()}@%h",
        "-Q", queue, "-c", str(concurrency), "-P", "prefork",
        "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING",
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            command,
            cwd=settings.BASE_DIR,
            env={**os.environ, "MIRIX_WEBHOOKS_QUEUE": queue},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            with app.connection_for_write() as conn:
                Queue(queue).bind(conn.default_channel).delete()


def _emit(organization_id: uuid.UUID, sequence: int) -> tuple[str, float]:
    """One event in a transaction of its own; returns its id and the time it committed."""
    with organization_scope(organization_id):
        event = webhook_event_emit(
            organization_id=organization_id,
            event_type=events.JOB_FAILED,
            payload={"job_id": str(uuid.uuid4()), "kind": "bench", "sequence": sequence},
        )
    assert event is not None
    return str(event.id), time.time()


class Command(BaseCommand):
    help = "Benchmark webhook delivery (deliveries/s, commit-to-receiver latency) on a real worker pool."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--burst", type=int, default=1000, help="Events emitted at once for deliveries/s.")
        parser.add_argument("--steady", type=int, default=200, help="Events emitted at a steady rate for latency.")
        parser.add_argument("--rate", type=float, default=20.0, help="Steady emission rate, events/s.")
        parser.add_argument("--concurrency", type=int, default=4, help="Worker processes in the pool.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.WEBHOOKS_ALLOW_LOOPBACK:
            raise CommandError("The benchmark's receiver is on 127.0.0.1: set MIRIX_WEBHOOKS_ALLOW_LOOPBACK=true.")
        logging.getLogger("apps").setLevel(logging.WARNING)
        queue = f"webhooks-bench-{uuid.uuid4().hex[:8]}"
        receiver = _Receiver()
        organization = tenancy.organization_create(
            name="Webhooks benchmark", slug=f"bench-webhooks-{uuid.uuid4().hex[:8]}"
        )
        try:
            webhook_endpoint_create(organization_id=organization.id, url=receiver.url, event_types=["*"])
            with override_settings(WEBHOOKS_QUEUE=queue), _worker_pool(queue=queue, concurrency=options["concurrency"]):
                warm_up = {_emit(organization.id, -i)[0] for i in range(options["concurrency"] * 2)}
                receiver.wait_for(warm_up, timeout=120)
                throughput = self._burst(organization.id, receiver, options["burst"])
                latencies = self._steady(organization.id, receiver, options["steady"], options["rate"])
        finally:
            receiver.close()
            tenancy.organization_offboard(organization_id=organization.id)
        body = self._report(options=options, throughput=throughput, latencies=latencies)
        self.stdout.write(body)
        if options["write_docs"]:
            write_section("bench_webhooks", body)

    def _burst(self, organization_id: uuid.UUID, receiver: _Receiver, count: int) -> tuple[float, float, float]:
        started = time.time()
        ids = {_emit(organization_id, i)[0] for i in range(count)}
        emitted = time.time() - started
        receiver.wait_for(ids, timeout=600)
        finished = max(receiver.arrivals[i] for i in ids)
        return count / (finished - started), count / emitted, finished - started

    def _steady(self, organization_id: uuid.UUID, receiver: _Receiver, count: int, rate: float) -> list[float]:
        committed: dict[str, float] = {}
        start = time.monotonic()
        for i in range(count):
            time.sleep(max(0.0, start + i / rate - time.monotonic()))
            event_id, at = _emit(organization_id, i)
            committed[event_id] = at
        receiver.wait_for(set(committed), timeout=300)
        return [(receiver.arrivals[event_id] - at) * 1000 for event_id, at in committed.items()]

    def _report(
        self, *, options: dict[str, Any], throughput: tuple[float, float, float], latencies: list[float]
    ) -> str:
        delivered_per_second, emitted_per_second, elapsed = throughput
        lines = [
            "## Webhooks: delivery (`python manage.py bench_webhooks --write-docs`)",
            "",
            f"A Celery worker pool of {options['concurrency']} prefork processes on the embedded Redis broker and "
            f"Postgres, one endpoint on a local `ThreadingHTTPServer` (answers 204), {platform.machine()} with "
            f"{os.cpu_count()} cores. Each event is emitted in a transaction of its own; its delivery is kicked "
            "after commit (the beat drain, not running here, only picks up lost kicks and retries). Every "
            "message is signed, SSRF-checked (resolve once, connect to the checked address) and recorded as a "
            "delivery and an attempt. The machine is shared: latency grows with its load.",
            "",
            "| figure | value |",
            "|---|---|",
            f"| burst: events | {options['burst']} (emitted at {emitted_per_second:.0f}/s) |",
            f"| burst: all delivered after | {elapsed:.1f} s |",
            f"| burst: deliveries/s | {delivered_per_second:.0f} |",
            f"| steady: events | {len(latencies)} at {options['rate']:.0f}/s |",
            f"| steady: commit → receiver p50 | {statistics.median(latencies):.0f} ms |",
            f"| steady: commit → receiver p95 | {percentile(latencies, 0.95):.0f} ms |",
            f"| steady: commit → receiver max | {max(latencies):.0f} ms |",
            f"| machine load (1-min average) at the end | {os.getloadavg()[0]:.1f} |",
        ]
        return "\n".join(lines)
