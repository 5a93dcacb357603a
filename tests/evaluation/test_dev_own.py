"""The project's own development set (apps/evaluation/data/dev_own_v1.json) is a well-formed
LoCoMo-format file: every evidence id names a turn, every category is asked, the sessions are
dated, and it is large enough to report on."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from apps.evaluation.locomo import load_conversations, parse_session_time

DATA = Path(__file__).resolve().parents[2] / "apps" / "evaluation" / "data" / "dev_own_v1.json"
pytestmark = pytest.mark.unit


def _samples() -> list[dict]:  # type: ignore[type-arg]
    return json.loads(DATA.read_text())


def test_every_evidence_id_names_a_turn_of_its_conversation() -> None:
    for sample in _samples():
        conversation = sample["conversation"]
        assert {"speaker_a", "speaker_b"} <= conversation.keys()
        numbers = sorted(int(key.split("_")[1]) for key in conversation if re.fullmatch(r"session_\d+", key))
        assert numbers == list(range(1, len(numbers) + 1))
        dia_ids = set()
        for number in numbers:
            parse_session_time(conversation[f"session_{number}_date_time"])  # dated, in the dataset's form
            for index, turn in enumerate(conversation[f"session_{number}"], start=1):
                assert turn.keys() == {"speaker", "dia_id", "text"} and turn["text"].strip()
                assert turn["dia_id"] == f"D{number}:{index}"
                dia_ids.add(turn["dia_id"])
        for qa in sample["qa"]:
            assert qa["question"].strip() and qa["evidence"], qa
            assert set(qa["evidence"]) <= dia_ids, (sample["sample_id"], qa["question"])
            answer_key = "adversarial_answer" if qa["category"] == 5 else "answer"
            assert str(qa[answer_key]).strip(), qa


def test_the_set_has_the_size_and_every_category() -> None:
    samples = _samples()
    assert len(samples) >= 3
    assert len({sample["sample_id"] for sample in samples}) == len(samples)
    categories = Counter(qa["category"] for sample in samples for qa in sample["qa"] if qa["evidence"])
    assert sum(categories.values()) >= 150
    assert set(categories) == {1, 2, 3, 4, 5} and min(categories.values()) >= 10
    for sample in samples:  # every conversation asks every category
        assert {qa["category"] for qa in sample["qa"]} == {1, 2, 3, 4, 5}, sample["sample_id"]


def test_shared_first_names_are_told_apart_by_surname() -> None:
    text = " ".join(
        turn["text"]
        for sample in _samples()
        for key, turns in sample["conversation"].items()
        if re.fullmatch(r"session_\d+", key)
        for turn in turns
    )
    for first in ("Sam", "Maria"):
        surnames = set(re.findall(rf"\b{first} ([A-Z][a-z]+)", text))
        assert len(surnames) >= 2, (first, surnames)


def test_the_loader_reads_it_as_the_evaluation_does() -> None:
    conversations = load_conversations(DATA.parent, DATA.name)
    assert [c.sample_id for c in conversations] == [s["sample_id"] for s in _samples()]
    questions = [q for c in conversations for q in c.questions]
    assert len(questions) == sum(len(s["qa"]) for s in _samples())
    assert all(q.evidence and not q.dropped_evidence and q.answer for q in questions)
    for conversation in conversations:
        times = [session.date_time for session in conversation.sessions]
        assert times == sorted(times)  # sessions in date order, so relative dates resolve
