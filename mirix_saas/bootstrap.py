"""What every entry point does before Django reads its settings."""

from __future__ import annotations

import os


def prepare_environment() -> None:
    """Start the embedded services for any URL the environment does not configure.

    The test settings manage their own database; production configures every URL and
    sets ``MIRIX_EMBEDDED=off`` so that a missing URL fails loudly instead.
    """
    settings_module = os.environ.get("DJANGO_SETTINGS_MODULE", "")
    if settings_module.endswith(".test") or os.environ.get("MIRIX_EMBEDDED", "on") == "off":
        return
    from infra.embedded.environment import configure_embedded_environment

    configure_embedded_environment()
