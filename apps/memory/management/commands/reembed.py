"""After changing the embedding model: queue a re-embedding job for every organization."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from apps.jobs import task_names
from apps.jobs.services import job_create, job_enqueue_on_commit
from apps.tenancy.models import Organization
from apps.tenancy.scope import organization_scope


class Command(BaseCommand):
    help = "Queue a job per organization that re-embeds rows made by another embedding model."

    def handle(self, *args: Any, **options: Any) -> None:
        organizations = list(Organization.objects.dangerously_across_organizations().values_list("id", flat=True))
        for organization_id in organizations:
            with organization_scope(organization_id):
                job = job_create(organization_id=organization_id, kind="embeddings.reembed")
                job_enqueue_on_commit(job=job, task_name=task_names.REEMBED)
            self.stdout.write(f"organization {organization_id}: job {job.id}")
