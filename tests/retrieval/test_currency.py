"""Currency in ranking and the planner's time focus: pure functions, no database needed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.retrieval.currency import CitedCurrency, current_first, mark_facts, successor_ids
from apps.retrieval.planner import plan_query
from apps.retrieval.scoring import rank_facts
from apps.retrieval.types import FactCandidate, FusedRow, RowCandidate

MARCH = datetime(2024, 3, 1, tzinfo=UTC)
JULY = datetime(2024, 7, 1, tzinfo=UTC)
PRESENT = plan_query("What diet does Nadia follow?")
HISTORY = plan_query("What did Nadia eat before she went vegan?")


@pytest.mark.parametrize(
    "question",
    [
        "Where does she live?",
        "What is her job?",
        "What does she eat?",
        "What city does Nadia live in?",
        "Who teaches Nadia French?",
        "Are Nadia and Joon married or engaged?",
        "Does Nadia own a car?",
        "When does Nadia's book club meet?",
        "How long is Kwame's commute to the office?",  # a measure of how it is now
        "How long does his commute take?",
        "Which city is Kwame originally from?",  # where he comes from is no value of the past
        "What has Nadia got in her garage?",  # "has got" is having
        "Where has she been living?",  # "has been" is a state that goes on
        "What car has Nadia?",  # "has" alone is having
        "What are the new shoes that Melanie got used for?",  # "got used" is no event told
        "Who is the friend that lives in Lyon?",  # a relative clause in the present
    ],
)
def test_a_present_tense_question_without_a_cue_of_the_past_is_about_the_present(question: str) -> None:
    assert plan_query(question).time_focus == "present"


@pytest.mark.parametrize(
    "question",
    [
        "Where did she live before?",
        "Where did she live before she moved to Lyon?",
        "When did she move?",
        "What did Nadia used to eat every Friday?",
        "Where does she used to work?",
        "What was her previous job?",
        "Who taught Nadia French?",
        "When did her diet change?",
        "How long has she lived in Lyon?",
        "Where did Nadia live in 2023?",
        "What is her former employer?",
        "Where does she live now that she has moved?",
        "Where did Kwame originally live?",
        "What has Melanie painted?",  # the perfect: everything up to now counts
        "When Gina has lost her job at Door Dash?",
        "What books has she read?",
        "Has Joon started?",
        "What are some changes Caroline has faced during her transition?",  # a perfect in a clause of its own
        "What are the classes that Audrey took for her dogs?",  # a relative clause told in the past
    ],
)
def test_a_past_tense_question_or_a_cue_of_the_past_or_a_change_asks_for_the_history(question: str) -> None:
    assert plan_query(question).time_focus == "history"


def _row(row_id: str, *, superseded_by: str | None = None, valid_from: datetime | None = None) -> RowCandidate:
    return RowCandidate(
        row_id=row_id,
        memory_type="semantic",
        text=row_id,
        event_time=None,
        mention_time=None,
        created_at=None,
        chunk_id=None,
        session_id=None,
        lane="base",
        vector_rank=None,
        lexical_score=0.0,
        valid_from=valid_from,
        superseded_by=superseded_by,
        valid_to=JULY if superseded_by else None,
    )


def _fused(*rows: RowCandidate) -> list[FusedRow]:
    return [FusedRow(row, "base", 1.0 / (rank + 1)) for rank, row in enumerate(rows)]


def test_for_a_present_question_the_current_value_takes_the_place_of_the_one_it_replaced() -> None:
    old = _row("vegetarian", superseded_by="vegan")
    new = _row("vegan")
    other = _row("allergy")
    returned = current_first(_fused(old, other, new), {r.row_id: r for r in (old, new, other)}, PRESENT)
    # The old value follows right after what replaced it (ADR 0099), marked.
    assert [f.row.row_id for f in returned] == ["vegan", "vegetarian", "allergy"]
    assert [f.row.current for f in returned] == [True, False, True]
    assert returned[1].row.superseded_by == "vegan"


def test_an_old_value_ranked_below_its_current_value_keeps_its_place() -> None:
    new = _row("vegan")
    other = _row("allergy")
    old = _row("vegetarian", superseded_by="vegan")
    returned = current_first(_fused(new, other, old), {r.row_id: r for r in (old, new, other)}, PRESENT)
    assert [f.row.row_id for f in returned] == ["vegan", "allergy", "vegetarian"]


def test_a_current_value_outside_the_selection_is_brought_in_and_the_row_count_is_kept() -> None:
    old = _row("vegetarian", superseded_by="vegan")
    others = [_row(f"row-{i}") for i in range(3)]
    new = _row("vegan")
    pool = {r.row_id: r for r in (old, new, *others)}
    returned = current_first(_fused(others[0], old, others[1], others[2]), pool, PRESENT)
    assert [f.row.row_id for f in returned] == ["row-0", "vegan", "vegetarian", "row-1"]  # the last fell off


def test_a_chain_of_updates_leads_to_its_head_and_its_old_values_follow_it_in_their_order() -> None:
    first = _row("meat", superseded_by="vegetarian")
    second = _row("vegetarian", superseded_by="vegan")
    head = _row("vegan")
    other = _row("allergy")
    pool = {r.row_id: r for r in (first, second, head, other)}
    returned = current_first(_fused(first, other, second), pool, PRESENT)
    assert [f.row.row_id for f in returned] == ["vegan", "meat", "allergy"]  # "vegetarian" fell off the end
    assert successor_ids([first, second, other]) == ["vegan"]  # what must be read to reach the head


def test_a_superseded_row_whose_successor_is_not_known_still_comes_after_the_current_rows() -> None:
    old = _row("vegetarian", superseded_by="unknown")
    other = _row("allergy")
    returned = current_first(_fused(old, other), {r.row_id: r for r in (old, other)}, PRESENT)
    assert [f.row.row_id for f in returned] == ["allergy", "vegetarian"]


def test_for_a_question_about_the_past_the_history_keeps_its_order() -> None:
    old = _row("vegetarian", superseded_by="vegan")
    new = _row("vegan")
    fused = _fused(old, new)
    assert current_first(fused, {r.row_id: r for r in (old, new)}, HISTORY) == fused
    assert HISTORY.time_focus == "history"


def _fact(frame_id: str, citations: list[str], *, score_words: str = "") -> FactCandidate:
    return FactCandidate(
        frame_id=frame_id,
        predicate="eat",
        roles=[("agent", "nadia", "Nadia"), ("theme", score_words or frame_id, score_words or frame_id)],
        literals={},
        event_time=None,
        event_time_precision="",
        mention_time=None,
        status="done",
        citations=citations,
        kind="semantic",
    )


def test_a_fact_whose_every_citation_was_replaced_is_not_current_and_ranks_after_current_facts() -> None:
    cited = {
        "old-1": CitedCurrency(valid_from=MARCH, superseded_by="new-1", valid_to=JULY),
        "old-2": CitedCurrency(valid_from=JULY, superseded_by="new-2", valid_to=JULY),
        "new-1": CitedCurrency(valid_from=JULY, superseded_by=None, valid_to=None),
    }
    stale, mixed, unknown = mark_facts(
        [_fact("f1", ["old-1", "old-2"]), _fact("f2", ["old-1", "new-1"]), _fact("f3", ["erased"])], cited
    )
    assert (stale.current, stale.superseded_by, stale.valid_to) == (False, "new-2", JULY)  # the newest citation's
    assert (mixed.current, mixed.superseded_by) == (True, None)
    assert unknown.current is True  # nothing says it changed
    # "f1" sorts first by frame id; for a present question the current fact goes before it.
    assert [s.fact.frame_id for s in rank_facts([stale, mixed], PRESENT)] == ["f2", "f1"]
    assert rank_facts([stale, mixed], HISTORY)[0].fact.frame_id == "f1"
