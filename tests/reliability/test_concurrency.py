"""Concurrent writers (threads in one process, and separate client processes against a real
gunicorn server) on one subject and across subjects and organizations: every accepted write
is stored exactly once, indexing makes one anchor per key and one frame per identity, and a
conflict between writers is never a lost write or an unresolved deadlock."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections import Counter
from typing import Any

import pytest
from django.db import connection

from apps.graph.services import index_chunk
from apps.jobs.models import Job
from apps.memory.locks import subject_write_lock
from apps.memory.models import CoreBlock, EpisodicEvent, SemanticItem
from apps.tenancy.models import ApiKey
from apps.tenancy.scope import organization_scope
from apps.tenancy.services import _touched_at, api_key_touch
from tests.factories import complete_writes, make_tenant, written_answer
from tests.processes import ROOT, celery_worker, purge_queues, wait_for
from tests.reliability.clients import post_all
from tests.reliability.support import api_server, graph_snapshot, message, stored_as_answered

WRITERS = 16
WRITES_PER_PROCESS = 2


def _text(n: int) -> str:
    """Overlapping entities on purpose (Tom, Leo, the gym), and a first-person fact of its own
    (a token each write can be found by) that appends a line to the core block and supersedes
    the subject's semantic row: concurrent writers contend for the same current rows."""
    return (
        f"My favourite climbing route is token{n:02d}. On day {n} I climbed with Tom and Leo "
        "at the Oakland climbing gym and we met coach Priya."
    )


def _in_threads(work: Any, items: list[Any]) -> list[Any]:
    results: list[Any] = [None] * len(items)
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(items))

    def run(index: int, item: Any) -> None:
        try:
            barrier.wait()
            results[index] = work(item)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, item)) for i, item in enumerate(items)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    return results


def _index_all(organization_id: Any, chunk_ids: list[str]) -> None:
    def index(chunk_id: str) -> dict[str, Any]:
        with organization_scope(organization_id):
            return index_chunk(chunk_id=chunk_id)  # type: ignore[arg-type]

    assert all(result["failed"] == 0 for result in _in_threads(index, chunk_ids))


def _assert_graph_once(organization_id: Any) -> None:
    graph = graph_snapshot(organization_id)
    assert graph.anchors and graph.frames
    assert graph.duplicate_anchor_keys() == [] and graph.duplicate_frame_ids() == []
    assert graph.arms_match_frames()
    with organization_scope(organization_id):
        episodic = {str(i) for i in EpisodicEvent.objects.values_list("id", flat=True)}
        semantic = {str(i) for i in SemanticItem.objects.values_list("id", flat=True)}
        statuses = {
            *EpisodicEvent.objects.values_list("index_status", flat=True),
            *SemanticItem.objects.values_list("index_status", flat=True),
        }
    assert statuses == {"indexed"}
    for frame in graph.frames:  # every citation is a row, cited once
        cited = episodic if frame["kind"] == "episodic" else semantic
        assert set(frame["citations"]) <= cited and len(frame["citations"]) == len(set(frame["citations"]))
    for anchor in graph.anchors:  # each row counted once per anchor
        ids = [*anchor["episodic_ids"], *anchor["semantic_ids"]]
        assert len(ids) == len(set(ids)) and set(ids) <= episodic | semantic
        assert len(ids) <= anchor["mention_count"] <= len(episodic | semantic)


def _current(rows: list[dict[str, Any]], key: str) -> dict[tuple[Any, str], list[dict[str, Any]]]:
    """Per subject and ``key``: the rows no other row supersedes; each superseded at most once."""
    superseded = Counter(r["supersedes_id"] for r in rows if r["supersedes_id"])
    assert max(superseded.values(), default=1) == 1
    current: dict[tuple[Any, str], list[dict[str, Any]]] = {}
    for row in rows:
        if row["id"] not in superseded:
            current.setdefault((row["subject_id"], row[key]), []).append(row)
    return current


def _chains_are_linear(organization_id: Any, tokens: list[str]) -> None:
    """Concurrent updates of one memory form one chain, never a fork: one current core block
    per label, one current semantic row per fact key (entity, attribute), and every writer's
    value stored in the chain (a later value of the same fact supersedes the earlier one)."""
    with organization_scope(organization_id):
        core = list(CoreBlock.objects.values("id", "subject_id", "label", "supersedes_id", "value"))
        semantic = list(
            SemanticItem.objects.values("id", "subject_id", "name", "attribute", "supersedes_id", "summary", "details")
        )
    current_core = _current(core, "label")
    assert all(len(rows) == 1 for rows in current_core.values()), current_core
    for row in semantic:
        row["key"] = (row["name"].casefold(), row["attribute"])
    assert all(len(rows) == 1 for rows in _current(semantic, "key").values())
    stated = " ".join(f"{row['summary']} {row['details']}" for row in semantic)
    assert [t for t in tokens if t not in stated] == []


