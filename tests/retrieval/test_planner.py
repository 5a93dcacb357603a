"""The deterministic planner Π(q) (paper §2.4 eq. 9, A.3): a pure function, no database needed.

The questions are our own, in the style of long-conversation memory benchmarks.
"""

from __future__ import annotations

import time
from datetime import date, datetime

import pytest

from apps.language.lexicon import ACTIVITY_FAMILIES, RELATION_FAMILIES, predicate_families
from apps.language.words import content_stems, lemma_candidates, stem
from apps.retrieval.planner import OPERATOR_BUDGETS, asked_words, plan_query
from apps.retrieval.types import Budgets

pytestmark = pytest.mark.unit

NOW = datetime(2023, 6, 20, 15, 30)


def _families(question: str) -> set[str]:
    return {family.name for family in plan_query(question).relations}


def test_budget_table_is_the_architectures() -> None:
    assert dict(OPERATOR_BUDGETS) == {
        "single": Budgets(base_rows=6, cited_rows=4),
        "temporal": Budgets(base_rows=6, cited_rows=6),
        "intersection": Budgets(base_rows=6, cited_rows=8),
        "list-union": Budgets(base_rows=8, cited_rows=10),
        "count": Budgets(base_rows=8, cited_rows=12),
    }
    count = OPERATOR_BUDGETS["count"]
    assert (count.max_facts, count.total_rows) == (12, 20)  # B^R also caps the rendered facts


def test_count_question() -> None:
    plan = plan_query("How many times has Priya gone hiking with her brother?")
    assert plan.operator == "count"
    assert plan.budgets == Budgets(8, 12)
    assert plan.answer_types[0] == "number"
    assert plan.counted == "times"
    assert {"travel", "exercise", "family"} <= {family.name for family in plan.relations}
    assert plan.entities == ("Priya",)
    assert plan.role_hints[0].key == "priya" and plan.role_hints[0].groups == {"agent"}

    kids = plan_query("How many kids does Marcus have?")
    assert (kids.operator, kids.counted) == ("count", "kids")
    assert "own" in {family.name for family in kids.relations}  # main-verb "have" is a relation cue
    assert plan_query("How often does Dev go swimming?").operator == "count"
    assert plan_query("What is the number of plants on Priya's balcony?").operator == "count"


def test_intersection_question() -> None:
    plan = plan_query("What hobbies do Priya and Marcus both enjoy?")
    assert plan.operator == "intersection"
    assert plan.budgets == Budgets(6, 8)
    assert plan.entities == ("Priya", "Marcus")
    assert [family.name for family in plan.relations] == ["like"]
    assert all(hint.groups == {"agent"} for hint in plan.role_hints)  # coordinated subjects

    common = plan_query("What do Priya and Marcus have in common?")
    assert common.operator == "intersection"
    assert "own" not in {family.name for family in common.relations}  # "have in common" is not ownership
    assert plan_query("Did Priya and Marcus go to the same concert?").operator == "intersection"
    # "same" without two names joined by "and" is not an intersection
    assert plan_query("Did Priya wear the same jacket to the concert?").operator != "intersection"


def test_temporal_question_about_a_done_event() -> None:
    plan = plan_query("When did Marcus visit his aunt in Porto?")
    assert plan.operator == "temporal"
    assert plan.budgets == Budgets(6, 6)
    assert plan.answer_types == ("date",)
    assert {"travel", "family"} <= {family.name for family in plan.relations}
    assert plan.entities == ("Marcus", "Porto")
    assert plan.future is False  # planned frames will be penalized
    assert plan.answer_roles == {"time"}


def test_temporal_question_about_a_planned_event() -> None:
    plan = plan_query("When is Priya planning to fly to Lisbon?")
    assert plan.operator == "temporal"
    assert plan.future is True  # the question asks about the plan itself
    assert [family.name for family in plan.relations] == ["travel"]
    assert plan.objects == ("Lisbon",)
    lisbon = next(hint for hint in plan.role_hints if hint.key == "lisbon")
    assert "place" in lisbon.groups
    assert "planning" not in plan.constraints.keywords


def test_temporal_constraints_resolve_against_now() -> None:
    plan = plan_query("What did Priya cook last weekend?", now=NOW)
    assert plan.operator == "single"  # a date constraint alone does not make a temporal operator
    (weekend,) = plan.temporal.ranges
    assert (weekend.start, weekend.end, weekend.precision) == (date(2023, 6, 12), date(2023, 6, 19), "week")

    unresolved = plan_query("What did Priya cook last weekend?")
    assert unresolved.temporal.ranges == () and unresolved.temporal.relative == ("last weekend",)

    before = plan_query("Had Priya been to Lisbon before June 2023?")
    (june,) = before.temporal.ranges
    assert (june.start, june.end, june.relation) == (date(2023, 6, 1), date(2023, 7, 1), "before")
    assert "before" in before.temporal.orders

    since = plan_query("How many years has Marcus worked as a nurse since 2019?")
    assert since.operator == "temporal"  # "how many years" asks for a time, not a count
    assert since.temporal.ranges[0].relation == "after"

    in_may = plan_query("Why did Marcus quit his job in May?")
    assert in_may.temporal.months == (5,) and in_may.temporal.ranges == ()
    assert plan_query("Why did Marcus quit his job in May?", now=NOW).temporal.ranges[0].start == date(2023, 5, 1)


