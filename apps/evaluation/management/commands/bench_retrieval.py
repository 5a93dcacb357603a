"""Bounded access (docs/architecture.md, "Retrieval plane"): graph-mode retrieval latency and evidence
inspected at growing history sizes of one subject — the curve must stay flat.

For each size N: a benchmark organization with one subject, N synthetic episodic records
(:mod:`apps.evaluation.synthetic`) and their graph, loaded in bulk rather than through the
write path and the indexer (those run ~15 records/s): rows by ``bulk_create`` with the real
MiniLM vector of each record's template, anchors and frames through
:mod:`apps.graph.store` in large UNWIND batches, anchor name vectors from the real embedder
(each distinct name embedded once). Then a fixed set of questions goes through
:func:`apps.retrieval.services.search` in graph mode, after a warm-up pass; latency p50/p95
(overall and by phase, and by read), evidence inspected and returned are reported per size,
with a verdict per target. The same questions run again with a metadata filter that one row
in ten matches (every row carries ``{"project": "p0"…"p9"}``): the filter is applied inside
the database before every cap (ADR 0035), so the caps and budgets must hold and every returned
row must match. ``--write-docs`` records it all in docs/benchmarks.md and a plot in
docs/img/bench_retrieval.png (``--sections filtered``: the filtered case's section only).
"""

from __future__ import annotations

import functools
import logging
import math
import os
import platform
import signal
import threading
import time
import uuid
from argparse import ArgumentParser
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, connections
from psycopg import sql
from tqdm import tqdm

from apps.evaluation import synthetic
from apps.evaluation.report import BENCHMARKS, write_section
from apps.graph import adapter, store
from apps.memory.filters import Filter, parse_filters
from apps.memory.models import EpisodicEvent
from apps.platform.stats import percentile
from apps.providers.interfaces import Embedder
from apps.providers.registry import embedder as deployment_embedder
from apps.retrieval import reads
from apps.retrieval.scoring import ANCHOR_LIMIT, MAX_NAMED_ANCHORS
from apps.retrieval.services import search
from apps.tenancy import services as tenancy
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope

BATCH = 2000
QUESTION_SOURCE = 1000  # questions are drawn from the first records, which every size shares
PLOT = BENCHMARKS.parent / "img" / "bench_retrieval.png"
# The reads of one graph search, timed individually to find one that grows with N.
TIMED_READS = (
    "recall_anchors",
    "anchor_candidates",
    "incident_frames",
    "relation_frames",
    "fact_candidates",
    "rows_with_mentions",
    "neighbours",
)
# Caps from apps/retrieval (reads.py, scoring.py): what a search may inspect at any size.
ANCHOR_CAP = reads.ANCHOR_RECALL + MAX_NAMED_ANCHORS + reads.CO_PARTICIPANTS
FRAME_CAP = ANCHOR_LIMIT * reads.FRAMES_PER_ANCHOR + reads.RELATION_FRAME_CAP
NEIGHBOUR_ROWS = reads.NEIGHBOUR_SEEDS * 2 * reads.NEIGHBOURS_PER_SEED  # same-chunk neighbours of the best base rows
P95_RATIO_TARGET = 1.5
FILTER_SHARDS = 10  # rows carry metadata {"project": "p<row id mod 10>"}
FILTER_PROJECT = "p3"
FILTER = {"metadata.project": FILTER_PROJECT}  # one row in FILTER_SHARDS matches
GRAPH_ROWS_P50_TARGET_MS = 50.0

logger = logging.getLogger(__name__)


def rows_cap(max_citations: int) -> int:
    """Rows a search may dereference: each selected anchor's nearest rows of both types, the
    co-participants' two of each, the neighbours, and the citations of every frame read
    (incident frames and ranked facts). reads.py caps frames, not citations per frame, so the
    last term is the history's largest citation list times the frame cap."""
    anchor_rows = ANCHOR_LIMIT * 2 * reads.ROWS_PER_ANCHOR + reads.CO_PARTICIPANTS * 2 * reads.CO_PARTICIPANT_ROWS
    return anchor_rows + NEIGHBOUR_ROWS + FRAME_CAP * max_citations


