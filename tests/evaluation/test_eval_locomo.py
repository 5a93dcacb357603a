"""The LoCoMo evaluation runs on any file of the dataset's format: a two-session conversation
written here, through every retrieval mode and the reference retrievers over raw turns."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.evaluation import coverage
from apps.evaluation.coverage import missing_lane
from apps.evaluation.management.commands.eval_locomo import REFERENCE_TURNS, SYSTEM_TURNS, _recall_at, _recall_table
from apps.retrieval.services import LaneTrace

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
    assert (
        f"## LoCoMo evidence recall on tiny (`python manage.py eval_locomo --data {data} --mode flat,graph --ingestions 2 --write-docs`)"
        in report
    )
    assert "range over ingestions" in report
    row = next(line for line in report.splitlines() if line.startswith("| graph | all 1–4 | 3 |"))  # counted once
    low, high = (float(value.strip(" %|")) for value in row.split("|")[-2].split("–"))
    mean = float(row.split("|")[6].strip(" %"))
    assert low <= mean <= high
    with pytest.raises(CommandError, match="at least 1"):
        call_command("eval_locomo", data=data, mode="flat", out=out, ingestions=0)


@pytest.mark.unit
def test_recall_at_k_credits_a_gold_turn_by_the_rank_of_the_first_row_citing_it() -> None:
    # A fact at rank 1 cites two turns; rank 2 is an unrelated turn; the second gold turn first
    # appears at rank 6.
    ranking = [
        {"dia_id": "D1:1", "tokens": 10, "rank": 1},
        {"dia_id": "D1:2", "tokens": 10, "rank": 1},
        {"dia_id": "D3:4", "tokens": 10, "rank": 2},
        {"dia_id": "D2:7", "tokens": 10, "rank": 6},
    ]
    assert _recall_at(["D1:2", "D2:7"], ranking, 1) == 0.5
    assert _recall_at(["D1:2", "D2:7"], ranking, 5) == 0.5
    assert _recall_at(["D1:2", "D2:7"], ranking, 6) == 1.0
    assert _recall_at(["D1:2", "D2:7"], ranking, 10) == 1.0
    assert _recall_at(["D9:9"], ranking, 10) == 0.0  # never returned
    assert _recall_at(["D1:1", "D1:1"], ranking, 1) == 1.0  # a repeated gold id counts once
    assert _recall_at([], ranking, 10) == 0.0


@pytest.mark.unit
def test_recall_at_k_is_reported_per_category_and_mode() -> None:
    def line(mode: str, category: int, evidence: list[str], ranks: dict[str, int]) -> dict[str, object]:
        returned = [{"dia_id": dia, "tokens": 5, "rank": rank} for dia, rank in ranks.items()]
        return {
            "mode": mode,
            "category": category,
            "evidence": evidence,
            "ingestion": 0,
            "returned": returned,
            "returned_wide": returned,
            "rows_returned": len(returned),
            "tokens_returned": 5 * len(returned),
        }

    lines = [
        line("flat", 2, ["D1:1"], {"D1:1": 1}),
        line("flat", 2, ["D1:2"], {"D1:9": 1, "D1:2": 7}),
        line("graph", 2, ["D1:1"], {"D1:5": 1, "D1:1": 3}),
        line("graph", 2, ["D1:2"], {"D1:2": 12}),
        line("graph", 5, ["D1:2"], {"D1:2": 1}),  # adversarial: not scored
    ]
    table = _recall_table(lines, ["flat", "graph"])
    assert (table["flat"][2]["R@1"], table["flat"][2]["R@5"], table["flat"][2]["R@10"]) == (0.5, 0.5, 1.0)
    assert (table["graph"][2]["R@1"], table["graph"][2]["R@5"], table["graph"][2]["R@10"]) == (0.0, 0.5, 0.5)
    assert table["graph"]["all"]["n"] == 2 and table["graph"]["all"]["R@5"] == 0.5


@pytest.mark.unit
def test_a_missing_gold_turn_is_charged_to_the_first_lane_that_should_have_reached_it() -> None:
    trace = LaneTrace(recalled=["a", "b", "c"], selected=["a"], co_participants=["d"], candidates={"r9"})
    assert missing_lane([], set(), trace) == coverage.NO_ROW
    assert missing_lane(["r1"], set(), trace) == coverage.NO_ANCHOR
    assert missing_lane(["r1"], {"a", "z"}, trace) == coverage.ROW_CAP
    assert missing_lane(["r1"], {"b"}, trace) == coverage.NOT_SELECTED
    assert missing_lane(["r1"], {"d"}, trace) == coverage.CO_CAP
    assert missing_lane(["r1"], {"z"}, trace) == coverage.NOT_RECALLED


def test_the_coverage_report_lists_gold_turns_outside_the_candidate_set(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    # A question whose gold turn shares no word or name with it, beside one the graph reaches.
    sample = {
        **SAMPLE,
        "qa": [*SAMPLE["qa"], {"question": "Which city?", "answer": "x", "evidence": ["D1:3"], "category": 1}],
    }  # type: ignore[list-item]
    data.write_text(json.dumps([sample]))
    out = tmp_path / "run.jsonl"
    printed = StringIO()
    call_command("eval_locomo", data=data, mode="flat,graph", out=out, coverage_report=True, stdout=printed)
    found = [json.loads(line) for line in out.with_suffix(".coverage.jsonl").read_text().splitlines()]
    lanes = {
        coverage.NO_ROW,
        coverage.NO_ANCHOR,
        coverage.ROW_CAP,
        coverage.NOT_SELECTED,
        coverage.CO_CAP,
        coverage.NOT_RECALLED,
    }
    assert all(item["lane"] in lanes and item["dia_id"] in ("D2:1", "D1:3") for item in found)
    report = printed.getvalue()
    assert "## Graph-mode candidate coverage of multi-hop gold turns" in report
    assert f"2 multi-hop questions of `{data}` with 2 gold turns; **{len(found)} never enter" in report
    for item in found:
        assert f"| {item['sample_id']} | #{item['qa_index']} | {item['dia_id']} | {item['lane']} |" in report
    with pytest.raises(CommandError, match="graph"):
        call_command("eval_locomo", data=data, mode="flat", out=out, coverage_report=True)


def test_kept_organizations_are_asked_again_without_ingesting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from apps.evaluation.management.commands import eval_locomo
    from apps.tenancy import services as tenancy

    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([SAMPLE]))
    kept_file = tmp_path / "kept.json"
    monkeypatch.setattr(eval_locomo, "KEPT_FILE", kept_file)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    call_command("eval_locomo", data=data, mode="graph", out=first, keep=True, stdout=StringIO())
    kept = json.loads(kept_file.read_text())
    assert [(item["sample_id"], item["ingestion"], item["dream"]) for item in kept] == [("tiny-1", 0, False)]

    def no_ingestion(*args: object, **kwargs: object) -> None:
        raise AssertionError("a reused run must not ingest")

    monkeypatch.setattr(eval_locomo, "conversation_ingest", no_ingestion)
    try:
        call_command("eval_locomo", data=data, mode="graph", out=second, reuse=kept_file, stdout=StringIO())
        ranked = [
            [item["dia_id"] for item in json.loads(line)["returned_wide"]] for line in first.read_text().splitlines()
        ]
        again = [
            [item["dia_id"] for item in json.loads(line)["returned_wide"]] for line in second.read_text().splitlines()
        ]
        assert ranked == again and any(ranked)
        with pytest.raises(CommandError, match="no kept ingestion 1"):
            call_command("eval_locomo", data=data, mode="graph", out=second, reuse=kept_file, ingestions=2)
    finally:
        tenancy.organization_offboard(organization_id=kept[0]["organization_id"])
    with pytest.raises(CommandError, match="does not exist"):
        call_command("eval_locomo", data=data, mode="graph", out=second, reuse=tmp_path / "missing.json")
