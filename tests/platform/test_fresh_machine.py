"""The README's commands on a fresh machine: ``make test`` installs (or names) the system packages
the suite needs, and the first ``manage.py`` command on a new var directory migrates first
(found by the red-team pass: the console's browser tests errored without Chromium, and a fresh
``manage.py seed_demo`` failed with ``relation "tenancy_organization" does not exist``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from infra.embedded import postgres, redis
from tests.platform.test_make_run import SERVICE_VARIABLES
from tests.processes import ROOT

SCRIPT = ROOT / "infra" / "setup" / "system_packages.sh"


def _run_script(chromium: str, *, as_nobody: bool) -> subprocess.CompletedProcess[str]:
    # The script comes on standard input: the unprivileged user need not read the work tree.
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if as_nobody else []
    with SCRIPT.open() as script:
        return subprocess.run(
            [*prefix, "bash", "-s"],
            stdin=script,
            capture_output=True,
            text=True,
            cwd="/",
            env={"PATH": os.environ["PATH"], "MIRIX_CHROMIUM": chromium},
            timeout=60,
        )


def test_make_test_runs_the_system_packages_step_first() -> None:
    plan = subprocess.run(["make", "-n", "test"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert plan.index("infra/setup/system_packages.sh") < plan.index("-m pytest")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci and "apt-get" not in ci  # one copy of the install step


def test_the_system_packages_step_does_nothing_when_chromium_is_there(tmp_path: Path) -> None:
    chromium = tmp_path / "chromium"
    chromium.write_text("#!/bin/sh\n")
    chromium.chmod(0o755)
    result = _run_script(str(chromium), as_nobody=False)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""


def test_a_user_who_cannot_install_packages_is_told_the_exact_command_at_once() -> None:
    result = _run_script("/nonexistent/chromium", as_nobody=True)
    assert result.returncode == 1, result
    assert "sudo sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium'" in (
        result.stderr
    )
    assert "Installing" not in result.stdout


@pytest.mark.slow
def test_the_first_manage_py_command_on_a_new_var_directory_migrates_first(tmp_path: Path) -> None:
    var_dir = tmp_path / "var"
    hidden = {*SERVICE_VARIABLES, "DJANGO_SETTINGS_MODULE", "MIRIX_TEST_KEEP_ENV"}
    env = {**{k: v for k, v in os.environ.items() if k not in hidden}, "MIRIX_VAR_DIR": str(var_dir)}
    try:
        first = subprocess.run(
            [sys.executable, "manage.py", "seed_demo"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert first.returncode == 0, first.stdout + first.stderr
        assert "applying migrations first" in first.stdout and "Demo organization created" in first.stdout
        # The next command finds the schema in place: no second migration run.
        again = subprocess.run(
            [sys.executable, "manage.py", "seed_demo"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert again.returncode == 0, again.stdout + again.stderr
        assert "Demo organization exists" in again.stdout and "applying migrations" not in again.stdout
    finally:
        redis.stop_redis(var_dir / "redis")
        postgres.stop_postgres(var_dir / "postgres")
