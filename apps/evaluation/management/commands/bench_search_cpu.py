"""The CPU of one graph-mode search, and a check that a change leaves every result as it was.

One LoCoMo conversation (read in place, ingested once through the product's write path and
kept: ``var/bench_search_cpu.kept.json`` names its organization and subject, so every later
run asks the same rows with the same ids) and its questions, each through ``search_evidence``
in graph mode. Per question the run records the exact ordered result: every returned row's
id, fusion phase, score, provenance, attribute and tags, every fact's frame id and score.
``--save`` writes that record, ``--check`` compares it with a saved one and fails if any
question's differs.

Timing: after that first pass (reported too: its questions are new to the process),
``--rounds`` passes over the questions, with the CPU of this process (``time.process_time``)
and of its Postgres backend (``/proc/<pid>/stat``, same machine) per search, and the
statements with their wall time and backend CPU. ``--profile`` runs one more pass under
cProfile; ``--sample`` samples the stack every millisecond of CPU instead and prints the
functions with the most samples, own and inclusive (cProfile's cost per call inflates code
made of many small calls). Two builds are compared by running this command from each, in
turn, against the same kept subject (the machine is shared: alternate, compare ratios).
"""

from __future__ import annotations

import cProfile
import io
import json
import logging
import os
import pstats
import signal
import time
import uuid
from argparse import ArgumentParser
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from apps.evaluation.ingestion import conversation_ingest
from apps.evaluation.locomo import load_conversations
from apps.platform.stats import percentile
from apps.retrieval.selectors import SearchEvidence, search_evidence
from apps.tenancy import services as tenancy
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope

KEPT_FILE = Path("var/bench_search_cpu.kept.json")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _backend_cpu_seconds(pid: int) -> float:
    """User plus system CPU of a local Postgres backend so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def result_record(evidence: SearchEvidence) -> dict[str, Any]:
    """What must not change: the ordered rows (id, phase, score, provenance, attribute, tags)
    and facts (frame id, score)."""
    return {
        "rows": [
            [r.fused.row.row_id, r.fused.source, repr(r.fused.score), repr(r.provenance), r.attribute, r.metadata]
            for r in evidence.rows
        ],
        "facts": [[f.fact.frame_id, repr(f.score.total)] for f in evidence.facts],
        "tokens": evidence.budget.tokens_returned,
    }


class _Statements:
    """Counts the statements of the default connection and their wall time, and the backend's
    CPU per statement, by the statement's first words."""

    def __init__(self, backend: int) -> None:
        self.backend = backend
        self.count = 0
        self.seconds = 0.0
        self.by_statement: dict[str, list[float]] = {}

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        started, cpu = time.perf_counter(), _backend_cpu_seconds(self.backend)
        try:
            return execute(sql, params, many, context)
        finally:
            self.count += 1
            self.seconds += time.perf_counter() - started
            words = " ".join(sql.split())
            kind = words.split(" ")[0] if "SAVEPOINT" in words[:20] else words[:90]
            entry = self.by_statement.setdefault(kind, [0, 0.0, 0.0])
            entry[0] += 1
            entry[1] += time.perf_counter() - started
            entry[2] += _backend_cpu_seconds(self.backend) - cpu


