"""The graph picture's layout: a pure function of anchors, frames and citations."""

from __future__ import annotations

import pytest

from apps.graph.picture import COLUMN_X, FrameInput, graph_picture, short

pytestmark = pytest.mark.unit


def _frame(frame_id: str, anchors: list[str], rows: list[str], predicate: str = "met") -> FrameInput:
    return FrameInput(frame_id=frame_id, predicate=predicate, arms=[("agent", a) for a in anchors], citations=rows)


def _by_ref(picture, kind):  # type: ignore[no-untyped-def]
    return {n.ref: n for n in picture.nodes if n.kind == kind}


def test_every_anchor_frame_and_cited_row_is_a_node_joined_by_its_edges() -> None:
    picture = graph_picture(
        anchors=[("person:ana", "Ana"), ("place:park", "Golden Gate Park"), ("person:bo", "Bo")],
        frames=[_frame("f1", ["person:ana", "place:park"], ["r1"]), _frame("f2", ["person:bo"], ["r1", "r2"])],
        row_labels={"r1": "Ana ran the race", "r2": "Bo cheered"},
    )
    anchors, frames, rows = (_by_ref(picture, kind) for kind in ("anchor", "frame", "row"))
    assert set(anchors) == {"person:ana", "place:park", "person:bo"}
    assert set(frames) == {"f1", "f2"} and set(rows) == {"r1", "r2"}
    assert anchors["place:park"].label == "Golden Gate Park" and rows["r2"].label == "Bo cheered"
    assert {n.x for n in anchors.values()} == {COLUMN_X[0]} and {n.x for n in rows.values()} == {COLUMN_X[2]}
    arms = {(e.source, e.target) for e in picture.edges if e.kind == "arm"}
    cites = {(e.source, e.target) for e in picture.edges if e.kind == "cites"}
    assert arms == {("f1", "person:ana"), ("f1", "place:park"), ("f2", "person:bo")}
    assert cites == {("f1", "r1"), ("f2", "r1"), ("f2", "r2")}
    for edge in picture.edges:  # each edge runs between the two nodes it names
        source = frames[edge.source]
        target = (anchors if edge.kind == "arm" else rows)[edge.target]
        assert (edge.x1, edge.y1, edge.x2, edge.y2) == (source.x, source.y, target.x, target.y)
    assert not picture.truncated
    assert picture.height >= max(n.y for n in picture.nodes)


def test_frames_sit_beside_their_anchors() -> None:
    anchors = [(f"a{i}", f"A{i}") for i in range(4)]
    # Given in reverse: each frame is placed at its anchor's height, so no lines cross.
    frames = [_frame(f"f{i}", [f"a{i}"], [f"r{i}"]) for i in reversed(range(4))]
    picture = graph_picture(anchors=anchors, frames=frames, row_labels={})
    anchor_y = {n.ref: n.y for n in picture.nodes if n.kind == "anchor"}
    frame_y = {n.ref: n.y for n in picture.nodes if n.kind == "frame"}
    row_y = {n.ref: n.y for n in picture.nodes if n.kind == "row"}
    assert [frame_y[f"f{i}"] for i in range(4)] == [anchor_y[f"a{i}"] for i in range(4)]
    assert [row_y[f"r{i}"] for i in range(4)] == [anchor_y[f"a{i}"] for i in range(4)]
    # A row no longer stored is drawn by its id.
    assert {n.label for n in picture.nodes if n.kind == "row"} == {"r0", "r1", "r2", "r3"}


def test_a_large_graph_is_bounded_and_says_what_it_left_out() -> None:
    frames = [_frame(f"f{i}", [f"a{i}", f"a{i + 1}"], [f"r{i}", f"s{i}"]) for i in range(30)]
    picture = graph_picture(anchors=[], frames=frames, row_labels={}, limit=10)
    counts = {kind: len(_by_ref(picture, kind)) for kind in ("anchor", "frame", "row")}
    assert counts == {"anchor": 10, "frame": 10, "row": 10}
    assert picture.truncated
    # Ten frames reach anchors a0..a10 (11) and cite 20 rows: one anchor and ten rows left out.
    assert picture.omitted == {"anchor": 1, "frame": 20, "row": 10}
    drawn = {n.ref for n in picture.nodes}
    assert all(e.source in drawn and e.target in drawn for e in picture.edges)


def test_labels_are_shortened() -> None:
    assert short("x" * 40) == "x" * 27 + "…" and short("short") == "short"
    picture = graph_picture(anchors=[("k", "n" * 50)], frames=[], row_labels={})
    [node] = picture.nodes
    assert len(node.label) == 28 and picture.edges == []
