"""The algebra of an anchor merge: pure functions over property maps, no database needed."""

from __future__ import annotations

import uuid

import pytest

from apps.graph.identity import frame_id_from_arms
from apps.graph.merge import frames_united, merged_anchor, rekeyed_frame, state_digest

pytestmark = pytest.mark.unit

SUBJECT = uuid.UUID(int=7)


def _anchor(key: str, name: str, *, rows: list[str], count: int, score: float) -> dict[str, object]:
    return {
        "key": key,
        "name": name,
        "aliases": [],
        "episodic_ids": rows,
        "semantic_ids": [],
        "mention_count": count,
        "admission_score": score,
    }


def _frame(predicate: str, arms: list[list[str]], citation: str, **extra: object) -> dict[str, object]:
    frame_id = frame_id_from_arms(
        subject_id=SUBJECT,
        kind="episodic",
        predicate=predicate,
        arms=[(role, key) for role, key in arms],
        event_time=None,
        first_citation=citation,
    )
    return {"frame_id": frame_id, "kind": "episodic", "predicate": predicate, "arms": arms, "citations": [citation]} | (
        extra
    )


def test_the_target_takes_the_union_of_rows_the_names_as_aliases_the_sum_and_the_max() -> None:
    source = _anchor("maya smith", "Maya Smith", rows=["r1", "r2"], count=2, score=0.4)
    target = _anchor("maya", "Maya", rows=["r2", "r3"], count=3, score=0.9)

    merged = merged_anchor(source, target)

    assert merged["key"] == "maya" and merged["name"] == "Maya"
    assert merged["aliases"] == ["Maya Smith"]
    assert merged["episodic_ids"] == ["r2", "r3", "r1"]
    assert (merged["mention_count"], merged["admission_score"]) == (5, 0.9)


def test_merges_in_either_order_reach_the_same_rows_and_counts() -> None:
    a = _anchor("a", "A", rows=["r1"], count=1, score=0.1)
    b = _anchor("b", "B", rows=["r2"], count=2, score=0.5)
    c = _anchor("c", "C", rows=["r3"], count=4, score=0.3)

    one = merged_anchor(merged_anchor(a, b), c)
    other = merged_anchor(a, merged_anchor(b, c))

    assert set(one["episodic_ids"]) == set(other["episodic_ids"]) == {"r1", "r2", "r3"}
    assert one["mention_count"] == other["mention_count"] == 7
    assert one["admission_score"] == other["admission_score"] == 0.5


def test_a_rekeyed_frame_points_at_the_target_under_a_new_id() -> None:
    frame = _frame("likes", [["agent", "maya smith"], ["theme", "tea"]], "r1")

    rekeyed = rekeyed_frame(frame, subject_id=SUBJECT, source_key="maya smith", target_key="maya")

    assert rekeyed["arms"] == [["agent", "maya"], ["theme", "tea"]]
    assert rekeyed["frame_id"] == _frame("likes", [["agent", "maya"], ["theme", "tea"]], "r1")["frame_id"]
    assert rekeyed["frame_id"] != frame["frame_id"]


def test_frames_that_now_share_an_id_are_united_keeping_every_citation() -> None:
    kept = _frame("likes", [["agent", "maya"], ["theme", "tea"]], "r1", status="planned", literals={"x": 1})
    moved = {**kept, "citations": ["r2"], "status": "done", "literals": {"x": 2, "y": 3}}
    fresh = _frame("drinks", [["agent", "maya"]], "r4")

    united = frames_united([moved, fresh], {kept["frame_id"]: kept})

    assert set(united.created) == {fresh["frame_id"]}
    assert set(united.updated) == {kept["frame_id"]}
    frame = united.updated[kept["frame_id"]]
    assert frame["citations"] == ["r1", "r2"]
    assert frame["status"] == "done"  # done outranks planned
    assert frame["literals"] == {"x": 1, "y": 3}  # the existing frame's values win
    assert united.united == 1


def test_the_state_digest_changes_with_the_target_or_a_frame() -> None:
    target = _anchor("maya", "Maya", rows=["r1"], count=1, score=0.5)
    frame = _frame("likes", [["agent", "maya"]], "r1")
    frames = {str(frame["frame_id"]): frame}

    before = state_digest(target, frames)

    assert state_digest(dict(target), dict(frames)) == before
    assert state_digest({**target, "mention_count": 2}, frames) != before
    assert state_digest(target, {str(frame["frame_id"]): {**frame, "citations": ["r9"]}}) != before