@pytest.mark.parametrize(
    ("question", "order"),
    [
        ("What was the first concert Priya attended?", "first"),
        ("When did Marcus last see his cousin?", "last"),
        ("What did Dev do after the marathon?", "after"),
        ("In what order did Priya visit the three cities?", "order"),
    ],
)
def test_temporal_orders(question: str, order: str) -> None:
    assert order in plan_query(question).temporal.orders


def test_last_week_is_a_date_not_an_order() -> None:
    assert "last" not in plan_query("What did Priya bake last week?").temporal.orders


def test_list_union_question() -> None:
    plan = plan_query("What instruments does Marcus play?")
    assert plan.operator == "list-union"
    assert plan.budgets == Budgets(8, 10)
    assert [family.name for family in plan.relations] == ["play"]
    assert plan_query("What are Priya's hobbies?").operator == "list-union"
    assert plan_query("What kinds of bread has Dev baked?").operator == "list-union"
    assert plan_query("What activities did Priya do at the retreat?").operator == "list-union"
    assert plan_query("List the books Priya borrowed from Marcus.").operator == "list-union"
    # a list with a weak temporal cue stays a list and keeps the cue as a constraint
    moved = plan_query("Which books did Priya read after moving to Denver?")
    assert moved.operator == "list-union" and moved.temporal.orders == ("after",)


@pytest.mark.parametrize(
    "question",
    [
        "Where has Melanie camped?",
        "What has Andrew done with his dogs?",
        "What has Melanie painted?",
        "Which cities has Priya visited since the spring?",
        "What kind of indoor activities has Andrew pursued with his girlfriend?",  # plural past "kind of"
    ],
)
def test_a_question_in_the_present_perfect_asks_for_every_time_it_happened(question: str) -> None:
    # What happened at any time so far, every time it did (ADR 0129).
    assert plan_query(question).operator == "list-union"


@pytest.mark.parametrize(
    "question",
    [
        "What has Noor been up to lately?",  # a state, not what happened
        "Who has Priya met at work?",
        "How has Andrew felt about his job?",
        "What did Melanie paint last week?",
        "What is the name of Priya's cat?",
        "Which specific type of bird mesmerizes Andrew?",  # a verb ending in "s" is no plural
        "What caused the currency rounding failures?",  # the plural is the cause's object
    ],
)
def test_other_questions_about_the_past_are_not_lists_for_their_tense(question: str) -> None:
    assert plan_query(question).operator != "list-union"


def test_single_question() -> None:
    plan = plan_query("What is the name of Priya's cat?")
    assert plan.operator == "single"
    assert plan.budgets == Budgets(6, 4)
    assert plan.answer_types == ("object",)
    assert [family.name for family in plan.relations] == ["pet"]
    assert plan.role_hints[0].name == "Priya" and plan.role_hints[0].groups == {"agent"}  # possessor
    assert plan_query("What kind of car does Dev drive?").operator == "single"  # singular "kind"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who did Marcus go hiking with?", "person"),
        ("Where did Priya move last year?", "location"),
        ("Why did Marcus quit his job?", "reason"),
        ("Did Dev enjoy the pottery class?", "yes/no"),
        ("What did Priya do on Saturday?", "activity"),
        ("How much did Dev pay for the bike?", "number"),
        ("What year did Marcus graduate?", "date"),
    ],
)
def test_answer_types(question: str, expected: str) -> None:
    assert expected in plan_query(question).answer_types


def test_named_entities_and_objects() -> None:
    plan = plan_query('Did Priya read "The Quiet Orchard" at the Bank of America Plaza?')
    assert plan.entities == ("Priya", "The Quiet Orchard", "Bank of America Plaza")  # question order
    assert "The Quiet Orchard" in plan.objects
    assert "Priya" not in plan.objects  # the subject is not an object of the relation
    # months, weekdays and sentence-initial words are not entities
    assert plan_query("Which gift did Dev buy on Monday in March?").entities == ("Dev",)
    assert plan_query("Suppose Dev moved. Where to?").entities == ("Dev",)  # not "Suppose", not "Where"

    numbers = plan_query("Did Priya run 10 km or 21.1 km on 3rd May 2023?").constraints.numbers
    assert numbers == ("10", "21.1", "3", "2023")


