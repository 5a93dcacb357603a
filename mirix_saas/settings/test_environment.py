"""Environment defaults shared by the two test settings (``test`` and ``unit``); imports nothing
that starts a service."""

import os

DEFAULTS = {
    "DJANGO_SECRET_KEY": "test-secret-key",
    "MIRIX_API_KEY_PEPPER": "test-pepper",
    # The local receivers and stub servers of the tests listen on 127.0.0.1.
    "MIRIX_WEBHOOKS_ALLOW_LOOPBACK": "true",
    "MIRIX_PROVIDERS_ALLOW_LOOPBACK": "true",
}


def apply_test_defaults() -> None:
    for name, value in DEFAULTS.items():
        os.environ.setdefault(name, value)