def test_sixteen_threads_writing_one_subject_store_each_write_once_and_index_once() -> None:
    purge_queues()
    tenant = make_tenant()
    tenant.subject("maya")

    # A key each: writers of one key would also queue behind the first request's touch of it.
    keys = [tenant.issue_key(["memories:write"]) for _ in range(WRITERS)]

    def write(n: int) -> tuple[int, dict[str, Any]]:
        response = tenant.client(keys[n]).post(
            "/v1/subjects/maya/memories", {"messages": [message(_text(n), n=n)]}, format="json"
        )
        return response.status_code, response.json()

    answers = _in_threads(write, list(range(WRITERS)))
    assert Counter(status for status, _ in answers) == {202: WRITERS}, answers
    accepted = [body for _, body in answers]
    stored_as_answered(accepted, tenant.id)
    complete_writes(tenant.id)  # what the worker does after the 202s
    with organization_scope(tenant.id):
        summaries = " ".join(EpisodicEvent.objects.values_list("details", flat=True))
    assert all(summaries.count(f"token{n:02d}") >= 1 for n in range(WRITERS))
    _chains_are_linear(tenant.id, [f"token{n:02d}" for n in range(WRITERS)])

    _index_all(tenant.id, [body["chunk_id"] for body in accepted])
    _assert_graph_once(tenant.id)
    tom = next(a for a in graph_snapshot(tenant.id).anchors if a["key"] == "tom")
    with organization_scope(tenant.id):  # the rows the graph indexed that mention him, of either store
        episodes = EpisodicEvent.objects.filter(details__contains="Tom").count()
        mentioning = episodes + SemanticItem.objects.filter(details__contains="Tom").count()
    assert episodes >= WRITERS and tom["mention_count"] == mentioning  # every row counted once
    purge_queues()


@pytest.mark.slow
def test_sixteen_client_processes_against_a_real_server_across_subjects_and_organizations() -> None:
    """Half the processes write one shared subject, the rest a subject each, over three
    organizations; the server is gunicorn with two worker processes of eight threads."""
    purge_queues()
    tenants = [make_tenant() for _ in range(3)]
    plans: list[tuple[int, list[tuple[str, dict[str, Any]]]]] = []
    tokens: dict[int, list[str]] = {i: [] for i in range(len(tenants))}
    tenants[0].subject("shared")
    for p in range(WRITERS):
        shared = p < WRITERS // 2
        tenant_index = 0 if shared else p % 3
        external_id = "shared" if shared else f"own-{p}"
        if not shared:
            tenants[tenant_index].subject(external_id)
        writes = [
            (f"/v1/subjects/{external_id}/memories", {"messages": [message(_text(100 * p + w), n=w)]})
            for w in range(WRITES_PER_PROCESS)
        ]
        plans.append((tenant_index, writes))
        tokens[tenant_index] += [f"token{100 * p + w:02d}" for w in range(WRITES_PER_PROCESS)]
    with api_server(name="concurrency") as server:
        with multiprocessing.get_context("spawn").Pool(WRITERS) as pool:
            results = pool.starmap(
                post_all, [(server.url, tenants[tenant_index].key, writes) for tenant_index, writes in plans]
            )
    accepted: dict[int, list[dict[str, Any]]] = {i: [] for i in range(len(tenants))}
    for (tenant_index, _), answers in zip(plans, results, strict=True):
        for status, body in answers:
            assert status == 202, body
            accepted[tenant_index].append(body)
    assert sum(map(len, accepted.values())) == WRITES_PER_PROCESS * WRITERS
    for tenant_index, tenant in enumerate(tenants):
        stored_as_answered(accepted[tenant_index], tenant.id)
        complete_writes(tenant.id)
        _chains_are_linear(tenant.id, tokens[tenant_index])
        _index_all(tenant.id, [body["chunk_id"] for body in accepted[tenant_index]])
        _assert_graph_once(tenant.id)
    purge_queues()


