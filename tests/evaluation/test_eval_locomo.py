"""The LoCoMo evaluation runs on any file of the dataset's format: a two-session conversation
written here, through every retrieval mode and the reference retrievers over raw turns."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.evaluation.management.commands.eval_locomo import REFERENCE_TURNS, SYSTEM_TURNS

SAMPLE = {
    "sample_id": "tiny-1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a greyhound named Biscuit last weekend!"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "That's lovely. I started pottery classes on Tuesday."},
            {"speaker": "Ana", "dia_id": "D1:3", "text": "Pottery sounds relaxing. What did you make?"},
            {"speaker": "Ben", "dia_id": "D1:4", "text": "A blue bowl for my sister.", "blip_caption": "a blue bowl"},
        ],
        "session_2_date_time": "10:00 am on 20 June, 2023",
        "session_2": [
            {"speaker": "Ana", "dia_id": "D2:1", "text": "Biscuit ran his first race in Lisbon yesterday."},
            {"speaker": "Ben", "dia_id": "D2:2", "text": "Congratulations! Did he win?"},
            {"speaker": "Ana", "dia_id": "D2:3", "text": "He came second out of nine dogs."},
        ],
    },
    "qa": [
        {"question": "What is the name of Ana's greyhound?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
        {"question": "What did Ben make in pottery class?", "answer": "a bowl", "evidence": ["D1:4"], "category": 4},
        {"question": "Where did Biscuit race?", "answer": "Lisbon", "evidence": ["D2:1"], "category": 1},
    ],
}
MODES = ("flat", "graph", "turns-bm25", "turns-dense", "turns-rrf")


def test_every_mode_scores_every_question_of_a_file_in_the_dataset_format(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([SAMPLE]))
    out = tmp_path / "run.jsonl"
    printed = StringIO()
    call_command("eval_locomo", data=data, mode=",".join(MODES), out=out, stdout=printed)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((line["mode"], line["qa_index"]) for line in lines) == sorted(
        (mode, index) for mode in MODES for index in range(3)
    )
    turn_ids = {t["dia_id"] for s in ("session_1", "session_2") for t in SAMPLE["conversation"][s]}  # type: ignore[index]
    for line in lines:
        returned = [item["dia_id"] for item in line["returned_wide"]]
        assert set(returned) <= turn_ids and len(returned) == len(set(returned))
        assert all(item["tokens"] > 0 for item in line["returned_wide"])
        assert not line["fallback"]
    by_mode = {(line["mode"], line["qa_index"]): line for line in lines}
    # The words of the question single out its turn for BM25 over raw turns.
    assert by_mode[("turns-bm25", 0)]["returned_wide"][0]["dia_id"] == "D1:1"
    assert by_mode[("turns-bm25", 2)]["returned_wide"][0]["dia_id"] == "D2:1"
    reference = by_mode[("turns-rrf", 1)]
    assert len(reference["returned"]) <= SYSTEM_TURNS and len(reference["returned_wide"]) <= REFERENCE_TURNS
    assert by_mode[("graph", 0)]["anchors_inspected"] > 0
    assert any(item["dia_id"] == "D1:1" for item in by_mode[("graph", 0)]["returned_wide"])
    report = printed.getvalue()
    for mode in MODES:
        assert f"| {mode} | all 1–4 | 3 |" in report
    assert (tmp_path / "run.png").exists()  # the plot goes beside the run file unless the docs are written


def test_repeated_ingestions_report_the_mean_and_the_range(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([SAMPLE]))
    out = tmp_path / "run.jsonl"
    printed = StringIO()
    call_command("eval_locomo", data=data, mode="flat,graph", out=out, ingestions=2, stdout=printed)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((line["mode"], line["ingestion"], line["qa_index"]) for line in lines) == sorted(
        (mode, ingestion, index) for mode in ("flat", "graph") for ingestion in (0, 1) for index in range(3)
    )
    report = printed.getvalue()
    assert "eval_locomo --mode flat,graph --ingestions 2 --write-docs" in report
    assert "range over ingestions" in report
    row = next(line for line in report.splitlines() if line.startswith("| graph | all 1–4 | 3 |"))  # counted once
    low, high = (float(value.strip(" %|")) for value in row.split("|")[-2].split("–"))
    mean = float(row.split("|")[6].strip(" %"))
    assert low <= mean <= high
    with pytest.raises(CommandError, match="at least 1"):
        call_command("eval_locomo", data=data, mode="flat", out=out, ingestions=0)
