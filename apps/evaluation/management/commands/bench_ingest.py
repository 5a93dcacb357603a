"""Records/s through the write path with the local providers, on the LoCoMo dev split.

Each session is one chunk of chat messages; each turn keeps its dia_id as its message id and
the session date as its mention time. Prints the time split into routing, writing, embedding
and database, and with ``--write-docs`` records it in docs/benchmarks.md.
"""

from __future__ import annotations

import logging
import platform
import time
import uuid
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand
from tqdm import tqdm

from apps.evaluation.locomo import data_dir, load_conversations, session_messages
from apps.evaluation.report import write_section
from apps.memory.models import EpisodicEvent
from apps.memory.services import incoming_messages, memory_write_messages
from apps.memory.timing import Stopwatch
from apps.providers.registry import embedder, llm_for
from apps.tenancy import services as tenancy
from apps.tenancy.scope import organization_scope

PHASES = ("routing", "writing", "embedding", "database")


class Command(BaseCommand):
    help = "Benchmark the write path on the LoCoMo dev split (local providers)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--conversations", type=int, default=0, help="Only the first N conversations (0: all).")
        parser.add_argument("--keep", action="store_true", help="Keep the benchmark organization afterwards.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("apps").setLevel(logging.WARNING)  # the progress bar is the output
        conversations = load_conversations()
        if options["conversations"]:
            conversations = conversations[: options["conversations"]]
        organization = tenancy.organization_create(name="Ingest benchmark", slug=f"bench-ingest-{uuid.uuid4().hex[:8]}")
        llm, vectors = llm_for(organization.id), embedder()
        vectors.embed(["warm-up"])  # model load is not write-path time
        stopwatch = Stopwatch()
        turns = sum(c.turn_count for c in conversations)
        started = time.perf_counter()
        try:
            with tqdm(total=turns, unit="turn", desc="ingest") as progress:
                for conversation in conversations:
                    with organization_scope(organization.id):
                        subject = tenancy.subject_create(
                            organization_id=organization.id, external_id=conversation.sample_id, kind="user"
                        )
                    for session in conversation.sessions:
                        with organization_scope(organization.id):
                            memory_write_messages(
                                subject=subject,
                                messages=incoming_messages(list(session_messages(session))),
                                source_kind="chat",
                                session_id=f"{conversation.sample_id}:session_{session.number}",
                                stopwatch=stopwatch,
                                llm=llm,
                                embedder=vectors,
                            )
                        progress.update(len(session.turns))
            elapsed = time.perf_counter() - started
            with organization_scope(organization.id):
                rows = EpisodicEvent.objects.count()
                covered = {
                    (subject_id, dia)
                    for subject_id, ids in EpisodicEvent.objects.values_list("subject_id", "source_message_ids")
                    for dia in ids
                }
        finally:
            if not options["keep"]:
                tenancy.organization_offboard(organization_id=organization.id)
        body = self._report(
            conversations=len(conversations),
            turns=turns,
            rows=rows,
            covered=len(covered),
            elapsed=elapsed,
            stopwatch=stopwatch,
        )
        self.stdout.write(body)
        if options["write_docs"]:
            write_section("bench_ingest", body)

    def _report(
        self, *, conversations: int, turns: int, rows: int, covered: int, elapsed: float, stopwatch: Stopwatch
    ) -> str:
        accounted = sum(stopwatch.seconds[p] for p in PHASES)
        lines = [
            "## Ingest: the write path (`python manage.py bench_ingest --write-docs`)",
            "",
            f"LoCoMo dev split from `{data_dir().name}/` ({conversations} conversations, {turns} turns, one chunk per "
            f"session), local providers, {platform.machine()} with 2 cores.",
            "",
            "| figure | value |",
            "|---|---|",
            f"| turns written | {turns} |",
            f"| episodic rows | {rows} ({covered} of {turns} turns cited by their dia_id) |",
            f"| wall time | {elapsed:.1f} s |",
            f"| turns/s | {turns / elapsed:.1f} |",
            f"| episodic records/s | {rows / elapsed:.1f} |",
            "",
            "| phase | seconds | share |",
            "|---|---|---|",
            *[f"| {p} | {stopwatch.seconds[p]:.1f} | {stopwatch.seconds[p] / elapsed:.0%} |" for p in PHASES],
            f"| other (redaction, validation, Python) | {elapsed - accounted:.1f} | {(elapsed - accounted) / elapsed:.0%} |",
        ]
        return "\n".join(lines)
