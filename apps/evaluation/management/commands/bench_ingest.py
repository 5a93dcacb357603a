"""The write path and graph indexing with the local providers, on the LoCoMo dev split.

Each session is one chunk of chat messages; each turn keeps its dia_id as its message id and
the session date as its mention time. Flat writing (route, write, embed, commit) and graph
indexing of the chunk are timed apart, so their ratio is measured in one run. With
``--write-docs`` the figures go into docs/benchmarks.md.

``--check-coverage`` is the replay check of the write path's promise that nothing accepted is
dropped: it writes the conversations (without graph indexing) and counts the turns that no
stored row of any store cites; any such turn fails the command.
"""

from __future__ import annotations

import logging
import platform
import time
import uuid
from argparse import ArgumentParser
from dataclasses import dataclass, field
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.evaluation.locomo import Conversation, data_dir, load_conversations, session_messages
from apps.evaluation.report import write_section
from apps.graph import adapter
from apps.graph.services import index_chunk
from apps.memory.models import STORES, EpisodicEvent, SemanticItem
from apps.memory.services import incoming_messages, memory_write_messages
from apps.memory.timing import Stopwatch
from apps.providers.registry import embedder, llm_for
from apps.tenancy import services as tenancy
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope

PHASES = ("routing", "writing", "embedding", "database")
_SIZE = {
    "anchors": "MATCH (a:Anchor) WHERE a.subject_id = $s RETURN count(a)",
    "frames": "MATCH (f:Frame) WHERE f.subject_id = $s RETURN count(f)",
    "edges": "MATCH (f:Frame)-[r:ARM]->() WHERE f.subject_id = $s RETURN count(r)",
}


@dataclass
class Totals:
    turns: int = 0
    write_seconds: float = 0.0
    index_seconds: float = 0.0
    indexed_rows: int = 0
    failed_rows: int = 0
    stopwatch: Stopwatch = field(default_factory=Stopwatch)
    graphs: list[tuple[str, dict[str, int]]] = field(default_factory=list)


