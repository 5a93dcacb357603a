"""The bounded graph reads of retrieval over a hub anchor with hundreds of frames."""

from __future__ import annotations

import pytest

from apps.retrieval import reads
from apps.retrieval.lexical import lexical_ranks
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant
from tests.graph.test_adjacency import _anchor, _frame, _write_graph
from tests.retrieval.test_fusion import _row


def test_a_hub_with_hundreds_of_frames_keeps_the_caps_and_a_deterministic_order() -> None:
    tenant = make_tenant()
    subject = tenant.subject()
    others = [f"p{i:03d}" for i in range(320)]
    frames = [
        _frame(subject, f"f{(i * 7919) % 1000:04d}", [["agent", "hub"], ["patient", key]], predicate="meet")
        for i, key in enumerate(others)
    ] + [_frame(subject, "e0000", [["agent", "hub"], ["theme", "p000"]], predicate="paint")]
    _write_graph(subject, [_anchor(subject, k, []) for k in ["hub", *others]], frames)
    with organization_scope(tenant.id):
        relation = reads.relation_frames(subject=subject, keys=["hub"], predicates=["meet", "go_to"])
        again = reads.relation_frames(subject=subject, keys=["p005", "hub"], predicates=["go_to", "meet"])
        incident = reads.incident_frames(subject=subject, keys=["hub"])
    meets = sorted(f["frame_id"] for f in frames if f["predicate"] == "meet")
    assert [f["frame_id"] for f in relation] == meets[: reads.RELATION_FRAME_CAP]  # filter, then cap
    assert [f["frame_id"] for f in again] == [f["frame_id"] for f in relation]  # order is the frame id's
    assert all(f["predicate"] == "meet" for f in relation)
    assert [f["frame_id"] for f in incident] == sorted(f["frame_id"] for f in frames)[: reads.FRAMES_PER_ANCHOR]


def test_frames_with_an_arm_on_the_relations_nouns_fill_the_room_under_the_cap() -> None:
    tenant = make_tenant()
    subject = tenant.subject()
    frames = [
        _frame(subject, "a001", [["agent", "priya"], ["companion", "kid"]], predicate="swim"),
        _frame(subject, "a002", [["agent", "priya"], ["theme", "sunset"]], predicate="paint"),
        _frame(subject, "b001", [["agent", "priya"], ["theme", "kid"]], predicate="raise"),
        _frame(subject, "c001", [["agent", "marcus"], ["companion", "kid"]], predicate="swim"),
    ]
    _write_graph(subject, [_anchor(subject, k, []) for k in ["priya", "marcus", "kid", "sunset"]], frames)
    with organization_scope(tenant.id):
        found = reads.relation_frames(
            subject=subject, keys=["priya"], predicates=["raise"], entities=["priya"], arm_keys=["kid", "child"]
        )
        without = reads.relation_frames(subject=subject, keys=["priya"], predicates=["raise"])
    assert [f["frame_id"] for f in found] == ["b001", "a001"]  # the predicate's first, then by arm
    assert [f["frame_id"] for f in without] == ["b001"]


@pytest.mark.unit
def test_candidates_get_their_bm25_rank_among_themselves() -> None:
    rows = [
        _row("a", "Jon opened the studio"),
        _row("b", "Gina sells clothes"),
        _row("c", "Jon's dance studio opened its doors to the studio crowd"),
    ]
    assert lexical_ranks(rows, "When did Jon open his dance studio?") == {"c": 0, "a": 1}
