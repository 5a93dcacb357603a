"""eval_updates on a tiny slice of the update set: two short sessions, ingested through the
write path and asked through search and the answer loop."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.evaluation.updates import DATA_FILE
from apps.tenancy.models import Organization


def _tiny_set(path: Path) -> Path:
    sample = json.loads(DATA_FILE.read_text())[0]
    conversation = sample["conversation"]
    for number in (1, 2):
        conversation[f"session_{number}"] = conversation[f"session_{number}"][:8]
    for key in [k for k in conversation if k.startswith("session_") and k.split("_")[1] not in ("1", "2")]:
        del conversation[key]
    kept = {turn["dia_id"] for n in (1, 2) for turn in conversation[f"session_{n}"]}
    sample["qa"] = [qa for qa in sample["qa"] if set(qa["evidence"]) | set(qa["stale_evidence"]) <= kept]
    path.write_text(json.dumps([sample]))
    return path


def test_a_two_session_slice_is_ingested_asked_and_reported(tmp_path: Path) -> None:
    data = _tiny_set(tmp_path / "tiny.json")
    asked = len(json.loads(data.read_text())[0]["qa"])
    out = tmp_path / "run.jsonl"
    printed = StringIO()
    call_command("eval_updates", data=data, out=out, sessions=2, stdout=printed)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert asked >= 4 and len(lines) == asked
    held = {f"D{n}:{i}" for n in (1, 2) for i in range(1, 9)}
    for line in lines:
        assert {dia for row in line["returned"] for dia in row["dia_ids"]} <= held
        assert isinstance(line["current_at_1"], bool) and isinstance(line["answer_match"], bool)
        assert line["needle_within_budget"] is None and line["answered"]
    assert any(line["current_within_budget"] for line in lines)  # rows map back to the turns they cite
    report = printed.getvalue()
    assert f"| all | {asked} |" in report
    # another set than the default one is named by its file in the heading and the command
    assert report.startswith("## Knowledge updates on tiny (") and f"--data {data} --sessions 2 --write-docs" in report
    assert out.with_suffix(".png").exists()
    assert not Organization.objects.dangerously_across_organizations().filter(slug__startswith="eval-updates-").exists()


def test_a_negative_session_count_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="--sessions"):
        call_command("eval_updates", sessions=-1, out=tmp_path / "run.jsonl")


def test_a_kept_ingestion_is_asked_again_with_the_same_rows(tmp_path: Path) -> None:
    data, kept = _tiny_set(tmp_path / "tiny.json"), tmp_path / "kept.json"
    call_command("eval_updates", data=data, out=tmp_path / "first.jsonl", sessions=2, keep=kept, stdout=StringIO())
    organizations = Organization.objects.dangerously_across_organizations()
    assert organizations.filter(id=json.loads(kept.read_text())["organization_id"]).exists()  # not offboarded
    printed = StringIO()
    call_command("eval_updates", data=data, out=tmp_path / "again.jsonl", sessions=2, reuse=kept, stdout=printed)
    first, again = ((tmp_path / name).read_text().splitlines() for name in ("first.jsonl", "again.jsonl"))
    assert [json.loads(line)["returned"] for line in first] == [json.loads(line)["returned"] for line in again]
    assert "a kept ingestion asked again" in printed.getvalue()
    assert organizations.filter(slug__startswith="eval-updates-").count() == 1  # nothing ingested the second time
    with pytest.raises(CommandError, match="--reuse"):
        call_command("eval_updates", data=data, out=tmp_path / "x.jsonl", reuse=tmp_path / "missing.json")
