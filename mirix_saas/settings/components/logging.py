from __future__ import annotations

from mirix_saas.settings.env import env_str

LOG_LEVEL = env_str("MIRIX_LOG_LEVEL", "INFO")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "apps.platform.logging.RequestIdFilter"}},
    "formatters": {"json": {"()": "apps.platform.logging.JsonFormatter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "celery": {"level": "INFO"},
        "pgserver": {"level": "WARNING"},
    },
}
