"""The unit suite (``make test-unit``) starts nothing and refuses tests that need the database."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT


def _unit_run(var_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        # Wherever the embedded stack would be started: a directory that must stay empty.
        "MIRIX_VAR_DIR": str(var_dir),
        # A database the unit settings must ignore (nothing listens on port 1).
        "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/nothing",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--ds=mirix_saas.settings.unit", "-q", "-p", "no:randomly", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_unit_tests_run_without_any_service_and_database_tests_are_refused(tmp_path: Path) -> None:
    var_dir = tmp_path / "var"
    var_dir.mkdir()

    passed = _unit_run(var_dir, "-m", "unit", "tests/tenancy/test_keys.py", "tests/tenancy/test_api_keys.py")
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-3000:]
    assert re.search(r"\b5 passed, [1-9]\d* deselected", passed.stdout), passed.stdout  # the database tests left out

    refused = _unit_run(var_dir, "tests/tenancy/test_keys.py", "tests/tenancy/test_api_keys.py")
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR, refused.stdout[-3000:] + refused.stderr[-3000:]
    assert re.search(r"\b[1-9]\d* selected tests use the database", refused.stderr), refused.stderr
    assert "tests/tenancy/test_api_keys.py::" in refused.stderr and "-m unit" in refused.stderr

    assert list(var_dir.iterdir()) == []  # no Postgres or Redis was started
