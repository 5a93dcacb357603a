"""API load (docs/benchmarks.md): write and search requests/s and p50/p95/p99 under concurrent
clients, against a production-like server started by this command.

The server is gunicorn with ``--api-workers`` sync processes (each measured in turn) and a
Celery worker pool on the real broker that indexes what the writes store, all on the
configured (by default embedded) Postgres and Redis. For each API-process count and each
client count, closed-loop clients (:mod:`apps.evaluation.loadgen`) send writes for
``--seconds``, then searches for ``--seconds``: every client writes chat messages from a
synthetic history (:mod:`apps.evaluation.synthetic`) to a subject of its own, and searches
its subject with the benchmark questions. Any status other than the documented success is
an error. The benchmark organization has a key without a rate limit and no quota, and is
offboarded at the end. With ``--write-docs`` the figures and a plot go into
docs/benchmarks.md and docs/img/bench_api.png.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import platform
import signal
import socket
import subprocess
import sys
import time
import uuid
from argparse import ArgumentParser
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.evaluation import loadgen, synthetic
from apps.evaluation.report import BENCHMARKS, write_section
from apps.tenancy import keys
from apps.tenancy import services as tenancy
from apps.tenancy.scope import organization_scope

PLOT = BENCHMARKS.parent / "img" / "bench_api.png"
OPERATIONS = {"write": 202, "search": 200}  # a write is accepted (ADR 0054)
UNLIMITED = 10**9
SUBJECTS = 64  # at least the largest client count: one subject per client

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Measurement:
    api_workers: int
    operation: str
    summary: loadgen.Summary


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _process(argv: list[str], *, log_name: str) -> Iterator[subprocess.Popen[bytes]]:
    """A child in a session of its own, with the command's environment; stopped on exit."""
    log_path = Path(settings.BASE_DIR) / "var" / f"bench-api-{log_name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MIRIX_EMBEDDED": "off", "PYTHONUNBUFFERED": "1"}
    with log_path.open("wb") as log:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            argv, cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()