def test_requests_of_one_key_never_queue_behind_another_requests_transaction() -> None:
    """The once-a-minute ``last_used_at`` touch skips a key row another request holds; before,
    every request of the key waited for the first request's whole transaction."""
    tenant = make_tenant()
    tenant.subject("maya")
    with organization_scope(tenant.id):
        key_id = ApiKey.objects.get().id
    touched, release = threading.Event(), threading.Event()

    def long_request() -> None:
        try:
            with organization_scope(tenant.id):
                api_key_touch(api_key_id=key_id)
                touched.set()
                release.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=long_request)
    holder.start()
    try:
        assert touched.wait(10)
        _touched_at.clear()  # as a request in another process: its touch reaches the held row
        started = time.monotonic()
        assert tenant.client().get("/v1/subjects/maya").status_code == 200
        assert time.monotonic() - started < 5
    finally:
        release.set()
        holder.join()


def test_a_write_is_accepted_while_another_transaction_holds_the_subjects_write_lock() -> None:
    """The request takes no subject lock (ADR 0054): a write is answered while another
    transaction holds the subject's write lock (a PATCH, a worker completing earlier writes),
    and its completion waits its turn behind that lock."""
    tenant = make_tenant()
    subject = tenant.subject("maya")
    locked, release = threading.Event(), threading.Event()

    def other_transaction() -> None:
        try:
            with organization_scope(tenant.id):
                subject_write_lock(subject_id=subject.id)
                locked.set()
                release.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=other_transaction)
    holder.start()
    try:
        assert locked.wait(10)
        started = time.monotonic()
        response = tenant.client().post(
            "/v1/subjects/maya/memories", {"messages": [message(_text(1), n=1)]}, format="json"
        )
        assert response.status_code == 202, response.content
        assert time.monotonic() - started < 5
    finally:
        release.set()
        holder.join()
    stored_as_answered([response.json()], tenant.id)
    assert complete_writes(tenant.id) == 1


POSTGRES_LOG = ROOT / "var" / "postgres" / "log"


def _postgres_log_since(offset: int) -> str:
    """The embedded server's log lines written after ``offset`` bytes (this test's lines: the
    suite runs its tests one at a time against this cluster)."""
    with POSTGRES_LOG.open("rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


def _index_jobs_done(organization_id: Any) -> bool:
    with organization_scope(organization_id):
        statuses = set(Job.objects.filter(kind="memory.write").values_list("status", flat=True))
    return statuses == {Job.Status.SUCCEEDED}


@pytest.mark.slow
def test_sixteen_writers_with_the_indexer_running_never_deadlock() -> None:
    """Writers supersede the subject's semantic row while a real indexing worker holds the
    rows of the chunks just written. Before one lock order, a writer holding the
    organization's audit lock waited at commit (deferred foreign key check) for a row the
    indexer held, while the indexer waited for the audit lock: ``deadlock detected`` and a
    503. Now both take their locks in the order of ``apps.memory.locks``."""
    purge_queues()
    tenant = make_tenant()
    tenant.subject("maya")
    keys = [tenant.issue_key(["memories:write"]) for _ in range(WRITERS)]

    def write(n: int) -> list[tuple[int, dict[str, Any]]]:
        answers = []
        for w in range(WRITES_PER_PROCESS):
            token = 100 * n + w
            response = tenant.client(keys[n]).post(
                "/v1/subjects/maya/memories", {"messages": [message(_text(token), n=token)]}, format="json"
            )
            answers.append((response.status_code, response.json()))
        return answers

    with celery_worker(queues=["indexing"], name="deadlock-indexer"):
        # A first write warms the worker (its language models load on the first job), so
        # that the indexer keeps pace with the writers, a chunk behind.
        first = tenant.client().post(
            "/v1/subjects/maya/memories", {"messages": [message(_text(99), n=99)]}, format="json"
        )
        assert first.status_code == 202
        wait_for(lambda: _index_jobs_done(tenant.id), timeout=300, interval=0.5)
        log_offset = POSTGRES_LOG.stat().st_size
        answers = [answer for answers in _in_threads(write, list(range(WRITERS))) for answer in answers]
        wait_for(lambda: _index_jobs_done(tenant.id), timeout=300, interval=1)
    postgres_log = _postgres_log_since(log_offset)
    assert "deadlock detected" not in postgres_log, postgres_log
    assert Counter(status for status, _ in answers) == {202: WRITERS * WRITES_PER_PROCESS}, answers
    # The worker completed every write: each one's rows are those its waited answer lists.
    completed = [written_answer(tenant.id, body) for body in [first.json(), *(body for _, body in answers)]]
    stored_as_answered(completed, tenant.id)
    tokens = [f"token{100 * n + w:02d}" for n in range(WRITERS) for w in range(WRITES_PER_PROCESS)]
    _chains_are_linear(tenant.id, ["token99", *tokens])
    _assert_graph_once(tenant.id)
    purge_queues()
