"""A dream round over stored rows with the local decision of ADR 0059: an alias pair merges
through the name lane (its names are far apart as vectors), people who only look alike stay
apart, and the system of record is not rewritten."""

from __future__ import annotations

from apps.dream.candidates import MIN_COSINE, rejection_key
from apps.dream.models import DreamMerge, DreamRejection
from apps.dream.services import dream_merge_undo, dream_run
from apps.graph.keys import anchor_key
from tests.dream.support import Spec, add_anchors, add_frame, evidence_checksums, graph_state, in_scope
from tests.factories import make_tenant

PEOPLE = [
    Spec("Melanie", "person", semantic=2, texts=["Melanie paints on weekends.", "Melanie lives in Boston."]),
    Spec("Mel", "person", semantic=0, episodic=2, texts=["Mel went to the lake.", "Thanks, Mel, for the photos."]),
    Spec("Maria Lopez", "person", texts=["Maria Lopez teaches chemistry."]),
    Spec("Maria Chen", "person", texts=["Maria Chen runs the bakery."]),
    Spec("Tom", "person", texts=["Tom lives in Leeds."]),
    Spec("Tom Baker", "person", semantic=0, episodic=1, texts=["Tom Baker lives in York."]),
    Spec("Sam", "person", texts=["Sam plays the cello."]),
    Spec("Samantha", "person", texts=["Samantha plays the violin."]),
]


def test_a_round_merges_the_alias_and_keeps_look_alike_people_apart_losslessly() -> None:
    tenant = make_tenant()
    subject = tenant.subject("ana")
    with in_scope(subject):
        built = add_anchors(subject, PEOPLE)
        add_frame(  # Sam and Samantha played one concert together: two people
            subject,
            kind="episodic",
            predicate="play",
            arms=[("agent", "Sam"), ("agent", "Samantha")],
            citations=[built.rows[anchor_key("Sam")][0]],
        )
        before = graph_state(subject)
    checksums = evidence_checksums(subject.organization_id)
    with in_scope(subject):
        summary = dream_run(subject=subject, chunk_ids=[built.chunk_id], final=True)
        after = graph_state(subject)
        merges = list(DreamMerge.objects.filter(subject=subject))
        rejected = set(DreamRejection.objects.filter(subject=subject).values_list("cache_key", flat=True))
    assert [(m.source_name, m.target_name) for m in merges] == [("Mel", "Melanie")]
    assert merges[0].cosine < MIN_COSINE  # the vector lane alone would never have paired them
    assert summary["merged_pairs"][0]["from"] == "Mel" and summary["merged_pairs"][0]["into"] == "Melanie"
    melanie = after["anchors"][anchor_key("Melanie")]
    assert anchor_key("Mel") not in after["anchors"] and "Mel" in melanie["aliases"]
    # Mel's rows now count for Melanie: the adjacency index follows the merge.
    rows_of_melanie = {row for key, _, row, _ in after["anchor_rows"] if key == anchor_key("Melanie")}
    assert set(built.rows[anchor_key("Mel")]) <= rows_of_melanie
    # Decided and kept apart: different surnames, different stated cities, one frame's two participants.
    for first, second in (("Maria Chen", "Maria Lopez"), ("Tom", "Tom Baker"), ("Sam", "Samantha")):
        assert rejection_key(first, second, "person") in rejected
        assert anchor_key(first) in after["anchors"] and anchor_key(second) in after["anchors"]
    assert len(after["anchors"]) == len(before["anchors"]) - 1
    # Lossless: the evidence rows are untouched, and undo gives back the graph as it was.
    assert evidence_checksums(subject.organization_id) == checksums
    with in_scope(subject):
        dream_merge_undo(subject=subject, merge_id=merges[0].id)
        restored = graph_state(subject)
    assert restored["anchors"] == before["anchors"] and restored["anchor_rows"] == before["anchor_rows"]
