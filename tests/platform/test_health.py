from __future__ import annotations

from django.test import override_settings
from rest_framework.test import APIClient


def test_healthz_answers_without_dependencies() -> None:
    response = APIClient().get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_readyz_reports_every_dependency() -> None:
    response = APIClient().get("/readyz")
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "status": "ready",
        "checks": {"postgres": "ok", "pgvector": "ok", "age": "ok", "broker": "ok"},
        "replica": {"status": "not_configured", "lag_ms": None},
    }


@override_settings(CELERY_BROKER_URL="redis+socket:///nonexistent/redis.sock")
def test_readyz_names_the_broken_dependency() -> None:
    response = APIClient().get("/readyz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["broker"] == "unavailable"
    assert checks["postgres"] == "ok" and checks["age"] == "ok"
