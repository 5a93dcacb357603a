"""The Celery application. Task entry points live in ``workers/``."""

import os

from celery import Celery
from celery.signals import worker_process_init

from mirix_saas.bootstrap import prepare_environment

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mirix_saas.settings.local")
prepare_environment()

app = Celery(
    "mirix_saas",
    include=[
        "workers.maintenance",
        "workers.indexing",
        "workers.webhooks",
        "workers.erasure",
        "workers.procedural",
        "workers.dream",
    ],
)
app.config_from_object("django.conf:settings", namespace="CELERY")


@worker_process_init.connect
def _init_worker_process(**_: object) -> None:
    from mirix_saas.observability import init_sentry
    from mirix_saas.processes import worker_process_start

    init_sentry()
    worker_process_start()
