"""The lossless merge a→b on the real graph: algebra (any order, same result), no citation or
frame lost, frames united, the name index and adjacency kept consistent, and exact undo (the
mentions' words included)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from apps.graph.keys import anchor_key
from apps.graph.merge_store import MergeConflict, anchor_merge, anchor_merge_undo
from apps.tenancy.models import Subject
from tests.dream.support import Spec, add_anchors, add_frame, graph_state, in_scope
from tests.factories import make_tenant

A, B, C = anchor_key("steel bottle"), anchor_key("stainless steel bottle"), anchor_key("stainless steel flask")
ANA = anchor_key("Ana")


def _world() -> tuple[Subject, dict[str, list[str]]]:
    tenant = make_tenant()
    subject = tenant.subject("ana")
    with in_scope(subject):
        built = add_anchors(
            subject,
            [
                Spec("Ana", "person", semantic=2, episodic=2),
                Spec("steel bottle", "object", semantic=2, episodic=1, aliases=["steel bottles"], score=0.5),
                Spec("stainless steel bottle", "object", semantic=1, episodic=1, score=1.0),
                Spec("stainless steel flask", "object", semantic=1, episodic=1, aliases=["flask"], score=0.5),
            ],
        )
        rows = built.rows
        add_frame(
            subject,
            kind="semantic",
            predicate="own",
            arms=[("owner", "Ana"), ("item", "steel bottle")],
            citations=[rows[A][0]],
            literals={"colour": "green"},
        )
        add_frame(
            subject,
            kind="semantic",
            predicate="own",
            arms=[("owner", "Ana"), ("item", "stainless steel bottle")],
            citations=[rows[B][0]],
            status="planned",
        )
        add_frame(
            subject,
            kind="episodic",
            predicate="buy",
            arms=[("buyer", "Ana"), ("item", "steel bottle")],
            citations=[rows[A][2]],
            event_time="2024-03-01",
        )
        add_frame(
            subject,
            kind="episodic",
            predicate="buy",
            arms=[("buyer", "Ana"), ("item", "stainless steel flask")],
            citations=[rows[C][1]],
            event_time="2024-03-01",
        )
        add_frame(
            subject,
            kind="episodic",
            predicate="clean",
            arms=[("agent", "Ana"), ("item", "stainless steel bottle")],
            citations=[rows[B][1]],
        )
        add_frame(
            subject,
            kind="semantic",
            predicate="compare",
            arms=[("first", "steel bottle"), ("second", "stainless steel flask")],
            citations=[rows[A][1]],
        )
    return subject, rows


def _merge(subject: Subject, source: str, target: str) -> Any:
    with in_scope(subject):
        return anchor_merge(
            organization_id=subject.organization_id, subject_id=subject.id, source_key=source, target_key=target
        )


def _reachable(state: dict[str, Any]) -> dict[str, set[str]]:
    """Per anchor: the rows it reaches — its mentions (adjacency) and its frames' citations."""
    reach: dict[str, set[str]] = {key: set() for key in state["anchors"]}
    for key, _, row, _ in state["anchor_rows"]:
        reach[key].add(row)
    for frame_id, _, key in state["arms"]:
        reach[key] |= set(state["frames"][frame_id]["citations"])
    return reach


def _canonical(state: dict[str, Any], rows: dict[str, list[str]]) -> dict[str, Any]:
    """What must not depend on the order of merges, with row ids named by what they mention
    and frames by their content (ids embed the world's own subject and row ids)."""
    label = {row: f"{key}#{n}" for key, ids in rows.items() for n, row in enumerate(ids)}
    anchors = {
        key: {
            "names": sorted({a["name"], *a["aliases"]}),
            "mention_count": a["mention_count"],
            "admission_score": a["admission_score"],
            "type": a["type"],
        }
        for key, a in state["anchors"].items()
    }

    def frame(fid: str) -> tuple[Any, ...]:
        f = state["frames"][fid]
        arms = tuple(sorted(map(tuple, f["arms"])))
        return (f["kind"], f["predicate"], arms, tuple(sorted(label[c] for c in f["citations"])), f["status"])

    return {
        "anchors": anchors,
        "frames": sorted(frame(fid) for fid in state["frames"]),
        "literals": sorted(str(sorted(f["literals"].items())) for f in state["frames"].values()),
        "arms": sorted((frame(fid), role, key) for fid, role, key in state["arms"]),
        "reachable": {k: sorted(label[r] for r in v) for k, v in _reachable(state).items()},
        "vectors": sorted(v[0] for v in state["vectors"]),
        "anchor_frames": sorted((k, frame(f), tuple(sorted(r))) for k, f, _, r in state["anchor_frames"]),
    }


