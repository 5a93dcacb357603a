"""API load (docs/benchmarks.md): write and search requests/s and p50/p95/p99 under concurrent
clients, against a production-like server started by this command.

The server is gunicorn with the service's configuration (``infra.gunicorn_config``) and
``--api-workers`` sync processes (each measured in turn), and a Celery worker pool on the real
broker that indexes what the writes store, all on the configured (by default embedded)
Postgres and Redis. Every client writes chat messages from a synthetic history
(:mod:`apps.evaluation.synthetic`) to a subject of its own and searches its subject with the
benchmark questions; any status other than the documented success is an error. In order:

1. *Indexing against the API*: seed histories are written and indexed; searches at one client
   with no worker running; the same searches in this process (``search_evidence``) and over
   HTTP in turn, one of each per question, so that both see the same database (its planner
   statistics, its caches) and the same load on the shared machine (ADR 0083); then a
   backlog of writes to other subjects and the same searches while the worker indexes it.
2. For each API-process count: the first search and the first write after the server is
   ready (cold), a warm-up, then for each client count writes for ``--seconds`` (and the
   indexing they queued drained), then searches for ``--seconds``.

With ``--profile`` every request asks for the server's phase timings (``Server-Timing``,
``apps.platform.timing``), and the mean and p50 of each phase per operation are reported.
``--baseline`` runs the servers with the policy before ADR 0052/0053 (models loaded on first
use, two torch threads per process, worker at normal priority, no query-embedding cache) and
writes its own section. The benchmark organization has a key without a rate limit and no
quota, and is offboarded at the end. With ``--write-docs`` the figures and a plot go into
docs/benchmarks.md and docs/img/bench_api.png.
"""

from __future__ import annotations

import functools
import http.client
import logging
import math
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from argparse import ArgumentParser
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.evaluation import loadgen, synthetic
from apps.evaluation.report import BENCHMARKS, write_section
from apps.jobs.models import Job
from apps.memory.models import EpisodicEvent
from apps.platform.cpu import api_torch_threads, available_cores, process_policy_apply
from apps.platform.stats import percentile
from apps.platform.timing import parse_server_timing
from apps.providers.registry import providers_warm, query_embedding_cache
from apps.retrieval.selectors import search_evidence
from apps.tenancy import keys
from apps.tenancy import services as tenancy
from apps.tenancy.models import Organization
from apps.tenancy.scope import organization_scope
from apps.tenancy.selectors import subject_get

PLOT = BENCHMARKS.parent / "img" / "bench_api.png"
OPERATIONS = {"write": 202, "search": 200}  # a write is accepted (ADR 0054)
UNLIMITED = 10**9
SUBJECTS = 64  # at least the largest client count: one subject per client
BACKLOG_SUBJECTS = range(48, 64)  # the backlog's writes go to subjects no client searches
SEED_WRITES, SEED_MESSAGES = 2, 20  # per searched subject, before the idle searches
BACKLOG_WRITES, BACKLOG_MESSAGES = 16, 25  # more than the worker completes in one window
DRAIN_TIMEOUT_SECONDS = 900
# The pre-ADR 0052/0053 policy, for --baseline.
BASELINE_ENV = {
    "MIRIX_WARM_START": "off",
    "MIRIX_QUERY_EMBEDDING_CACHE_SIZE": "0",
    "MIRIX_WORKER_NICE": "0",
    "MIRIX_WORKER_TORCH_THREADS": str(max(1, min(2, available_cores()))),
    "MIRIX_API_TORCH_THREADS": str(max(1, min(2, available_cores()))),
}
PENDING = (Job.Status.QUEUED, Job.Status.RUNNING, Job.Status.INDEXING)

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


@dataclass
class Profile:
    """The server's phase timings of each successful request, by (API processes, clients, operation)."""

    enabled: bool
    phases: dict[tuple[int, int, str], list[dict[str, float]]] = field(default_factory=dict)

    def headers(self) -> dict[str, str]:
        return {"X-Server-Timing": "1"} if self.enabled else {}

    def collect(self, cell: tuple[int, int, str], response: loadgen.Response) -> None:
        value = response.headers.get("Server-Timing")
        if self.enabled and value and response.status_code == OPERATIONS[cell[2]]:
            self.phases.setdefault(cell, []).append(parse_server_timing(value))


