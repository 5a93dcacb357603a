"""Writes over HTTP (docs/benchmarks.md, ADRs 0054 and 0084): how long a write takes to be
accepted, and how many messages per second go through the API into searchable rows with the
worker running.

A gunicorn server and a Celery worker on the indexing queue (it completes and indexes the
writes; ``--worker-processes`` pool processes, by default the embedded stack's) are started
here, on the configured (by default embedded) Postgres and Redis.
First one client writes one chat message at a time for ``--seconds`` (the accepted write's
latency, the worker completing those writes meanwhile). Then ``--clients`` clients write for
``--seconds`` and the command waits until every write's job is finished: the messages written
divided by the time from the first write to the last job finished is the sustained ingestion
rate, and the indexed rows over the worker's busy time its records per second. Those clients
write from one list of texts that repeat (kept as it was, to compare with earlier runs); then,
for the general case, the same clients write texts that never repeat (each dealt once from a
larger generated pool, to subjects of their own), one message per write, a user and assistant
pair per write, and a session of 10 messages per write, each with its searchable messages per
second, the worker's rows per CPU second, its batch sizes and the jobs' latency. Every status
other than 202 is an error; a job that did not succeed is reported. Last, in this process and
in one run (ratios that hold on a loaded machine): the same one-message writes accepted
(``memory_accept_messages``) against written whole as before (``memory_write_messages``), and
their completion and indexing in batches against one write at a time.
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import statistics
import subprocess
import sys
import time
import uuid
from argparse import ArgumentParser
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amqp.exceptions import ChannelError
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from apps.evaluation import loadgen, synthetic
from apps.evaluation.management.commands.bench_api import (
    SUBJECTS,
    _free_port,
    _process,
    _tree_cpu_seconds,
    _wait_ready,
    _write,
    bench_key,
    bench_organization,
)
from apps.evaluation.report import write_section
from apps.graph.services import index_chunk, index_chunks
from apps.jobs.models import Job
from apps.memory.manager import IncomingMessage
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.memory.services import (
    incoming_messages,
    memory_accept_messages,
    memory_complete_writes,
    memory_write_messages,
)
from apps.platform.stats import percentile
from apps.providers.registry import embedder, llm_for
from apps.tenancy import services as tenancy
from apps.tenancy.scope import organization_scope
from infra.embedded.environment import postgres_dir, worker_concurrency
from mirix_saas.celery import app as celery_app

DISTINCT_POOL, DISTINCT_SEED = 20_000, 7  # the general case's texts: enough that none is dealt twice
DISTINCT_CELLS = (1, 2, 10)  # messages per write: one message, a user and assistant pair, a session
WRITE_KIND = {1: "1 message", 2: "a user and assistant pair", 10: "a session of 10 messages"}


@dataclass(frozen=True)
class Sustained:
    accepted: loadgen.Summary
    per_write: int  # messages per write
    messages: int
    rows: int
    failed: int
    total: float  # seconds from the first write to the last job finished
    lag: float  # seconds from the last write to the last job finished
    cpu: float  # the worker processes' CPU seconds meanwhile
    database_cpu: float | None  # the embedded Postgres cluster's (every backend's), if it runs here
    batches: loadgen.Batches
    latency_p50: float
    latency_p95: float


def _queued_messages() -> int:
    """Messages waiting in the indexing queue (the broker's count)."""
    with celery_app.connection_for_read() as connection:
        channel: Any = connection.default_channel  # a kombu channel: it declares queues
        try:
            return int(channel.queue_declare(queue="indexing", passive=True).message_count)
        except ChannelError:  # Redis keeps no empty queue: none is an empty one
            return 0


def _cluster_cpu_seconds(pid: int) -> float:
    """CPU seconds of a server and its processes, those that exited too (a closed connection's
    backend is reaped by the postmaster, which then counts its time as its children's)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    reaped = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")  # cutime, cstime
    return _tree_cpu_seconds(pid) + reaped


def _postgres_pid() -> int | None:
    """The embedded cluster's postmaster, when the database is the embedded one on this machine."""
    pid_file = postgres_dir() / "postmaster.pid"
    if os.environ.get("MIRIX_EMBEDDED", "on") == "off" or not pid_file.exists():
        return None
    return int(pid_file.read_text().split()[0])


def _write_distinct(
    session: loadgen.Session,
    client: int,
    number: int,
    *,
    base: str,
    headers: dict[str, str],
    stream: loadgen.TextStream,
    messages: int,
    first_subject: int,
) -> loadgen.Response:
    """One write of ``messages`` texts no client wrote before, to the client's subject of its cell."""
    return session.post(
        f"{base}/v1/subjects/bench-{first_subject + client}/memories",
        json={"messages": loadgen.exchange(stream.take(messages))},
        headers=headers,
        timeout=600,
    )


class Command(BaseCommand):
    help = "Accepted-write latency and sustained ingestion through the API, with the worker running."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--clients", type=int, default=4, help="Concurrent clients of the sustained run.")
        parser.add_argument("--api-workers", type=int, default=1, help="gunicorn worker processes.")
        parser.add_argument(
            "--worker-processes",
            type=int,
            default=worker_concurrency(),
            help="Celery pool processes (default: the embedded stack's, MIRIX_WORKER_CONCURRENCY or 2).",
        )
        parser.add_argument("--seconds", type=float, default=20.0, help="Seconds each run sends writes.")
        parser.add_argument("--in-process", type=int, default=40, help="Writes of each in-process comparison.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("apps").setLevel(logging.WARNING)
        clients, seconds = int(options["clients"]), float(options["seconds"])
        if not 1 <= clients <= SUBJECTS // (len(DISTINCT_CELLS) + 1):
            raise CommandError(f"1 to {SUBJECTS // (len(DISTINCT_CELLS) + 1)} clients")
        organization = bench_organization(name="Write benchmark", slug_prefix="bench-writes")
        try:
            key = bench_key(organization.id)
            texts = [r.summary for r in synthetic.generate_history(size=2000, subject_id=organization.id).records]
            # Another seed: a pool none of whose texts is one of the repeating list's.
            pool = synthetic.generate_history(size=DISTINCT_POOL, subject_id=organization.id, seed=DISTINCT_SEED)
            repeating = set(texts)
            distinct = loadgen.TextStream([r.summary for r in pool.records if r.summary not in repeating])
            body = self._measure(
                organization.id,
                key=key,
                texts=texts,
                distinct=distinct,
                clients=clients,
                seconds=seconds,
                api=options["api_workers"],
                pool=options["worker_processes"],
            )
            body += "\n\n" + self._in_process(organization.id, texts=texts, count=int(options["in_process"]))
            self.stdout.write(body)
            if options["write_docs"]:
                write_section("bench_writes", body)
        finally:
            tenancy.organization_offboard(organization_id=organization.id)

    def _measure(
        self,
        organization_id: uuid.UUID,
        *,
        key: str,
        texts: list[str],
        distinct: loadgen.TextStream,
        clients: int,
        seconds: float,
        api: int,
        pool: int,
    ) -> str:
        headers = {"Authorization": f"Bearer {key}"}
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        celery = [sys.executable, "-m", "celery", "-A", "mirix_saas", "worker", "-n", f"bench-writes-{os.getpid()}@%h",
                  "-Q", "indexing", "-c", str(pool), "-P", "prefork",
                  "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"]  # fmt: skip
        gunicorn = [sys.executable, "-m", "gunicorn", "mirix_saas.wsgi:application", "-b", f"127.0.0.1:{port}",
                    "-w", str(api), "--timeout", "120", "--backlog", "256"]  # fmt: skip
        write = functools.partial(_write, base=base, headers=headers, texts=texts)
        with (
            _process(celery, log_name="writes-worker", env={}) as worker,
            _process(gunicorn, log_name="writes-api", env={}) as server,
        ):
            _wait_ready(base, server)
            # Warm-up (not measured): the API and the worker load their models on first use.
            loadgen.run_closed_loop(write, clients=2, seconds=3.0, expected_status=202)
            self._drain(organization_id, timeout=600)
            one = loadgen.summarize(loadgen.run_closed_loop(write, clients=1, seconds=seconds, expected_status=202), 1)
            self._drain(organization_id, timeout=600)
            cells = [
                self._sustained(organization_id, write, clients=clients, seconds=seconds, messages=1, worker=worker)
            ]
            for number, messages in enumerate(DISTINCT_CELLS, start=1):
                send = functools.partial(
                    _write_distinct, base=base, headers=headers, stream=distinct, messages=messages,
                    first_subject=number * clients,
                )  # fmt: skip
                cells.append(
                    self._sustained(
                        organization_id, send, clients=clients, seconds=seconds, messages=messages, worker=worker
                    )
                )
        old = cells[0]
        load = os.getloadavg()[0]
        lines = [
            "## Writes over HTTP (`python manage.py bench_writes --write-docs`)",
            "",
            f"gunicorn ({api} sync process), a Celery worker of {pool} pool process(es) on the indexing queue (it completes and "
            f"indexes the writes, ADR 0054), local providers, {platform.machine()}, {os.cpu_count()} cores; load "
            f"average {load:.1f} at the end (other work ran on the machine). A write counts when it is answered 202; "
            "searchable means from the first write to the last job finished.",
            "",
            "As before (one chat message per write to a subject of the client's own; the texts repeat: the clients "
            "write from one list of 2,000 texts, client 3's shifted by six from client 1's, the 4-client run "
            "repeats texts of the 1-client run):",
            "",
            "| figure | value |",
            "|---|---|",
            f"| write accepted, 1 client | p50 {one.p50_ms:.0f} ms, p95 {one.p95_ms:.0f} ms, p99 {one.p99_ms:.0f} ms "
            f"({one.per_second:.1f} writes/s, {one.errors} errors; the worker completing them meanwhile) |",
            f"| write accepted, {clients} clients | p50 {old.accepted.p50_ms:.0f} ms, p95 {old.accepted.p95_ms:.0f} ms "
            f"({old.accepted.per_second:.1f} writes/s, {old.accepted.errors} errors) |",
            f"| sustained ingestion, {clients} clients, {seconds:.0f} s of writes | {old.messages} messages in "
            f"{old.total:.1f} s from the first write to the last job finished: **{old.messages / old.total:.1f} "
            f"messages/s** searchable (the backlog drained {old.lag:.1f} s after the last write) |",
            f"| indexing, {pool} worker process(es) | {old.rows} rows (episodic and semantic) completed, embedded and indexed: "
            f"**{old.rows / old.total:.1f} records/s** |",
            f"| jobs not succeeded | {old.failed} |",
            "",
            f"The general case, {clients} clients, {seconds:.0f} s of writes each: no text repeats (every message is "
            f"a text of a pool of {DISTINCT_POOL:,} generated with another seed, dealt to one client once; "
            f"{distinct.wrapped} dealt twice), fresh subjects per row, a write's messages alternate user and "
            "assistant. The worker's CPU is its processes'; with Postgres's adds every backend of the cluster's (the API's too) meanwhile; a batch is the "
            "writes one transaction completed; a job's latency runs from the write's answer to its last row "
            "indexed.",
            "",
            "| writes of | writes accepted/s (p50) | messages searchable/s | drained after the last write | "
            "rows/s | rows per worker CPU-s (with Postgres's) | writes per batch (mean, largest) | "
            "job latency p50, p95 |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for cell in cells:
            kind = "1 message (texts repeating, as above)" if cell is old else WRITE_KIND[cell.per_write]
            lines.append(
                f"| {kind} | {cell.accepted.per_second:.1f} ({cell.accepted.p50_ms:.0f} ms) | "
                f"**{cell.messages / cell.total:.1f}** ({cell.messages} in {cell.total:.1f} s) | {cell.lag:.1f} s | "
                f"{cell.rows / cell.total:.1f} | {cell.rows / cell.cpu if cell.cpu else 0:.1f}"
                + (f" ({cell.rows / (cell.cpu + cell.database_cpu):.1f})" if cell.database_cpu else "")
                + " | "
                f"{cell.batches.mean:.1f}, {cell.batches.largest} ({cell.batches.count} batches) | "
                f"{cell.latency_p50:.2f} s, {cell.latency_p95:.2f} s |"
                + (f" {cell.failed} jobs not succeeded |" if cell.failed else "")
            )
        return "\n".join(lines)

    def _sustained(
        self,
        organization_id: uuid.UUID,
        send: loadgen.Request,
        *,
        clients: int,
        seconds: float,
        messages: int,
        worker: subprocess.Popen[bytes],
    ) -> Sustained:
        """``clients`` writing for ``seconds``, then the wait for every job: searchable messages
        from the first write to the last job finished, and how the worker got there."""
        before = self._counts(organization_id)
        cpu = _tree_cpu_seconds(worker.pid)
        database = _postgres_pid()
        database_cpu = _cluster_cpu_seconds(database) if database else 0.0
        began_at = timezone.now()
        started = time.monotonic()
        sample = loadgen.run_closed_loop(send, clients=clients, seconds=seconds, expected_status=202)
        sent = time.monotonic()
        self._drain(organization_id, timeout=1800, queue=False)
        drained = time.monotonic()
        cpu = _tree_cpu_seconds(worker.pid) - cpu
        database_cpu = _cluster_cpu_seconds(database) - database_cpu if database else 0.0
        self._drain(organization_id, timeout=1800)  # the queue too, before the next run
        after = self._counts(organization_id)
        with organization_scope(organization_id):
            jobs = list(
                Job.objects.filter(kind="memory.write", created_at__gte=began_at).values_list(
                    "started_at", "created_at", "finished_at"
                )
            )
        # A batch stamps its jobs with one start time when it completes them (jobs_finish_accepted).
        latencies = [(finished - created).total_seconds() for _, created, finished in jobs if finished]
        cell = Sustained(
            accepted=loadgen.summarize(sample, clients),
            per_write=messages,
            messages=(after["jobs"] - before["jobs"]) * messages,
            rows=after["rows"] - before["rows"],
            failed=after["failed"] - before["failed"],
            total=drained - started,
            lag=drained - sent,
            cpu=cpu,
            database_cpu=database_cpu if database else None,
            batches=loadgen.batches_of([started for started, _, _ in jobs]),
            latency_p50=percentile(latencies, 0.50),
            latency_p95=percentile(latencies, 0.95),
        )
        self.stderr.write(f"{messages} message(s) per write: {cell}")  # a long run's progress
        return cell

    @staticmethod
    def _in_process(organization_id: uuid.UUID, *, texts: list[str], count: int) -> str:
        embedder().embed(["warm-up"])  # model loading is not write time
        llm = llm_for(organization_id)

        def messages(number: int) -> list[IncomingMessage]:
            text = texts[(number * 7919) % len(texts)]
            return incoming_messages([{"id": f"m{number}", "role": "user", "name": "Bench", "content": text,
                                       "timestamp": timezone.now()}])  # fmt: skip

        with organization_scope(organization_id):
            accepted_subject = tenancy.subject_create(
                organization_id=organization_id, external_id="accepted", kind="user"
            )
            whole_subject = tenancy.subject_create(organization_id=organization_id, external_id="whole", kind="user")
        accept: list[float] = []
        for number in range(count):
            began = time.perf_counter()
            with organization_scope(organization_id):
                memory_accept_messages(subject=accepted_subject, messages=messages(number), source_kind="chat")
            accept.append(time.perf_counter() - began)
        began = time.perf_counter()
        rows = 0
        while True:
            with organization_scope(organization_id):
                completed = memory_complete_writes(llm=llm)
            if not completed:
                break
            with organization_scope(organization_id):
                rows += index_chunks(chunk_ids=[write.chunk_id for write in completed])["rows"]
        batched = time.perf_counter() - began
        whole: list[float] = []
        whole_rows, indexing = 0, 0.0
        for number in range(count):
            began = time.perf_counter()
            with organization_scope(organization_id):
                written = memory_write_messages(subject=whole_subject, messages=messages(number), source_kind="chat")
            whole.append(time.perf_counter() - began)
            began = time.perf_counter()
            with organization_scope(organization_id):
                whole_rows += index_chunk(chunk_id=written.chunk_id)["rows"]
            indexing += time.perf_counter() - began
        one_by_one = sum(whole) + indexing
        p50 = statistics.median
        return "\n".join(
            [
                f"In this process, {count} one-message writes each way, one run:",
                "",
                "| figure | accepted, completed in batches (now) | written whole in the request (before) | ratio |",
                "|---|---|---|---|",
                f"| write in the request, p50 | {p50(accept) * 1000:.1f} ms | {p50(whole) * 1000:.1f} ms | "
                f"{p50(whole) / p50(accept):.1f}× faster |",
                f"| write in the request, p95 | {percentile(accept, 0.95) * 1000:.1f} ms | "
                f"{percentile(whole, 0.95) * 1000:.1f} ms | |",
                f"| completion and indexing, records/s | {rows / batched:.1f} ({rows} rows) | "
                f"{whole_rows / one_by_one:.1f} ({whole_rows} rows, writing and indexing one write at a time) | "
                f"{(rows / batched) / (whole_rows / one_by_one):.1f}× |",
            ]
        )

    @staticmethod
    def _counts(organization_id: uuid.UUID) -> dict[str, int]:
        with organization_scope(organization_id):
            return {
                "jobs": Job.objects.filter(kind="memory.write").count(),
                "failed": Job.objects.filter(kind="memory.write", status=Job.Status.FAILED).count(),
                "rows": EpisodicEvent.objects.count() + SemanticItem.objects.count(),
            }

    @staticmethod
    def _drain(organization_id: uuid.UUID, *, timeout: float, queue: bool = True) -> None:
        """Wait until every write's job is finished, then until the worker's queue is empty:
        messages left over (a task per write that found its write completed) would take the
        next run's worker time (and that of the next command on this broker)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with organization_scope(organization_id):
                open_jobs = Job.objects.filter(
                    kind="memory.write", status__in=[Job.Status.QUEUED, Job.Status.RUNNING, Job.Status.INDEXING]
                ).count()
            if not open_jobs:
                break
            time.sleep(0.2)
        else:
            raise CommandError(f"writes still not finished after {timeout:.0f} s")
        while queue and _queued_messages() and time.monotonic() < deadline:
            time.sleep(0.2)
