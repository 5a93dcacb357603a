"""Many tenants (ADR 0050): what an organization costs the database catalog, and whether one
tenant's search slows down as organizations accumulate beside it.

Runs in a scratch database of its own (``<database>_bench_tenants``, created from scratch,
migrated and dropped at the end; ``DATABASE_ADMIN_URL`` names the superuser that creates it),
so every count starts from the same empty catalog and nothing is left behind:

1. The measured tenant writes one small subject (a few chat messages through the write path,
   indexed into the graph), and so does one other organization: its relations (``pg_class``)
   and bytes (``pg_database_size``); then the tenant's graph search latency with 1 other
   organization present.
2. Organizations are added up to 100, then 1,000 others: most are created as sign-ups are
   (the row, no graph), timed for organizations per second, a share of them then write a tiny
   graph (a subject, two anchors and a frame through the graph store, which creates the graph
   on that first write); a batch is created as before ADR 0050 (row and empty graph at once),
   timed and measured for comparison; a few more write a small subject through the write path.
   At 100 and 1,000 others, the search latency again, with the catalog's size.

``--write-docs`` records the table in docs/benchmarks.md.
"""

from __future__ import annotations

import os
import platform
import time
import uuid
from argparse import ArgumentParser
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from psycopg.conninfo import make_conninfo
from rest_framework.test import APIClient
from tqdm import tqdm

from apps.evaluation.report import write_section
from apps.graph import adapter, store
from apps.graph.services import index_chunk
from apps.memory.services import incoming_messages, memory_write_messages
from apps.platform.stats import percentile
from apps.providers.registry import embedder, llm_for
from apps.tenancy import keys
from apps.tenancy import services as tenancy
from apps.tenancy.models import Organization
from apps.tenancy.scope import organization_scope
from infra.embedded import postgres

LEVELS = (1, 100, 1000)
SMALL_SUBJECT = [
    ("2024-05-06T09:00:00Z", "I adopted a beagle called Biscuit from the Oakland shelter last week."),
    ("2024-05-07T18:30:00Z", "My sister Leah and I hiked Mount Tam on Sunday with Biscuit."),
    ("2024-05-08T08:15:00Z", "I start my new job as a pediatric nurse at Kaiser in June."),
    ("2024-05-09T20:00:00Z", "Leah is moving to Portland in August to study architecture."),
]
QUESTIONS = (
    "What is the name of my dog?",
    "Where did I hike with Leah?",
    "Where will I work as a nurse?",
    "Where is Leah moving?",
    "Who is Biscuit?",
)


@dataclass
class Footprint:
    """Catalog relations and database bytes added by some organizations."""

    organizations: int = 0
    relations: int = 0
    bytes: int = 0
    seconds: float = 0.0

    def per_organization(self) -> tuple[float, float, float]:
        n = max(self.organizations, 1)
        return self.relations / n, self.bytes / n, self.seconds / n


@dataclass
class Level:
    others: int
    with_graph: int
    relations: int
    database_bytes: int
    latencies_ms: list[float] = field(default_factory=list)


@dataclass
class Run:
    lazy: Footprint = field(default_factory=Footprint)
    eager: Footprint = field(default_factory=Footprint)
    tiny: Footprint = field(default_factory=Footprint)
    small: Footprint = field(default_factory=Footprint)
    levels: list[Level] = field(default_factory=list)
    seconds: float = 0.0


def _catalog() -> tuple[int, int]:
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT (SELECT count(*) FROM pg_class), pg_database_size(current_database())")
        relations, size = cursor.fetchone()
    return int(relations), int(size)


def _graphs() -> int:
    with connections["owner"].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM ag_catalog.ag_graph")
        return int(cursor.fetchone()[0])


@contextmanager
def _measured(footprint: Footprint, organizations: int) -> Iterator[None]:
    relations, size = _catalog()
    started = time.perf_counter()
    yield
    footprint.seconds += time.perf_counter() - started
    after_relations, after_size = _catalog()
    footprint.organizations += organizations
    footprint.relations += after_relations - relations
    footprint.bytes += after_size - size


@contextmanager
def scratch_database(suffix: str) -> Iterator[str]:
    """Point both aliases at a new, migrated database for the block; drop it afterwards."""
    admin_url = os.environ.get("DATABASE_ADMIN_URL")
    if not admin_url:
        raise CommandError("DATABASE_ADMIN_URL (a superuser) is needed to create the scratch database.")
    original = connections["default"].settings_dict["NAME"]
    scratch = f"{original}_{suffix}"
    maintenance = make_conninfo(admin_url, dbname="postgres")
    for alias in ("default", "owner"):
        connections[alias].close()
    postgres.drop_database_by_url(maintenance, scratch)
    postgres.bootstrap_database(maintenance, scratch)
    names = {alias: connections[alias].settings_dict["NAME"] for alias in ("default", "owner")}
    try:
        for alias in names:
            connections[alias].settings_dict["NAME"] = scratch
        call_command("migrate", database="owner", verbosity=0)
        yield scratch
    finally:
        for alias, name in names.items():
            connections[alias].close()
            connections[alias].settings_dict["NAME"] = name
        postgres.drop_database_by_url(maintenance, scratch)


