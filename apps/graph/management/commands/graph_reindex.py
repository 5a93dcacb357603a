"""Index subjects' rows into the graph again from nothing (ADR 0096): a job per subject."""

from __future__ import annotations

import time
import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from apps.graph.services import subject_reindex_queue
from apps.jobs.models import Job
from apps.tenancy.models import Organization, Subject
from apps.tenancy.scope import organization_scope

POLL_SECONDS = 1.0


class Command(BaseCommand):
    help = (
        "Queue a job per subject that deletes its graph and indexes its rows again, e.g. after a "
        "change of the extractor; the rows themselves are not touched."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--organization", required=True, help="The organization's id or slug.")
        parser.add_argument("--subject", help="One subject's external id (default: every subject).")
        parser.add_argument("--wait", action="store_true", help="Show the jobs' progress until they finish.")

    def handle(self, *args: Any, **options: Any) -> None:
        organization = _organization(options["organization"])
        with organization_scope(organization.id):
            subjects = Subject.objects.order_by("created_at")
            if options["subject"]:
                subjects = subjects.filter(external_id=options["subject"])
            found = list(subjects)
            if not found:
                raise CommandError(f"no subject {options['subject']!r} in organization {organization.slug}")
            jobs = []
            for subject in found:
                job = subject_reindex_queue(subject=subject)
                jobs.append(job.id)
                self.stdout.write(f"subject {subject.external_id}: job {job.id}")
        if options["wait"]:
            _follow(organization.id, jobs, output=self.stderr)


def _organization(given: str) -> Organization:
    organizations = Organization.objects.dangerously_across_organizations()
    try:
        found = organizations.filter(id=uuid.UUID(given)).first()
    except ValueError:
        found = organizations.filter(slug=given).first()
    if found is None:
        raise CommandError(f"no organization {given!r}: give its id or slug")
    return found


def _follow(organization_id: uuid.UUID, job_ids: list[uuid.UUID], *, output: Any) -> None:
    """A progress bar over the rows the jobs index, until every job has finished (its total
    grows as each job has marked its rows)."""
    finished = (Job.Status.SUCCEEDED, Job.Status.FAILED)
    with tqdm(desc="re-index", unit="row", file=output) as bar:
        while True:
            with organization_scope(organization_id):
                jobs = list(Job.objects.filter(id__in=job_ids))
            bar.total = sum(int(job.result.get("rows", 0)) for job in jobs) or None
            bar.n = sum(int(job.result.get("indexed", 0)) for job in jobs)
            bar.set_postfix(done=sum(job.status in finished for job in jobs), of=len(jobs))
            bar.refresh()
            if all(job.status in finished for job in jobs):
                break
            time.sleep(POLL_SECONDS)
    failed = [str(job.id) for job in jobs if job.status == Job.Status.FAILED]
    if failed:
        raise CommandError(f"re-index failed: jobs {', '.join(failed)}")
