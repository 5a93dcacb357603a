"""A question's numbered references (ADR 0098): a pure module, no database."""

from __future__ import annotations

import pytest

from apps.language.references import MAX_REFERENCES, names_part, numbered_references, referenced_part

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How many days to report damage under clause 17?", ["clause 17"]),
        ("What does Section 4.2 say?", ["section 4.2"]),
        ("What is in article 12(b) of the terms?", ["article 12(b)"]),
        ("Where is order #4471?", ["order 4471"]),
        ("Has order no. 33 shipped?", ["order 33"]),
        ("Is step 3a before step 4?", ["step 3a", "step 4"]),
        ("Compare clause 9 and Clause 9.", ["clause 9"]),  # once, in lowercase
        ("What changed in version 2.0.1?", ["version 2.0.1"]),
    ],
)
def test_a_word_followed_by_a_number_is_a_reference(question: str, expected: list[str]) -> None:
    assert numbered_references(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "What must the tenant do within 17 days?",  # a preposition: an amount of time
        "Who moved on May 5?",  # a date
        "Is Ana 30 years old?",
        "What were the top 5 songs of 2023?",
        "What happened at 10:30?",
        "Did Melanie have 3 kids?",
        "Where did Kwame travel in 2019?",
        "How far is 3.5 km?",
    ],
)
def test_amounts_times_and_dates_are_not_references(question: str) -> None:
    assert numbered_references(question) == []


def test_a_list_of_many_parts_is_not_read_as_references() -> None:
    parts = ", ".join(f"rule {n}" for n in range(1, MAX_REFERENCES + 2))
    assert numbered_references(f"Summarise {parts}.") == []
    assert numbered_references("Summarise rule 1, rule 2.") == ["rule 1", "rule 2"]


LEASE = [
    "Clause 16.",
    "The tenant shall report damage within 10 days.",
    "Clause 17.",
    "The tenant shall give notice before leaving within 32 days.",
    "This clause is governed by section 6 of the general terms.",
    "Clause 17a.",
    "Keys are returned on the last day.",
    "Clause 170.",
    "The tenant shall report damage within 3 days.",
]


def test_the_referenced_part_is_its_sentences_up_to_the_next_part_with_its_heading_joined() -> None:
    assert referenced_part(LEASE, ["clause 17"]) == [
        "Clause 17. The tenant shall give notice before leaving within 32 days.",
        "This clause is governed by section 6 of the general terms.",  # "section 6" is not a clause
    ]
    assert referenced_part(LEASE, ["clause 17a"]) == ["Clause 17a. Keys are returned on the last day."]
    assert referenced_part(LEASE, ["clause 170"]) == ["Clause 170. The tenant shall report damage within 3 days."]


def test_a_part_cited_inside_a_sentence_is_that_sentence_and_what_follows() -> None:
    said = ["Rent is due monthly.", "Under article 4(b), pets need consent.", "Dogs under 10 kg are fine."]
    assert referenced_part(said, ["article 4(b)"]) == said[1:]


def test_without_a_part_the_references_name_the_sentences_are_kept() -> None:
    assert referenced_part(LEASE, ["clause 99", "section 4"]) == LEASE
    assert referenced_part(LEASE, []) == LEASE


def test_a_heading_line_opens_what_it_heads() -> None:
    runbook = ["## Section 4: Restoring a replica", "Stop the replica first.", "## Section 5: Incidents"]
    assert referenced_part(runbook, ["section 4"]) == ["## Section 4: Restoring a replica Stop the replica first."]
    log = ["deploy #1057 of search FAILED (out of memory)", "deploy #1058 of search succeeded"]
    assert referenced_part(log, ["deploy 1057"]) == log[:1]  # a record, not a heading


def test_a_text_names_a_part_by_its_label_and_number() -> None:
    assert names_part("2026-03-05 deploy #1057 of search FAILED", ["deploy 1057"])
    assert names_part("See Clause No. 17 below.", ["clause 17"])
    assert not names_part("deploy #10570 of search", ["deploy 1057"])
    assert not names_part("within 17 days", ["clause 17"])
