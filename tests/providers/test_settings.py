"""The providers settings component: defaults with no variables, loud failures on bad ones."""

from __future__ import annotations

import runpy
from typing import Any

import pytest

from mirix_saas.settings.components import providers as component
from mirix_saas.settings.env import MissingSetting

pytestmark = pytest.mark.unit

VARIABLES = [
    "MIRIX_LLM_PROVIDER",
    "MIRIX_EMBEDDING_PROVIDER",
    "MIRIX_EMBEDDING_DIMENSION",
    "MIRIX_LOCAL_EMBEDDING_PRECISION",
    "MIRIX_OPENAI_BASE_URL",
    "MIRIX_OPENAI_API_KEY",
    "MIRIX_OPENAI_MODEL",
    "MIRIX_OPENAI_EMBEDDING_MODEL",
    "MIRIX_OPENAI_TIMEOUT_SECONDS",
    "MIRIX_OPENAI_MAX_ATTEMPTS",
    "MIRIX_OPENAI_RETRY_BASE_SECONDS",
    "MIRIX_PROVIDERS_ALLOW_LOOPBACK",
]


def _load(monkeypatch: pytest.MonkeyPatch, **environment: str) -> dict[str, Any]:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(component.__file__)


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = _load(monkeypatch)
    assert {name: loaded[name] for name in loaded if name.isupper() and not name.startswith("_")} == {
        "LLM_PROVIDER": "local",
        "EMBEDDING_PROVIDER": "local",
        "EMBEDDING_DIMENSION": 384,
        "LOCAL_EMBEDDING_PRECISION": "int8",
        "OPENAI_BASE_URL": None,
        "OPENAI_API_KEY": None,
        "OPENAI_MODEL": "gpt-4.1-mini",
        "OPENAI_EMBEDDING_MODEL": "text-embedding-3-small",
        "OPENAI_TIMEOUT_SECONDS": 60.0,
        "OPENAI_MAX_ATTEMPTS": 3,
        "OPENAI_RETRY_BASE_SECONDS": 0.5,
        "PROVIDERS_ALLOW_LOOPBACK": False,
    }


def test_openai_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = _load(
        monkeypatch,
        MIRIX_LLM_PROVIDER="OpenAI",
        MIRIX_OPENAI_API_KEY="sk-deployment",
        MIRIX_OPENAI_BASE_URL="http://llm.internal/v1",
        MIRIX_OPENAI_TIMEOUT_SECONDS="2.5",
    )
    assert (loaded["LLM_PROVIDER"], loaded["EMBEDDING_PROVIDER"]) == ("openai", "local")
    assert (loaded["OPENAI_API_KEY"], loaded["OPENAI_BASE_URL"]) == ("sk-deployment", "http://llm.internal/v1")
    assert loaded["OPENAI_TIMEOUT_SECONDS"] == 2.5


@pytest.mark.parametrize(
    ("environment", "named"),
    [
        ({"MIRIX_LLM_PROVIDER": "openai"}, "MIRIX_OPENAI_API_KEY"),
        ({"MIRIX_EMBEDDING_PROVIDER": "openai"}, "MIRIX_OPENAI_API_KEY"),
        ({"MIRIX_LLM_PROVIDER": "anthropic"}, "MIRIX_LLM_PROVIDER"),
        ({"MIRIX_OPENAI_TIMEOUT_SECONDS": "soon"}, "MIRIX_OPENAI_TIMEOUT_SECONDS"),
        ({"MIRIX_OPENAI_TIMEOUT_SECONDS": "0"}, "MIRIX_OPENAI_TIMEOUT_SECONDS"),
        ({"MIRIX_EMBEDDING_DIMENSION": "many"}, "MIRIX_EMBEDDING_DIMENSION"),
        ({"MIRIX_LOCAL_EMBEDDING_PRECISION": "int4"}, "MIRIX_LOCAL_EMBEDDING_PRECISION"),
    ],
)
def test_bad_configuration_fails_loudly(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], named: str
) -> None:
    with pytest.raises(MissingSetting, match=named):
        _load(monkeypatch, **environment)