def bench_organization(*, name: str, slug_prefix: str) -> Organization:
    """An organization for a load benchmark: no monthly quota, and SUBJECTS subjects
    ``bench-0`` … (one per client)."""
    organization = tenancy.organization_create(
        name=name, slug=f"{slug_prefix}-{uuid.uuid4().hex[:8]}", monthly_request_quota=UNLIMITED
    )
    with organization_scope(organization.id):
        for index in range(SUBJECTS):
            tenancy.subject_create(organization_id=organization.id, external_id=f"bench-{index}", kind="user")
    return organization


def bench_key(organization_id: uuid.UUID) -> str:
    """A key of every scope and no rate limit: the benchmark measures the service, not its limits."""
    return tenancy.api_key_create(
        organization_id=organization_id, name="bench", scopes=list(keys.SCOPES), rate_limit_per_minute=UNLIMITED
    ).secret


@contextmanager
def _process(argv: list[str], *, log_name: str, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A child in a session of its own, with the command's environment and ``env``; stopped on exit."""
    log_path = Path(settings.BASE_DIR) / "var" / f"bench-api-{log_name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MIRIX_EMBEDDED": "off", "PYTHONUNBUFFERED": "1", **env}
    with log_path.open("wb") as log:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            argv, cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            yield process
        finally:
            _stop(process)


def _wait_warm(*, log_name: str, kind: str = "worker", processes: int = 1) -> None:
    """Wait until the child logging to ``log_name`` has ``processes`` processes of ``kind`` (a
    worker's pool processes, a server's API processes) with their models loaded."""
    log_path = Path(settings.BASE_DIR) / "var" / f"bench-api-{log_name}.log"
    deadline = time.monotonic() + DRAIN_TIMEOUT_SECONDS
    while log_path.read_text(errors="replace").count(f"process policy applied (kind={kind}") < processes:
        if time.monotonic() > deadline:
            raise CommandError(f"the {kind} processes did not warm up in time (see {log_path})")
        time.sleep(0.2)


def _tree_cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of ``pid`` and its descendants still running (``/proc``)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total / os.sysconf("SC_CLK_TCK")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's session, SIGKILL after 30 s; nothing for one that already exited."""
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
            with loadgen.Session() as session:
                if session.get(f"{base_url}/readyz", timeout=2).status_code == 200:
                    return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.5)
    raise CommandError("the API server did not become ready in time")


def _write(
    session: loadgen.Session,
    client: int,
    number: int,
    *,
    base: str,
    headers: dict[str, str],
    texts: list[str],
    messages: int = 1,
    subject: int | None = None,
    on_response: Callable[[loadgen.Response], None] | None = None,
) -> loadgen.Response:
    """``messages`` chat messages to the client's own subject (or ``subject``)."""
    first = (client * 997 + number * messages) % len(texts)
    body = [{"role": "user", "name": "Bench", "content": texts[(first + i) % len(texts)]} for i in range(messages)]
    response = session.post(
        f"{base}/v1/subjects/bench-{client if subject is None else subject}/memories",
        json={"messages": body},
        headers=headers,
        timeout=600,
    )
    if on_response is not None:
        on_response(response)
    return response


def _search(
    session: loadgen.Session,
    client: int,
    number: int,
    *,
    base: str,
    headers: dict[str, str],
    questions: list[str],
    on_response: Callable[[loadgen.Response], None] | None = None,
) -> loadgen.Response:
    """A graph-mode search of the client's own subject."""
    question = questions[(client * 31 + number) % len(questions)]
    response = session.post(
        f"{base}/v1/subjects/bench-{client}/search", json={"query": question}, headers=headers, timeout=600
    )
    if on_response is not None:
        on_response(response)
    return response


