"""What each server process does before it takes work (ADR 0052): apply the CPU policy of its
kind (``apps.platform.cpu``), then warm the local models (``providers_warm``).

Called by gunicorn's ``post_worker_init`` (``infra.gunicorn_config``) in every API process and
by Celery's ``worker_process_init`` (``mirix_saas.celery``) in every pool process.
"""

from __future__ import annotations

import logging
import os
import time

from django.apps import apps
from django.conf import settings
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.db import connections, transaction
from django.urls import get_resolver

from apps.jobs.services import publisher_warm
from apps.platform.cpu import ProcessPolicy, api_torch_threads, available_cores, process_policy_apply
from apps.providers.local_embedder import inference_threads
from apps.providers.registry import providers_warm
from mirix_saas.rehearsal import write_rehearse

logger = logging.getLogger("mirix_saas.processes")


def api_process_start(*, processes: int, application: WSGIHandler) -> None:
    """An API process of ``processes`` serving ``application``: inference threads within its
    share of the cores, warm models, a database connection, a rehearsed write."""
    cores = available_cores()
    threads = api_torch_threads(configured=settings.API_TORCH_THREADS, processes=processes, cores=cores)
    policy = process_policy_apply(torch_threads=threads, nice=0)
    _warm("api", policy, processes=processes, cores=cores)
    connections["default"].ensure_connection()
    if settings.WARM_START:
        _request_path_warm(application)


def _request_path_warm(application: WSGIHandler) -> None:
    """What a process's first request would otherwise do once: import every view (the URL
    configuration is imported on first resolve), connect the cache that holds the throttles,
    connect the task publisher, and rehearse a write (ADR 0093). A failure here is logged: the
    request does it again."""
    try:
        resolver = get_resolver()
        resolver.url_patterns  # noqa: B018 - imports the URL configuration and its views
        resolver.reverse_dict  # noqa: B018 - compiles every pattern, for reverse() (a write's Location)
        cache.get("warm-start")
        publisher_warm()
        _catalog_warm()
        status = write_rehearse(application)
        if status != 202:
            logger.warning("the write rehearsal answered %d, not 202", status)
    except Exception:
        logger.warning("request path warm-up failed", exc_info=True)


def _catalog_warm() -> None:
    """Plan one empty read of every model's table on the process's database session, so that
    its backend has loaded their catalog entries (columns, indexes, row-level policies) before
    the first request, which would otherwise pay for them statement by statement."""
    tables = sorted({model._meta.db_table for model in apps.get_models() if model._meta.managed})
    quote = connections["default"].ops.quote_name
    with transaction.atomic(), connections["default"].cursor() as cursor:
        cursor.execute("; ".join(f"SELECT 1 FROM {quote(table)} LIMIT 0" for table in tables))


def worker_process_start() -> None:
    """A Celery pool process: one inference thread, lower priority, warm models."""
    # The pool's parent leads the session: the session is the worker's own (make run, the image).
    policy = process_policy_apply(
        torch_threads=settings.WORKER_TORCH_THREADS, nice=settings.WORKER_NICE, own_session=os.getsid(0) == os.getppid()
    )
    _warm("worker", policy, processes=0, cores=available_cores())


def _warm(kind: str, policy: ProcessPolicy, *, processes: int, cores: int) -> None:
    began = time.perf_counter()
    if settings.WARM_START:
        providers_warm()
    in_use = inference_threads() or policy.torch_threads
    # The values are in the message too: Celery's log format shows no extra fields.
    logger.info(
        "process policy applied (kind=%s, inference_threads=%d, nice=%d)",
        kind,
        in_use,
        policy.nice,
        extra={
            "process_kind": kind,
            "inference_threads": in_use,
            "nice": policy.nice,
            "session_nice": policy.session_nice,
            "processes": processes,
            "cores": cores,
            "warm_seconds": round(time.perf_counter() - began, 2),
        },
    )