ORDERS = [((A, B), (B, C)), ((B, C), (A, C)), ((A, C), (B, C))]


def test_merges_in_any_order_reach_the_same_rows_names_counts_and_frames() -> None:
    results = []
    for order in ORDERS:
        subject, rows = _world()
        with in_scope(subject):
            before = graph_state(subject)
        for source, target in order:
            _merge(subject, source, target)
        with in_scope(subject):
            after = graph_state(subject)
        results.append(_canonical(after, rows))

        # No citation is lost, nothing cites a row that does not exist.
        cited = lambda s: {c for f in s["frames"].values() for c in f["citations"]}  # noqa: E731
        assert cited(before) == cited(after)
        # Every row an anchor reached before is reached by its representative after.
        reach_before, reach_after = _reachable(before), _reachable(after)
        for key, reached in reach_before.items():
            assert reached <= reach_after[C if key in (A, B, C) else key]
        # Every frame reachable before is reachable after: same predicate, arms re-keyed to C, its citations.
        for frame in before["frames"].values():
            rekeyed = sorted({(r, C if k in (A, B) else k) for r, k in frame["arms"]})
            assert any(
                f["predicate"] == frame["predicate"]
                and sorted({tuple(a) for a in f["arms"]}) == rekeyed
                and set(frame["citations"]) <= set(f["citations"])
                for f in after["frames"].values()
            ), frame["predicate"]
        assert set(after["anchors"]) == {ANA, C}
        merged = after["anchors"][C]
        assert merged["mention_count"] == 3 + 2 + 2  # sums
        assert merged["admission_score"] == 1.0  # the maximum
        assert {"steel bottle", "steel bottles", "stainless steel bottle", "flask"} <= set(merged["aliases"])
        assert [v[0] for v in after["vectors"]] == sorted([ANA, C])  # the name index lost a and b
    assert results[0] == results[1] == results[2]


def test_frames_that_become_one_are_united_with_every_citation() -> None:
    subject, rows = _world()
    outcome = _merge(subject, A, B)
    with in_scope(subject):
        state = graph_state(subject)
    own = [f for f in state["frames"].values() if f["predicate"] == "own"]
    assert len(own) == 1  # own(Ana, steel bottle) and own(Ana, stainless steel bottle) are one fact now
    assert sorted(own[0]["citations"]) == sorted([rows[A][0], rows[B][0]])
    assert own[0]["status"] == "done" and own[0]["literals"] == {"colour": "green"}
    assert outcome.frames_united == 1 and len(outcome.frame_renames) == 3
    # Dated episodic occurrences keep their identity apart from undated ones; the arms moved to b.
    assert all(A not in {k for _, k in f["arms"]} for f in state["frames"].values())
    assert all(k != A for _, _, k in state["arms"])
    assert all(k != A for k, *_ in state["anchor_rows"])
    assert {row for k, _, row, _ in state["anchor_rows"] if k == B} == set(rows[A]) | set(rows[B])


def test_undo_restores_the_graph_exactly_and_refuses_out_of_order() -> None:
    subject, _ = _world()
    with in_scope(subject):
        state0 = graph_state(subject)
    assert all(words for *_, words in state0["anchor_rows"])  # each mention has its row's words
    first = _merge(subject, A, B)
    with in_scope(subject):
        state1 = graph_state(subject)
    second = _merge(subject, B, C)
    scope = {"organization_id": subject.organization_id, "subject_id": subject.id}
    with pytest.raises(MergeConflict), in_scope(subject):  # b→c depends on a→b's result
        anchor_merge_undo(**scope, snapshot=first.snapshot, after_digest=first.after_digest)
    with in_scope(subject):
        anchor_merge_undo(**scope, snapshot=second.snapshot, after_digest=second.after_digest)
        assert graph_state(subject) == state1
        anchor_merge_undo(**scope, snapshot=first.snapshot, after_digest=first.after_digest)
        assert graph_state(subject) == state0


def test_merging_a_missing_or_the_same_anchor_is_refused() -> None:
    subject, _ = _world()
    with pytest.raises(MergeConflict):
        _merge(subject, A, A)
    with pytest.raises(MergeConflict):
        _merge(subject, "no such anchor", B)


@pytest.mark.parametrize("order", list(itertools.permutations([A, B])))
def test_two_way_merge_is_commutative_in_effect(order: tuple[str, str]) -> None:
    subject, _ = _world()
    _merge(subject, *order)
    with in_scope(subject):
        state = graph_state(subject)
    survivor = order[1]
    names = {state["anchors"][survivor]["name"], *state["anchors"][survivor]["aliases"]}
    assert names == {"steel bottle", "steel bottles", "stainless steel bottle"}
    assert state["anchors"][survivor]["mention_count"] == 5
