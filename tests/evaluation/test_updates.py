"""The knowledge-update scoring and the update set's own consistency (pure: no database used)."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.evaluation.locomo import Question, session_messages
from apps.evaluation.updates import (
    CATEGORIES,
    DATA_FILE,
    Needle,
    QuestionScore,
    ReturnedRow,
    UpdateQuestion,
    answer_contains,
    first_sessions,
    fold,
    load_update_set,
    score_question,
    summarize,
)

pytestmark = pytest.mark.unit

# v1 (the default), v2 (a different person, a different document) and v3 (terse lowercase
# chat) are checked the same way.
UPDATE_SETS = pytest.mark.parametrize(
    "path",
    [DATA_FILE, DATA_FILE.with_name("updates_v2.json"), DATA_FILE.with_name("updates_v3.json")],
    ids=lambda path: path.stem,
)


def _question(
    evidence: list[str], stale: tuple[str, ...] = (), needle: Needle | None = None, answer: str = "Lyon"
) -> UpdateQuestion:
    category = 4 if needle else 1
    return UpdateQuestion(
        question=Question("s", 0, "Where does she live?", answer, category, evidence, []),
        category=CATEGORIES[category],
        stale_evidence=stale,
        accepted=(answer,),
        needle=needle,
    )


def _row(*dia_ids: str, text: str = "a row", tokens: int = 10) -> ReturnedRow:
    return ReturnedRow(dia_ids=dia_ids, text=text, tokens=tokens)


def test_current_first_is_recall_at_rank_one_and_no_stale_row_above_it() -> None:
    score = score_question(_question(["D4:1"], stale=("D1:6",)), [_row("D4:1"), _row("D1:6")], "She lives in Lyon.")
    assert score.current_at_1 and score.current_within_budget
    assert score.stale_above_current is False
    assert score.answer_match is True


def test_a_stale_row_above_the_current_one_or_without_it_counts_against() -> None:
    question = _question(["D4:1"], stale=("D1:6",))
    above = score_question(question, [_row("D2:2"), _row("D1:6"), _row("D4:1")], "Porto")
    assert above.stale_above_current is True and not above.current_at_1 and above.current_within_budget
    assert above.answer_match is False
    alone = score_question(question, [_row("D1:6")], None)
    assert alone.stale_above_current is True and not alone.current_within_budget and alone.answer_match is None
    # One row citing both turns (a fact resting on the old and the new statement) is not "above".
    both = score_question(question, [_row("D1:6", "D4:1")], None)
    assert both.stale_above_current is False


def test_current_beyond_the_token_budget_is_not_recalled() -> None:
    rows = [_row("D9:1", tokens=1000), _row("D4:1", tokens=100)]
    assert not score_question(_question(["D4:1"]), rows, None).current_within_budget
    assert score_question(_question(["D4:1"]), rows[1:], None).current_at_1


def test_a_needle_counts_only_inside_the_first_512_tokens_whatever_its_case_and_spacing() -> None:
    needle = Needle("D10:6", "The code of the shared bicycle room is 4471", 0, 43)
    passage = "ARTICLE 16. The  CODE of the shared\nbicycle room is 4471 and is changed once a year."
    question = _question(["D10:6"], needle=needle, answer="4471")
    assert score_question(question, [_row("D10:6", text=passage, tokens=40)], None).needle_within_budget is True
    late = [_row("D3:1", tokens=500), _row("D10:6", text=passage, tokens=40)]
    assert score_question(question, late, None).needle_within_budget is False
    elsewhere = [_row("D10:6", text="The bicycle room has racks.", tokens=10)]
    found = score_question(question, elsewhere, None)
    assert found.needle_within_budget is False and found.current_at_1  # the turn is cited, the passage is not


def test_answers_are_compared_folded_and_from_a_word_start() -> None:
    assert fold("Guillotière, 3rd floor!") == "guillotiere 3rd floor"
    assert answer_contains("They live in the GUILLOTIERE district.", ["Guillotière"])
    assert answer_contains("The deposit is €980.", ["980"]) is False  # "€980" is one word
    assert answer_contains("The deposit is 980 euros.", ["€980", "980"])
    assert not answer_contains("She was at São João.", ["Joon"])
    assert not answer_contains("I don't know.", [""])


def test_summary_counts_each_metric_over_the_questions_it_applies_to() -> None:
    scores = [
        QuestionScore("present-value", True, True, False, None, True),
        QuestionScore("present-value", False, True, True, None, False),
        QuestionScore("document-needle", False, False, None, True, None),
    ]
    table = summarize(scores)
    assert table["present-value"]["current_at_1"].share == 0.5
    assert table["present-value"]["stale_above_current"].share == 0.5
    assert table["present-value"]["needle_within_budget"].share is None
    assert (table["all"]["needle_within_budget"].hits, table["all"]["needle_within_budget"].questions) == (1, 1)
    assert table["all"]["answer_match"].questions == 2
    assert table["past-value"]["current_at_1"].questions == 0


@UPDATE_SETS
def test_the_update_set_is_consistent(path: Path) -> None:
    conversation, questions = load_update_set(path)
    turns = {turn.dia_id: turn.text for session in conversation.sessions for turn in session.turns}
    times = [session.date_time for session in conversation.sessions]
    assert times == sorted(times) and (times[-1] - times[0]).days > 180
    assert len(questions) >= 60
    assert {q.category for q in questions} == set(CATEGORIES.values())
    for item in questions:
        cited = [*item.question.evidence, *item.stale_evidence]
        assert item.question.evidence and set(cited) <= set(turns), item.question.question
        assert not set(item.question.evidence) & set(item.stale_evidence)
        assert any(answer_contains(turns[dia], item.accepted) for dia in item.question.evidence), item.question.question
        if item.needle is not None:
            assert turns[item.needle.dia_id][item.needle.start : item.needle.end] == item.needle.text
    changed = {turn for item in questions if item.category == "present-value" for turn in item.stale_evidence}
    assert len(changed) >= 20  # superseded statements of at least twenty facts
    document = max(turns.values(), key=len)
    assert len(document.split()) >= 3000
    assert sum(1 for item in questions if item.category == "past-value") >= 5


@UPDATE_SETS
def test_a_slice_keeps_only_the_questions_its_sessions_can_answer(path: Path) -> None:
    conversation, questions = load_update_set(path)
    sliced, kept = first_sessions(conversation, questions, 2)
    assert [s.number for s in sliced.sessions] == [1, 2]
    held = {turn.dia_id for session in sliced.sessions for turn in session.turns}
    assert kept and all(set(q.question.evidence) | set(q.stale_evidence) <= held for q in kept)
    assert len(kept) < len(questions)


def test_a_chat_of_unnamed_turns_sends_the_persons_turns_as_user_and_the_others_as_assistant() -> None:
    conversation, _ = load_update_set(DATA_FILE)
    session = conversation.sessions[0]
    person, other = conversation.speakers
    named = list(session_messages(session))
    unnamed = list(session_messages(session, user=person))
    assert [m["name"] for m in named] == [turn.speaker for turn in session.turns]
    assert all("name" not in m for m in unnamed)
    assert [m["role"] for m in unnamed] == ["user" if t.speaker == person else "assistant" for t in session.turns]
    assert {t.speaker for t in session.turns} == {person, other}  # both voices are in the session
    assert [m["content"] for m in unnamed] == [m["content"] for m in named]
