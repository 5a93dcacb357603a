"""The vault keyring settings: a development default, required in production, loud on bad input."""

from __future__ import annotations

import base64
import importlib.util
import os
from types import ModuleType

import pytest

from mirix_saas.settings import components
from mirix_saas.settings.env import MissingSetting

pytestmark = pytest.mark.unit

KEY_A, KEY_B = os.urandom(32), os.urandom(32)


def _load(monkeypatch: pytest.MonkeyPatch, settings_module: str, **env: str) -> ModuleType:
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", settings_module)
    for name in ("MIRIX_VAULT_MASTER_KEYS", "MIRIX_VAULT_ACTIVE_MASTER_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    spec = importlib.util.spec_from_file_location("vault_settings_under_test", f"{components.__path__[0]}/vault.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _b64(key: bytes) -> str:
    return base64.b64encode(key).decode()


def test_local_and_test_runs_get_a_development_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _load(monkeypatch, "mirix_saas.settings.local")
    assert module.VAULT_ACTIVE_MASTER_KEY == "dev"
    assert len(module.VAULT_MASTER_KEYS["dev"]) == 32


def test_production_requires_the_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(MissingSetting, match="MIRIX_VAULT_MASTER_KEYS"):
        _load(monkeypatch, "mirix_saas.settings.production")
    with pytest.raises(MissingSetting, match="MIRIX_VAULT_ACTIVE_MASTER_KEY"):
        _load(monkeypatch, "mirix_saas.settings.production", MIRIX_VAULT_MASTER_KEYS=f"k1:{_b64(KEY_A)}")


def test_keyring_with_an_active_key(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _load(
        monkeypatch,
        "mirix_saas.settings.production",
        MIRIX_VAULT_MASTER_KEYS=f"k1:{_b64(KEY_A)}, k2:{_b64(KEY_B)}",
        MIRIX_VAULT_ACTIVE_MASTER_KEY="k2",
    )
    assert module.VAULT_MASTER_KEYS == {"k1": KEY_A, "k2": KEY_B}
    assert module.VAULT_ACTIVE_MASTER_KEY == "k2"


@pytest.mark.parametrize(
    ("keys", "active"),
    [
        (f"k1:{_b64(KEY_A)}", "k2"),  # the active key is not in the keyring
        (f"k1:{_b64(KEY_A)},k1:{_b64(KEY_B)}", "k1"),  # duplicate id
        (f"{_b64(KEY_A)}", "k1"),  # no id
        ("k1:not base64!", "k1"),
        (f"k1:{_b64(KEY_A[:16])}", "k1"),  # 128 bits
    ],
)
def test_malformed_keyrings_fail_at_start_up(monkeypatch: pytest.MonkeyPatch, keys: str, active: str) -> None:
    with pytest.raises(MissingSetting):
        _load(
            monkeypatch,
            "mirix_saas.settings.production",
            MIRIX_VAULT_MASTER_KEYS=keys,
            MIRIX_VAULT_ACTIVE_MASTER_KEY=active,
        )