class Command(BaseCommand):
    help = "Benchmark the write path and graph indexing on the LoCoMo dev split (local providers)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--conversations", type=int, default=0, help="Only the first N conversations (0: all).")
        parser.add_argument("--keep", action="store_true", help="Keep the benchmark organization afterwards.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")
        parser.add_argument(
            "--check-coverage",
            action="store_true",
            help="Write without indexing and fail unless every turn has a stored row (in any store).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("apps").setLevel(logging.WARNING)  # the progress bar is the output
        conversations = load_conversations()
        if options["conversations"]:
            conversations = conversations[: options["conversations"]]
        organization = tenancy.organization_create(name="Ingest benchmark", slug=f"bench-ingest-{uuid.uuid4().hex[:8]}")
        totals = Totals()
        check = options["check_coverage"]
        try:
            self._run(organization.id, conversations, totals, index=not check)
            with organization_scope(organization.id):
                episodic = EpisodicEvent.objects.count()
                semantic = SemanticItem.objects.count()
                covered = self._cited(EpisodicEvent)
                stored = set().union(*(self._cited(model) for model in STORES.values()))
        finally:
            if not options["keep"]:
                tenancy.organization_offboard(organization_id=organization.id)
        if check:
            turns = {(c.sample_id, t.dia_id) for c in conversations for s in c.sessions for t in s.turns}
            missing = sorted(turns - stored)
            body = self._coverage_report(conversations=len(conversations), turns=len(turns), missing=missing)
            section = "ingest_coverage"
        else:
            body = self._report(
                totals, conversations=len(conversations), episodic=episodic, semantic=semantic, covered=len(covered)
            )
            section = "bench_ingest"
        self.stdout.write(body)
        if options["write_docs"]:
            write_section(section, body)
        if check and missing:
            raise CommandError(f"{len(missing)} turns have no stored row, e.g. {missing[:5]}")

    @staticmethod
    def _cited(model: Any) -> set[tuple[str, str]]:
        """(conversation, dia_id) of every turn a row of ``model`` cites."""
        external = dict(Subject.objects.values_list("id", "external_id"))
        return {
            (external[subject_id], dia)
            for subject_id, ids in model.objects.values_list("subject_id", "source_message_ids")
            for dia in ids
        }

    def _coverage_report(self, *, conversations: int, turns: int, missing: list[tuple[str, str]]) -> str:
        lines = [
            "## Nothing accepted is dropped: LoCoMo replay (`python manage.py bench_ingest --check-coverage "
            "--conversations 1 --write-docs`)",
            "",
            f"LoCoMo dev split read from `{data_dir().name}/` ({conversations} conversation, {turns} turns, one chunk "
            "per session), written through `memory_write_messages` with the local providers. A turn counts as "
            "stored when a row of any store (core, episodic, semantic, procedural, resource, vault) cites its "
            "dia_id in its provenance.",
            "",
            "| figure | value |",
            "|---|---|",
            f"| turns accepted | {turns} |",
            f"| turns with a stored row | {turns - len(missing)} |",
            f"| accepted inputs without a row | {len(missing)} |",
        ]
        return "\n".join(lines)

    def _run(
        self, organization_id: uuid.UUID, conversations: list[Conversation], totals: Totals, *, index: bool
    ) -> None:
        llm, vectors = llm_for(organization_id), embedder()
        vectors.embed(["warm-up"])  # model loading is not write-path time
        totals.turns = sum(c.turn_count for c in conversations)
        with tqdm(total=totals.turns, unit="turn", desc="ingest + index" if index else "ingest") as progress:
            for conversation in conversations:
                with organization_scope(organization_id):
                    subject = tenancy.subject_create(
                        organization_id=organization_id, external_id=conversation.sample_id, kind="user"
                    )
                for session in conversation.sessions:
                    started = time.perf_counter()
                    with organization_scope(organization_id):
                        written = memory_write_messages(
                            subject=subject,
                            messages=incoming_messages(list(session_messages(session))),
                            source_kind="chat",
                            session_id=f"{conversation.sample_id}:session_{session.number}",
                            stopwatch=totals.stopwatch,
                            llm=llm,
                            embedder=vectors,
                        )
                    indexed = time.perf_counter()
                    totals.write_seconds += indexed - started
                    progress.update(len(session.turns))
                    if not index:
                        continue
                    with organization_scope(organization_id):
                        result = index_chunk(chunk_id=written.chunk_id)
                    totals.index_seconds += time.perf_counter() - indexed
                    totals.indexed_rows += result["rows"]
                    totals.failed_rows += result["failed"]
                if index:
                    totals.graphs.append((conversation.sample_id, self._graph_size(subject)))

    def _graph_size(self, subject: Subject) -> dict[str, int]:
        with organization_scope(subject.organization_id):
            sizes = {}
            for name, query in _SIZE.items():
                rows = adapter.cypher(
                    organization_id=subject.organization_id, query=query, params={"s": str(subject.id)}, returns=["n"]
                )
                sizes[name] = int(rows[0][0]) if rows else 0  # no rows: nothing indexed, no graph yet
            return sizes

    def _report(self, totals: Totals, *, conversations: int, episodic: int, semantic: int, covered: int) -> str:
        watch = totals.stopwatch
        accounted = sum(watch.seconds[p] for p in PHASES)
        write = totals.write_seconds
        lines = [
            "## Ingest and graph indexing (`python manage.py bench_ingest --write-docs`)",
            "",
            f"LoCoMo dev split read from `{data_dir().name}/` ({conversations} conversations, {totals.turns} turns, one "
            f"chunk per session), local providers, {platform.machine()}, 2 cores. Writing and indexing are timed "
            "apart in the same run.",
            "",
            "| figure | value |",
            "|---|---|",
            f"| turns written | {totals.turns} |",
            f"| rows written | {episodic} episodic, {semantic} semantic ({covered} of {totals.turns} turns cited by "
            "their dia_id) |",
            f"| flat write: wall time | {write:.1f} s ({totals.turns / write:.1f} turns/s, {episodic / write:.1f} episodic "
            "records/s) |",
            f"| graph indexing: wall time | {totals.index_seconds:.1f} s ({totals.indexed_rows / totals.index_seconds:.1f} "
            f"records/s; {totals.failed_rows} failed) |",
            f"| indexing cost relative to flat writing | {totals.index_seconds / write:.2f}× (ingestion with the graph "
            f"is {(write + totals.index_seconds) / write:.2f}× flat; the paper reports 3.8–4×) |",
            "",
            "Flat write time by phase:",
            "",
            "| phase | seconds | share |",
            "|---|---|---|",
            *[f"| {p} | {watch.seconds[p]:.1f} | {watch.seconds[p] / write:.0%} |" for p in PHASES],
            f"| other (redaction, validation, Python) | {write - accounted:.1f} | {(write - accounted) / write:.0%} |",
            "",
            "Graph size per conversation:",
            "",
            "| conversation | anchors | frames | edges |",
            "|---|---|---|---|",
            *[f"| {name} | {size['anchors']} | {size['frames']} | {size['edges']} |" for name, size in totals.graphs],
        ]
        return "\n".join(lines)
