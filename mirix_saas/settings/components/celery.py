"""Celery: queues per §10 of the architecture, late acks with idempotent tasks."""

from __future__ import annotations

from datetime import timedelta

from kombu import Queue

from mirix_saas.settings.env import env_bool, env_str

CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 6 * 3600}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

CELERY_QUEUES = ["indexing", "repair", "dream", "admission", "webhooks", "maintenance"]
CELERY_TASK_QUEUES = [Queue(name) for name in CELERY_QUEUES]
CELERY_TASK_DEFAULT_QUEUE = "maintenance"
# A task's name starts with its queue: "indexing.memory.index" runs on "indexing".
CELERY_TASK_ROUTES = {f"{queue}.*": {"queue": queue} for queue in CELERY_QUEUES}

CELERY_BEAT_SCHEDULE = {
    "indexing-sweep": {
        "task": "indexing.sweep",
        "schedule": timedelta(minutes=5),
    },
    "jobs-mark-stale": {
        "task": "maintenance.jobs.mark_stale",
        "schedule": timedelta(minutes=5),
    },
    "webhooks-drain": {
        "task": "webhooks.outbox.drain",
        "schedule": timedelta(seconds=2),
    },
    "webhooks-prune": {
        "task": "webhooks.events.prune",
        "schedule": timedelta(hours=1),
    },
    "erasure-drain": {
        "task": "maintenance.erasure.drain",
        "schedule": timedelta(seconds=30),
    },
}
