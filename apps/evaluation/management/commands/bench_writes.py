"""Writes over HTTP (docs/benchmarks.md, ADR 0054): how long a write takes to be accepted, and
how many messages per second go through the API into searchable rows with the worker running.

A gunicorn server and one Celery worker process (the indexing queue: it completes and indexes
the writes) are started here, on the configured (by default embedded) Postgres and Redis.
First one client writes one chat message at a time for ``--seconds`` (the accepted write's
latency, the worker completing those writes meanwhile). Then ``--clients`` clients write for
``--seconds`` and the command waits until every write's job is finished: the messages written
divided by the time from the first write to the last job finished is the sustained ingestion
rate, and the indexed rows over the worker's busy time its records per second. Every status
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
import sys
import time
import uuid
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from apps.evaluation import loadgen, synthetic
from apps.evaluation.management.commands.bench_api import (
    SUBJECTS,
    _free_port,
    _process,
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


class Command(BaseCommand):
    help = "Accepted-write latency and sustained ingestion through the API, with one worker process."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--clients", type=int, default=4, help="Concurrent clients of the sustained run.")
        parser.add_argument("--api-workers", type=int, default=1, help="gunicorn worker processes.")
        parser.add_argument("--seconds", type=float, default=20.0, help="Seconds each run sends writes.")
        parser.add_argument("--in-process", type=int, default=40, help="Writes of each in-process comparison.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("apps").setLevel(logging.WARNING)
        clients, seconds = int(options["clients"]), float(options["seconds"])
        if not 1 <= clients <= SUBJECTS:
            raise CommandError(f"1 to {SUBJECTS} clients")
        organization = bench_organization(name="Write benchmark", slug_prefix="bench-writes")
        try:
            key = bench_key(organization.id)
            texts = [r.summary for r in synthetic.generate_history(size=2000, subject_id=organization.id).records]
            body = self._measure(
                organization.id, key=key, texts=texts, clients=clients, seconds=seconds, api=options["api_workers"]
            )
            body += "\n" + self._in_process(organization.id, texts=texts, count=int(options["in_process"]))
            self.stdout.write(body)
            if options["write_docs"]:
                write_section("bench_writes", body)
        finally:
            tenancy.organization_offboard(organization_id=organization.id)

    def _measure(
        self, organization_id: uuid.UUID, *, key: str, texts: list[str], clients: int, seconds: float, api: int
    ) -> str:
        headers = {"Authorization": f"Bearer {key}"}
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        celery = [sys.executable, "-m", "celery", "-A", "mirix_saas", "worker", "-n", f"bench-writes-{os.getpid()}@%h",
                  "-Q", "indexing", "-c", "1", "-P", "prefork",
                  "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"]  # fmt: skip
        gunicorn = [sys.executable, "-m", "gunicorn", "mirix_saas.wsgi:application", "-b", f"127.0.0.1:{port}",
                    "-w", str(api), "--timeout", "120", "--backlog", "256"]  # fmt: skip
        write = functools.partial(_write, base=base, headers=headers, texts=texts)
        with (
            _process(celery, log_name="writes-worker", env={}),
            _process(gunicorn, log_name="writes-api", env={}) as server,
        ):
            _wait_ready(base, server)
            # Warm-up (not measured): the API and the worker load their models on first use.
            loadgen.run_closed_loop(write, clients=2, seconds=3.0, expected_status=202)
            self._drain(organization_id, timeout=600)
            one = loadgen.summarize(loadgen.run_closed_loop(write, clients=1, seconds=seconds, expected_status=202), 1)
            self._drain(organization_id, timeout=600)
            before = self._counts(organization_id)
            started = time.monotonic()
            sample = loadgen.run_closed_loop(write, clients=clients, seconds=seconds, expected_status=202)
            sent = time.monotonic()
            self._drain(organization_id, timeout=1800)
            drained = time.monotonic()
            after = self._counts(organization_id)
        many = loadgen.summarize(sample, clients)
        messages = after["jobs"] - before["jobs"]
        rows = after["rows"] - before["rows"]
        failed = after["failed"] - before["failed"]
        total = drained - started
        load = os.getloadavg()[0]
        lines = [
            "## Writes over HTTP (`python manage.py bench_writes --write-docs`)",
            "",
            f"gunicorn ({api} sync process), one Celery worker process on the indexing queue (it completes and "
            f"indexes the writes, ADR 0054), local providers, {platform.machine()}, {os.cpu_count()} cores; load "
            f"average {load:.1f} at the end (other work ran on the machine). Each write is one chat message to a "
            "subject of the client's own; a write counts when it is answered 202.",
            "",
            "| figure | value |",
            "|---|---|",
            f"| write accepted, 1 client | p50 {one.p50_ms:.0f} ms, p95 {one.p95_ms:.0f} ms, p99 {one.p99_ms:.0f} ms "
            f"({one.per_second:.1f} writes/s, {one.errors} errors; the worker completing them meanwhile) |",
            f"| write accepted, {clients} clients | p50 {many.p50_ms:.0f} ms, p95 {many.p95_ms:.0f} ms "
            f"({many.per_second:.1f} writes/s, {many.errors} errors) |",
            f"| sustained ingestion, {clients} clients, {seconds:.0f} s of writes | {messages} messages in "
            f"{total:.1f} s from the first write to the last job finished: **{messages / total:.1f} messages/s** "
            f"searchable (the backlog drained {drained - sent:.1f} s after the last write) |",
            f"| indexing, one worker process | {rows} rows (episodic and semantic) completed, embedded and indexed: "
            f"**{rows / total:.1f} records/s** |",
            f"| jobs not succeeded | {failed} |",
        ]
        return "\n".join(lines)

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
    def _drain(organization_id: uuid.UUID, *, timeout: float) -> None:
        """Wait until every write's job is finished."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with organization_scope(organization_id):
                open_jobs = Job.objects.filter(
                    kind="memory.write", status__in=[Job.Status.QUEUED, Job.Status.RUNNING, Job.Status.INDEXING]
                ).count()
            if not open_jobs:
                return
            time.sleep(0.2)
        raise CommandError(f"writes still not finished after {timeout:.0f} s")
