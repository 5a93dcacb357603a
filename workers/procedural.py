"""Procedural memory jobs: AutoDream, SEDM replays and decisions, evolution, and their sweeps."""

from __future__ import annotations

import uuid
from typing import Any

from apps.jobs.models import Job
from apps.procedural.admission import replay_run
from apps.procedural.evolution_store import evolve, evolve_schedule
from apps.procedural.services import admission_decide, dream_sweep, procedural_dream
from apps.tenancy.models import Organization, Subject
from apps.tenancy.scope import organization_scope
from mirix_saas.celery import app
from workers.base import job_task


@job_task(name="dream.procedural.run", time_limit=1800)
def procedural_dream_task(job: Job, *, subject_id: str) -> dict[str, Any]:
    subject = Subject.objects.get(id=uuid.UUID(subject_id))
    return procedural_dream(subject=subject, job=job)


@job_task(name="admission.sedm.replay", time_limit=600)
def replay_task(job: Job, *, replay_id: str) -> dict[str, Any]:
    return replay_run(replay_id=uuid.UUID(replay_id))


@job_task(name="admission.sedm.decide", time_limit=900)
def decide_task(job: Job, *, admission_id: str) -> dict[str, Any]:
    return admission_decide(admission_id=uuid.UUID(admission_id), job=job)


@job_task(name="maintenance.procedural.evolve", time_limit=900)
def evolve_task(job: Job) -> dict[str, Any]:
    return evolve(job=job)


def _organization_ids() -> list[uuid.UUID]:
    return list(Organization.objects.dangerously_across_organizations().values_list("id", flat=True))


@app.task(name="dream.procedural.sweep", acks_late=True, time_limit=300)
def procedural_dream_sweep() -> int:
    """Beat: a dream for every subject with enough pending sessions, per organization."""
    scheduled = 0
    for organization_id in _organization_ids():
        with organization_scope(organization_id):
            scheduled += dream_sweep()
    return scheduled


@app.task(name="maintenance.procedural.evolve_sweep", acks_late=True, time_limit=300)
def procedural_evolve_sweep() -> int:
    """Beat: an evolution job for every organization with feedback waiting."""
    scheduled = 0
    for organization_id in _organization_ids():
        with organization_scope(organization_id):
            scheduled += evolve_schedule(organization_id=organization_id) is not None
    return scheduled