@dataclass
class LoadReport:
    seconds: dict[str, float] = field(default_factory=dict)
    anchors: int = 0
    frames: int = 0
    arms: int = 0
    names_embedded: int = 0
    max_citations: int = 0
    hub_rows: int = 0  # episodic ids on the busiest anchor


@dataclass
class Sample:
    question: str
    operator: str
    total_ms: float
    phases: dict[str, float]
    reads_ms: dict[str, float]
    anchors: int
    frames: int
    rows_inspected: int
    rows_returned: int
    tokens: int
    row_budget: int
    fallback: bool
    mismatched: int = 0  # returned rows the filter does not match (filtered case)


@dataclass
class SizeResult:
    size: int
    load: LoadReport
    hnsw_build_seconds: float
    hnsw_path: bool
    samples: list[Sample] = field(default_factory=list)
    filtered: list[Sample] = field(default_factory=list)  # the same questions with FILTER

    def series(self, name: str, *, filtered: bool = False) -> list[float]:
        samples = self.filtered if filtered else self.samples
        if name == "total":
            return [s.total_ms for s in samples]
        if name == "graph+rows":
            return [s.phases.get("graph", 0.0) + s.phases.get("rows", 0.0) for s in samples]
        if name in TIMED_READS:
            return [s.reads_ms[name] for s in samples if name in s.reads_ms]
        return [s.phases.get(name, 0.0) for s in samples]

    def violations(self, *, filtered: bool = False) -> list[str]:
        found = []
        cap_rows = rows_cap(self.load.max_citations)
        for s in self.filtered if filtered else self.samples:
            if s.mismatched:
                found.append(f"{s.question!r}: {s.mismatched} returned rows do not match the filter")
            if s.anchors > ANCHOR_CAP:
                found.append(f"{s.question!r}: {s.anchors} anchors > {ANCHOR_CAP}")
            if s.frames > FRAME_CAP:
                found.append(f"{s.question!r}: {s.frames} frames > {FRAME_CAP}")
            if s.rows_inspected > cap_rows:
                found.append(f"{s.question!r}: {s.rows_inspected} rows inspected > {cap_rows}")
            if s.rows_returned > s.row_budget:
                found.append(f"{s.question!r}: {s.rows_returned} rows returned > budget {s.row_budget}")
            if s.fallback:
                found.append(f"{s.question!r}: the graph read raised (fallback to direct retrieval)")
        return sorted(set(found))


# --- loading -------------------------------------------------------------------------------


