"""Measure what counting requests costs (ADR 0042): the counter upsert alone and under
concurrency, on one counter row and on many, beside an audit-log append, which is what
deriving the counts from an audit entry per request would add to every request."""

from __future__ import annotations

import os
import threading
import time
import uuid
from argparse import ArgumentParser
from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand
from django.db import connections
from django.utils import timezone

from apps.audit.services import audit_record
from apps.evaluation.report import write_section
from apps.tenancy import services as tenancy
from apps.tenancy.scope import organization_scope
from apps.usage.services import usage_count


def _parallel(threads: int, each: int, work: Callable[[int], None]) -> float:
    """Seconds for ``threads`` threads to run ``work(thread)`` ``each`` times, each thread on
    its own database connection."""

    def run(index: int) -> None:
        try:
            for _ in range(each):
                work(index)
        finally:
            connections.close_all()

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    started = time.perf_counter()
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return time.perf_counter() - started


class Command(BaseCommand):
    help = "Benchmark the per-request usage counter against an audit-log append."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--count", type=int, default=2000, help="Counter upserts per case.")
        parser.add_argument("--threads", type=int, default=8)
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        organization = tenancy.organization_create(name="Usage benchmark", slug=f"bench-usage-{uuid.uuid4().hex[:8]}")
        count, threads = options["count"], options["threads"]
        keys = [uuid.uuid4() for _ in range(threads)]
        today = timezone.now().date()

        def count_one(key: uuid.UUID) -> None:
            usage_count(
                organization_id=organization.id,
                api_key_id=key,
                day=today,
                operation="GET /v1/bench",
                failed=False,
                rows_written=0,
            )

        def audit_one(_: int) -> None:
            with organization_scope(organization.id):
                audit_record(organization_id=organization.id, action="bench.usage")

        try:
            _parallel(1, 50, lambda _: count_one(keys[0]))  # warm-up: connections, the row itself
            per_thread = max(1, count // threads)
            rows = [
                ("one thread, one counter row", count, _parallel(1, count, lambda _: count_one(keys[0]))),
                (
                    f"{threads} threads, one counter row (one key, one operation)",
                    per_thread * threads,
                    _parallel(threads, per_thread, lambda _: count_one(keys[0])),
                ),
                (
                    f"{threads} threads, {threads} counter rows",
                    per_thread * threads,
                    _parallel(threads, per_thread, lambda i: count_one(keys[i])),
                ),
            ]
            audits = max(1, per_thread // 4)
            rows.append(
                (
                    f"{threads} threads appending to the audit chain (for comparison)",
                    audits * threads,
                    _parallel(threads, audits, audit_one),
                )
            )
        finally:
            tenancy.organization_offboard(organization_id=organization.id)
        body = self._report(rows, threads=threads)
        self.stdout.write(body)
        if options["write_docs"]:
            write_section("bench_usage", body)

    def _report(self, rows: list[tuple[str, int, float]], *, threads: int) -> str:
        load = os.getloadavg()[0]
        lines = [
            "## Usage counting (`python manage.py bench_usage --write-docs`)",
            "",
            "What ADR 0042 weighs: each API request adds one to its (organization, key, day, operation) "
            "counter after the response, in a transaction of its own (`synchronous_commit` off, set with the scope), "
            "against the embedded Postgres. The last row appends to the organization's hash-chained audit log, "
            "which is what counting from an audit entry per request would add to every request. "
            f"{os.cpu_count()} cores shared with other work (load {load:.1f}).",
            "",
            "| case | operations | seconds | per second | ms each (wall / operations) |",
            "|---|---|---|---|---|",
        ]
        for label, operations, seconds in rows:
            lines.append(
                f"| {label} | {operations} | {seconds:.2f} | {operations / seconds:.0f} | "
                f"{seconds / operations * 1000:.2f} |"
            )
        return "\n".join(lines) + "\n"
