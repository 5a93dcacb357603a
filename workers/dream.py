"""Semantic AutoDream rounds on the "dream" queue, off the write path."""

from __future__ import annotations

import uuid
from collections.abc import Generator
from typing import Any

from apps.dream.services import dream_steps
from apps.jobs import task_names
from apps.jobs.models import Job
from apps.providers.registry import dream_judge_for
from apps.tenancy.models import Subject
from workers.base import stepwise_job_task


@stepwise_job_task(name=task_names.SEMANTIC_DREAM, time_limit=1800)
def dream_semantic(
    job: Job, *, subject_id: str, chunk_ids: list[str], final: bool
) -> Generator[dict[str, Any], None, dict[str, Any]]:
    # Each step runs in a transaction of its own: planning, then a few decisions and merges.
    subject = Subject.objects.get(id=uuid.UUID(subject_id))
    return (
        yield from dream_steps(
            subject=subject,
            llm=dream_judge_for(subject.organization_id),
            job=job,
            chunk_ids=[uuid.UUID(c) for c in chunk_ids],
            final=final,
        )
    )
