"""The adjacency index beside the graph: maintained by the store's writes, merged, rebuilt."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction

from apps.graph import adjacency, store
from apps.graph.models import AnchorFrame, AnchorRow, AnchorVector
from apps.graph.services import adjacency_rebuild_missing, graph_reembed_step, index_chunk
from apps.memory.models import EpisodicEvent, SemanticItem
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from tests.factories import Tenant, complete_writes, make_tenant
from tests.memory.conversation import SESSIONS


def _frames(subject: Subject) -> set[tuple[str, str, str, tuple[str, ...], str]]:
    return {
        (f.anchor_key, f.frame_id, f.predicate, tuple(f.roles), f.event_time)
        for f in AnchorFrame.objects.filter(subject=subject)
    }


def _citations(subject: Subject) -> dict[tuple[str, str], list[str] | None]:
    """The citations each (anchor, frame) row of the index records (``None``: not recorded)."""
    return {
        (f.anchor_key, f.frame_id): None if f.citations is None else sorted(str(c) for c in f.citations)
        for f in AnchorFrame.objects.filter(subject=subject)
    }


def _rows(subject: Subject) -> set[tuple[str, str, str]]:
    return {(r.anchor_key, r.memory_type, str(r.row_id)) for r in AnchorRow.objects.filter(subject=subject)}


def _anchor(subject: Subject, key: str, ids: list[str]) -> dict[str, Any]:
    return {
        "subject_id": str(subject.id),
        "key": key,
        "name": key.title(),
        "type": "person",
        "aliases": [],
        "mention_count": len(ids),
        "admission_score": 1.0,
        "episodic_ids": ids,
        "semantic_ids": [],
    }


def _frame(subject: Subject, frame_id: str, arms: list[list[str]], predicate: str = "meet") -> dict[str, Any]:
    return {
        "frame_id": frame_id,
        "subject_id": str(subject.id),
        "kind": "episodic",
        "predicate": predicate,
        "arms": arms,
        "literals": {},
        "event_time": "2024-05-01",
        "event_time_precision": "day",
        "mention_time": "2024-05-02T10:00:00+00:00",
        "status": "done",
        "citations": [str(uuid.uuid4())],
    }


def _write_graph(subject: Subject, anchors: list[dict[str, Any]], frames: list[dict[str, Any]]) -> None:
    with organization_scope(subject.organization_id), transaction.atomic():
        store.anchors_write(organization_id=subject.organization_id, created=anchors, updated=[])
        store.frames_write(organization_id=subject.organization_id, subject_id=subject.id, created=frames, updated=[])


def _indexed(tenant: Tenant) -> Subject:
    subject = tenant.subject("maya")
    client = tenant.client()
    for session in SESSIONS:
        response = client.post("/v1/subjects/maya/memories", {"messages": session}, format="json")
        assert response.status_code == 202, response.content
        complete_writes(tenant.id)
        with organization_scope(tenant.id):
            index_chunk(chunk_id=response.json()["chunk_id"])
    return subject


def test_indexing_fills_the_index_and_a_rebuild_reproduces_it() -> None:
    tenant = make_tenant()
    subject = _indexed(tenant)
    with organization_scope(tenant.id):
        frames, rows = _frames(subject), _rows(subject)
        graph_frames = store.frame_page(organization_id=tenant.id, subject_id=subject.id, after="")
        anchors = store.anchor_page(organization_id=tenant.id, subject_id=subject.id, after="")
    assert frames and rows
    # Every arm of every frame is one index row (an anchor in two roles: one row, both roles).
    expected = {(key, f["frame_id"]) for f in graph_frames for _, key in f["arms"]}
    assert {(k, f) for k, f, _, _, _ in frames} == expected
    # Each of them records what the frame cites.
    cited = {(key, f["frame_id"]): sorted(f["citations"]) for f in graph_frames for _, key in f["arms"]}
    with organization_scope(tenant.id):
        citations = _citations(subject)
    assert citations == cited and any(citations.values())
    # Every mention the anchors count is indexed; an anchor keeps at most its newest few.
    counted = {a["key"]: int(a["mention_count"]) for a in anchors}
    assert {k: sum(1 for r in rows if r[0] == k) for k in counted} == counted
    assert all(len(a["episodic_ids"]) <= adjacency.ANCHOR_ROWS_KEPT for a in anchors)

    with organization_scope(tenant.id), transaction.atomic():
        AnchorFrame.objects.filter(subject=subject).delete()
        AnchorRow.objects.filter(subject=subject).delete()
        assert _frames(subject) == set() and _rows(subject) == set()
        counts = store.adjacency_rebuild(organization_id=tenant.id, subject_id=subject.id)
        assert _frames(subject) == frames and _rows(subject) == rows and _citations(subject) == citations
        assert counts == {"anchor_frames": len(frames), "anchor_rows": len(rows)}


def test_an_anchor_vertex_keeps_its_newest_rows_and_the_index_keeps_all() -> None:
    tenant = make_tenant()
    subject = tenant.subject()
    ids = [str(uuid.uuid4()) for _ in range(adjacency.ANCHOR_ROWS_KEPT + 10)]
    _write_graph(subject, [_anchor(subject, "hub", ids)], [])
    with organization_scope(tenant.id):
        vertex = store.anchors_by_key(organization_id=tenant.id, subject_id=subject.id, keys=["hub"])["hub"]
        newest = AnchorRow.objects.filter(subject=subject, anchor_key="hub").order_by("-id")[:5]
        newest_ids = [str(row.row_id) for row in newest]  # arrival order: what the retrieval scans read
        assert len(_rows(subject)) == len(ids)
    assert vertex["episodic_ids"] == ids[-adjacency.ANCHOR_ROWS_KEPT :] and vertex["mention_count"] == len(ids)
    assert newest_ids == list(reversed(ids[-5:]))


def test_merge_anchor_unites_rows_and_frames_and_renames_frames() -> None:
    tenant = make_tenant()
    subject = tenant.subject()
    shared, only_source, only_target = (str(uuid.uuid4()) for _ in range(3))
    anchors = [
        _anchor(subject, "tom", [shared, only_source]),
        _anchor(subject, "thomas", [shared, only_target]),
        _anchor(subject, "park", []),
    ]
    frames = [
        _frame(subject, "f-both", [["agent", "tom"], ["patient", "thomas"]]),
        _frame(subject, "f-source", [["agent", "tom"], ["location", "park"]]),
        _frame(subject, "f-target", [["agent", "thomas"], ["location", "park"]]),
    ]
    _write_graph(subject, anchors, frames)
    with organization_scope(tenant.id), transaction.atomic():
        adjacency.merge_anchor(
            organization_id=tenant.id,
            subject_id=subject.id,
            source_key="tom",
            target_key="thomas",
            frame_renames={"f-source": "f-target"},  # after the merge both frames are one
        )
        rows, frames_after = _rows(subject), _frames(subject)
    assert rows == {
        ("thomas", "episodic", shared),
        ("thomas", "episodic", only_source),
        ("thomas", "episodic", only_target),
    }
    assert {(k, f, roles) for k, f, _, roles, _ in frames_after} == {
        ("thomas", "f-both", ("agent", "patient")),
        ("thomas", "f-target", ("agent",)),
        ("park", "f-target", ("location",)),
    }


def test_merge_anchor_renames_a_frame_to_a_new_id() -> None:
    tenant = make_tenant()
    subject = tenant.subject()
    _write_graph(
        subject,
        [_anchor(subject, "a", []), _anchor(subject, "b", []), _anchor(subject, "c", [])],
        [_frame(subject, "f1", [["agent", "a"], ["patient", "c"]])],
    )
    with organization_scope(tenant.id), transaction.atomic():
        adjacency.merge_anchor(
            organization_id=tenant.id, subject_id=subject.id, source_key="a", target_key="b", frame_renames={"f1": "f9"}
        )
        assert {(k, f) for k, f, _, _, _ in _frames(subject)} == {("b", "f9"), ("c", "f9")}


def test_bounded_reads_cap_a_hub_and_order_by_frame_id() -> None:
    tenant = make_tenant()
    subject = tenant.subject()
    others = [f"p{i}" for i in range(300)]
    frames = [
        _frame(subject, f"f{i:04d}", [["agent", "hub"], ["patient", key]], predicate="meet" if i % 3 else "visit")
        for i, key in enumerate(others)
    ]
    _write_graph(subject, [_anchor(subject, k, []) for k in ["hub", *others]], frames)
    with organization_scope(tenant.id):
        incident = adjacency.incident_frame_ids(
            organization_id=tenant.id, subject_id=subject.id, keys=["hub", "p1"], per_anchor=16
        )
        visits = adjacency.relation_frame_ids(
            organization_id=tenant.id, subject_id=subject.id, keys=["hub"], predicates=["visit"], cap=40
        )
    assert incident == [f"f{i:04d}" for i in range(16)]  # p1's only frame is among them
    expected = [f"f{i:04d}" for i in range(300) if i % 3 == 0][:40]
    assert visits == expected


def test_frames_by_arm_touch_the_named_anchor_and_an_arm_anchor_and_stay_bounded() -> None:
    tenant = make_tenant()
    subject = tenant.subject()
    frames = [
        _frame(subject, f"k{i:03d}", [["agent", "hub" if i % 2 else "other"], ["companion", "kid"]], predicate="swim")
        for i in range(120)
    ] + [_frame(subject, "d000", [["agent", "hub"], ["theme", "dog"]], predicate="walk")]
    frames.append(_frame(subject, "x000", [["agent", "hub"], ["theme", "lake"]], predicate="swim"))
    _write_graph(subject, [_anchor(subject, k, []) for k in ["hub", "other", "kid", "dog", "lake"]], frames)
    with organization_scope(tenant.id):
        found = adjacency.arm_frame_ids(
            organization_id=tenant.id, subject_id=subject.id, keys=["hub"], arm_keys=["kid", "dog", "cat"], cap=20
        )
        itself = adjacency.arm_frame_ids(
            organization_id=tenant.id, subject_id=subject.id, keys=["kid"], arm_keys=["kid"], cap=20
        )
    # the hub's frames among the first 20 of the kid and of the dog, by frame id: "other"'s
    # frames, the lake and the kid's later frames are out
    assert found == ["d000", *[f"k{i:03d}" for i in range(1, 20, 2)]]
    assert itself == []  # an anchor is not its own arm
    with organization_scope(make_tenant().id):
        assert (
            adjacency.arm_frame_ids(
                organization_id=tenant.id, subject_id=subject.id, keys=["hub"], arm_keys=["kid"], cap=20
            )
            == []
        )


def test_the_sweep_rebuilds_a_subject_whose_index_is_missing() -> None:
    tenant = make_tenant()
    subject = _indexed(tenant)
    with organization_scope(tenant.id):
        frames, rows = _frames(subject), _rows(subject)
        with transaction.atomic():
            AnchorFrame.objects.filter(subject=subject).delete()
            AnchorRow.objects.filter(subject=subject).delete()
        assert adjacency_rebuild_missing() == [subject.id]
        assert _frames(subject) == frames and _rows(subject) == rows
        assert adjacency_rebuild_missing() == []  # nothing left to rebuild


def test_citation_updates_reach_the_index_and_unrecorded_citations_are_rebuilt() -> None:
    tenant = make_tenant()
    subject = tenant.subject()
    frame = _frame(subject, "f1", [["agent", "ana"], ["theme", "lamp"]])
    _write_graph(subject, [_anchor(subject, "ana", []), _anchor(subject, "lamp", [])], [frame])
    later = str(uuid.uuid4())
    cited = sorted([*frame["citations"], later])
    with organization_scope(tenant.id), transaction.atomic():
        store.frames_write(
            organization_id=tenant.id,
            subject_id=subject.id,
            created=[],
            updated=[{**frame, "citations": [*frame["citations"], later]}],
        )
        assert _citations(subject) == {("ana", "f1"): cited, ("lamp", "f1"): cited}
        assert adjacency_rebuild_missing() == []  # recorded: nothing to rebuild
        # A frame indexed before citations were recorded: the sweep records them from the graph.
        AnchorFrame.objects.filter(subject=subject).update(citations=None)
        AnchorVector.objects.create(
            organization_id=tenant.id,
            subject=subject,
            anchor_key="ana",
            name="Ana",
            anchor_type="person",
            embedding=[0.1] * 384,
            embedding_model="test",
        )
        assert adjacency_rebuild_missing() == [subject.id]
        assert _citations(subject) == {("ana", "f1"): cited, ("lamp", "f1"): cited}
        assert adjacency_rebuild_missing() == []


def test_merging_frames_unites_their_citations() -> None:
    tenant = make_tenant()
    subject = tenant.subject()
    source = _frame(subject, "f-source", [["agent", "tom"], ["location", "park"]])
    target = _frame(subject, "f-target", [["agent", "thomas"], ["location", "park"]])
    _write_graph(subject, [_anchor(subject, k, []) for k in ("tom", "thomas", "park")], [source, target])
    with organization_scope(tenant.id), transaction.atomic():
        adjacency.merge_anchor(
            organization_id=tenant.id,
            subject_id=subject.id,
            source_key="tom",
            target_key="thomas",
            frame_renames={"f-source": "f-target"},
        )
        both = sorted([*source["citations"], *target["citations"]])
        assert _citations(subject) == {("thomas", "f-target"): both, ("park", "f-target"): both}


def _copies(subject: Subject) -> dict[str, tuple[str, list[float]]]:
    return {
        str(r.row_id): (r.embedding_model, [float(x) for x in r.embedding])
        for r in AnchorRow.objects.filter(subject=subject)
        if r.embedding is not None
    }


def test_mentions_carry_their_rows_vectors_and_follow_a_re_embedding() -> None:
    tenant = make_tenant()
    subject = _indexed(tenant)
    with organization_scope(tenant.id):
        vectors = {
            str(row.id): (row.embedding_model, [float(x) for x in row.embedding])
            for model in (EpisodicEvent, SemanticItem)
            for row in model.objects.filter(subject=subject)
        }
        copies = _copies(subject)
        assert set(copies) == {str(r.row_id) for r in AnchorRow.objects.filter(subject=subject)}
        words = {
            str(row.id): row.search_vector
            for model in (EpisodicEvent, SemanticItem)
            for row in model.objects.filter(subject=subject)
        }
        mentions = list(AnchorRow.objects.filter(subject=subject))
        assert all(m.search_vector and m.search_vector == words[str(m.row_id)] for m in mentions)  # ADR 0115
    for row_id, (model, vector) in copies.items():  # half precision: three significant digits
        assert model == vectors[row_id][0]
        assert max(abs(a - b) for a, b in zip(vector, vectors[row_id][1], strict=True)) < 1e-3

    class Renamed:  # the same vectors under another model name, scaled so a copy must change
        model_name = "renamed-model"

        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[0.5] * len(next(iter(vectors.values()))[1]) for _ in texts]

    with organization_scope(tenant.id), transaction.atomic():
        while graph_reembed_step(embedder=Renamed()):  # type: ignore[arg-type]
            pass
        after = _copies(subject)
    assert set(after) == set(copies)
    assert {model for model, _ in after.values()} == {"renamed-model"}
    assert all(vector == [0.5] * len(vector) for _, vector in after.values())
