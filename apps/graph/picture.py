"""A picture of a subject's graph: anchors, the frames that connect them, and the evidence
rows each frame cites, laid out in three columns. Framework-free.

The console draws it as SVG beside its tables so a reviewer sees what cites what. It is
bounded: at most ``limit`` nodes per column, with what was left out counted (a note under
the picture says so), so a subject with thousands of frames still renders in a page.

Columns are ordered to keep lines short: anchors as given (the caller's order), each frame
at the mean position of its anchors, each row at the mean position of the frames citing it
(one barycentre pass per column, the usual first step of a layered layout).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

COLUMN_X = (150, 420, 690)
WIDTH = 900
ROW_HEIGHT = 28
TOP = 40
LABEL_CHARS = 28


@dataclass(frozen=True)
class FrameInput:
    frame_id: str
    predicate: str
    arms: Sequence[tuple[str, str]]  # (role, anchor key)
    citations: Sequence[str]  # evidence row ids


@dataclass(frozen=True)
class Node:
    kind: str  # "anchor", "frame" or "row"
    ref: str  # the anchor key, frame id or row id
    label: str
    x: int
    y: int


@dataclass(frozen=True)
class Edge:
    kind: str  # "arm" (frame to anchor) or "cites" (frame to row)
    source: str  # the frame id
    target: str  # the anchor key or row id
    label: str
    x1: int
    y1: int
    x2: int
    y2: int


@dataclass(frozen=True)
class Picture:
    width: int
    height: int
    nodes: list[Node]
    edges: list[Edge]
    omitted: dict[str, int] = field(default_factory=dict)  # kind → nodes left out

    @property
    def truncated(self) -> bool:
        return any(self.omitted.values())


def short(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _barycentre_order(
    items: Sequence[str], neighbours: Mapping[str, Sequence[str]], rank: Mapping[str, int]
) -> list[str]:
    """``items`` sorted by the mean rank of their placed neighbours (unplaced last, stable)."""

    def key(item: str) -> tuple[float, int]:
        placed = [rank[n] for n in neighbours.get(item, ()) if n in rank]
        return (sum(placed) / len(placed) if placed else float("inf"), items.index(item))

    return sorted(items, key=key)


def graph_picture(
    *,
    anchors: Sequence[tuple[str, str]],
    frames: Sequence[FrameInput],
    row_labels: Mapping[str, str],
    limit: int = 40,
) -> Picture:
    """``anchors`` as (key, name); ``row_labels`` names the cited rows that still exist (an
    erased row is drawn by its id). The frames are taken in order, up to ``limit``; their
    anchors come first in the anchor column, then the other anchors given."""
    kept_frames = list(frames[:limit])
    names = dict(anchors)
    wanted = list(dict.fromkeys(key for f in kept_frames for _, key in f.arms))
    wanted += [key for key, _ in anchors if key not in wanted]
    kept_anchors = wanted[:limit]
    rows = list(dict.fromkeys(row for f in kept_frames for row in f.citations))
    kept_rows = rows[:limit]
    anchor_rank = {key: i for i, key in enumerate(kept_anchors)}

    arms_of = {f.frame_id: [key for _, key in f.arms] for f in kept_frames}
    frame_order = _barycentre_order([f.frame_id for f in kept_frames], arms_of, anchor_rank)
    frame_rank = {frame_id: i for i, frame_id in enumerate(frame_order)}
    citers: dict[str, list[str]] = {}
    for f in kept_frames:
        for row in f.citations:
            citers.setdefault(row, []).append(f.frame_id)
    row_order = _barycentre_order(kept_rows, citers, frame_rank)
    row_rank = {row: i for i, row in enumerate(row_order)}

    def y(rank: int) -> int:
        return TOP + rank * ROW_HEIGHT

    by_id = {f.frame_id: f for f in kept_frames}
    nodes = [Node("anchor", key, short(names.get(key, key)), COLUMN_X[0], y(anchor_rank[key])) for key in kept_anchors]
    nodes += [
        Node("frame", fid, short(by_id[fid].predicate or fid), COLUMN_X[1], y(frame_rank[fid])) for fid in frame_order
    ]
    nodes += [Node("row", row, short(row_labels.get(row, row)), COLUMN_X[2], y(row_rank[row])) for row in row_order]
    edges = []
    for fid in frame_order:
        frame = by_id[fid]
        fy = y(frame_rank[fid])
        for role, key in frame.arms:
            if key in anchor_rank:
                edges.append(Edge("arm", fid, key, role, COLUMN_X[1], fy, COLUMN_X[0], y(anchor_rank[key])))
        for row in frame.citations:
            if row in row_rank:
                edges.append(Edge("cites", fid, row, "", COLUMN_X[1], fy, COLUMN_X[2], y(row_rank[row])))
    tallest = max(len(kept_anchors), len(frame_order), len(row_order), 1)
    return Picture(
        width=WIDTH,
        height=TOP + tallest * ROW_HEIGHT,
        nodes=nodes,
        edges=edges,
        omitted={
            "anchor": len(wanted) - len(kept_anchors),
            "frame": len(frames) - len(kept_frames),
            "row": len(rows) - len(kept_rows),
        },
    )
