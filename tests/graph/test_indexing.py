"""Graph indexing against the real AGE graph: invariants 1, 2 and 4, idempotency, concurrency."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from typing import Any

import pytest
from django.db import connection, connections

from apps.graph import adapter
from apps.graph.models import AnchorVector
from apps.graph.services import index_chunk, index_sweep_chunks
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, complete_writes, make_tenant
from tests.memory.conversation import SESSIONS

ALL_ANCHORS = "MATCH (a:Anchor) RETURN properties(a)"
ALL_FRAMES = "MATCH (f:Frame) RETURN properties(f)"
ALL_ARMS = "MATCH (f:Frame)-[r:ARM]->(a:Anchor) RETURN f.frame_id, r.role, a.key"


def _graph(tenant: Tenant) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[Any, ...]]]:
    with organization_scope(tenant.id):
        anchors = [r[0] for r in adapter.cypher(organization_id=tenant.id, query=ALL_ANCHORS, params={}, returns=["a"])]
        frames = [r[0] for r in adapter.cypher(organization_id=tenant.id, query=ALL_FRAMES, params={}, returns=["f"])]
        arms = adapter.cypher(organization_id=tenant.id, query=ALL_ARMS, params={}, returns=["f", "r", "k"])
    return anchors, frames, arms


def _write(tenant: Tenant, messages: list[dict[str, str]], external_id: str = "maya") -> str:
    response = tenant.client().post(f"/v1/subjects/{external_id}/memories", {"messages": messages}, format="json")
    assert response.status_code == 202, response.content
    complete_writes(tenant.id)  # what the worker does before it indexes (ADR 0054)
    return str(response.json()["chunk_id"])


def _index(tenant: Tenant, chunk_id: str) -> dict[str, Any]:
    with organization_scope(tenant.id):
        return index_chunk(chunk_id=chunk_id)  # type: ignore[arg-type]


def test_every_frame_cites_existing_rows_and_every_arm_reaches_an_anchor() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    for session in SESSIONS:
        _index(tenant, _write(tenant, session))
    anchors, frames, arms = _graph(tenant)
    assert anchors and frames
    with organization_scope(tenant.id):
        episodic = {str(i) for i in EpisodicEvent.objects.values_list("id", flat=True)}
        semantic = {str(i) for i in SemanticItem.objects.values_list("id", flat=True)}
        assert set(EpisodicEvent.objects.values_list("index_status", flat=True)) == {"indexed"}
        vectors = set(AnchorVector.objects.values_list("anchor_key", flat=True))
    for frame in frames:  # invariant 1
        rows = episodic if frame["kind"] == "episodic" else semantic
        assert frame["citations"] and set(frame["citations"]) <= rows
        assert len({key for _, key in frame["arms"]}) >= 2
    keys = {a["key"] for a in anchors}
    assert {key for _, _, key in arms} <= keys
    assert vectors == keys  # every anchor has its name embedding beside the graph
    assert len(keys) == len(anchors)  # one anchor per key
    for anchor in anchors:
        assert set(anchor["episodic_ids"]) <= episodic and set(anchor["semantic_ids"]) <= semantic
    # No vault value or placeholder became part of the graph.
    assert not any("vault" in a["key"] or "credential" in a["key"] for a in anchors)
    # The fly frame keeps its literal and planned status; the purchase keeps count and price.
    fly = next(f for f in frames if f["predicate"] == "fly")
    assert fly["status"] == "planned" and fly["event_time"].startswith("2023-07")
    buy = next(f for f in frames if f["predicate"] == "buy")
    assert buy["literals"].get("price") == "$240"


RUN_1 = [
    {
        "id": "r1",
        "role": "user",
        "name": "Maya",
        "timestamp": "2023-05-08T10:00:00Z",
        "content": "I went for a run with Tom around Lake Merritt.",
    }
]
RUN_2 = [
    {
        "id": "r2",
        "role": "user",
        "name": "Maya",
        "timestamp": "2023-06-08T10:00:00Z",
        "content": "I went for a run with Tom around Lake Merritt.",
    }
]
DATED_1 = [
    {
        "id": "d1",
        "role": "user",
        "name": "Maya",
        "timestamp": "2023-05-08T10:00:00Z",
        "content": "On 6 May 2023 I went for a run with Tom around Lake Merritt.",
    }
]
DATED_2 = [
    {
        "id": "d2",
        "role": "user",
        "name": "Maya",
        "timestamp": "2023-05-20T10:00:00Z",
        "content": "On 6 May 2023 I went for a run with Tom around Lake Merritt.",
    }
]


def _run_frames(tenant: Tenant) -> list[dict[str, Any]]:
    return [f for f in _graph(tenant)[1] if f["kind"] == "episodic" and f["predicate"] in {"go", "run"}]


def test_undated_occurrences_stay_apart_and_a_dated_repeat_shares_its_frame() -> None:
    undated = make_tenant()
    undated.subject("maya")
    for messages in (RUN_1, RUN_2):
        _index(undated, _write(undated, messages))
    frames = _run_frames(undated)
    assert len(frames) >= 2 and len({f["frame_id"] for f in frames}) == len(frames)  # invariant 2
    assert all(len(f["citations"]) == 1 for f in frames)

    dated = make_tenant()
    dated.subject("maya")
    for messages in (DATED_1, DATED_2):
        _index(dated, _write(dated, messages))
    frames = _run_frames(dated)
    assert frames and all(len(f["citations"]) == 2 for f in frames)


def test_reindexing_changes_nothing() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    chunk = _write(tenant, SESSIONS[1])
    _index(tenant, chunk)
    before = _graph(tenant)
    with organization_scope(tenant.id):
        EpisodicEvent.objects.update(index_status="pending")  # as if the job ran twice
    _index(tenant, chunk)
    after = _graph(tenant)
    assert sorted(map(str, before[0])) == sorted(map(str, after[0]))
    assert sorted(map(str, before[1])) == sorted(map(str, after[1]))
    assert sorted(before[2]) == sorted(after[2])


def test_graph_unavailable_marks_rows_and_the_sweep_indexes_them_later() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    chunk = _write(tenant, SESSIONS[1])
    graph = tenant.graph()  # an organization that wrote before: its graph exists
    with organization_scope(tenant.id):
        evidence = list(EpisodicEvent.objects.values_list("id", "summary", "details"))
    with connections["owner"].cursor() as cursor:
        cursor.execute(f'ALTER SCHEMA "{graph}" RENAME TO "{graph}_away"')
    try:
        result = _index(tenant, chunk)
    finally:
        with connections["owner"].cursor() as cursor:
            cursor.execute(f'ALTER SCHEMA "{graph}_away" RENAME TO "{graph}"')
    assert result["failed"] == len(evidence)
    with organization_scope(tenant.id):  # invariant 4: the evidence is intact, and marked
        assert list(EpisodicEvent.objects.values_list("id", "summary", "details")) == evidence
        marked = set(EpisodicEvent.objects.values_list("index_status", "index_error", "index_attempts"))
        assert all(status == "failed" and error and attempts == 1 for status, error, attempts in marked)
        assert [str(c) for c in index_sweep_chunks()] == [chunk]
    _index(tenant, chunk)
    with organization_scope(tenant.id):
        assert set(EpisodicEvent.objects.values_list("index_status", flat=True)) == {"indexed"}
        assert index_sweep_chunks() == []
    assert _graph(tenant)[1]


OVERLAPPING = [
    f"I met Tom and Leo at the Oakland climbing gym on day {n}, and we climbed with Priya." for n in range(16)
]


@pytest.mark.slow
def test_sixteen_concurrent_indexers_make_one_anchor_per_key_and_one_frame_per_identity() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    chunks = [
        _write(
            tenant,
            [{"id": f"c{n}", "role": "user", "name": "Maya", "timestamp": "2023-05-08T10:00:00Z", "content": text}],
        )
        for n, text in enumerate(OVERLAPPING)
    ]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(chunks))

    def work(chunk_id: str) -> None:
        try:
            barrier.wait()
            _index(tenant, chunk_id)
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(c,)) for c in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    anchors, frames, arms = _graph(tenant)
    keys = Counter(a["key"] for a in anchors)
    assert keys and max(keys.values()) == 1
    assert Counter(f["frame_id"] for f in frames).most_common(1)[0][1] == 1
    with organization_scope(tenant.id):
        rows = {str(i) for i in EpisodicEvent.objects.values_list("id", flat=True)}
        assert set(EpisodicEvent.objects.values_list("index_status", flat=True)) == {"indexed"}
    tom = next(a for a in anchors if a["key"] == "tom")
    assert set(tom["episodic_ids"]) == rows and tom["mention_count"] == len(rows)
    cited = {c for f in frames for c in f["citations"]}
    assert cited == rows
    arm_counts = Counter(frame_id for frame_id, _, _ in arms)
    assert all(arm_counts[f["frame_id"]] == len(f["arms"]) for f in frames)


def test_inspection_api_pages_anchors_and_frames_and_resolves_citations() -> None:
    tenant = make_tenant()
    tenant.subject("maya")
    for session in SESSIONS:
        _index(tenant, _write(tenant, session))
    client = tenant.client()
    keys, url = [], "/v1/subjects/maya/graph/anchors?limit=3"
    while url:
        page = client.get(url).json()
        keys += [a["key"] for a in page["results"]]
        url = page["next_cursor"] and f"/v1/subjects/maya/graph/anchors?limit=3&cursor={page['next_cursor']}"
    assert keys == sorted(keys) and len(keys) == len(set(keys)) == len(_graph(tenant)[0])
    of_maya = client.get("/v1/subjects/maya/graph/frames?anchor=maya&limit=200").json()["results"]
    assert of_maya and all(any(arm["anchor"] == "maya" for arm in f["arms"]) for f in of_maya)
    detail = client.get(f"/v1/subjects/maya/graph/frames/{of_maya[0]['frame_id']}").json()
    assert [r["id"] for r in detail["cited_rows"]] == detail["frame"]["citations"]
    assert client.get("/v1/subjects/maya/graph/frames/not-a-frame").status_code == 404


def test_an_episode_is_read_once_when_its_details_repeat_its_summary() -> None:
    from apps.graph.indexing import _episode_text

    details = "I adopted a beagle named Pixel. We walk every morning.\nSaid by Maya (message m1)."
    # The local writer's summary: the details' sentences under the actor's label.
    assert _episode_text("Maya: I adopted a beagle named Pixel.", details, "Maya") == details
    # A summary that says something the details do not is kept, before them.
    other = "Maya adopted a dog."
    assert _episode_text(other, details, "Maya") == f"{other}\n{details}"
    assert _episode_text("", details, "Maya") == f"\n{details}"


def test_a_batch_asks_the_anchor_index_once_per_distinct_new_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """Canonicalization looks up the anchors near each new entity name: a name that several
    records of the batch mention is looked up once, and each record gets its answer."""
    from apps.graph import indexing

    asked: list[tuple[int, int]] = []  # (vectors, distinct vectors) of each lookup
    real = indexing._nearest_anchors

    def counted(*, subject: Any, vectors: list[list[float]], model: str) -> list[list[tuple[str, str, float]]]:
        asked.append((len(vectors), len({tuple(vector) for vector in vectors})))
        return real(subject=subject, vectors=vectors, model=model)

    monkeypatch.setattr(indexing, "_nearest_anchors", counted)
    tenant = make_tenant()
    tenant.subject("maya")
    for day in range(1, 4):
        message = {
            "role": "user",
            "name": "Maya",
            "content": f"Priya Raman showed me the kiln at Oakwood Studio on day {day}.",
        }
        response = tenant.client().post("/v1/subjects/maya/memories", {"messages": [message]}, format="json")
        assert response.status_code == 202, response.content
    assert complete_writes(tenant.id, index=True) == 3  # one batch, indexed together
    assert asked and all(vectors == distinct for vectors, distinct in asked), asked  # each new name once
    with organization_scope(tenant.id):
        assert set(EpisodicEvent.objects.values_list("index_status", flat=True)) == {"indexed"}


def _write_to_three_subjects(tenant: Tenant) -> list[uuid.UUID]:
    """One message to each of three subjects, accepted (not completed); their chunk ids."""
    chunk_ids = []
    for name, text in (("maya", "Priya Raman showed me the kiln at Oakwood Studio."),
                       ("tomas", "My brother Luis moved to Porto in March, near the river."),
                       ("ana", "I adopted a grey cat named Miso from the shelter on Elm Street.")):  # fmt: skip
        tenant.subject(name)
        message = {"role": "user", "name": name.title(), "content": text}
        response = tenant.client().post(f"/v1/subjects/{name}/memories", {"messages": [message]}, format="json")
        assert response.status_code == 202, response.content
        chunk_ids.append(uuid.UUID(response.json()["chunk_id"]))
    return chunk_ids


def test_a_batch_with_more_texts_than_the_recent_parses_keep_parses_each_text_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The indexer reads its batch's parses subject by subject after parsing them all ahead:
    the bound of recent parses (here 5: the three messages the writer parsed, then the four
    texts of the facts about them) must not drop one before it is read (``held``)."""
    from apps.graph.services import index_chunks
    from apps.language import pipeline
    from apps.platform.lru import RecentValues

    monkeypatch.setattr(pipeline.PARSES, "_docs", RecentValues(5))
    parsed: list[str] = []
    real = pipeline.spacy_pipeline()

    class Counting:
        def __call__(self, text: str) -> Any:
            parsed.append(text)
            return real(text)

        def pipe(self, texts: Any, **options: Any) -> Any:
            texts = list(texts)
            parsed.extend(texts)
            return real.pipe(texts, **options)

    monkeypatch.setattr(pipeline, "spacy_pipeline", Counting)
    tenant = make_tenant()
    chunk_ids = _write_to_three_subjects(tenant)
    assert complete_writes(tenant.id) == 3  # the writer's parses of the three messages are kept
    parsed.clear()
    with organization_scope(tenant.id):
        stats = index_chunks(chunk_ids=chunk_ids)
    assert stats["rows"] >= 6 and stats["failed"] == 0, stats  # each message's episode and fact
    assert parsed and len(parsed) == len(set(parsed)), parsed


def test_a_batch_of_several_subjects_is_parsed_in_one_pipeline_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """The indexer parses every subject's texts of a batch together (ADR 0084), not subject by
    subject: the extractor then finds each of its texts parsed."""
    from apps.language import pipeline

    parsed: list[int] = []
    real = pipeline.Parses.warm

    def counted(self: pipeline.Parses, texts: Any) -> None:
        texts = list(texts)
        parsed.append(sum(1 for text in dict.fromkeys(texts) if text not in self._docs))
        real(self, texts)

    monkeypatch.setattr(pipeline.Parses, "warm", counted)
    tenant = make_tenant()
    _write_to_three_subjects(tenant)
    assert complete_writes(tenant.id, index=True) == 3
    # The router's one call over the messages; then the indexer's one call over the rows of all
    # three subjects that routing did not parse, and each subject's extraction finds nothing left.
    assert parsed[0] == 3, parsed
    assert len(parsed) == 1 + 1 + 3 and not any(parsed[2:]), parsed
