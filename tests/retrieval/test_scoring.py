"""Anchor entry (paper eq. 10) and fact scores (eq. 11, A.3): pure functions, no database needed."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import datetime

import pytest

from apps.retrieval.planner import plan_query
from apps.retrieval.scoring import (
    ANCHOR_BONUS_MAX,
    ANCHOR_LIMIT,
    FRAME_CAP,
    MAX_NAMED_ANCHORS,
    PERSON_HUB_FACTOR,
    STATE_FALLBACK_FACTOR,
    W_HUB,
    W_PLANNED,
    W_PRED,
    W_STATE_MATCH,
    W_STATE_MISMATCH,
    anchor_entry_score,
    fact_score,
    named_anchor_keys,
    rank_facts,
    relation_arm_keys,
    select_anchors,
    select_relation_frames,
)
from apps.retrieval.types import AnchorCandidate, FactCandidate

pytestmark = pytest.mark.unit

NOW = datetime(2023, 6, 20, 12, 0)


def _anchor(key: str, name: str, similarity: float, *, degree: int = 0, person: bool = False) -> AnchorCandidate:
    return AnchorCandidate(key, name, "person" if person else "object", similarity, degree, person)


def _fact(
    frame_id: str,
    predicate: str,
    roles: list[tuple[str, str, str]],
    *,
    event_time: datetime | None = None,
    precision: str = "day",
    mention_time: datetime | None = None,
    status: str = "done",
    literals: dict[str, str] | None = None,
) -> FactCandidate:
    return FactCandidate(
        frame_id=frame_id,
        predicate=predicate,
        roles=roles,
        literals=literals or {},
        event_time=event_time,
        event_time_precision=precision,
        mention_time=mention_time,
        status="planned" if status == "planned" else "done",
        citations=[f"row-{frame_id}"],
        kind="episodic",
    )


PRIYA = ("agent", "priya", "Priya")

# --- anchors -------------------------------------------------------------------------------


def test_a_specific_named_anchor_beats_a_person_hub_with_hundreds_of_frames() -> None:
    plan = plan_query("What did Priya think of the Copper Kettle Bakery?")
    hub = _anchor("priya", "Priya", 0.82, degree=640, person=True)
    bakery = _anchor("bakery copper kettle", "Copper Kettle Bakery", 0.74, degree=6)
    ranked = select_anchors([hub, bakery], plan)
    assert [item.anchor.anchor_key for item in ranked] == ["bakery copper kettle", "priya"]
    hub_score = ranked[1].score
    assert hub_score.exact > 0  # Priya is named, but not by a relation query: the person factor applies
    assert math.isclose(hub_score.hub, W_HUB * math.log1p(640) * PERSON_HUB_FACTOR)
    assert ranked[0].score.spec > 0 and ranked[0].score.exact > 0


def test_a_relation_query_naming_a_person_waives_the_person_factor() -> None:
    hub = _anchor("priya", "Priya", 0.8, degree=640, person=True)
    relation = plan_query("Who did Priya go hiking with?")
    assert relation.is_relation_query
    assert math.isclose(anchor_entry_score(hub, relation).hub, W_HUB * math.log1p(640))
    other = _anchor("marcus", "Marcus", 0.8, degree=640, person=True)  # not named by the question
    assert math.isclose(anchor_entry_score(other, relation).hub, W_HUB * math.log1p(640) * PERSON_HUB_FACTOR)
    not_person = _anchor("pottery", "pottery", 0.8, degree=640)
    assert (
        anchor_entry_score(not_person, plan_query("Tell me about pottery")).hub == anchor_entry_score(hub, relation).hub
    )
    # whatever the constants: a person hub pays more unless a relation query names it
    not_relation = plan_query("What does Priya think about the weather?")
    assert not not_relation.is_relation_query
    assert anchor_entry_score(hub, relation).hub < anchor_entry_score(hub, not_relation).hub
    assert anchor_entry_score(hub, relation).hub < anchor_entry_score(other, relation).hub
    assert (
        anchor_entry_score(_anchor("x", "x", 0.8, degree=10), relation).hub
        < anchor_entry_score(_anchor("x", "x", 0.8, degree=500), relation).hub
    )  # the penalty grows with the degree


def test_the_vector_score_dominates() -> None:
    assert ANCHOR_BONUS_MAX < 0.3
    plan = plan_query("Who did Priya meet at the Riverside Farmers Market?")
    named = AnchorCandidate(
        "farmer market riverside",
        "Riverside Farmers Market",
        "location",
        0.55,
        0,
        False,
        predicates=frozenset({"meet"}),
    )
    paraphrase = _anchor("greenmarket", "greenmarket", 0.55 + ANCHOR_BONUS_MAX + 0.01)
    score = anchor_entry_score(named, plan)
    assert score.exact and score.lex and score.pred == W_PRED and score.spec  # every bonus applies
    assert select_anchors([named, paraphrase], plan)[0].anchor.anchor_key == "greenmarket"


def test_predicate_compatibility_needs_a_family_of_the_question() -> None:
    plan = plan_query("When did Priya adopt Biscuit?")
    biscuit = AnchorCandidate("biscuit", "Biscuit", "object", 0.7, 3, False, predicates=frozenset({"adopt"}))
    assert anchor_entry_score(biscuit, plan).pred == W_PRED
    other = AnchorCandidate("biscuit", "Biscuit", "object", 0.7, 3, False, predicates=frozenset({"bake"}))
    assert anchor_entry_score(other, plan).pred == 0.0


def test_select_anchors_keeps_fifteen_merges_routes_and_breaks_ties_by_key() -> None:
    plan = plan_query("What did Priya plant in the garden?")
    candidates = [_anchor(f"plant {i:02d}", f"Plant {i:02d}", 0.5) for i in range(30)]
    random.Random(7).shuffle(candidates)
    ranked = select_anchors(candidates, plan)
    assert len(ranked) == ANCHOR_LIMIT
    assert [item.anchor.anchor_key for item in ranked] == [f"plant {i:02d}" for i in range(15)]

    recalled = AnchorCandidate("garden", "garden", "location", 0.9, 0, False, episodic_ids=["e1"])
    looked_up = AnchorCandidate("garden", "Garden", "location", 0.0, 120, False, semantic_ids=["s1"])
    (merged,) = select_anchors([looked_up, recalled], plan)
    assert merged.anchor.vector_similarity == 0.9 and merged.anchor.degree == 120
    assert (merged.anchor.episodic_ids, merged.anchor.semantic_ids) == (["e1"], ["s1"])


def test_named_anchor_keys_are_capped_at_sixteen() -> None:
    plan = plan_query("Did Priya's Aunt Rosa visit Porto?")
    assert named_anchor_keys(plan)[:2] == ("priya", "aunt rosa")
    long_plan = plan_query(" ".join(f"word{i}" for i in range(40)) + " with Priya?")
    assert len(named_anchor_keys(long_plan)) == MAX_NAMED_ANCHORS


# --- facts ---------------------------------------------------------------------------------


def _hub_frames(count: int) -> list[FactCandidate]:
    """A named hub with hundreds of incident frames, all equally relevant."""
    return [
        _fact(f"f{i:04d}", "paint", [PRIYA, ("theme", f"canvas {i}", f"canvas {i}")], event_time=datetime(2023, 1, 1))
        for i in range(count)
    ]


def test_a_hub_with_hundreds_of_frames_is_capped_at_240_by_frame_id() -> None:
    plan = plan_query("What did Priya paint?")
    frames = _hub_frames(600)
    strong = [PRIYA, ("theme", "sunset", "sunset"), ("location", "beach", "beach"), ("companion", "dev", "Dev")]
    frames[100] = _fact("f0100", "paint", strong)
    frames[500] = _fact("f0500", "paint", strong)  # beyond the cap by frame id: never scored
    orders = []
    for seed in range(3):
        shuffled = list(frames)
        random.Random(seed).shuffle(shuffled)
        orders.append([item.fact.frame_id for item in rank_facts(shuffled, plan, frame_cap=FRAME_CAP)])
    assert orders[0] == orders[1] == orders[2]
    assert len(orders[0]) == plan.budgets.max_facts == 4
    assert orders[0] == ["f0100", "f0000", "f0001", "f0002"]  # equal scores fall to frame id order
    assert all(frame_id < f"f{FRAME_CAP:04d}" for frame_id in orders[0])
    assert "f0500" not in [item.fact.frame_id for item in rank_facts(frames, plan, cap=600)]
    assert len(rank_facts(frames, plan, cap=600)) == FRAME_CAP


def test_select_relation_frames_filters_predicates_before_the_cap() -> None:
    plan = plan_query("What did Priya paint?")
    frames = [
        _fact(f"f{i:04d}", "paint" if i % 2 else "eat", [PRIYA, ("theme", f"thing {i}", f"thing {i}")])
        for i in range(600)
    ]
    kept = select_relation_frames(reversed(frames), plan)
    assert len(kept) == FRAME_CAP
    assert all(fact.predicate == "paint" for fact in kept)
    assert [fact.frame_id for fact in kept] == sorted(fact.frame_id for fact in kept)
    assert kept[-1].frame_id == "f0479"  # the 240th odd id


def test_a_frame_with_an_arm_on_a_relation_noun_belongs_to_the_relation() -> None:
    plan = plan_query("What activities has Priya done with her family?")
    assert [family.name for family in plan.relations] == ["family"]
    assert {"kid", "family", "daughter"} <= set(relation_arm_keys(plan))
    swim = _fact("b", "swim", [PRIYA, ("companion", "kid", "kids")])
    alone = _fact("c", "swim", [PRIYA, ("location", "lake", "lake")])
    married = _fact("d", "marry", [PRIYA, ("theme", "marcus", "Marcus")])
    assert fact_score(swim, plan).relation == fact_score(married, plan).relation > 0
    assert fact_score(alone, plan).relation == 0
    # the predicate's frames first, then those by arm; an unrelated frame is out
    assert [f.frame_id for f in select_relation_frames([alone, swim, married], plan)] == ["d", "b"]


def test_the_object_filter_keeps_frames_that_contain_the_named_object() -> None:
    plan = plan_query("When did Priya buy the Suica card?")
    assert plan.objects == ("Suica",)
    card = _fact("a", "buy", [PRIYA, ("theme", "card suica", "Suica card")])
    ticket = _fact("b", "buy", [PRIYA, ("theme", "ticket train", "train ticket")])
    assert [fact.frame_id for fact in select_relation_frames([card, ticket], plan)] == ["a"]


def test_planned_events_are_penalized_in_temporal_count_and_list_questions() -> None:
    visit = [("agent", "marcus", "Marcus"), ("destination", "porto", "Porto")]
    planned = _fact("a-planned", "visit", visit, event_time=datetime(2023, 8, 1), status="planned")
    done = _fact("b-done", "visit", visit, event_time=datetime(2023, 3, 4))
    temporal = plan_query("When did Marcus visit Porto?")
    assert [item.fact.frame_id for item in rank_facts([planned, done], temporal)] == ["b-done", "a-planned"]
    assert fact_score(planned, temporal).state == -W_PLANNED
    assert fact_score(done, temporal).state == 0.0
    assert fact_score(planned, plan_query("How many times did Marcus visit Porto?")).state == -W_PLANNED
    assert fact_score(planned, plan_query("What cities did Marcus visit?")).state == -W_PLANNED
    # not in a single-value question, nor when the question asks about the plan itself
    assert fact_score(planned, plan_query("Did Marcus enjoy visiting Porto?")).state == 0.0
    assert fact_score(planned, plan_query("When is Marcus going to visit Porto?")).state == 0.0


def test_state_falls_back_at_half_weight_to_the_source_rows_time() -> None:
    plan = plan_query("What did Priya bake in May?", now=NOW)
    roles = [PRIYA, ("theme", "bread", "sourdough bread")]
    dated_in = _fact("a", "bake", roles, event_time=datetime(2023, 5, 10))
    undated_in = _fact("b", "bake", roles, mention_time=datetime(2023, 5, 12, 9, 0))
    dated_out = _fact("c", "bake", roles, event_time=datetime(2023, 7, 2))
    undated_out = _fact("d", "bake", roles, mention_time=datetime(2023, 7, 3))
    month = _fact("e", "bake", roles, event_time=datetime(2023, 5, 1), precision="month")
    states = [fact_score(fact, plan).state for fact in (dated_in, undated_in, dated_out, undated_out, month)]
    assert states == [
        W_STATE_MATCH,
        W_STATE_MATCH * STATE_FALLBACK_FACTOR,
        -W_STATE_MISMATCH,
        -W_STATE_MISMATCH * STATE_FALLBACK_FACTOR,
        W_STATE_MATCH,
    ]
    assert [item.fact.frame_id for item in rank_facts([undated_out, dated_out, undated_in, dated_in], plan)] == [
        "a",
        "b",
        "d",
        "c",
    ]


def test_before_and_after_a_named_date() -> None:
    plan = plan_query("Which books did Priya read before June 2023?")
    roles = [PRIYA, ("theme", "book", "book")]
    early = _fact("a", "read", roles, event_time=datetime(2023, 5, 30))
    late = _fact("b", "read", roles, event_time=datetime(2023, 6, 2))
    assert fact_score(early, plan).time > fact_score(late, plan).time


def test_intersection_keeps_the_shared_object_group_first() -> None:
    plan = plan_query("What hobbies do Priya and Marcus both enjoy?")
    marcus = ("agent", "marcus", "Marcus")
    priya_pottery = _fact("p1", "enjoy", [PRIYA, ("theme", "pottery", "pottery")])
    marcus_pottery = _fact("p2", "enjoy", [marcus, ("theme", "pottery", "pottery")])
    rich_one_side = _fact(
        "a0",
        "enjoy",
        [PRIYA, ("theme", "chess", "chess"), ("location", "club", "club"), ("companion", "dev", "Dev")],
        event_time=datetime(2023, 6, 1),
        literals={"hobby": "chess"},
    )
    assert fact_score(rich_one_side, plan).total > fact_score(priya_pottery, plan).total
    ranked = rank_facts([rich_one_side, marcus_pottery, priya_pottery], plan)
    assert [item.fact.frame_id for item in ranked] == ["p1", "p2", "a0"]
    assert [item.shared_object for item in ranked] == [True, True, False]
    both = _fact("b", "enjoy", [PRIYA, marcus, ("theme", "hiking", "hiking")])
    assert fact_score(both, plan).intersection > 0 and fact_score(priya_pottery, plan).intersection == 0


def test_the_role_term_follows_the_questions_direction() -> None:
    plan = plan_query("Who gave Priya the necklace?")
    received = _fact(
        "a",
        "give",
        [("agent", "nana rosa", "Nana Rosa"), ("recipient", "priya", "Priya"), ("theme", "necklace", "necklace")],
    )
    gave = _fact(
        "b", "give", [("agent", "priya", "Priya"), ("recipient", "dev", "Dev"), ("theme", "necklace", "necklace")]
    )
    assert fact_score(received, plan).role > 0 > fact_score(gave, plan).role
    assert [item.fact.frame_id for item in rank_facts([gave, received], plan)] == ["a", "b"]


def test_first_and_last_break_ties_by_time() -> None:
    roles = [PRIYA, ("theme", "concert", "concert")]
    frames = [
        _fact("a", "attend", roles, event_time=datetime(2023, 4, 1)),
        _fact("b", "attend", roles, event_time=datetime(2022, 9, 1)),
        _fact("c", "attend", roles, event_time=datetime(2023, 1, 1)),
    ]
    first = rank_facts(frames, plan_query("What was the first concert Priya attended?"))
    last = rank_facts(frames, plan_query("What was the last concert Priya attended?"))
    assert [item.fact.frame_id for item in first] == ["b", "c", "a"]
    assert [item.fact.frame_id for item in last] == ["a", "c", "b"]


def test_relation_entity_constraint_and_specificity_terms() -> None:
    plan = plan_query("Did Priya run 10 km in the Lisbon marathon?")
    fact = _fact(
        "a",
        "run",
        [PRIYA, ("occasion", "lisbon marathon", "Lisbon Marathon"), ("companion", "dev", "Dev")],
        literals={"distance": "10 km"},
    )
    score = fact_score(fact, plan)
    assert score.relation == 3.0  # "run" is in the exercise family
    assert score.entity == 1.5 + 0.75  # Priya exactly, Lisbon inside "Lisbon Marathon"
    assert score.constraint > 0  # the number 10 and the keyword "km"
    assert score.specificity == 0.25  # three anchors: one beyond the required two
    unrelated = _fact("b", "eat", [PRIYA, ("theme", "soup", "soup")])
    assert fact_score(unrelated, plan).relation == 0.0


def test_repeated_frames_merge_their_citations() -> None:
    plan = plan_query("What did Priya paint?")
    first = _fact("a", "paint", [PRIYA, ("theme", "sunset", "sunset")])
    again = replace(first, citations=["row-x"])
    (only,) = rank_facts([first, again], plan)
    assert only.fact.citations == ["row-a", "row-x"]
