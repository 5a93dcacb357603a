"""Answer-time verification (paper §2.4, A.4): every rule fires on a positive example and stays quiet
on a negative one. Pure functions, no database needed; no check ever sees a reference answer."""

from __future__ import annotations

import inspect
from datetime import datetime

import pytest

from apps.retrieval.answer_check import MAX_EXTRA_SEARCHES, MAX_RETRIEVAL_CALLS, check_answer, followup_query
from apps.retrieval.planner import plan_query
from apps.retrieval.types import FactCandidate, RowCandidate

pytestmark = pytest.mark.unit

MARCH_6 = datetime(2023, 3, 6, 18, 0)


def _row(text: str, *, mention_time: datetime | None = MARCH_6, row_id: str = "r1") -> RowCandidate:
    return RowCandidate(
        row_id=row_id,
        memory_type="episodic",
        text=text,
        event_time=None,
        mention_time=mention_time,
        created_at=None,
        chunk_id=None,
        session_id=None,
        lane="base",
        vector_rank=0,
        lexical_score=0.0,
    )


def _fact(
    predicate: str, roles: list[tuple[str, str, str]], *, status: str = "done", frame_id: str = "f1"
) -> FactCandidate:
    return FactCandidate(
        frame_id=frame_id,
        predicate=predicate,
        roles=roles,
        literals={},
        event_time=None,
        event_time_precision="day",
        mention_time=MARCH_6,
        status="planned" if status == "planned" else "done",
        citations=["r1"],
        kind="episodic",
    )


def test_constants_are_the_papers() -> None:
    assert (MAX_RETRIEVAL_CALLS, MAX_EXTRA_SEARCHES) == (5, 1)


def test_the_check_never_takes_a_reference_answer() -> None:
    assert list(inspect.signature(check_answer).parameters) == ["plan", "answer", "rows", "facts"]


@pytest.mark.parametrize(
    "draft", ["I don't know.", "I'm not sure which city it was.", "There is no information about her cat's name."]
)
def test_uncertainty_fires(draft: str) -> None:
    result = check_answer(plan_query("What is the name of Priya's cat?"), draft, rows=[_row("Our cat Biscuit!")])
    assert "uncertainty" in result.rules
    assert result.fired and result.query is not None


def test_a_confident_supported_single_answer_passes() -> None:
    plan = plan_query("What is the name of Priya's cat?")
    result = check_answer(plan, "Her cat is called Biscuit.", rows=[_row("Meet our cat, Biscuit!")])
    assert result.rules == () and not result.fired and result.rule is None and result.query is None


def test_count_without_a_number() -> None:
    plan = plan_query("How many kids does Marcus have?")
    rows = [_row("Marcus: My two kids love the beach.")]
    assert check_answer(plan, "He has several kids.", rows=rows).rule == "count_without_number"
    assert check_answer(plan, "He has two kids.", rows=rows).rules == ()
    assert check_answer(plan, "Twice.", rows=rows).rules == ()  # spelled counts are numbers


def test_count_contradicting_a_listed_count() -> None:
    plan = plan_query("How many kids does Marcus have?")
    rows = [_row("Marcus: I have 3 kids and a dog.")]
    assert check_answer(plan, "He has two kids.", rows=rows).rules == ("count_contradicts_evidence",)
    assert check_answer(plan, "Three.", rows=rows).rules == ()
    spelled = [_row("Marcus: my three young kids made a card.")]
    assert check_answer(plan, "3", rows=spelled).rules == ()
    assert check_answer(plan, "4", rows=spelled).rule == "count_contradicts_evidence"
    # nothing listed: no contradiction to find
    assert "count_contradicts_evidence" not in check_answer(plan, "2", rows=[_row("Kids are great.")]).rules


def test_temporal_answer_without_a_time() -> None:
    plan = plan_query("When did Marcus visit his aunt in Porto?")
    rows = [_row("Marcus: I visited my aunt in Porto yesterday!")]
    assert check_answer(plan, "He visited his aunt in Porto.", rows=rows).rules == ("temporal_without_time",)
    assert check_answer(plan, "On 5 March 2023.", rows=rows).rules == ()
    assert check_answer(plan, "The day before 6 March 2023.", rows=rows).rules == ()
    # a yes/no question with a temporal cue does not need a time in its answer
    assert check_answer(plan_query("Had Marcus been to Porto before June 2023?"), "Yes.", rows=rows).rules == ()