def _wait_ready(base_url: str, process: subprocess.Popen[bytes], timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CommandError("the API server exited during start-up; see var/bench-api-api-*.log")
        try:
            if requests.get(f"{base_url}/readyz", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise CommandError("the API server did not become ready in time")


def _write(
    session: requests.Session, client: int, number: int, *, base: str, headers: dict[str, str], texts: list[str]
) -> requests.Response:
    """One chat message to the client's own subject."""
    text = texts[(client * 997 + number) % len(texts)]
    return session.post(
        f"{base}/v1/subjects/bench-{client}/memories",
        json={"messages": [{"role": "user", "name": "Bench", "content": text}]},
        headers=headers,
        timeout=120,
    )


def _search(
    session: requests.Session, client: int, number: int, *, base: str, headers: dict[str, str], questions: list[str]
) -> requests.Response:
    """A graph-mode search of the client's own subject."""
    question = questions[(client * 31 + number) % len(questions)]
    return session.post(
        f"{base}/v1/subjects/bench-{client}/search", json={"query": question}, headers=headers, timeout=120
    )


class Command(BaseCommand):
    help = "Load-test the API (writes and searches) against gunicorn + a Celery pool started here."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--clients", default="1,8,32", help="Concurrent client counts (comma-separated).")
        parser.add_argument("--api-workers", default="1,2,4", help="gunicorn worker counts (comma-separated).")
        parser.add_argument("--seconds", type=float, default=10.0, help="Measured seconds per operation and level.")
        parser.add_argument("--worker-concurrency", type=int, default=2, help="Celery pool processes.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("apps").setLevel(logging.WARNING)
        clients = [int(c) for c in str(options["clients"]).split(",")]
        api_workers = [int(w) for w in str(options["api_workers"]).split(",")]
        if max(clients) > SUBJECTS:
            raise CommandError(f"at most {SUBJECTS} clients")
        organization = tenancy.organization_create(
            name="API benchmark", slug=f"bench-api-{uuid.uuid4().hex[:8]}", monthly_request_quota=UNLIMITED
        )
        try:
            key = tenancy.api_key_create(
                organization_id=organization.id, name="bench", scopes=list(keys.SCOPES), rate_limit_per_minute=UNLIMITED
            ).secret
            with organization_scope(organization.id):
                for index in range(SUBJECTS):
                    tenancy.subject_create(organization_id=organization.id, external_id=f"bench-{index}", kind="user")
            texts = [r.summary for r in synthetic.generate_history(size=2000, subject_id=organization.id).records]
            questions = [q.text for q in synthetic.benchmark_questions(synthetic.generate_history(
                size=1000, subject_id=organization.id).records)]  # fmt: skip
            measurements = self._measure(
                key=key,
                texts=texts,
                questions=questions,
                clients=clients,
                api_workers=api_workers,
                seconds=float(options["seconds"]),
                worker_concurrency=int(options["worker_concurrency"]),
            )
            body = self._report(
                measurements, seconds=float(options["seconds"]), concurrency=options["worker_concurrency"]
            )
            self.stdout.write(body)
            if options["write_docs"]:
                self._plot(measurements, clients)
                write_section("bench_api", body + "\n\n![API load](img/bench_api.png)")
        finally:
            tenancy.organization_offboard(organization_id=organization.id)

    def _measure(
        self,
        *,
        key: str,
        texts: list[str],
        questions: list[str],
        clients: list[int],
        api_workers: list[int],
        seconds: float,
        worker_concurrency: int,
    ) -> list[Measurement]:
        headers = {"Authorization": f"Bearer {key}"}
        celery = [sys.executable, "-m", "celery", "-A", "mirix_saas", "worker", "-n", f"bench-api-{os.getpid()}@%h",
                  "-Q", ",".join(settings.CELERY_QUEUES), "-c", str(worker_concurrency), "-P", "prefork",
                  "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"]  # fmt: skip
        measurements: list[Measurement] = []
        total = len(api_workers) * len(clients) * len(OPERATIONS)
        with _process(celery, log_name="worker"), tqdm(total=total, unit="run", desc="bench_api") as progress:
            for workers in api_workers:
                port = _free_port()
                base = f"http://127.0.0.1:{port}"
                gunicorn = [sys.executable, "-m", "gunicorn", "mirix_saas.wsgi:application", "-b", f"127.0.0.1:{port}",
                            "-w", str(workers), "--timeout", "120", "--backlog", "256"]  # fmt: skip
                with _process(gunicorn, log_name=f"api-{workers}") as server:
                    _wait_ready(base, server)

                    write = functools.partial(_write, base=base, headers=headers, texts=texts)
                    search = functools.partial(_search, base=base, headers=headers, questions=questions)
                    senders: dict[str, loadgen.Request] = {"write": write, "search": search}
                    # Warm-up (not measured): every gunicorn process loads its models on first use.
                    loadgen.run_closed_loop(write, clients=2 * workers, seconds=3.0, expected_status=202)
                    loadgen.run_closed_loop(search, clients=2 * workers, seconds=3.0, expected_status=200)
                    for count in clients:
                        for operation, status in OPERATIONS.items():
                            progress.set_postfix_str(f"{workers} api × {count} clients: {operation}")
                            sample = loadgen.run_closed_loop(
                                senders[operation], clients=count, seconds=seconds, expected_status=status
                            )
                            summary = loadgen.summarize(sample, count)
                            measurements.append(Measurement(workers, operation, summary))
                            tqdm.write(
                                f"  {workers} api × {count:>2} clients {operation:<6} {summary.per_second:7.1f} req/s  "
                                f"p50 {summary.p50_ms:6.0f} ms  p95 {summary.p95_ms:6.0f} ms  "
                                f"p99 {summary.p99_ms:6.0f} ms  errors {summary.errors} {summary.error_kinds or ''}"
                            )
                            progress.update()
        return measurements

    def _report(self, measurements: list[Measurement], *, seconds: float, concurrency: int) -> str:
        errors = sum(m.summary.errors for m in measurements)
        load = os.getloadavg()[0]
        lines = [
            "## API load (`python manage.py bench_api --write-docs`)",
            "",
            f"gunicorn (sync workers, 1, 2 and 4 processes in turn) and a Celery pool of {concurrency} prefork "
            f"processes indexing what the writes store, on the embedded Postgres and Redis, {platform.machine()} with "
            f"{os.cpu_count()} cores shared by server, pool, database and the load generator. Closed-loop clients "
            f"over HTTP keep-alive, {seconds:.0f} s per cell after a warm-up. A write is one chat message to the "
            "client's own subject (routing, writing, embedding, commit, indexing job enqueued: 201); a search is "
            "a graph-mode retrieval over that subject's history (200). Latencies are of successful requests; any "
            f"other status is an error ({errors} in all).",
            "",
            "| API processes | clients | operation | requests/s | p50 ms | p95 ms | p99 ms | errors |",
            "|---|---|---|---|---|---|---|---|",
            *[
                f"| {m.api_workers} | {m.summary.clients} | {m.operation} | {m.summary.per_second:.1f} | "
                f"{m.summary.p50_ms:.0f} | {m.summary.p95_ms:.0f} | {m.summary.p99_ms:.0f} | {m.summary.errors} |"
                for m in measurements
            ],
            "",
            "Scaling with API processes (requests/s at the largest client count, relative to one process):",
            "",
            "| operation | "
            + " | ".join(f"{w} process(es)" for w in sorted({m.api_workers for m in measurements}))
            + " |",
            "|---|" + "---|" * len({m.api_workers for m in measurements}),
            *[self._scaling_row(measurements, operation) for operation in OPERATIONS],
            "",
            f"Machine load (1-minute average) at the end: {load:.1f}.",
        ]
        return "\n".join(lines)

    def _scaling_row(self, measurements: list[Measurement], operation: str) -> str:
        top = max(m.summary.clients for m in measurements)
        rates = {
            m.api_workers: m.summary.per_second
            for m in measurements
            if m.operation == operation and m.summary.clients == top
        }
        base = rates.get(min(rates), math.nan) if rates else math.nan
        cells = [f"{rate:.1f} ({rate / base:.2f}×)" for _, rate in sorted(rates.items())]
        return f"| {operation} | " + " | ".join(cells) + " |"

    def _plot(self, measurements: list[Measurement], clients: list[int]) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
        for column, operation in enumerate(OPERATIONS):
            for workers in sorted({m.api_workers for m in measurements}):
                rows = sorted(
                    (m.summary for m in measurements if m.operation == operation and m.api_workers == workers),
                    key=lambda s: s.clients,
                )
                label = f"{workers} API process{'es' if workers > 1 else ''}"
                axes[0][column].plot([s.clients for s in rows], [s.per_second for s in rows], marker="o", label=label)
                axes[1][column].plot([s.clients for s in rows], [s.p95_ms for s in rows], marker="o", label=label)
            axes[0][column].set_title(f"{operation}: requests/s")
            axes[1][column].set_title(f"{operation}: p95 latency (ms)")
            axes[1][column].set_xlabel("concurrent clients")
            for row in axes:
                row[column].set_xscale("log", base=2)
                row[column].set_xticks(clients, [str(c) for c in clients])
                row[column].grid(alpha=0.3)
        axes[0][0].legend()
        figure.suptitle("bench_api: gunicorn + Celery pool on the embedded stack (2 cores)")
        figure.tight_layout()
        PLOT.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(PLOT, dpi=110)
        plt.close(figure)
