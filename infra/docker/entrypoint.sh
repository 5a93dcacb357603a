#!/bin/sh
# One image, several roles. Everything is configured by environment variables
# (mirix.env.example lists them); nothing here embeds a secret or a host name.
#   api      gunicorn: MIRIX_API_WORKERS processes × MIRIX_API_THREADS threads on :8000
#   worker   Celery: the queues in MIRIX_WORKER_QUEUES, MIRIX_WORKER_CONCURRENCY processes
#   beat     Celery beat (exactly one per deployment)
#   migrate  one-shot: roles, extensions and grants (db_bootstrap), then migrations
set -eu
role="${1:-api}"
[ "$#" -gt 0 ] && shift
case "$role" in
  api)
    # Timeouts, request-line limit, JSON error answers, control socket: infra/gunicorn_config.py.
    exec gunicorn -c python:infra.gunicorn_config --bind 0.0.0.0:8000 \
      --workers "${MIRIX_API_WORKERS:-4}" --threads "${MIRIX_API_THREADS:-1}" \
      --graceful-timeout 20 --max-requests 2000 \
      --max-requests-jitter 200 --forwarded-allow-ips "${MIRIX_FORWARDED_ALLOW_IPS:-*}" \
      --access-logfile - "$@"
    ;;
  worker)
    exec celery -A mirix_saas worker -n "${MIRIX_WORKER_NAME:-worker}@%h" \
      -Q "${MIRIX_WORKER_QUEUES:?set MIRIX_WORKER_QUEUES}" -c "${MIRIX_WORKER_CONCURRENCY:-2}" \
      --max-tasks-per-child "${MIRIX_WORKER_MAX_TASKS_PER_CHILD:-500}" -l "${MIRIX_LOG_LEVEL:-INFO}" "$@"
    ;;
  beat)
    exec celery -A mirix_saas beat -s /app/var/celerybeat-schedule --pidfile /app/var/celerybeat.pid \
      -l "${MIRIX_LOG_LEVEL:-INFO}" "$@"
    ;;
  migrate)
    python manage.py db_bootstrap
    exec python manage.py migrate --noinput "$@"
    ;;
  *)
    exec "$role" "$@"
    ;;
esac
