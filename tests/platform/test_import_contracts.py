"""The import contracts of pyproject.toml hold on the project, and catch what they forbid."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--config", str(root / "pyproject.toml")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The project's packages and contracts, in a directory of their own to break."""
    ignored = shutil.ignore_patterns("__pycache__", "*.pyc", "migrations", "static", "templates")
    for package in ("apps", "workers"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=ignored)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_project_keeps_every_contract() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_unbroken_copy_keeps_them_too(copy: Path) -> None:
    result = _lint(copy)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("module", "line", "message"),
    [
        # a Django import in a pure core
        ("apps/graph/keys.py", "from django.conf import settings", "apps.graph.keys is not allowed to import django"),
        # Django reached through another module
        ("apps/language/words.py", "from apps.jobs import services", "apps.language is not allowed to import django"),
        # a lower layer importing a higher one
        (
            "apps/memory/manager.py",
            "from apps.retrieval import planner",
            "apps.memory is not allowed to import apps.retrieval",
        ),
        # providers importing a domain implementation
        (
            "apps/providers/registry.py",
            "from apps.graph.extraction import local",
            "apps.providers is not allowed to import apps.graph.extraction",
        ),
    ],
)
def test_a_forbidden_import_breaks_the_lint(copy: Path, module: str, line: str, message: str) -> None:
    path = copy / module
    path.write_text(
        path.read_text().replace(
            "from __future__ import annotations\n", f"from __future__ import annotations\n\n{line}  # noqa\n", 1
        )
    )

    result = _lint(copy)

    assert result.returncode != 0
    assert message in result.stdout
