"""Settings for static analysis only: placeholder URLs, nothing is started or connected."""

import os

for _name, _value in {
    "DATABASE_URL": "postgresql://typecheck@localhost/typecheck",
    "CELERY_BROKER_URL": "memory://",
    "CACHE_URL": "redis://localhost:6379/0",
    "DJANGO_SECRET_KEY": "typecheck",
    "MIRIX_API_KEY_PEPPER": "typecheck",
}.items():
    os.environ.setdefault(_name, _value)

from mirix_saas.settings.base import *  # noqa: F403