def _batches(items: Sequence[Any], size: int = BATCH) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@contextmanager
def _timed(seconds: dict[str, float], name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - started


def history_load(
    *, subject: Subject, history: synthetic.SyntheticHistory, embedder: Embedder, progress: bool = True
) -> LoadReport:
    """Store a synthetic history as the write path and the indexer would have: episodic rows,
    anchors, frames with their arms, and anchor name vectors. Each batch commits on its own."""
    report = LoadReport()
    seconds = report.seconds
    organization_id = subject.organization_id
    with _timed(seconds, "embedding"):
        template_vectors = embedder.embed([t.sentence for t in history.templates])
        names = history.anchor_names()
        name_vectors = dict(zip(names, embedder.embed(names), strict=True))
    report.names_embedded = len(names)

    bar = functools.partial(tqdm, disable=not progress, unit="row", leave=False)
    with _timed(seconds, "rows"), bar(total=len(history.records), desc="episodic rows") as rows_bar:
        for batch in _batches(history.records):
            with organization_scope(organization_id):
                EpisodicEvent.objects.bulk_create(
                    [_episodic_row(subject, record, template_vectors, embedder.model_name) for record in batch]
                )
            rows_bar.update(len(batch))

    # Anchors go in with empty row lists and get them after the arms exist: an arm write reads
    # its anchor's properties once per arm, so arms to a hub that already holds tens of
    # thousands of row ids cost memory ∝ arms × list size in the backend (see the module doc).
    # Busy anchors are updated last and alone, for the same reason.
    anchors = [spec.properties(subject.id) for spec in history.anchors.values()]
    empty = [{**props, "mention_count": 0, "episodic_ids": [], "semantic_ids": []} for props in anchors]
    frames = [spec.properties(subject.id) for spec in history.frames.values()]
    with _timed(seconds, "anchors"), bar(total=len(anchors), desc="anchors", unit="anchor") as anchors_bar:
        for batch in _batches(empty):
            with organization_scope(organization_id):
                store.anchors_write(organization_id=organization_id, created=list(batch), updated=[])
            anchors_bar.update(len(batch))
    with _timed(seconds, "frames"), bar(total=len(frames), desc="frames + arms", unit="frame") as frames_bar:
        for batch in _batches(frames):
            with organization_scope(organization_id):
                store.frames_write(
                    organization_id=organization_id, subject_id=subject.id, created=list(batch), updated=[]
                )
            frames_bar.update(len(batch))
    with _timed(seconds, "anchor rows"), bar(total=len(anchors), desc="anchor row lists", unit="anchor") as rows_bar:
        for batch in _by_list_size(anchors):
            with organization_scope(organization_id):
                store.anchors_write(organization_id=organization_id, created=[], updated=batch)
            rows_bar.update(len(batch))
    with _timed(seconds, "anchor vectors"), bar(total=len(anchors), desc="anchor vectors", unit="anchor") as vec_bar:
        for batch in _batches(list(history.anchors.values())):
            with organization_scope(organization_id):
                store.anchor_vectors_write(
                    subject=subject,
                    anchors=[
                        {"key": spec.entity.key, "name": spec.entity.name, "type": spec.entity.type} for spec in batch
                    ],
                    vectors=[name_vectors[spec.entity.name] for spec in batch],
                    model=embedder.model_name,
                )
            vec_bar.update(len(batch))
    report.anchors, report.frames = len(anchors), len(frames)
    report.arms = sum(len(f.arms) for f in history.frames.values())
    report.max_citations = max((len(f.citations) for f in history.frames.values()), default=0)
    report.hub_rows = max((len(a.episodic_ids) for a in history.anchors.values()), default=0)
    return report


def _by_list_size(anchors: list[dict[str, Any]], budget: int = 20_000) -> Iterator[list[dict[str, Any]]]:
    """Batches of at most BATCH anchors and about ``budget`` row ids, smallest lists first."""
    batch: list[dict[str, Any]] = []
    ids = 0
    for props in sorted(anchors, key=lambda p: (len(p["episodic_ids"]), p["key"])):
        size = len(props["episodic_ids"]) + len(props["semantic_ids"])
        if batch and (len(batch) >= BATCH or ids + size > budget):
            yield batch
            batch, ids = [], 0
        batch.append(props)
        ids += size
    if batch:
        yield batch


def _episodic_row(
    subject: Subject, record: synthetic.SyntheticRecord, vectors: list[list[float]], model: str
) -> EpisodicEvent:
    return EpisodicEvent(
        id=record.id,
        organization_id=subject.organization_id,
        subject=subject,
        source_kind="chat",
        session_id=record.session_id,
        chunk_id=record.chunk_id,
        source_message_ids=[f"{record.session_id}:{record.index}"],
        actor=record.actor,
        event_type=record.event_type,
        summary=record.summary,
        details=record.details,
        event_time=record.event_time,
        event_time_precision=record.event_time_precision,
        mention_time=record.mention_time,
        status=record.status,
        embedding=vectors[record.template],
        embedding_model=model,
        index_status=EpisodicEvent.IndexStatus.INDEXED,
        metadata={"project": _project(record)},
    )


def _project(record: synthetic.SyntheticRecord) -> str:
    return f"p{record.id.int % FILTER_SHARDS}"


def analyze(graph_name: str) -> None:
    """Fresh planner statistics for the tables the benchmark filled (autovacuum would get
    there later; a production table has them)."""
    graph = sql.Identifier(graph_name)
    with connections["owner"].cursor() as cursor:
        for table in ("memory_episodic_event", "graph_anchor_vector", "graph_anchor_frame", "graph_anchor_row"):
            cursor.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
        for label in (*adapter.VERTEX_LABELS, *adapter.EDGE_LABELS):
            cursor.execute(sql.SQL("ANALYZE {}.{}").format(graph, sql.Identifier(label)))


def hnsw_build_seconds(subject: Subject, *, model: str) -> float:
    """What building the partial HNSW index costs for this subject's anchors alone: a copy of
    graph_anchor_vector_hnsw limited to the subject, built and dropped (the real index is
    shared by every tenant and was maintained row by row during the load)."""
    name = sql.Identifier(f"bench_hnsw_{uuid.uuid4().hex[:12]}")
    statement = sql.SQL(
        "CREATE INDEX {} ON graph_anchor_vector USING hnsw ((embedding::vector({})) vector_cosine_ops) "
        "WHERE embedding_model = {} AND subject_id = {}"
    ).format(name, sql.Literal(reads.HNSW_DIMENSION), sql.Literal(model), sql.Literal(str(subject.id)))
    with connections["owner"].cursor() as cursor:
        started = time.perf_counter()
        try:
            cursor.execute(statement)
            return time.perf_counter() - started
        finally:
            cursor.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(name))


