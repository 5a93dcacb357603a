"""The ``mirix`` CLI as a subprocess (``--json``) against the real stack."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.clients.conftest import Stack, unique

pytestmark = pytest.mark.slow

MIRIX = str(Path(sys.executable).with_name("mirix"))


def mirix(
    stack: Stack, *args: str, key: str | None = None, stdin: str | None = None, env: dict[str, str] | None = None
) -> tuple[int, Any]:
    done = subprocess.run(
        [MIRIX, *args, "--json"],
        input=stdin,
        capture_output=True,
        text=True,
        env={**stack.env(key), **(env or {})},
        timeout=300,
    )
    try:
        return done.returncode, json.loads(done.stdout)
    except ValueError:
        raise AssertionError(f"not JSON (exit {done.returncode}): {done.stdout!r} {done.stderr!r}") from None


def test_subjects_add_import_search_export(stack: Stack, tmp_path: Path) -> None:
    subject = unique("cli")
    code, created = mirix(stack, "subjects", "create", subject)
    assert code == 0 and created["external_id"] == subject
    code, listed = mirix(stack, "subjects", "list")
    assert code == 0 and subject in [s["external_id"] for s in listed]
    code, renamed = mirix(stack, "subjects", "update", subject, "--display-name", "Mina")
    assert code == 0 and renamed["display_name"] == "Mina" and renamed["graph_reindex_job_id"], renamed

    code, added = mirix(
        stack,
        "add",
        subject,
        "--file",
        "-",
        stdin=json.dumps([{"role": "user", "content": "I adopted a cat named Miso last week."}]),
    )
    assert code == 0 and added["records"], added

    lines = tmp_path / "notes.jsonl"
    lines.write_text(
        "\n".join(json.dumps({"text": f"Note {n}: the locker number is {200 + n}."}) for n in range(3)) + "\n"
    )
    code, imported = mirix(stack, "import", subject, str(lines))
    assert code == 0 and imported["imported"] == 3
    code, again = mirix(stack, "import", subject, str(lines))
    assert code == 0 and [r["chunk_id"] for r in again["results"]] == [r["chunk_id"] for r in imported["results"]]

    code, found = mirix(stack, "search", subject, "What is the name of my cat?")
    written = {r["id"] for r in added["records"]}
    assert code == 0 and any("Miso" in row["text"] and row["id"] in written for row in found["rows"])

    code, answered = mirix(stack, "answer", subject, "What is my cat's name?")
    assert code == 0 and "Miso" in answered["answer"] and set(answered["cited_row_ids"]) <= written
    assert answered["cited_row_ids"]

    target = tmp_path / "export.json"
    code, wrote = mirix(stack, "export", subject, "--output", str(target))
    assert code == 0 and wrote == {"written": str(target)}
    exported = json.loads(target.read_text())
    assert "Miso" in json.dumps(exported)


def test_the_search_table_shows_rows_and_their_ids(stack: Stack) -> None:
    subject = stack.owner.subject(unique("cli-table")).external_id
    code, added = mirix(stack, "add", subject, "My favourite colour is teal.")
    assert code == 0
    done = subprocess.run(
        [MIRIX, "search", subject, "favourite colour"],
        capture_output=True,
        text=True,
        env=stack.env(),
        timeout=300,
        input=None,
    )
    assert done.returncode == 0, done.stderr
    assert "teal" in done.stdout and any(r["id"][:8] in done.stdout for r in added["records"])


def test_keys_create_rotate_revoke_and_jobs_watch(stack: Stack) -> None:
    code, issued = mirix(stack, "keys", "create", "cli-key", "--scope", "memories:read")
    assert code == 0, issued
    assert issued["secret"].startswith("mx_") and issued["api_key"]["scopes"] == ["memories:read"]
    code, rotated = mirix(stack, "keys", "rotate", issued["api_key"]["id"], "--overlap-seconds", "0")
    assert code == 0 and rotated["api_key"]["rotated_from"] == issued["api_key"]["id"]
    code, revoked = mirix(stack, "keys", "revoke", rotated["api_key"]["id"])
    assert code == 0 and revoked["revoked_at"]
    code, error = mirix(stack, "subjects", "list", key=rotated["secret"])
    assert code == 1 and error["error"]["code"] == "authentication_failed"

    subject = stack.owner.subject(unique("cli-job")).external_id
    code, added = mirix(stack, "add", subject, "I work at the harbour office.", "--no-wait")
    assert code == 0 and added["job_id"]
    code, job = mirix(stack, "jobs", "watch", added["job_id"], "--interval", "0.5")
    assert code == 0 and job["status"] == "succeeded"


def test_errors_are_the_envelope_and_exit_1(stack: Stack, tmp_path: Path) -> None:
    subject = stack.owner.subject(unique("cli-private")).external_id
    code, error = mirix(stack, "search", subject, "anything", key=stack.intruder.key)
    assert code == 1 and error["error"]["code"] == "not_found"
    code, error = mirix(stack, "subjects", "list", key="mx_live_notakey")
    assert code == 1 and error["error"]["code"] == "authentication_failed"
    # The config file is read when the environment has no key.
    config = tmp_path / "config.toml"
    config.write_text(f'api_key = "{stack.owner.key}"\nbase_url = "{stack.url}"\n')
    env = {"MIRIX_API_KEY": "", "MIRIX_BASE_URL": "", "MIRIX_CONFIG": str(config)}
    code, listed = mirix(stack, "subjects", "list", env=env)
    assert code == 0 and subject in [s["external_id"] for s in listed]
