from __future__ import annotations

from mirix_saas.settings.env import env_optional, env_str

SENTRY_DSN = env_optional("SENTRY_DSN")
SENTRY_ENVIRONMENT = env_str("SENTRY_ENVIRONMENT", "local")