@dataclass
class Run:
    """Everything one invocation measured."""

    # Each round's load cells: (API processes, clients, operation) → what the cell measured.
    rounds: list[dict[tuple[int, int, str], loadgen.Sample]] = field(default_factory=list)
    # (API processes, operation) → the first request's milliseconds after each start.
    cold_ms: dict[tuple[int, str], list[float]] = field(default_factory=dict)
    idle: loadgen.Summary | None = None
    busy: loadgen.Summary | None = None
    busy_indexed: int = 0  # records indexed during the busy window
    busy_worker_cpu: float = 0.0  # CPU-seconds the worker's processes used per second of the window
    busy_pending_at_end: int = 0  # jobs still pending when it ended
    in_process: loadgen.Summary | None = None
    alternating_http: loadgen.Summary | None = None  # the HTTP searches taken in turn with in_process
    profile: Profile = field(default_factory=lambda: Profile(enabled=False))

    @property
    def measurements(self) -> list[Measurement]:
        """Each load cell with its rounds added up."""
        cells: dict[tuple[int, int, str], loadgen.Sample] = {}
        for samples in self.rounds:
            for cell, sample in samples.items():
                cells[cell] = loadgen.merged(cells.get(cell), sample)
        return [
            Measurement(workers, operation, loadgen.summarize(sample, clients))
            for (workers, clients, operation), sample in cells.items()
        ]

    def warm_p50(self, workers: int, operation: str) -> float:
        return next(
            (
                m.summary.p50_ms
                for m in self.measurements
                if m.api_workers == workers and m.operation == operation and m.summary.clients == 1
            ),
            math.nan,
        )


