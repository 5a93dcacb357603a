"""ADR 0093: an API process rehearses a write before it serves, and keeps nothing of it."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection
from django.utils import timezone

from apps.audit.models import AuditEntry
from apps.jobs.models import Job
from apps.memory.models import EpisodicEvent, PendingWrite
from apps.tenancy.models import ApiKey, Organization, Subject
from apps.usage.models import UsageCounter
from mirix_saas.celery import app
from mirix_saas.rehearsal import SLUG_PREFIX, write_rehearse
from tests.factories import make_tenant
from tests.processes import purge_queues

KEPT = (Organization, ApiKey, Subject, EpisodicEvent, PendingWrite, Job, AuditEntry, UsageCounter)


def _rows() -> dict[str, int]:
    return {model.__name__: model.objects.dangerously_across_organizations().count() for model in KEPT}


def _queued() -> int:
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        return sum(channel._size(queue) for queue in settings.CELERY_QUEUES)


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def test_the_rehearsal_is_a_whole_accepted_write_and_leaves_nothing() -> None:
    make_tenant()  # a customer beside it, whose rows must not move
    purge_queues()
    before, pid = _rows(), _backend_pid()
    assert write_rehearse(WSGIHandler()) == 202  # the view accepted it: every part of the path ran
    assert _rows() == before
    assert _queued() == 0  # the job's task is published on commit, and nothing committed
    # The same database session, warmed, and back in autocommit for the first request.
    assert _backend_pid() == pid and not connection.in_atomic_block and connection.get_autocommit()


def test_a_rehearsal_offboards_one_a_killed_process_left_behind() -> None:
    abandoned = make_tenant(f"{SLUG_PREFIX}abandoned")
    running = make_tenant(f"{SLUG_PREFIX}running")  # another process's, still rehearsing
    Organization.objects.dangerously_across_organizations().filter(id=abandoned.id).update(
        created_at=timezone.now() - timedelta(hours=1)
    )
    assert write_rehearse(WSGIHandler()) == 202
    remaining = set(Organization.objects.dangerously_across_organizations().values_list("slug", flat=True))
    assert f"{SLUG_PREFIX}running" in remaining and f"{SLUG_PREFIX}abandoned" not in remaining
    assert running.id in set(Organization.objects.dangerously_across_organizations().values_list("id", flat=True))
