"""Celery: queues per §10 of the architecture, late acks with idempotent tasks."""

from __future__ import annotations

from datetime import timedelta

from kombu import Queue

from apps.jobs import task_names
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

# Stepwise jobs (apps.jobs.services): a worker running one reports a heartbeat every
# JOBS_HEARTBEAT_SECONDS; the sweep (every JOBS_SWEEP_SECONDS) publishes again a running job
# whose heartbeat is older than JOBS_STALE_SECONDS (its worker died), up to JOBS_MAX_RESUMES
# times, and a queued job not picked up within JOBS_QUEUED_REPUBLISH_SECONDS (its publish was
# lost). A job whose heartbeat is fresh is never touched, however long it runs.
JOBS_HEARTBEAT_SECONDS = env_int("MIRIX_JOBS_HEARTBEAT_SECONDS", 10)
JOBS_STALE_SECONDS = env_int("MIRIX_JOBS_STALE_SECONDS", 60)
JOBS_SWEEP_SECONDS = env_int("MIRIX_JOBS_SWEEP_SECONDS", 30)
JOBS_MAX_RESUMES = env_int("MIRIX_JOBS_MAX_RESUMES", 5)
JOBS_QUEUED_REPUBLISH_SECONDS = env_int("MIRIX_JOBS_QUEUED_REPUBLISH_SECONDS", 3600)

CELERY_BEAT_SCHEDULE = {
    "indexing-sweep": {
        "task": task_names.INDEX_SWEEP,
        "schedule": timedelta(minutes=5),
    },
    "jobs-sweep": {
        "task": task_names.JOBS_SWEEP,
        "schedule": timedelta(seconds=JOBS_SWEEP_SECONDS),
    },
    "webhooks-drain": {
        "task": task_names.WEBHOOKS_DRAIN,
        "schedule": timedelta(seconds=2),
    },
    "webhooks-prune": {
        "task": task_names.WEBHOOKS_PRUNE,
        "schedule": timedelta(hours=1),
    },
    "procedural-dream-sweep": {
        "task": task_names.PROCEDURAL_DREAM_SWEEP,
        "schedule": timedelta(minutes=2),
    },
    "procedural-evolve-sweep": {
        "task": task_names.PROCEDURAL_EVOLVE_SWEEP,
        "schedule": timedelta(minutes=5),
    },
    "erasure-drain": {
        "task": task_names.ERASURE_DRAIN,
        "schedule": timedelta(seconds=30),
    },
    "idempotency-purge": {
        "task": task_names.IDEMPOTENCY_PURGE,
        "schedule": timedelta(hours=1),
    },
}