def test_a_number_or_month_absent_from_evidence_and_question() -> None:
    plan = plan_query("When did Marcus visit his aunt in Porto?")
    rows = [_row("Marcus: I visited my aunt in Porto yesterday!")]  # said on 6 March 2023
    assert check_answer(plan, "In April 2023.", rows=rows).rules == ("unsupported_number_or_month",)
    assert check_answer(plan, "On 4 March 2023.", rows=rows).rules == ("unsupported_number_or_month",)
    assert check_answer(plan, "In March 2023.", rows=rows).rules == ()
    assert check_answer(plan, "On 5 March 2023.", rows=rows).rules == ()  # "yesterday" resolved

    price = plan_query("How much did Dev pay for the bike?")
    bike = [_row("Dev: Got the bike for $1,450, a steal.")]
    assert check_answer(price, "$1450.", rows=bike).rules == ()
    assert check_answer(price, "$1,540.", rows=bike).rules == ("unsupported_number_or_month",)
    # a number the question itself names is supported
    assert check_answer(plan_query("What did Dev buy in 2022?"), "A bike, in 2022.", rows=bike).rules == ()


def test_an_incompatible_role() -> None:
    plan = plan_query("Who gave Priya the necklace?")
    wrong_way = _fact(
        "give", [("agent", "priya", "Priya"), ("recipient", "dev", "Dev"), ("theme", "necklace", "necklace")]
    )
    right_way = _fact(
        "give",
        [("agent", "nana rosa", "Nana Rosa"), ("recipient", "priya", "Priya"), ("theme", "necklace", "necklace")],
    )
    assert check_answer(plan, "Dev gave it to her.", facts=[wrong_way]).rules == ("incompatible_role",)
    assert check_answer(plan, "Nana Rosa.", facts=[right_way]).rules == ()
    assert check_answer(plan, "Nana Rosa.", facts=[wrong_way, right_way]).rules == ()  # Dev is not the answer


def test_a_planned_event_in_a_count() -> None:
    plan = plan_query("How many times has Priya gone hiking with her brother?")
    hike = [("agent", "priya", "Priya"), ("companion", "brother", "brother")]
    done = [_fact("hike", hike, frame_id="a"), _fact("hike", hike, frame_id="b")]
    planned = _fact("hike", hike, status="planned", frame_id="c")
    assert check_answer(plan, "Twice.", facts=[*done, planned]).rules == ("planned_in_count",)
    assert check_answer(plan, "Twice.", facts=done).rules == ()
    # a planned event of another relation is not what the question counts
    other = _fact("bake", [("agent", "priya", "Priya"), ("theme", "cake", "cake")], status="planned")
    assert check_answer(plan, "Twice.", facts=[*done, other]).rules == ()


def test_every_intersection_question_fires() -> None:
    plan = plan_query("What hobbies do Priya and Marcus both enjoy?")
    rows = [_row("Priya: pottery every week."), _row("Marcus: pottery calms me.", row_id="r2")]
    result = check_answer(plan, "They both enjoy pottery.", rows=rows)
    assert result.rules == ("intersection",)
    assert "intersection" not in check_answer(plan_query("What hobby does Priya enjoy?"), "Pottery.", rows=rows).rules


def test_the_extra_query_comes_from_the_plan() -> None:
    relation = plan_query("When did Marcus visit his aunt in Porto?")
    assert followup_query(relation) == relation.question  # a relation query searches with the question
    derived = plan_query('What did Priya think of "The Quiet Orchard" last weekend?', now=datetime(2023, 6, 20))
    assert not derived.is_relation_query
    assert followup_query(derived) == "Priya The Quiet Orchard think last weekend"
    result = check_answer(derived, "I don't know.")
    assert result.query == followup_query(derived)