class Command(BaseCommand):
    help = "Load-test the API (writes and searches) against gunicorn + a Celery pool started here."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--clients", default="1,8", help="Concurrent client counts (comma-separated).")
        parser.add_argument("--api-workers", default="1,2", help="gunicorn worker counts (comma-separated).")
        parser.add_argument("--seconds", type=float, default=8.0, help="Measured seconds per operation and level.")
        parser.add_argument(
            "--rounds", type=int, default=2, help="Rounds of the process counts in turn; a cell's rounds add up."
        )
        parser.add_argument("--worker-concurrency", type=int, default=2, help="Celery pool processes.")
        parser.add_argument("--profile", action="store_true", help="Report the server's own phase timings.")
        parser.add_argument("--baseline", action="store_true", help="Run with the policy before ADR 0052/0053.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("apps").setLevel(logging.WARNING)
        clients = [int(c) for c in str(options["clients"]).split(",")]
        api_workers = [int(w) for w in str(options["api_workers"]).split(",")]
        if int(options["rounds"]) < 1:
            raise CommandError("--rounds must be at least 1")
        if max(clients) > BACKLOG_SUBJECTS.start:
            raise CommandError(f"at most {BACKLOG_SUBJECTS.start} clients")
        baseline = bool(options["baseline"])
        if baseline:
            query_embedding_cache().capacity = 0  # the in-process searches too
        organization = bench_organization(name="API benchmark", slug_prefix="bench-api")
        try:
            key = bench_key(organization.id)
            texts = [r.summary for r in synthetic.generate_history(size=2000, subject_id=organization.id).records]
            questions = [q.text for q in synthetic.benchmark_questions(synthetic.generate_history(
                size=1000, subject_id=organization.id).records)]  # fmt: skip
            run = self._measure(
                organization_id=organization.id,
                key=key,
                texts=texts,
                questions=questions,
                clients=clients,
                api_workers=api_workers,
                seconds=float(options["seconds"]),
                rounds=int(options["rounds"]),
                worker_concurrency=int(options["worker_concurrency"]),
                env=BASELINE_ENV if baseline else {},
                profile=Profile(enabled=bool(options["profile"])),
            )
            body = self._report(
                run,
                seconds=float(options["seconds"]),
                rounds=int(options["rounds"]),
                concurrency=options["worker_concurrency"],
                baseline=baseline,
                questions=len(questions),
            )
            self.stdout.write(body)
            if options["write_docs"]:
                if baseline:
                    write_section("bench_api_baseline", body)
                else:
                    self._plot(run.measurements, clients)
                    write_section("bench_api", body + "\n\n![API load](img/bench_api.png)")
        finally:
            tenancy.organization_offboard(organization_id=organization.id)

    def _measure(
        self,
        *,
        organization_id: uuid.UUID,
        key: str,
        texts: list[str],
        questions: list[str],
        clients: list[int],
        api_workers: list[int],
        seconds: float,
        rounds: int,
        worker_concurrency: int,
        env: dict[str, str],
        profile: Profile,
    ) -> Run:
        # The load cells go untimed: timing each statement costs CPU (and the in-process search
        # pays none). The phase profile comes from cells of its own, on the first process count.
        headers = {"Authorization": f"Bearer {key}"}
        timed_headers = {**headers, **profile.headers()}
        celery = [sys.executable, "-m", "celery", "-A", "mirix_saas", "worker", "-n", f"bench-api-{os.getpid()}@%h",
                  "-Q", ",".join(settings.CELERY_QUEUES), "-c", str(worker_concurrency), "-P", "prefork",
                  "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "INFO"]  # fmt: skip
        run = Run(profile=profile)
        searched = max(clients)
        with ExitStack() as workers_running:
            # 1. Indexing against the API, on the first process count.
            seeding_worker = workers_running.enter_context(_process(celery, log_name="worker-seed", env=env))
            workers = api_workers[0]
            with self._server(workers, env) as base:
                write = functools.partial(_write, base=base, headers=headers, texts=texts)
                search = functools.partial(_search, base=base, headers=headers, questions=questions)
                seed = functools.partial(write, messages=SEED_MESSAGES)
                tqdm.write(f"  seeding {searched} subjects with {SEED_WRITES * SEED_MESSAGES} messages each")
                self._send_all(seed, clients=searched, each=SEED_WRITES, status=OPERATIONS["write"])
                self._drain(organization_id)
                # Idle means no worker: what the writes set off after their jobs (dreams, webhooks)
                # must not run during the idle window. The backlog below is queued with none too.
                _stop(seeding_worker)
                loadgen.run_closed_loop(search, clients=1, seconds=3.0, expected_status=200)  # warm-up
                run.idle = loadgen.summarize(
                    self._cell(search, clients=1, seconds=seconds, status=200, label="search, no worker"), 1
                )
                configured = int(env.get("MIRIX_API_TORCH_THREADS") or settings.API_TORCH_THREADS)
                run.in_process, run.alternating_http = self._in_process(
                    organization_id=organization_id,
                    questions=questions,
                    seconds=seconds,
                    torch_threads=api_torch_threads(configured=configured, processes=workers, cores=available_cores()),
                    search=search,
                )
                # The backlog is queued with no worker running, so that indexing it outlasts the window.
                tqdm.write(f"  backlog: {BACKLOG_WRITES} writes of {BACKLOG_MESSAGES} messages to other subjects")

                def backlog(session: loadgen.Session, client: int, number: int) -> loadgen.Response:
                    subject = BACKLOG_SUBJECTS[(client * (BACKLOG_WRITES // 4) + number) % len(BACKLOG_SUBJECTS)]
                    return write(session, client, number, messages=BACKLOG_MESSAGES, subject=subject)

                self._send_all(backlog, clients=4, each=BACKLOG_WRITES // 4, status=OPERATIONS["write"])
                indexer = workers_running.enter_context(_process(celery, log_name="worker", env=env))
                _wait_warm(log_name="worker")
                indexed_start, cpu_start, window_start = (
                    self._indexed(organization_id),
                    _tree_cpu_seconds(indexer.pid),
                    time.monotonic(),
                )
                run.busy = loadgen.summarize(
                    self._cell(search, clients=1, seconds=seconds, status=200, label="search, worker indexing"), 1
                )
                run.busy_worker_cpu = (_tree_cpu_seconds(indexer.pid) - cpu_start) / (time.monotonic() - window_start)
                run.busy_indexed = self._indexed(organization_id) - indexed_start
                run.busy_pending_at_end = self._pending(organization_id)
                tqdm.write(
                    f"  {run.busy_indexed} records indexed during the busy searches, the worker at "
                    f"{run.busy_worker_cpu:.2f} CPU-s/s; {run.busy_pending_at_end} jobs pending after"
                )
                self._drain(organization_id)

            # 2. Rounds of each process count in turn (the machine's speed drifts between
            # minutes, and the ratios compare counts measured minutes apart): a server started
            # afresh, its first requests, then the load cells. A cell's samples add up over rounds.
            for round_number in range(rounds):
                samples: dict[tuple[int, int, str], loadgen.Sample] = {}
                run.rounds.append(samples)
                for workers in api_workers:
                    with self._server(workers, env) as base:
                        write = functools.partial(_write, base=base, headers=headers, texts=texts)
                        search = functools.partial(_search, base=base, headers=headers, questions=questions)
                        for operation, first in (("search", search), ("write", write)):  # the first after the start
                            began = time.perf_counter()
                            with loadgen.Session() as session:
                                status = first(session, 0, 0).status_code
                            run.cold_ms.setdefault((workers, operation), []).append(
                                (time.perf_counter() - began) * 1000
                            )
                            if status != OPERATIONS[operation]:
                                raise CommandError(f"the first {operation} answered {status}")
                        loadgen.run_closed_loop(
                            write, clients=2 * workers, seconds=3.0, expected_status=OPERATIONS["write"]
                        )
                        loadgen.run_closed_loop(search, clients=2 * workers, seconds=3.0, expected_status=200)
                        self._drain(organization_id)
                        for count in clients:
                            for operation, status in OPERATIONS.items():
                                sample = self._cell(
                                    write if operation == "write" else search, clients=count, seconds=seconds,
                                    status=status,
                                    label=f"round {round_number + 1}: {workers} api × {count:>2} clients {operation:<6}",
                                )  # fmt: skip
                                samples[(workers, count, operation)] = sample
                                if operation == "write":
                                    self._drain(organization_id)
                        if profile.enabled and round_number == 0 and workers == api_workers[0]:
                            self._profile_cells(
                                profile, base=base, headers=timed_headers, texts=texts, questions=questions,
                                workers=workers, clients=clients, seconds=seconds, organization_id=organization_id,
                            )  # fmt: skip
        return run

    def _profile_cells(
        self,
        profile: Profile,
        *,
        base: str,
        headers: dict[str, str],
        texts: list[str],
        questions: list[str],
        workers: int,
        clients: list[int],
        seconds: float,
        organization_id: uuid.UUID,
    ) -> None:
        """The load cells again with ``X-Server-Timing``, each answer's phases collected."""
        for count in clients:
            for operation, status in OPERATIONS.items():
                collect = functools.partial(profile.collect, (workers, count, operation))
                send: loadgen.Request = (
                    functools.partial(_write, base=base, headers=headers, texts=texts, on_response=collect)
                    if operation == "write"
                    else functools.partial(
                        _search, base=base, headers=headers, questions=questions, on_response=collect
                    )
                )
                self._cell(
                    send, clients=count, seconds=seconds, status=status,
                    label=f"{workers} api × {count:>2} clients {operation:<6} timed",
                )  # fmt: skip
                if operation == "write":
                    self._drain(organization_id)

    @contextmanager
    def _server(self, workers: int, env: dict[str, str]) -> Iterator[str]:
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        gunicorn = [sys.executable, "-m", "gunicorn", "-c", "python:infra.gunicorn_config", "-b", f"127.0.0.1:{port}",
                    "-w", str(workers), "--backlog", "256"]  # fmt: skip
        with _process(gunicorn, log_name=f"api-{workers}", env=env) as server:
            _wait_ready(base, server)
            # /readyz answers once one process is warm; the first request is measured once all
            # are, not while another warms up beside it on the same cores.
            _wait_warm(log_name=f"api-{workers}", kind="api", processes=workers)
            yield base

    def _cell(self, send: loadgen.Request, *, clients: int, seconds: float, status: int, label: str) -> loadgen.Sample:
        sample = loadgen.run_closed_loop(send, clients=clients, seconds=seconds, expected_status=status)
        summary = loadgen.summarize(sample, clients)
        tqdm.write(
            f"  {label}: {summary.per_second:7.1f} req/s  p50 {summary.p50_ms:6.0f} ms  "
            f"p95 {summary.p95_ms:6.0f} ms  p99 {summary.p99_ms:6.0f} ms  errors {summary.errors} "
            f"{summary.error_kinds or ''}"
        )
        return sample

    def _send_all(self, send: loadgen.Request, *, clients: int, each: int, status: int) -> None:
        """``each`` requests from each of ``clients`` clients, all of which must succeed."""
        failures: list[int] = []

        def client(index: int) -> None:
            with loadgen.Session() as session:
                for number in range(each):
                    response = send(session, index, number)
                    if response.status_code != status:
                        failures.append(response.status_code)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if failures:
            raise CommandError(f"{len(failures)} writes failed: {sorted(set(failures))}")

    def _pending(self, organization_id: uuid.UUID) -> int:
        with organization_scope(organization_id):
            return Job.objects.filter(status__in=PENDING).count()

    def _indexed(self, organization_id: uuid.UUID) -> int:
        with organization_scope(organization_id):
            # Indexed or given up on: an accepted row is ``writing`` until the worker completes it.
            done = [EpisodicEvent.IndexStatus.INDEXED, EpisodicEvent.IndexStatus.FAILED]
            return EpisodicEvent.objects.filter(index_status__in=done).count()

    def _drain(self, organization_id: uuid.UUID) -> None:
        """Wait until the worker has finished every job of the benchmark organization."""
        deadline = time.monotonic() + DRAIN_TIMEOUT_SECONDS
        while self._pending(organization_id):
            if time.monotonic() > deadline:
                raise CommandError("the worker did not finish the queued indexing in time")
            time.sleep(1.0)

    def _in_process(
        self,
        *,
        organization_id: uuid.UUID,
        questions: list[str],
        seconds: float,
        torch_threads: int,
        search: loadgen.Request,
    ) -> tuple[loadgen.Summary, loadgen.Summary]:
        """The idle searches' questions and subject through ``search_evidence`` in this process,
        with the inference threads of an API process and a warm-up like the server's (the models
        loaded and run once, a few searches), each question also asked over HTTP right after
        it: two windows one after the other would compare two states of the database (a write
        burst's statistics analyzed in between, ADR 0083) and of the shared machine's load."""
        process_policy_apply(torch_threads=torch_threads)
        providers_warm()
        for question in questions[:3]:
            with organization_scope(organization_id):
                search_evidence(subject=subject_get(external_id="bench-0"), question=question)
        local, remote = loadgen.Sample(), loadgen.Sample()
        began = time.monotonic()
        number = 0
        with loadgen.Session() as session:
            while time.monotonic() - began < 2 * seconds:
                question = questions[number % len(questions)]  # client 0's sequence
                start = time.perf_counter()
                with organization_scope(organization_id):
                    search_evidence(subject=subject_get(external_id="bench-0"), question=question)
                local.latencies.append(time.perf_counter() - start)
                start = time.perf_counter()
                status = search(session, 0, number).status_code
                if status == OPERATIONS["search"]:
                    remote.latencies.append(time.perf_counter() - start)
                else:
                    remote.errors[str(status)] = remote.errors.get(str(status), 0) + 1
                number += 1
        local.seconds = remote.seconds = time.monotonic() - began
        in_process, over_http = loadgen.summarize(local, 1), loadgen.summarize(remote, 1)
        tqdm.write(
            f"  search in process: p50 {in_process.p50_ms:6.0f} ms  p95 {in_process.p95_ms:6.0f} ms; "
            f"over HTTP in turn: p50 {over_http.p50_ms:6.0f} ms  p95 {over_http.p95_ms:6.0f} ms"
        )
        return in_process, over_http

    def _report(
        self, run: Run, *, seconds: float, rounds: int, concurrency: int, baseline: bool, questions: int
    ) -> str:
        measurements = run.measurements
        errors = sum(m.summary.errors for m in measurements)
        load = os.getloadavg()
        counts = sorted({m.api_workers for m in measurements})
        policy = (
            "**Baseline: the policy before ADR 0052/0053** (models loaded on first use, two torch threads in "
            "every process, the worker at normal priority, no query-embedding cache)"
            if baseline
            else "The policy of ADR 0052/0053 (models warmed before traffic, one inference thread per API process "
            f"within cores // API processes, worker pool processes at nice {settings.WORKER_NICE} with one "
            "inference thread (ONNX Runtime, ADR 0063), query embeddings cached per organization)"
        )
        title = "## API load (`python manage.py bench_api --profile --write-docs" + (" --baseline" if baseline else "")
        lines = [
            title + "`)",
            "",
            f"{policy}. gunicorn (sync workers, {', '.join(map(str, counts))} processes in turn, the service's "
            f"`infra.gunicorn_config`) and a Celery pool of {concurrency} prefork processes indexing what the writes "
            f"store, on the embedded Postgres and Redis, {platform.machine()} with {os.cpu_count()} cores shared by "
            "server, pool, database, the load generator and other work on the machine. Closed-loop clients (the "
            "standard library's HTTP client, a new connection per request: sync workers close each one), "
            f"{seconds:.0f} s per cell after a warm-up, in {rounds} round(s) of every process "
            "count in turn, each with a server started afresh (a cell's figures add its rounds up); the "
            "indexing a write cell queued is "
            "drained before the next cell. A write is one chat message to the client's own subject (202, accepted); a "
            "search is a graph-mode retrieval over that subject's history (200), the client cycling through "
            f"{questions} benchmark questions (so a question repeats after {questions} searches). Latencies "
            f"are of successful requests; any other status is an error ({errors} in all). Machine load "
            f"(1/5/15-minute averages) at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}.",
            "",
            "| API processes | clients | operation | requests/s | p50 ms | p95 ms | p99 ms | errors |",
            "|---|---|---|---|---|---|---|---|",
            *[
                f"| {m.api_workers} | {m.summary.clients} | {m.operation} | {m.summary.per_second:.1f} | "
                f"{m.summary.p50_ms:.0f} | {m.summary.p95_ms:.0f} | {m.summary.p99_ms:.0f} | {m.summary.errors} |"
                for m in measurements
            ],
            "",
            "Scaling with API processes (requests/s at the largest client count, relative to one process; "
            "then each round's ratio of the most processes to one):",
            "",
            "| operation | " + " | ".join(f"{w} process(es)" for w in counts) + " | each round |",
            "|---|" + "---|" * (len(counts) + 1),
            *[self._scaling_row(run, operation) for operation in OPERATIONS],
            "",
            "First request after the server is ready (cold, each start) against the warm p50 of the same process "
            "count at one client:",
            "",
            "| API processes | operation | first ms | warm p50 ms | first / warm |",
            "|---|---|---|---|---|",
            *[
                f"| {workers} | {operation} | {', '.join(f'{ms:.0f}' for ms in firsts)} | "
                f"{run.warm_p50(workers, operation):.0f} | "
                f"{', '.join(f'{ms / run.warm_p50(workers, operation):.2f}×' for ms in firsts)} |"
                for (workers, operation), firsts in sorted(run.cold_ms.items())
            ],
        ]
        if (
            run.idle is not None
            and run.busy is not None
            and run.in_process is not None
            and run.alternating_http is not None
        ):
            lines += [
                "",
                f"Search at one client over HTTP ({counts[0]} API process(es)) with no worker running; in this process "
                f"(`search_evidence`, same subject and questions) and over HTTP in turn, one of each per question (each "
                f"of these two rows' searches/s counts its own searches in a window that holds both); and over HTTP while the "
                f"worker indexes a backlog "
                f"({BACKLOG_WRITES} writes of {BACKLOG_MESSAGES} messages to other subjects, queued with the worker "
                f"stopped, then a worker started; the window opens once its pool process is warm; the worker's "
                f"processes used {run.busy_worker_cpu:.2f} CPU-seconds per second of the window, "
                f"{run.busy_indexed} records were indexed during it (a batch commits its rows together), "
                f"{run.busy_pending_at_end} jobs still pending at its end):",
                "",
                "| case | searches/s | p50 ms | p95 ms | ratio |",
                "|---|---|---|---|---|",
                f"| HTTP, no worker | {run.idle.per_second:.1f} | {run.idle.p50_ms:.0f} | {run.idle.p95_ms:.0f} | "
                f"p50 / in-process p50 = {run.idle.p50_ms / run.in_process.p50_ms:.2f}× |",
                f"| in process, in turn with HTTP | {run.in_process.per_second:.1f} | {run.in_process.p50_ms:.0f} | "
                f"{run.in_process.p95_ms:.0f} | – |",
                f"| HTTP, in turn with in process | {run.alternating_http.per_second:.1f} | "
                f"{run.alternating_http.p50_ms:.0f} | {run.alternating_http.p95_ms:.0f} | "
                f"HTTP p50 / in-process p50 = {run.alternating_http.p50_ms / run.in_process.p50_ms:.2f}× |",
                f"| HTTP, worker indexing | {run.busy.per_second:.1f} | {run.busy.p50_ms:.0f} | "
                f"{run.busy.p95_ms:.0f} | p95 busy / p50 idle = {run.busy.p95_ms / run.idle.p50_ms:.2f}× |",
            ]
        if run.profile.enabled:
            lines += ["", *self._profile_table(run.profile, counts[0])]
        return "\n".join(lines)

    def _profile_table(self, profile: Profile, workers: int) -> list[str]:
        """Mean and p50 of each phase per operation and client count, from ``Server-Timing``."""
        lines = [
            f"Where the time goes ({workers} API process(es), cells of their own after the load cells: the load "
            "cells above send no timing header, since timing every statement costs the server CPU; the server's "
            "own `Server-Timing` phases, exclusive: "
            "`sql` is every SQL statement, `graph` every statement over the graph and its adjacency index, `retrieval` the search's own Python "
            "(planning, ranking, fusion), `routing`/`writing`/`embedding`/`database` the write path's stopwatch "
            "(`database`: its ORM work outside SQL), `auth` key, scopes and throttles, `audit` the audit entry, "
            "`commit` the transaction's end, `serialization` the serializers and JSON, `other` the framework "
            "and the rest of `total`; ms):",
            "",
            "| operation | clients | requests | " + " | ".join(f"{p} mean / p50" for p in _PHASES) + " |",
            "|---|---|---|" + "---|" * len(_PHASES),
        ]
        for (count_workers, clients, operation), timings in sorted(profile.phases.items()):
            if count_workers != workers:
                continue
            cells = []
            for name in _PHASES:
                values = [t.get(name, 0.0) for t in timings]
                cells.append(f"{sum(values) / len(values):.1f} / {percentile(values, 0.5):.1f}")
            lines.append(f"| {operation} | {clients} | {len(timings)} | " + " | ".join(cells) + " |")
        return lines

    def _scaling_row(self, run: Run, operation: str) -> str:
        measurements = run.measurements
        top = max(m.summary.clients for m in measurements)
        rates = {
            m.api_workers: m.summary.per_second
            for m in measurements
            if m.operation == operation and m.summary.clients == top
        }
        base = rates.get(min(rates), math.nan) if rates else math.nan
        cells = [f"{rate:.1f} ({rate / base:.2f}×)" for _, rate in sorted(rates.items())]

        def rate(samples: dict[tuple[int, int, str], loadgen.Sample], workers: int) -> float:
            return loadgen.summarize(samples[(workers, top, operation)], top).per_second

        each = ", ".join(f"{rate(samples, max(rates)) / rate(samples, min(rates)):.2f}×" for samples in run.rounds)
        return f"| {operation} | " + " | ".join(cells) + f" | {each} |"

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


_PHASES = (
    "auth",
    "routing",
    "writing",
    "embedding",
    "database",
    "sql",
    "graph",
    "retrieval",
    "serialization",
    "audit",
    "commit",
    "other",
    "total",
)
