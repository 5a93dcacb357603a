"""Webhooks (§12): delivery timeout, retry schedule, secret rotation overlap, SSRF loopback switch.

``MIRIX_WEBHOOKS_ALLOW_LOOPBACK`` lets endpoints point at 127.0.0.1/::1 (and use plain http):
for local development and tests only; the local and test settings turn it on.
``MIRIX_WEBHOOKS_RETRY_SCHEDULE`` lists the delay in seconds before each attempt of a round.
``MIRIX_WEBHOOKS_QUEUE`` is the Celery queue the delivery tasks are published to.
"""

from __future__ import annotations

from mirix_saas.settings.env import MissingSetting, env_bool, env_int, env_list, env_str

WEBHOOKS_ALLOW_LOOPBACK = env_bool("MIRIX_WEBHOOKS_ALLOW_LOOPBACK", False)
WEBHOOKS_TIMEOUT_SECONDS = env_int("MIRIX_WEBHOOKS_TIMEOUT_SECONDS", 15)
WEBHOOKS_ROTATION_OVERLAP_SECONDS = env_int("MIRIX_WEBHOOKS_ROTATION_OVERLAP_SECONDS", 24 * 3600)
WEBHOOKS_EVENT_RETENTION_DAYS = env_int("MIRIX_WEBHOOKS_EVENT_RETENTION_DAYS", 30)
WEBHOOKS_MAX_ENDPOINTS_PER_ORGANIZATION = env_int("MIRIX_WEBHOOKS_MAX_ENDPOINTS_PER_ORGANIZATION", 20)
WEBHOOKS_QUEUE = env_str("MIRIX_WEBHOOKS_QUEUE", "webhooks")

_DEFAULT_RETRY_SCHEDULE = ["0", "5", "300", "1800", "7200", "18000", "36000", "50400", "72000", "86400"]
try:
    WEBHOOKS_RETRY_SCHEDULE = [float(d) for d in env_list("MIRIX_WEBHOOKS_RETRY_SCHEDULE", _DEFAULT_RETRY_SCHEDULE)]
except ValueError as exc:
    raise MissingSetting("MIRIX_WEBHOOKS_RETRY_SCHEDULE must be comma-separated seconds") from exc
if not WEBHOOKS_RETRY_SCHEDULE or min(WEBHOOKS_RETRY_SCHEDULE) < 0:
    raise MissingSetting("MIRIX_WEBHOOKS_RETRY_SCHEDULE must list at least one non-negative delay")
if not 1 <= WEBHOOKS_TIMEOUT_SECONDS <= 60:
    raise MissingSetting("MIRIX_WEBHOOKS_TIMEOUT_SECONDS must be between 1 and 60")
