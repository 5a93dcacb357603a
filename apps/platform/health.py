"""``/healthz``: the process answers. ``/readyz``: every dependency answers, each reported.

The read replica is reported beside the checks (its status and replay lag) but never fails
readiness: without it reads go to the primary (``apps.platform.replica``)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from kombu import Connection

from apps.platform.replica import replica_state

logger = logging.getLogger(__name__)


def _check_postgres() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _check_pgvector() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT '[1,2,3]'::vector <-> '[1,2,4]'::vector")


def _check_age() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM ag_catalog.ag_graph")
        cursor.execute("SELECT '{\"ready\": true}'::ag_catalog.agtype")


def _check_broker() -> None:
    with Connection(settings.CELERY_BROKER_URL, connect_timeout=2) as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


CHECKS: dict[str, Callable[[], None]] = {
    "postgres": _check_postgres,
    "pgvector": _check_pgvector,
    "age": _check_age,
    "broker": _check_broker,
}


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    report: dict[str, str] = {}
    for name, check in CHECKS.items():
        try:
            check()
            report[name] = "ok"
        except Exception as exc:  # each dependency is reported, none hides another
            logger.warning("readiness check failed", extra={"check": name, "error_type": type(exc).__name__})
            report[name] = "unavailable"
            if name == "postgres":
                connection.close_if_unusable_or_obsolete()
    ready = all(status == "ok" for status in report.values())
    body = {"status": "ready" if ready else "not_ready", "checks": report, "replica": replica_state().report()}
    return JsonResponse(body, status=200 if ready else 503)