def _slug(kind: str) -> str:
    return f"bench-{kind}-{uuid.uuid4().hex[:12]}"


def _small_subject(organization: Organization) -> None:
    """One subject, a few chat messages written and indexed into the graph (its first write)."""
    with organization_scope(organization.id):
        subject = tenancy.subject_create(organization_id=organization.id, external_id="maya", kind="user")
        written = memory_write_messages(
            subject=subject,
            messages=incoming_messages(
                [
                    {"id": f"m{i}", "role": "user", "name": "Maya", "timestamp": at, "content": text}
                    for i, (at, text) in enumerate(SMALL_SUBJECT)
                ]
            ),
            source_kind="chat",
            session_id="s1",
            llm=llm_for(organization.id),
            embedder=embedder(),
        )
    with organization_scope(organization.id):
        result = index_chunk(chunk_id=written.chunk_id)
    if result["failed"] or not result["anchors_created"]:
        raise CommandError(f"the small subject did not index: {result}")


def _tiny_graph(organization: Organization) -> None:
    """A subject with two anchors and one frame through the graph store: the first graph write."""
    with organization_scope(organization.id):
        subject = tenancy.subject_create(organization_id=organization.id, external_id="u1", kind="user")
        row = str(uuid.uuid4())
        anchors = [
            {
                "subject_id": str(subject.id),
                "key": key,
                "name": key.title(),
                "type": "person",
                "aliases": [],
                "mention_count": 1,
                "admission_score": 1.0,
                "episodic_ids": [row],
                "semantic_ids": [],
            }
            for key in ("ana", "bo")
        ]
        store.anchors_write(organization_id=organization.id, created=anchors, updated=[])
        frame = {
            "frame_id": f"f-{row}",
            "subject_id": str(subject.id),
            "kind": "episodic",
            "predicate": "meet",
            "arms": [["agent", "ana"], ["theme", "bo"]],
            "literals": {},
            "event_time": "2024-05-01",
            "event_time_precision": "day",
            "mention_time": "2024-05-02T10:00:00+00:00",
            "status": "done",
            "citations": [row],
        }
        store.frames_write(organization_id=organization.id, subject_id=subject.id, created=[frame], updated=[])


def _eager(slug: str) -> Organization:
    """An organization as it was created before ADR 0050: the row, then its empty graph."""
    organization = tenancy.organization_create(name=slug, slug=slug)
    with organization_scope(organization.id):
        adapter.graph_ensure(organization_id=organization.id)
    return organization


