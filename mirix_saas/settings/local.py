"""Local development: the embedded stack, development secrets, DEBUG on."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "local-development-only-secret-key-not-for-production")
os.environ.setdefault("MIRIX_API_KEY_PEPPER", "local-development-only-pepper")
os.environ.setdefault("MIRIX_WEBHOOKS_ALLOW_LOOPBACK", "true")
os.environ.setdefault("MIRIX_PROVIDERS_ALLOW_LOOPBACK", "true")

from mirix_saas.settings.base import *  # noqa: F403
