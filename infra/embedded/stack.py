"""``make run``: the whole service on one machine, every component started and supervised.

Starts the embedded Postgres and Redis unless ``DATABASE_URL`` / ``CELERY_BROKER_URL`` are
set, migrates, seeds the demo organization, then runs the API server (gunicorn), a Celery
worker and Celery beat. Ctrl-C (or SIGTERM) stops them all, then the embedded services it
started; the data stays under ``var/`` for the next start. If any component dies, the rest
are stopped and the exit status is non-zero.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from infra.embedded import postgres, redis
from infra.embedded.environment import (
    PROJECT_ROOT,
    configure_embedded_environment,
    postgres_dir,
    redis_dir,
    var_dir,
    worker_concurrency,
)

STOP_TIMEOUT_SECONDS = 20


@dataclass
class Supervisor:
    env: dict[str, str]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    stopping: bool = False

    def start(self, name: str, argv: list[str]) -> None:
        # A session of its own: the terminal's Ctrl-C reaches only the supervisor, which
        # then stops each component in order.
        self.processes[name] = subprocess.Popen(argv, cwd=PROJECT_ROOT, env=self.env, start_new_session=True)
        print(f"  started {name} (pid {self.processes[name].pid})", flush=True)

    def first_exited(self) -> str | None:
        return next((name for name, p in self.processes.items() if p.poll() is not None), None)

    def stop_all(self) -> None:
        for name, process in reversed(list(self.processes.items())):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                print(f"  stopping {name}", flush=True)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=PROJECT_ROOT, env=env, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default=os.environ.get("MIRIX_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("MIRIX_PORT", "8000")))
    parser.add_argument("--api-workers", type=int, default=int(os.environ.get("MIRIX_API_WORKERS", "2")))
    parser.add_argument("--worker-concurrency", type=int, default=worker_concurrency())
    options = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mirix_saas.settings.local")
    started_postgres = not os.environ.get("DATABASE_URL") and not postgres.is_running(postgres_dir())
    started_redis = not os.environ.get("CELERY_BROKER_URL") and not redis.is_running(redis_dir())
    print("MIRIX SaaS — starting", flush=True)
    configure_embedded_environment()
    print(f"  postgres: {'embedded, ' + str(postgres_dir()) if started_postgres else 'configured / already running'}")
    print(f"  broker:   {'embedded, ' + str(redis_dir()) if started_redis else 'configured / already running'}")
    env = {**os.environ, "MIRIX_EMBEDDED": "off", "PYTHONUNBUFFERED": "1"}
    var_dir().mkdir(parents=True, exist_ok=True)

    supervisor = Supervisor(env=env)

    def request_stop(signum: int, _frame: object) -> None:
        supervisor.stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    exit_code = 0
    try:
        _manage(env, "migrate", "--noinput", "-v", "0")
        _manage(env, "collectstatic", "--noinput", "-v", "0")
        base_url = f"http://{options.host}:{options.port}"
        _manage(env, "seed_demo", "--base-url", base_url)
        celery = [sys.executable, "-m", "celery", "-A", "mirix_saas"]
        supervisor.start(
            "worker",
            [
                *celery,
                "worker",
                "-n",
                "worker@%h",
                "-c",
                str(options.worker_concurrency),
                "-l",
                "INFO",
                "-Q",
                "indexing,repair,dream,admission,webhooks,maintenance",
            ],
        )
        supervisor.start("beat", [*celery, "beat", "-l", "INFO", "-s", str(var_dir() / "celerybeat-schedule")])
        supervisor.start(
            "api",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                "python:infra.gunicorn_config",
                "-b",
                f"{options.host}:{options.port}",
                "-w",
                str(options.api_workers),
                "--access-logfile",
                "-",
            ],
        )
        print(
            f"\nAPI on {base_url}/v1/  (docs /v1/docs, readiness /readyz), console {base_url}/console/. "
            "Ctrl-C stops.\n",
            flush=True,
        )
        while not supervisor.stopping:
            crashed = supervisor.first_exited()
            if crashed:
                print(f"  {crashed} exited unexpectedly; stopping everything", flush=True)
                exit_code = 1
                break
            time.sleep(0.5)
    except subprocess.CalledProcessError as exc:
        print(f"  start-up step failed: {exc}", flush=True)
        exit_code = 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        supervisor.stop_all()
        if started_redis:
            redis.stop_redis(redis_dir())
        if started_postgres:
            postgres.stop_postgres(postgres_dir())
        print("MIRIX SaaS — stopped; data kept in " + str(Path(var_dir())), flush=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