class Command(BaseCommand):
    help = "Benchmark many tenants: creation rate, catalog cost per organization, search beside 1-1,000 others."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--levels", default=",".join(str(n) for n in LEVELS), help="other organizations present")
        parser.add_argument("--written-share", type=float, default=0.5, help="share of added organizations that write")
        parser.add_argument("--eager", type=int, default=100, help="organizations created with an empty graph")
        parser.add_argument("--small", type=int, default=3, help="other organizations that write a small subject")
        parser.add_argument("--repeats", type=int, default=4, help="passes over the questions per level")
        parser.add_argument("--write-docs", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        levels = sorted({int(n) for n in options["levels"].split(",") if n.strip()})
        if not levels or levels[0] < 1:
            raise CommandError("--levels: positive counts of other organizations, e.g. 1,100,1000")
        if not 0 <= options["written_share"] <= 1:
            raise CommandError("--written-share: a share between 0 and 1")
        load = os.getloadavg()[0]
        started = time.perf_counter()
        with scratch_database("bench_tenants"):
            run = self._run(levels, options)
        run.seconds = time.perf_counter() - started
        report = self._report(run, load=load, options=options)
        self.stdout.write(report)
        if options["write_docs"]:
            write_section("bench_tenants", report)
            self.stdout.write("docs/benchmarks.md updated")

    def _run(self, levels: list[int], options: dict[str, Any]) -> Run:
        run = Run()
        tenant = tenancy.organization_create(name="measured", slug=_slug("measured"))
        issued = tenancy.api_key_create(organization_id=tenant.id, name="bench", scopes=list(keys.SCOPES))
        client = APIClient(SERVER_NAME="localhost")
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.secret}")
        _small_subject(tenant)  # not measured: it also loads the models
        others = 0
        small_left = options["small"]
        eager_left = options["eager"]
        share = options["written_share"]
        written_credit = 0.0
        for level in levels:
            adding = level - others
            progress = tqdm(total=adding, desc=f"organizations up to {level} others", unit="org")
            while others < level:
                if small_left and others % 25 in (0, 1):
                    organization = tenancy.organization_create(name="small", slug=_slug("small"))
                    with _measured(run.small, 1):
                        _small_subject(organization)
                    small_left -= 1
                elif eager_left and level > 1 and others % 5 == 2:
                    with _measured(run.eager, 1):
                        _eager(_slug("eager"))
                    eager_left -= 1
                else:
                    with _measured(run.lazy, 1):
                        organization = tenancy.organization_create(name="signup", slug=_slug("signup"))
                    written_credit += share
                    if written_credit >= 1:
                        written_credit -= 1
                        with _measured(run.tiny, 1):
                            _tiny_graph(organization)
                others += 1
                progress.update(1)
            progress.close()
            run.levels.append(self._search_level(client, tenant, others, options["repeats"]))
        return run

    def _search_level(self, client: APIClient, tenant: Organization, others: int, repeats: int) -> Level:
        relations, size = _catalog()
        level = Level(others=others, with_graph=_graphs() - 1, relations=relations, database_bytes=size)

        def ask(question: str) -> float:
            began = time.perf_counter()
            response = client.post("/v1/subjects/maya/search", {"query": question, "mode": "graph"}, format="json")
            elapsed = (time.perf_counter() - began) * 1000
            if response.status_code != 200 or response.json()["fallback"]:
                raise CommandError(f"search failed: {response.status_code} {response.content[:200]!r}")
            return elapsed

        for question in QUESTIONS:  # warm-up: plans, caches, the model
            ask(question)
        asked = [question for _ in range(repeats) for question in QUESTIONS]
        for question in tqdm(asked, desc=f"search beside {others} others", unit="search"):
            level.latencies_ms.append(ask(question))
        return level

    def _report(self, run: Run, *, load: float, options: dict[str, Any]) -> str:
        def row(name: str, footprint: Footprint, *, rate: bool) -> str:
            relations, size, seconds = footprint.per_organization()
            speed = f"{1 / seconds:.1f} organizations/s" if rate and seconds else f"{seconds * 1000:.0f} ms each"
            # Rows alone mostly fill pages already allocated: the database grows by less than
            # a kilobyte per organization, within the noise of other files' growth.
            kilobytes = f"{size / 1e3:.1f}" if size >= 1e3 else "< 1"
            return f"| {name} | {footprint.organizations} | {speed} | {relations:.1f} | {kilobytes} |"

        lines = [
            "## Many tenants (`python manage.py bench_tenants --write-docs`)",
            "",
            f"One run, {run.seconds / 60:.1f} min, in a scratch database; {platform.machine()}, "
            f"{os.cpu_count()} cores, load average {load:.1f} at the start (other sessions running). "
            "Relations are rows added to `pg_class`, bytes the growth of `pg_database_size`, per organization.",
            "",
            "| organizations | measured | time | relations each | kB each |",
            "|---|---|---|---|---|",
            row("created, nothing written (graph on first write, ADR 0050)", run.lazy, rate=True),
            row("created with an empty graph at once (before ADR 0050)", run.eager, rate=True),
            row("first write of a tiny graph (2 anchors, 1 frame): the graph is created", run.tiny, rate=False),
            row(
                f"one small subject ({len(SMALL_SUBJECT)} messages written and indexed, from an empty organization)",
                run.small,
                rate=False,
            ),
            "",
            "Search of one tenant (graph mode, through the API in process: key lookup, scope, audit; "
            f"{len(QUESTIONS)} questions × {options['repeats']} after a warm-up) with other organizations beside it; "
            f"{options['written_share']:.0%} of the sign-ups wrote a tiny graph, "
            f"{options['eager']} were created with an empty graph as before, a few wrote a small subject:",
            "",
            "| other organizations | with a graph | relations (`pg_class`) | database MB | search p50 ms | p95 ms "
            "| p50 / p50 beside 1 |",
            "|---|---|---|---|---|---|---|",
        ]
        base = percentile(run.levels[0].latencies_ms, 0.5) if run.levels else 0.0
        for level in run.levels:
            p50, p95 = percentile(level.latencies_ms, 0.5), percentile(level.latencies_ms, 0.95)
            lines.append(
                f"| {level.others:,} | {level.with_graph:,} | {level.relations:,} | {level.database_bytes / 1e6:.0f} "
                f"| {p50:.0f} | {p95:.0f} | {p50 / base:.2f} |"
            )
        lazy_relations, lazy_bytes, _ = run.lazy.per_organization()
        eager_relations, eager_bytes, _ = run.eager.per_organization()
        lines += [
            "",
            f"10,000 sign-ups that never write now add about {10_000 * lazy_relations:,.0f} relations and "
            f"{max(10_000 * lazy_bytes / 1e6, 0):,.0f} MB beyond their rows; created with their graphs they added "
            f"{10_000 * eager_relations:,.0f} relations and {10_000 * eager_bytes / 1e6:,.0f} MB. "
            "What each organization that writes costs is unchanged: its graph comes with its first write. "
            "Where tenants move to another cluster: docs/scale-out.md.",
        ]
        return "\n".join(lines)
