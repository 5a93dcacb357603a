"""Static checks of the production infrastructure in infra/docker (no container runtime here).

The compose file must describe the whole production-like stack: every service present,
every long-running one health-checked, the schema migrated by a one-shot job that every
application process waits for, every Celery queue consumed by a worker pool, exactly one
beat. The example env file must hold every variable the production settings require: the
settings are imported in a fresh interpreter with that file as the whole environment.
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
import yaml
from django.conf import settings

from tests.processes import ROOT

pytestmark = pytest.mark.unit

DOCKER = ROOT / "infra" / "docker"
APP_SERVICES_BESIDES_WORKERS = {"api", "beat"}
BACKING_SERVICES = {"postgres", "redis", "minio"}
ONE_SHOT = {"migrate", "buckets"}


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((DOCKER / "compose.yaml").read_text()))


def services() -> dict[str, dict[str, Any]]:
    return dict(compose()["services"])


def workers() -> dict[str, dict[str, Any]]:
    return {name: s for name, s in services().items() if s.get("command") == ["worker"]}


def example_env() -> dict[str, str]:
    pairs = {}
    for line in (DOCKER / "mirix.env.example").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            pairs[name.strip()] = value.strip()
    return pairs


def test_every_service_of_the_stack_is_present() -> None:
    names = set(services())
    assert BACKING_SERVICES | ONE_SHOT | APP_SERVICES_BESIDES_WORKERS <= names
    assert len(workers()) >= 2  # pools per queue group, not one worker for everything
    assert [n for n, s in services().items() if s.get("command") == ["beat"]] == ["beat"]


def test_every_long_running_service_has_a_health_check() -> None:
    unchecked = [
        name
        for name, service in services().items()
        if service.get("restart") != "no" and not (service.get("healthcheck") or {}).get("test")
    ]
    assert unchecked == []
    assert "/readyz" in " ".join(services()["api"]["healthcheck"]["test"])


def test_migrations_run_once_before_any_application_process() -> None:
    migrate = services()["migrate"]
    assert migrate["restart"] == "no" and migrate["command"] == ["migrate"]
    assert migrate["depends_on"]["postgres"] == {"condition": "service_healthy"}
    entrypoint = (DOCKER / "entrypoint.sh").read_text()
    migrate_branch = entrypoint.split("migrate)", 1)[1].split(";;", 1)[0]
    assert "manage.py db_bootstrap" in migrate_branch and "manage.py migrate --noinput" in migrate_branch
    for name in [*APP_SERVICES_BESIDES_WORKERS, *workers()]:
        assert services()[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}, name


def test_every_queue_is_consumed_by_a_worker_pool() -> None:
    consumed = [
        queue
        for service in workers().values()
        for queue in str(service["environment"]["MIRIX_WORKER_QUEUES"]).split(",")
    ]
    assert sorted(consumed) == sorted(settings.CELERY_QUEUES)  # each queue exactly once


def test_the_images_build_from_files_that_exist() -> None:
    dockerfile = (DOCKER / "Dockerfile").read_text()
    for source in re.findall(r"^COPY (\S+)", dockerfile, flags=re.MULTILINE):
        assert (ROOT / source.rstrip("/")).exists(), source
    assert (DOCKER / "entrypoint.sh").stat().st_mode & 0o111
    assert 'ENTRYPOINT ["infra/docker/entrypoint.sh"]' in dockerfile
    postgres = (DOCKER / "postgres.Dockerfile").read_text()
    assert "pgvector" in postgres and "-age" in postgres and "session_preload_libraries=age" in postgres
    for name, service in services().items():
        build = service.get("build")
        if build:
            assert (DOCKER / build["context"] / build["dockerfile"]).resolve().exists(), name


def test_every_variable_the_stack_reads_is_in_the_example_env() -> None:
    env = example_env()
    settings_source = "\n".join(p.read_text() for p in (ROOT / "mirix_saas" / "settings").rglob("*.py"))
    required = set(re.findall(r'env_str\("([A-Z0-9_]+)"\)', settings_source))
    assert required and required - set(env) == set()
    # Variables the compose file itself interpolates from the env file ($$NAME in commands).
    interpolated = set(re.findall(r"\$\$\{?([A-Z][A-Z0-9_]+)", (DOCKER / "compose.yaml").read_text()))
    assert interpolated - {"HOSTNAME", "MIRIX_WORKER_NAME"} - set(env) == set()
    for service in workers().values():
        assert service["environment"]["MIRIX_WORKER_NAME"]


def _import_production_settings(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = (
        "from django.conf import settings; "
        "print(settings.DATABASES['default']['HOST'], settings.CELERY_BROKER_URL, settings.OBJECT_STORAGE)"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "mirix_saas.settings.production"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_production_settings_load_from_the_example_env_alone() -> None:
    loaded = _import_production_settings(example_env())
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    assert loaded.stdout.split() == ["postgres", "redis://redis:6379/0", "s3"]


@pytest.mark.parametrize("missing", ["MIRIX_API_KEY_PEPPER", "MIRIX_VAULT_MASTER_KEYS", "MIRIX_S3_BUCKET"])
def test_a_missing_required_variable_fails_at_start_up_by_name(missing: str) -> None:
    env = {k: v for k, v in example_env().items() if k != missing}
    loaded = _import_production_settings(env)
    assert loaded.returncode != 0 and missing in loaded.stderr
