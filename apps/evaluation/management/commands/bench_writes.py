"""Writes over HTTP (docs/benchmarks.md, ADR 0054): how long a write takes to be accepted, and
how many messages per second go through the API into searchable rows with the worker running.

A gunicorn server and one Celery worker process (the indexing queue: it completes and indexes
the writes) are started here, on the configured (by default embedded) Postgres and Redis.
First one client writes one chat message at a time for ``--seconds`` (the accepted write's
latency, the worker completing those writes meanwhile). Then ``--clients`` clients write for
``--seconds`` and the command waits until every write's job is finished: the messages written
divided by the time from the first write to the last job finished is the sustained ingestion
rate, and the indexed rows over the worker's busy time its records per second. Every status
other than 202 is an error; a job that did not succeed is reported.
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import sys
import time
import uuid
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.evaluation import loadgen, synthetic
from apps.evaluation.management.commands.bench_api import UNLIMITED, _free_port, _process, _wait_ready, _write
from apps.evaluation.report import write_section
from apps.jobs.models import Job
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.tenancy import keys
from apps.tenancy import services as tenancy
from apps.tenancy.scope import organization_scope

SUBJECTS = 64


class Command(BaseCommand):
    help = "Accepted-write latency and sustained ingestion through the API, with one worker process."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--clients", type=int, default=4, help="Concurrent clients of the sustained run.")
        parser.add_argument("--api-workers", type=int, default=1, help="gunicorn worker processes.")
        parser.add_argument("--seconds", type=float, default=20.0, help="Seconds each run sends writes.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("apps").setLevel(logging.WARNING)
        clients, seconds = int(options["clients"]), float(options["seconds"])
        if not 1 <= clients <= SUBJECTS:
            raise CommandError(f"1 to {SUBJECTS} clients")
        organization = tenancy.organization_create(
            name="Write benchmark", slug=f"bench-writes-{uuid.uuid4().hex[:8]}", monthly_request_quota=UNLIMITED
        )
        try:
            key = tenancy.api_key_create(
                organization_id=organization.id, name="bench", scopes=list(keys.SCOPES), rate_limit_per_minute=UNLIMITED
            ).secret
            with organization_scope(organization.id):
                for index in range(SUBJECTS):
                    tenancy.subject_create(organization_id=organization.id, external_id=f"bench-{index}", kind="user")
            texts = [r.summary for r in synthetic.generate_history(size=2000, subject_id=organization.id).records]
            body = self._measure(
                organization.id, key=key, texts=texts, clients=clients, seconds=seconds, api=options["api_workers"]
            )
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
        with _process(celery, log_name="writes-worker"), _process(gunicorn, log_name="writes-api") as server:
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
