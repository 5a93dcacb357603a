"""Procedural memory jobs: AutoDream, SEDM replays and decisions, evolution, and their sweeps."""

from __future__ import annotations

import uuid
from typing import Any

from apps.jobs import task_names
from apps.jobs.models import Job
from apps.procedural.admission import replay_run
from apps.procedural.evolution_store import evolve, evolve_schedule
from apps.procedural.services import admission_decide, dream_sweep, procedural_dream
from apps.tenancy.models import Subject
from workers.base import job_task, per_organization_task


@job_task(name=task_names.PROCEDURAL_DREAM, time_limit=1800)
def procedural_dream_task(job: Job, *, subject_id: str) -> dict[str, Any]:
    subject = Subject.objects.get(id=uuid.UUID(subject_id))
    return procedural_dream(subject=subject, job=job)


@job_task(name=task_names.SEDM_REPLAY, time_limit=600)
def replay_task(job: Job, *, replay_id: str) -> dict[str, Any]:
    return replay_run(replay_id=uuid.UUID(replay_id))


@job_task(name=task_names.SEDM_DECIDE, time_limit=900)
def decide_task(job: Job, *, admission_id: str) -> dict[str, Any]:
    return admission_decide(admission_id=uuid.UUID(admission_id), job=job)


@job_task(name=task_names.PROCEDURAL_EVOLVE, time_limit=900)
def evolve_task(job: Job) -> dict[str, Any]:
    return evolve(job=job)


@per_organization_task(name=task_names.PROCEDURAL_DREAM_SWEEP)
def procedural_dream_sweep(organization_id: uuid.UUID) -> int:
    """Beat: a dream for every subject with enough pending sessions."""
    return dream_sweep()


@per_organization_task(name=task_names.PROCEDURAL_EVOLVE_SWEEP)
def procedural_evolve_sweep(organization_id: uuid.UUID) -> int:
    """Beat: an evolution job for every organization with feedback waiting."""
    return int(evolve_schedule(organization_id=organization_id) is not None)