class BackendMemoryGuard:
    """Cancels the statement running on this process's database backend if the backend's
    resident memory passes ``limit_gib``, so a read or write that blows up fails this command
    instead of getting the backend OOM-killed, which restarts the whole cluster. Works only
    when the backend runs on this machine and its /proc entry is readable (the embedded
    Postgres); otherwise it does nothing."""

    def __init__(self, limit_gib: float) -> None:
        self.limit_kib = int(limit_gib * 2**20)
        self.tripped = False
        self._stop = threading.Event()
        self._pid = 0

    def _resident_kib(self) -> int | None:
        try:
            with open(f"/proc/{self._pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None

    def _watch(self) -> None:
        while not self._stop.wait(0.05):
            resident = self._resident_kib()
            if resident is not None and resident > self.limit_kib and not self.tripped:
                self.tripped = True
                os.kill(self._pid, signal.SIGINT)  # what pg_cancel_backend sends

    def __enter__(self) -> BackendMemoryGuard:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            row = cursor.fetchone()
        self._pid = int(row[0]) if row else 0
        if self._pid and self._resident_kib() is not None:
            threading.Thread(target=self._watch, name="backend-memory-guard", daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self.tripped:
            raise CommandError(
                f"the database backend passed {self.limit_kib / 2**20:.1f} GiB and its statement was cancelled"
            )


# --- measuring -----------------------------------------------------------------------------


@contextmanager
def read_timers(into: dict[str, float]) -> Iterator[None]:
    """Time each read of apps.retrieval.reads that a search makes (summed per read)."""
    originals: dict[str, Callable[..., Any]] = {name: getattr(reads, name) for name in TIMED_READS}

    def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                into[name] = into.get(name, 0.0) + (time.perf_counter() - started) * 1000

        return wrapper

    for name, function in originals.items():
        setattr(reads, name, timed(name, function))
    try:
        yield
    finally:
        for name, function in originals.items():
            setattr(reads, name, function)


def measure(
    *,
    subject: Subject,
    questions: Sequence[synthetic.BenchmarkQuestion],
    embedder: Embedder,
    repeats: int,
    progress: bool,
    where: Filter | None = None,
    matching: set[str] | None = None,
) -> list[Sample]:
    """One warm-up pass, then ``repeats`` passes; each search in a transaction of its own, as a
    request would be. With a filter ``where``, each sample counts its returned rows that are
    not in ``matching``."""
    samples: list[Sample] = []
    for attempt in tqdm(range(repeats + 1), desc="search passes", disable=not progress, leave=False):
        for question in questions:
            timings: dict[str, float] = {}
            with organization_scope(subject.organization_id), read_timers(timings):
                started = time.perf_counter()
                result = search(subject=subject, question=question.text, embedder=embedder, mode="graph", where=where)
                total = (time.perf_counter() - started) * 1000
            if attempt == 0:
                continue
            budget = result.budget
            samples.append(
                Sample(
                    question=question.text,
                    operator=result.plan.operator,
                    total_ms=total,
                    phases=dict(result.timings_ms),
                    reads_ms=timings,
                    anchors=budget.anchors_inspected,
                    frames=budget.frames_inspected,
                    rows_inspected=budget.rows_inspected,
                    rows_returned=budget.rows_returned,
                    tokens=budget.tokens_returned,
                    row_budget=result.plan.budgets.total_rows,
                    fallback=result.fallback,
                    mismatched=sum(1 for r in result.rows if matching is not None and r.row.row_id not in matching),
                )
            )
    return samples


# --- the command ---------------------------------------------------------------------------


class Command(BaseCommand):
    help = "Benchmark graph retrieval latency and evidence inspected at growing history sizes."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--sizes", default="1000,10000,100000", help="Comma-separated records per subject.")
        parser.add_argument("--seed", type=int, default=synthetic.DEFAULT_SEED)
        parser.add_argument("--questions", type=int, default=50, help="Questions per pass.")
        parser.add_argument("--repeats", type=int, default=3, help="Measured passes after the warm-up pass.")
        parser.add_argument("--keep", action="store_true", help="Keep the benchmark organizations afterwards.")
        parser.add_argument("--write-docs", action="store_true", help="Record the figures in docs/benchmarks.md.")
        parser.add_argument(
            "--sections",
            choices=("all", "filtered"),
            default="all",
            help="With --write-docs: every section, or only the filtered case's.",
        )
        parser.add_argument("--no-progress", action="store_true")
        parser.add_argument(
            "--backend-memory-limit-gib",
            type=float,
            default=4.0,
            help="Cancel a statement whose (local) database backend grows past this much memory.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        logging.getLogger("apps").setLevel(logging.WARNING)  # the progress bars are the output
        try:
            sizes = sorted({int(s) for s in str(options["sizes"]).split(",") if s.strip()})
        except ValueError as exc:
            raise CommandError("--sizes takes comma-separated integers") from exc
        if not sizes or sizes[0] < 1:
            raise CommandError("--sizes needs positive sizes")
        progress = not options["no_progress"]
        vectors = deployment_embedder()
        vectors.embed(["warm-up"])  # model loading is not retrieval time
        results: list[SizeResult] = []
        for size in sizes:
            result = self._run_size(size, options, vectors, progress)
            results.append(result)
            self.stdout.write(self._size_line(result))
        body = self._report(results, options)
        filtered = self._filtered_report(results, options)
        self.stdout.write(body)
        self.stdout.write(filtered)
        if options["write_docs"]:
            write_section("bench_retrieval_filtered", filtered)
            if options["sections"] == "all":
                self._plot(results)
                write_section("bench_retrieval", body)
            self.stdout.write(f"wrote docs/benchmarks.md ({options['sections']} sections)")

    def _run_size(self, size: int, options: dict[str, Any], vectors: Embedder, progress: bool) -> SizeResult:
        organization = tenancy.organization_create(
            name=f"Retrieval benchmark {size}", slug=f"bench-retrieval-{size}-{uuid.uuid4().hex[:8]}"
        )
        try:
            with organization_scope(organization.id):
                subject = tenancy.subject_create(organization_id=organization.id, external_id="maya", kind="user")
            started = time.perf_counter()
            history = synthetic.generate_history(size=size, subject_id=subject.id, seed=options["seed"])
            generated = time.perf_counter() - started
            questions = synthetic.benchmark_questions(
                history.records[:QUESTION_SOURCE], count=options["questions"], seed=options["seed"]
            )
            with BackendMemoryGuard(options["backend_memory_limit_gib"]):
                load = history_load(subject=subject, history=history, embedder=vectors, progress=progress)
            load.seconds = {"generation": generated, **load.seconds}
            with _timed(load.seconds, "analyze"):
                analyze(organization.graph_name)
            build = hnsw_build_seconds(subject, model=vectors.model_name)
            result = SizeResult(
                size=size, load=load, hnsw_build_seconds=build, hnsw_path=load.anchors > reads.EXACT_SCAN_LIMIT
            )
            matching = {str(r.id) for r in history.records if _project(r) == FILTER_PROJECT}
            del history
            with BackendMemoryGuard(options["backend_memory_limit_gib"]):
                result.samples = measure(
                    subject=subject,
                    questions=questions,
                    embedder=vectors,
                    repeats=options["repeats"],
                    progress=progress,
                )
                result.filtered = measure(
                    subject=subject,
                    questions=questions,
                    embedder=vectors,
                    repeats=options["repeats"],
                    progress=progress,
                    where=parse_filters(FILTER),
                    matching=matching,
                )
            return result
        finally:
            if not options["keep"]:
                tenancy.organization_offboard(organization_id=organization.id)

    def _size_line(self, r: SizeResult) -> str:
        return (
            f"N={r.size}: p50 {percentile(r.series('total'), 0.50):.1f} ms, p95 {percentile(r.series('total'), 0.95):.1f} ms, "
            f"graph+rows p50 {percentile(r.series('graph+rows'), 0.50):.1f} ms; load {sum(r.load.seconds.values()):.0f} s"
        )

    # -- report -----------------------------------------------------------------------------

    def _report(self, results: list[SizeResult], options: dict[str, Any]) -> str:
        first, last = results[0], results[-1]
        p95_first, p95_last = percentile(first.series("total"), 0.95), percentile(last.series("total"), 0.95)
        graph_rows_last = percentile(last.series("graph+rows"), 0.50)
        violations = {r.size: r.violations() for r in results}
        verdicts = [
            _verdict(
                all(not v for v in violations.values()),
                "evidence inspected within the caps at every size "
                f"(anchors ≤ {ANCHOR_CAP}, frames ≤ {FRAME_CAP}, "
                "rows returned ≤ the operator's cited-row budget + base-row budget, "
                "rows inspected ≤ the structural cap, no fallback)",
            ),
            _verdict(
                p95_last <= P95_RATIO_TARGET * p95_first,
                f"p95 at {last.size:,} ≤ {P95_RATIO_TARGET} × p95 at {first.size:,}: {p95_last:.1f} ms vs "
                f"{P95_RATIO_TARGET} × {p95_first:.1f} = {P95_RATIO_TARGET * p95_first:.1f} ms "
                f"(ratio {p95_last / p95_first:.2f})",
            ),
            _verdict(
                graph_rows_last <= GRAPH_ROWS_P50_TARGET_MS,
                f"p50 of graph + rows at {last.size:,} ≤ {GRAPH_ROWS_P50_TARGET_MS:.0f} ms: {graph_rows_last:.1f} ms",
            ),
        ]
        sizes = ",".join(str(r.size) for r in results)
        per_pass = len({s.question for s in first.samples})
        operators = sorted({s.operator for s in first.samples})
        lines = [
            f"## Bounded access: retrieval at growing history sizes (`python manage.py bench_retrieval --sizes {sizes} --write-docs`)",
            "",
            f"{_machine()}. One subject per size with N synthetic episodic records (`apps/evaluation/synthetic.py`, "
            f"seed {options['seed']}: five hub persons, Pitman–Yor pools of people, places and objects, "
            f"{synthetic.DATED_SHARE:.0%} dated events, numbers as literals) and their graph, bulk-loaded in the "
            "shapes the indexer writes; record vectors are the real MiniLM vectors of their "
            f"{len(synthetic.TEMPLATES)} templates, anchor name vectors are real. {per_pass} fixed questions "
            f"(operators: {', '.join(operators)}) naming hub and non-hub entities, one warm-up pass, then "
            f"{options['repeats']} measured passes: {len(first.samples)} searches per size, graph mode, each in its "
            "own transaction. Latency is the wall time of `search()`; phases are its `timings_ms`.",
            "",
            "| N records | anchors | frames | arms | rows on the busiest anchor | load (s) | HNSW build of the subject's anchors (s) | anchor recall path |",
            "|---|---|---|---|---|---|---|---|",
            *[
                f"| {r.size:,} | {r.load.anchors:,} | {r.load.frames:,} | {r.load.arms:,} | {r.load.hub_rows:,} | "
                f"{sum(r.load.seconds.values()):.0f} ({_load_split(r.load)}) | {r.hnsw_build_seconds:.2f} | "
                f"{'HNSW (> 5000 anchors)' if r.hnsw_path else 'exact scan'} |"
                for r in results
            ],
            "",
            "Latency (ms):",
            "",
            "| N | total p50 | total p95 | embedding p50 | graph p50 | graph p95 | rows p50 | rows p95 | graph + rows p50 |",
            "|---|---|---|---|---|---|---|---|---|",
            *[
                f"| {r.size:,} | {_p(r, 'total', 50)} | {_p(r, 'total', 95)} | {_p(r, 'embedding', 50)} | "
                f"{_p(r, 'graph', 50)} | {_p(r, 'graph', 95)} | {_p(r, 'rows', 50)} | {_p(r, 'rows', 95)} | "
                f"{_p(r, 'graph+rows', 50)} |"
                for r in results
            ],
            "",
            "Each read of `apps/retrieval/reads.py`, p50 / p95 (ms) per search:",
            "",
            "| N | " + " | ".join(f"`{name}`" for name in TIMED_READS) + " |",
            "|---|" + "---|" * len(TIMED_READS),
            *[
                f"| {r.size:,} | " + " | ".join(f"{_p(r, n, 50)} / {_p(r, n, 95)}" for n in TIMED_READS) + " |"
                for r in results
            ],
            f"| p50 growth {first.size:,} → {last.size:,} | "
            + " | ".join(_growth(first, last, n) for n in TIMED_READS)
            + " |",
            "",
            "Evidence per search, mean / max (caps: anchors "
            f"{ANCHOR_CAP} = {reads.ANCHOR_RECALL} recalled + {MAX_NAMED_ANCHORS} named + {reads.CO_PARTICIPANTS} "
            f"co-participants, frames {FRAME_CAP} = {ANCHOR_LIMIT} × {reads.FRAMES_PER_ANCHOR} incident + "
            f"{reads.RELATION_FRAME_CAP} relation, rows returned ≤ the operator's cited-row budget + base-row budget):",
            "",
            "| N | anchors inspected | frames inspected | rows inspected (cap) | rows returned | tokens returned |",
            "|---|---|---|---|---|---|",
            *[
                f"| {r.size:,} | {_mm(r, 'anchors')} | {_mm(r, 'frames')} | {_mm(r, 'rows_inspected')} "
                f"({rows_cap(r.load.max_citations)}) | {_mm(r, 'rows_returned')} | {_mm(r, 'tokens')} |"
                for r in results
            ],
            "",
            "Verdicts:",
            "",
            *[f"- {v}" for v in verdicts],
            *[f"  - N={size:,}: {v}" for size, found in violations.items() for v in found[:5]],
            "",
            f"![retrieval latency and evidence inspected vs history size]({PLOT.relative_to(BENCHMARKS.parent)})",
        ]
        return "\n".join(lines)

    def _filtered_report(self, results: list[SizeResult], options: dict[str, Any]) -> str:
        sizes = ",".join(str(r.size) for r in results)
        violations = {r.size: r.violations(filtered=True) for r in results}
        returned = sum(len(r.filtered) for r in results)
        empty = {r.size: sum(1 for s in r.filtered if s.rows_returned == 0) for r in results}
        lines = [
            "## Filtered retrieval: a metadata filter applied before every cap "
            f"(`python manage.py bench_retrieval --sizes {sizes} --write-docs --sections filtered`)",
            "",
            f"{_machine()}. The histories and questions of the bounded-access benchmark; every row carries "
            f'`{{"project": "p0"…"p{FILTER_SHARDS - 1}"}}` (its id mod {FILTER_SHARDS}), and each question runs '
            f"again in graph mode with `filters` `{FILTER}` (1 row in {FILTER_SHARDS}), one warm-up pass, then "
            f"{options['repeats']} measured passes. The filter is part of the reads of an anchor's rows (a "
            "primary-key probe per mention scanned), of cited rows, neighbours and successors, and of facts "
            "(ADR 0035).",
            "",
            "| N | unfiltered p50 / p95 (ms) | filtered p50 / p95 (ms) | filtered `anchor_candidates` p50 / p95 | "
            "filtered `rows_with_mentions` p50 / p95 | rows returned (mean / max) | searches with no row | "
            "returned rows not matching |",
            "|---|---|---|---|---|---|---|---|",
            *[
                f"| {r.size:,} | {_p(r, 'total', 50)} / {_p(r, 'total', 95)} | "
                f"{_pf(r, 'total', 50)} / {_pf(r, 'total', 95)} | "
                f"{_pf(r, 'anchor_candidates', 50)} / {_pf(r, 'anchor_candidates', 95)} | "
                f"{_pf(r, 'rows_with_mentions', 50)} / {_pf(r, 'rows_with_mentions', 95)} | "
                f"{_mm(r, 'rows_returned', filtered=True)} | {empty[r.size]} of {len(r.filtered)} | "
                f"{sum(s.mismatched for s in r.filtered)} |"
                for r in results
            ],
            "",
            "Verdict:",
            "",
            "- "
            + _verdict(
                returned > 0 and all(not v for v in violations.values()),
                "every returned row matches the filter and the caps hold at every size "
                f"(anchors ≤ {ANCHOR_CAP}, frames ≤ {FRAME_CAP}, rows within the budgets, no fallback)",
            ),
            *[f"  - N={size:,}: {v}" for size, found in violations.items() for v in found[:5]],
        ]
        return "\n".join(lines)

    def _plot(self, results: list[SizeResult]) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        sizes = [r.size for r in results]
        figure, (latency, evidence) = plt.subplots(1, 2, figsize=(11, 4.2))
        for name, q, style in (
            ("total", 50, "o-"),
            ("total", 95, "o--"),
            ("graph", 50, "s-"),
            ("rows", 50, "^-"),
            ("embedding", 50, "d-"),
        ):
            latency.plot(sizes, [percentile(r.series(name), q / 100) for r in results], style, label=f"{name} p{q}")
        latency.set(xscale="log", xlabel="records per subject", ylabel="ms", title="search latency (graph mode)")
        latency.set_ylim(bottom=0)
        latency.grid(True, which="both", alpha=0.3)
        latency.legend()
        for attribute, label in (
            ("anchors", "anchors inspected"),
            ("frames", "frames inspected"),
            ("rows_inspected", "rows inspected"),
            ("rows_returned", "rows returned"),
        ):
            evidence.plot(sizes, [_mean(r, attribute) for r in results], "o-", label=f"{label} (mean)")
            evidence.plot(sizes, [_max(r, attribute) for r in results], ":", color=evidence.lines[-1].get_color())
        evidence.set(
            xscale="log", xlabel="records per subject", ylabel="per search (dotted: max)", title="evidence per search"
        )
        evidence.set_ylim(bottom=0)
        evidence.grid(True, which="both", alpha=0.3)
        evidence.legend(fontsize="small")
        figure.tight_layout()
        PLOT.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(PLOT, dpi=110)
        plt.close(figure)


def _verdict(ok: bool, text: str) -> str:
    return f"**{'PASS' if ok else 'FAIL'}** — {text}"


def _p(result: SizeResult, name: str, q: float) -> str:
    value = percentile(result.series(name), q / 100)
    return "–" if math.isnan(value) else f"{value:.1f}"


def _growth(first: SizeResult, last: SizeResult, name: str) -> str:
    before, after = percentile(first.series(name), 0.50), percentile(last.series(name), 0.50)
    return "–" if math.isnan(before) or math.isnan(after) or before <= 0 else f"{after / before:.1f}×"


def _pf(result: SizeResult, name: str, q: float) -> str:
    value = percentile(result.series(name, filtered=True), q / 100)
    return "–" if math.isnan(value) else f"{value:.1f}"


def _mean(result: SizeResult, attribute: str, *, filtered: bool = False) -> float:
    values = [float(getattr(s, attribute)) for s in (result.filtered if filtered else result.samples)]
    return sum(values) / len(values) if values else math.nan


def _max(result: SizeResult, attribute: str, *, filtered: bool = False) -> float:
    return max(
        (float(getattr(s, attribute)) for s in (result.filtered if filtered else result.samples)), default=math.nan
    )


def _mm(result: SizeResult, attribute: str, *, filtered: bool = False) -> str:
    return f"{_mean(result, attribute, filtered=filtered):.1f} / {_max(result, attribute, filtered=filtered):.0f}"


def _load_split(load: LoadReport) -> str:
    return ", ".join(f"{name} {seconds:.0f}" for name, seconds in load.seconds.items())


def _machine() -> str:
    with connections["owner"].cursor() as cursor:
        cursor.execute("SHOW server_version")
        server = cursor.fetchone()
        cursor.execute(
            "SELECT extname, extversion FROM pg_extension WHERE extname IN ('vector', 'age') ORDER BY extname"
        )
        extensions = ", ".join(f"{name} {version}" for name, version in cursor.fetchall())
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()[1]
    return (
        f"{platform.machine()}, {os.cpu_count()} cores, {memory:.0f} GiB, Postgres {server[0] if server else '?'} "
        f"({extensions}), embedded, local MiniLM embedder on the CPU; load average {load:.1f} (5 min) when the "
        "report was written"
    )
