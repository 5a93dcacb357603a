"""Celery: queues per §10 of the architecture, late acks with idempotent tasks."""

from __future__ import annotations

from datetime import timedelta

from kombu import Queue

from mirix_saas.settings.env import env_bool, env_int, env_str

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
# A message a worker took and never acknowledged (the worker was killed) is delivered again
# once the visibility timeout passes; it must exceed every task's run time and ETA, or running
# tasks get a second copy. Crash tests shorten it to see the redelivery within seconds.
BROKER_VISIBILITY_TIMEOUT = env_int("MIRIX_BROKER_VISIBILITY_TIMEOUT", 7 * 3600)  # > the 6 h job limit
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": BROKER_VISIBILITY_TIMEOUT,
    # How often a worker looks for such messages (every interval × throttle seconds).
    "unacked_restore_interval": max(1, min(10, BROKER_VISIBILITY_TIMEOUT // 4)),
    "unacked_restore_throttle": 1 if BROKER_VISIBILITY_TIMEOUT < 600 else 10,
}
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
    "procedural-dream-sweep": {
        "task": "dream.procedural.sweep",
        "schedule": timedelta(minutes=2),
    },
    "procedural-evolve-sweep": {
        "task": "maintenance.procedural.evolve_sweep",
        "schedule": timedelta(minutes=5),
    },
    "erasure-drain": {
        "task": "maintenance.erasure.drain",
        "schedule": timedelta(seconds=30),
    },
}