class Command(BaseCommand):
    help = "CPU per graph-mode search over one kept LoCoMo conversation, and a result-identity check."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--conversation", type=int, default=0, help="Which conversation of the dev split.")
        parser.add_argument("--rounds", type=int, default=1, help="Timed passes over the questions.")
        parser.add_argument("--save", type=Path, default=None, help="Write the ordered results to this file.")
        parser.add_argument("--check", type=Path, default=None, help="Compare the ordered results with this file.")
        parser.add_argument("--profile", type=int, default=0, help="Print the N hottest functions of one pass.")
        parser.add_argument("--sample", type=int, default=0, help="Print the N functions most sampled in one pass.")
        parser.add_argument("--json", type=Path, default=None, help="Append the timing summary as a JSON line.")
        parser.add_argument("--label", default="", help="A name for the build, in the summary.")

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("apps").setLevel(logging.WARNING)
        subject = self._subject(options["conversation"])
        conversation = load_conversations()[options["conversation"]]
        questions = [q.question for q in conversation.questions]
        with organization_scope(subject.organization_id):
            started = time.process_time()
            records = {question: result_record(self._search(subject, question)) for question in questions}
            # The first pass: questions not asked before in this process (their caches cold).
            first_pass_ms = (time.process_time() - started) * 1000 / len(questions)
            if options["save"] is not None:
                options["save"].write_text(json.dumps(records, indent=0) + "\n")
            if options["check"] is not None:
                self._check(options["check"], records)
            if options["rounds"]:
                summary = self._timed(subject, questions, options["rounds"], label=options["label"])
                summary["first_pass_python_cpu_ms"] = round(first_pass_ms, 2)
                self.stdout.write(json.dumps(summary))
                if options["json"] is not None:
                    with options["json"].open("a") as handle:
                        handle.write(json.dumps(summary) + "\n")
            if options["profile"]:
                profiler = cProfile.Profile(time.process_time)  # CPU, not time spent waiting on Postgres
                profiler.enable()
                for question in questions:
                    self._search(subject, question)
                profiler.disable()
                text = io.StringIO()
                stats = pstats.Stats(profiler, stream=text)
                stats.sort_stats("tottime").print_stats(options["profile"])
                stats.sort_stats("cumulative").print_stats(options["profile"])
                self.stdout.write(text.getvalue())

            if options["sample"]:
                self._sampled(subject, questions, options["sample"])

    def _sampled(self, subject: Subject, questions: list[str], top: int) -> None:
        own: Counter[str] = Counter()
        inclusive: Counter[str] = Counter()

        def sample(signum: int, frame: FrameType | None) -> None:
            seen = set()
            place = frame
            while place is not None:
                code = place.f_code
                name = f"{code.co_filename.removeprefix(str(Path.cwd()) + '/')}:{code.co_firstlineno}({code.co_name})"
                if place is frame:
                    own[name] += 1
                if name not in seen:
                    seen.add(name)
                    inclusive[name] += 1
                place = place.f_back

        previous = signal.signal(signal.SIGPROF, sample)
        signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
        try:
            for question in questions:
                self._search(subject, question)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0, 0)
            signal.signal(signal.SIGPROF, previous)
        total = sum(own.values()) or 1
        for title, counts in (("own", own), ("inclusive", inclusive)):
            self.stdout.write(f"{title} samples of {total} (1 ms of CPU each):")
            for name, count in counts.most_common(top):
                self.stdout.write(f"{count:7d} {100 * count / total:5.1f}%  {name}")

    def _search(self, subject: Subject, question: str) -> SearchEvidence:
        return search_evidence(subject=subject, question=question, mode="graph")

    def _subject(self, index: int) -> Subject:
        kept = json.loads(KEPT_FILE.read_text()) if KEPT_FILE.exists() else {}
        item = kept.get(str(index))
        if item is None:
            conversation = load_conversations()[index]
            organization = tenancy.organization_create(
                name=f"CPU bench {conversation.sample_id}", slug=f"bench-cpu-{uuid.uuid4().hex[:6]}"
            )
            subject = conversation_ingest(organization_id=organization.id, conversation=conversation, index=True)
            kept[str(index)] = item = {"organization_id": str(organization.id), "subject_id": str(subject.id)}
            KEPT_FILE.parent.mkdir(parents=True, exist_ok=True)
            KEPT_FILE.write_text(json.dumps(kept, indent=1) + "\n")
        organization_id = uuid.UUID(item["organization_id"])
        with organization_scope(organization_id):
            return Subject.objects.get(id=item["subject_id"], organization_id=organization_id)

    def _check(self, path: Path, records: dict[str, Any]) -> None:
        saved = json.loads(path.read_text())
        differing = [q for q in saved if saved[q] != records.get(q)]
        missing = sorted(set(records) - set(saved))
        if differing or missing:
            for question in differing[:5]:
                self.stderr.write(f"{question!r}\n  saved: {saved[question]}\n  now:   {records.get(question)}")
            raise CommandError(f"{len(differing)} of {len(saved)} results differ, {len(missing)} questions unsaved")
        self.stdout.write(f"identical: {len(saved)} ordered results")

    def _timed(self, subject: Subject, questions: list[str], rounds: int, *, label: str) -> dict[str, Any]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = int(cursor.fetchone()[0])
        python_ms: list[float] = []
        wall_ms: list[float] = []
        backend_seconds = 0.0
        statements = _Statements(backend)
        with self._wrapped(statements):
            for _ in range(rounds):
                for question in questions:
                    before_backend = _backend_cpu_seconds(backend)
                    cpu, wall = time.process_time(), time.perf_counter()
                    self._search(subject, question)
                    python_ms.append((time.process_time() - cpu) * 1000)
                    wall_ms.append((time.perf_counter() - wall) * 1000)
                    backend_seconds += _backend_cpu_seconds(backend) - before_backend
        searches = len(python_ms)
        python_mean = sum(python_ms) / searches
        backend_mean = backend_seconds * 1000 / searches
        return {
            "label": label,
            "searches": searches,
            "python_cpu_ms": round(python_mean, 2),
            "python_cpu_p50_ms": round(percentile(python_ms, 0.5), 2),
            "postgres_cpu_ms": round(backend_mean, 2),
            "cpu_ms": round(python_mean + backend_mean, 2),
            "wall_ms": round(sum(wall_ms) / searches, 2),
            "wall_p50_ms": round(percentile(wall_ms, 0.5), 2),
            "statements": round(statements.count / searches, 2),
            "statement_wall_ms": round(statements.seconds * 1000 / searches, 2),
            "by_statement": {
                sql: [round(n / searches, 2), round(wall * 1000 / searches, 2), round(cpu * 1000 / searches, 2)]
                for sql, (n, wall, cpu) in sorted(statements.by_statement.items(), key=lambda kv: -kv[1][2])
            },
        }

    @contextmanager
    def _wrapped(self, statements: _Statements) -> Iterator[None]:
        with connection.execute_wrapper(statements):
            yield