def test_subject_after_a_noun_is_an_agent() -> None:
    plan = plan_query("What was the first concert Priya attended?")
    assert plan.role_hints[0].groups == {"agent"}
    assert plan.objects == ()


def test_role_hints_follow_direction() -> None:
    gave = plan_query("Who gave Priya the necklace?")
    assert gave.answer_roles == {"agent"}
    assert gave.role_hints[0].groups == {"theme", "recipient", "place"}
    assert plan_query("Who did Marcus go to the museum with?").answer_roles == {"companion"}


def test_auxiliary_have_and_future_going_are_not_relations() -> None:
    assert "own" not in _families("Has Priya been to Porto?")
    assert "travel" not in _families("Is Priya going to paint the fence?")
    assert "travel" in _families("Is Priya going to the festival?")
    # ADR 0150: the inverted "have" of the perfect, its participle after a subject of several words
    assert "own" not in _families("What kind of places have Marcus and his sister checked out?")
    assert "own" not in _families("How long have Priya and her husband been married?")
    assert "own" in _families("Does Priya have kids who played football?")
    assert "own" in _families("What pets does Marcus have?")
    # ADR 0156: giving up is quitting, not giving
    assert "give" not in _families("What did Priya give up last year?")
    assert "give" in _families("What did Priya give to Marcus?")


def test_an_activity_question_without_a_relation_asks_for_every_activity_family() -> None:
    partake = plan_query("What activities does Priya partake in?")
    assert "activity" in partake.answer_types
    assert {family.name for family in partake.relations} == set(ACTIVITY_FAMILIES)
    assert all(family.cues == ("activities",) for family in partake.relations)
    assert partake.is_relation_query
    # the asked thing may sit deeper in the wh-phrase, and "what does X do" asks for an activity
    assert _families("What kind of indoor activities has Marcus tried lately?") == set(ACTIVITY_FAMILIES)
    assert _families("What does Dev do to unwind?") == set(ACTIVITY_FAMILIES)
    # a question that cues a family keeps only its own
    assert _families("What outdoor activities has Priya done besides hiking?") == {"exercise"}
    # not an activity question: no families are added
    assert _families("What is Priya's middle name?") == set()


def test_signing_up_is_attending_or_studying() -> None:
    assert predicate_families("sign_up") == {"attend", "study"}
    assert {"attend", "study"} <= _families("Which class did Priya sign up for?")


def test_lemmas_and_stems() -> None:
    assert "go" in lemma_candidates("went")
    assert "hike" in lemma_candidates("hiking")
    assert "plan" in lemma_candidates("planned")
    assert stem("painting") == stem("painted") == stem("paints") == stem("paint")
    assert stem("making") == stem("made") == stem("make")
    assert content_stems("Priya's kids went hiking") == {"priya", "kid", "go", "hik"}
    # a pronoun or an auxiliary with its contraction says nothing of the topic
    assert content_stems("I'm allergic, we've moved, I don't know, it can't wait") == {
        "allergic",
        "mov",
        "know",
        "wait",
    }
    assert predicate_families("work_at") == {"work"}
    assert predicate_families("adopted") == {"pet"}
    assert all(forms == tuple(dict.fromkeys(forms)) for forms in RELATION_FAMILIES.values())


def test_a_number_that_names_something_is_asked_not_counted() -> None:
    phone = plan_query("What is the phone number of the boiler service company?")
    assert phone.operator != "count" and "number" in phone.answer_types
    kids = plan_query("What is the number of kids Melanie has?")
    assert kids.operator == "count" and kids.counted == "kids"


def test_deterministic_and_fast() -> None:
    questions = [
        "How many times has Priya gone hiking with her brother?",
        "What hobbies do Priya and Marcus both enjoy?",
        "When is Priya planning to fly to Lisbon?",
        "What instruments does Marcus play?",
        "What is the name of Priya's cat?",
    ]
    assert [plan_query(q, now=NOW) for q in questions] == [plan_query(q, now=NOW) for q in questions]
    rounds = 100
    start = time.perf_counter()
    for index in range(rounds):
        for question in questions:
            plan_query(f"{question} {index}")  # distinct texts: no cache hits
    per_question = (time.perf_counter() - start) / (rounds * len(questions))
    assert per_question < 0.002


def test_the_asked_words_are_the_content_words_with_their_other_words_but_the_names() -> None:
    assert (
        asked_words(plan_query("What is essential to keep the dogs looking good, according to Audrey?"))
        == "essential or keep or dogs or looking or good or according"
    )
    assert asked_words(plan_query("What has Andrew done with his girlfriend?")).endswith("girlfriend or gf")
    assert asked_words(plan_query("Who is she?")) == ""
