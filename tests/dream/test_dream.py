"""Semantic AutoDream rounds on the real graph with the local provider and embedder: the named
merge / no-merge cases, invariant 5, the negative cache, caps with thousands of anchors, and a
pair skipped by a cap coming back."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from apps.dream.candidates import FINAL_CAP, INTERMEDIATE_CAP, REPAIR_CAP, rejection_key
from apps.dream.models import DreamMerge, DreamRejection, DreamRound, DreamSource
from apps.dream.services import dream_merge_undo, dream_run
from apps.evaluation.near_duplicates import write_near_duplicate_anchors
from apps.graph import store
from apps.graph.keys import anchor_key
from apps.platform.errors import Conflict, NotFound
from apps.providers.dream_schemas import DreamQuestion, DreamVerdict
from apps.providers.interfaces import MeteringContext
from apps.providers.registry import dream_judge_for
from apps.tenancy.models import Subject
from tests.dream.support import Spec, add_anchors, add_frame, evidence_checksums, graph_state, in_scope, semantic_row
from tests.factories import make_tenant


@dataclass
class CountingLLM:
    """The local decision, counting the pairs it is asked about."""

    asked: list[tuple[str, str]] = field(default_factory=list)
    model: str = "local-counting"

    def dream_decide(self, question: DreamQuestion, *, metering: MeteringContext) -> DreamVerdict:
        self.asked.append(question.names)
        return dream_judge_for().dream_decide(question, metering=metering)


NAMED = [
    Spec("steel bottle", "object"),
    Spec("stainless steel bottle", "object"),
    Spec("10 gallons", "object"),
    Spec("20 gallons", "object"),
    Spec("John Smith", "person"),  # Caroline's colleague
    Spec("John Smith Jr.", "person"),  # his son, at the school
    Spec("John Miller", "person"),
    Spec("summer camping trip", "event"),  # events are never candidates
    Spec("camping trip", "event"),
    Spec("steel mug", "object", semantic=0, episodic=2),  # episodic-only anchors neither
    Spec("stainless steel mug", "object", semantic=0, episodic=1),
]


def _named_world() -> tuple[Subject, Any]:
    tenant = make_tenant()
    subject = tenant.subject("caroline")
    with in_scope(subject):
        built = add_anchors(subject, NAMED)
        rows = built.rows
        # Two episodic events of the same kind, with nearly the same arguments, stay two.
        add_frame(
            subject,
            kind="episodic",
            predicate="go",
            arms=[("agent", "John Smith"), ("destination", "camping trip")],
            citations=[rows[anchor_key("steel mug")][0]],
        )
        add_frame(
            subject,
            kind="episodic",
            predicate="go",
            arms=[("agent", "John Smith"), ("destination", "summer camping trip")],
            citations=[rows[anchor_key("steel mug")][1]],
        )
        add_frame(
            subject,
            kind="semantic",
            predicate="own",
            arms=[("owner", "John Miller"), ("item", "steel bottle")],
            citations=[rows[anchor_key("steel bottle")][0]],
        )
    return subject, built


def test_the_named_pairs_merge_or_stay_apart() -> None:
    subject, built = _named_world()
    llm = CountingLLM()
    with in_scope(subject):
        summary = dream_run(subject=subject, chunk_ids=[built.chunk_id], final=False, llm=llm)
        anchors = graph_state(subject)["anchors"]
        merges = list(DreamMerge.objects.filter(subject=subject))
        rejected = set(DreamRejection.objects.filter(subject=subject).values_list("cache_key", flat=True))
    assert summary["merged"] == 1 and len(merges) == 1
    merge = merges[0]
    assert {merge.source_name, merge.target_name} == {"steel bottle", "stainless steel bottle"}
    assert merge.source_key not in anchors and merge.target_key in anchors
    bottle = anchors[merge.target_key]
    assert {bottle["name"], *bottle["aliases"]} >= {"steel bottle", "stainless steel bottle"}
    # Different quantities and different people are rejected, and the rejection is cached.
    assert rejection_key("10 gallons", "20 gallons", "object") in rejected
    assert rejection_key("John Smith", "John Smith Jr.", "person") in rejected
    for key in (
        "10 gallon",
        anchor_key("20 gallons"),
        anchor_key("John Smith"),
        anchor_key("John Smith Jr."),
        anchor_key("John Miller"),
    ):
        assert key in anchors
    # Events and episodic-only anchors were never even asked about.
    asked = {name for pair in llm.asked for name in pair}
    assert not asked & {"summer camping trip", "camping trip", "steel mug", "stainless steel mug"}
    for name in ("summer camping trip", "camping trip", "steel mug", "stainless steel mug"):
        assert anchor_key(name) in anchors
    assert len([f for f in graph_state_frames(subject) if f["predicate"] == "go"]) == 2
    assert summary["rounds"][0]["kind"] == "intermediate" and summary["skipped_by_cap"] == 0


def graph_state_frames(subject: Subject) -> list[dict[str, Any]]:
    with in_scope(subject):
        return list(graph_state(subject)["frames"].values())


def test_dream_rounds_leave_every_evidence_table_byte_for_byte_unchanged() -> None:
    subject, built = _named_world()
    with in_scope(subject):
        extra = add_anchors(
            subject,
            [
                Spec("pottery class", "concept"),
                Spec("pottery classes at the studio", "concept"),
                Spec("Sweden", "location"),
            ],
        )
    before = evidence_checksums(subject.organization_id)
    with in_scope(subject):
        first = dream_run(subject=subject, chunk_ids=[built.chunk_id], final=False)
        second = dream_run(subject=subject, chunk_ids=[extra.chunk_id], final=False)
        last = dream_run(subject=subject, chunk_ids=[built.chunk_id, extra.chunk_id], final=True)
        # Undoing a merge is graph-only too.
        merge = DreamMerge.objects.filter(subject=subject).order_by("-created_at").first()
        assert merge is not None
        dream_merge_undo(subject=subject, merge_id=merge.id)
    assert first["merged"] + second["merged"] + last["merged"] >= 1
    assert evidence_checksums(subject.organization_id) == before


def test_the_negative_cache_stops_asking_again_and_only_rejections_are_cached() -> None:
    subject, built = _named_world()
    first, second = CountingLLM(), CountingLLM()
    with in_scope(subject):
        summary = dream_run(subject=subject, chunk_ids=[built.chunk_id], final=False, llm=first)
        again = dream_run(subject=subject, chunk_ids=[built.chunk_id], final=False, llm=second)
        cached = DreamRejection.objects.filter(subject=subject).count()
    assert summary["verified"] == len(first.asked) >= 2
    assert cached == summary["rejected"]  # the merge is not cached, only rejections
    assert second.asked == [] and again["verified"] == 0
    assert again["cached"] == cached and again["merged"] == 0


def _thousands(subject: Subject, pairs: int, chunk_id: uuid.UUID) -> list[tuple[str, str]]:
    """``pairs`` pairs of semantic-backed objects; the two of a pair have nearly the same name
    vector (cosine ≈ 0.99) and names the local decision tells apart (different heads)."""
    rows = [semantic_row(subject, chunk_id, f"gadget fact {n}") for n in range(pairs)]
    names = [(f"gadget{n} alpha", f"gadget{n} beta") for n in range(pairs)]
    write_near_duplicate_anchors(subject, pairs=names, row_ids=[str(row.id) for row in rows], seed=7)
    return names


def test_caps_hold_with_thousands_of_anchors_and_a_skipped_pair_comes_back() -> None:
    tenant = make_tenant()
    subject = tenant.subject("hub")
    chunk = uuid.uuid4()
    llm = CountingLLM()
    with in_scope(subject):
        names = _thousands(subject, 1000, chunk)  # a frontier of 2,000 anchors, 1,000 candidate pairs
        first = dream_run(subject=subject, chunk_ids=[chunk], final=False, llm=llm)
        round_ = DreamRound.objects.get(subject=subject, kind="intermediate")
        asked_first = set(llm.asked)
        skipped = next(pair for pair in names if pair not in asked_first)
        assert rejection_key(*skipped, "object") not in set(DreamRejection.objects.values_list("cache_key", flat=True))
        used = set(DreamSource.objects.filter(subject=subject).values_list("anchor_key", flat=True))
        assert not {anchor_key(n) for n in skipped} & used  # not recorded anywhere

        # A later frontier names one anchor of the skipped pair: the pair is verified then.
        later = uuid.uuid4()
        row = semantic_row(subject, later, "gadget news")
        props = store.anchors_by_key(
            organization_id=subject.organization_id, subject_id=subject.id, keys=[anchor_key(skipped[0])]
        )
        anchor = props[anchor_key(skipped[0])]
        store.anchors_write(
            organization_id=subject.organization_id,
            created=[],
            updated=[{**anchor, "semantic_ids": [*anchor["semantic_ids"], str(row.id)], "mention_count": 2}],
        )
        llm.asked.clear()
        second = dream_run(subject=subject, chunk_ids=[later], final=False, llm=llm)
        final = dream_run(subject=subject, chunk_ids=[], final=True, llm=CountingLLM())
    assert first["verified"] == len(asked_first) == INTERMEDIATE_CAP
    assert first["pairs_considered"] == 1000 and first["skipped_by_cap"] == 1000 - INTERMEDIATE_CAP
    assert round_.verified == INTERMEDIATE_CAP and round_.skipped_by_cap == 1000 - INTERMEDIATE_CAP
    assert llm.asked == [skipped] and second["verified"] == 1 and second["pairs_considered"] == 1
    # The final round takes the never-used sources, under its own cap.
    # (the pair verified in the second round is answered by the cache: its other anchor was never a source)
    assert final["verified"] == FINAL_CAP and final["cached"] == 1
    assert final["skipped_by_cap"] == 1000 - INTERMEDIATE_CAP - 1 - FINAL_CAP
    assert FINAL_CAP <= 120 and REPAIR_CAP <= 60


def test_undoing_a_merge_restores_the_graph_exactly_and_the_pair_is_not_merged_again() -> None:
    subject, built = _named_world()
    with in_scope(subject):
        before = graph_state(subject)
        dream_run(subject=subject, chunk_ids=[built.chunk_id], final=False)
        merge = DreamMerge.objects.get(subject=subject)
        assert graph_state(subject) != before
        dream_merge_undo(subject=subject, merge_id=merge.id)
        assert graph_state(subject) == before  # anchors, frames, arms, name index, adjacency
        merge.refresh_from_db()
        assert merge.undone_at is not None
        again = dream_run(subject=subject, chunk_ids=[built.chunk_id], final=False)
    assert again["merged"] == 0 and again["cached"] >= 1
    with in_scope(subject), pytest.raises(Conflict):
        dream_merge_undo(subject=subject, merge_id=merge.id)
    with in_scope(subject), pytest.raises(NotFound):
        dream_merge_undo(subject=subject, merge_id=uuid.uuid4())
