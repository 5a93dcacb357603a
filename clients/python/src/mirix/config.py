"""Where the key and the service's address come from: the arguments, else ``MIRIX_API_KEY`` /
``MIRIX_BASE_URL``, else (for the CLI and the MCP server) ``~/.config/mirix/config.toml``
(``MIRIX_CONFIG`` names another file)::

    api_key = "mx_live_..."
    base_url = "https://mirix.internal"
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from mirix.errors import ConfigurationError

DEFAULT_BASE_URL = "http://127.0.0.1:8000"


@dataclass(frozen=True)
class Settings:
    api_key: str
    base_url: str


def config_path() -> Path:
    configured = os.environ.get("MIRIX_CONFIG")
    if configured:
        return Path(configured).expanduser()
    root = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return root / "mirix" / "config.toml"


def _file_values(use_file: bool) -> dict[str, str]:
    path = config_path()
    if not use_file or not path.is_file():
        return {}
    try:
        values = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path} is not valid TOML: {exc}") from exc
    return {k: str(v) for k, v in values.items() if k in {"api_key", "base_url"}}


def resolve(api_key: str | None = None, base_url: str | None = None, *, use_file: bool = False) -> Settings:
    """The settings from the arguments, the environment and (when ``use_file``) the config file."""
    file = _file_values(use_file)
    key = api_key or os.environ.get("MIRIX_API_KEY") or file.get("api_key")
    if not key:
        where = f", or api_key in {config_path()}" if use_file else ""
        raise ConfigurationError(f"No API key: pass api_key=... or set MIRIX_API_KEY{where}.")
    url = (base_url or os.environ.get("MIRIX_BASE_URL") or file.get("base_url") or DEFAULT_BASE_URL).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ConfigurationError(f"The base URL {url!r} must start with http:// or https://.")
    return Settings(api_key=key, base_url=url)
