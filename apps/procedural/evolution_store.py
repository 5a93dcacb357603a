"""Evolution from outcome feedback (docs/architecture.md, "Consolidation plane"): retrieval
feedback, the periodic weight update, demotion and archive, near-duplicate merge, and
reverting any recorded change — over the procedural tables; the step itself is
``apps.procedural.evolution``."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.utils import timezone
from pgvector.django import CosineDistance

from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import job_create, job_enqueue_on_commit
from apps.platform.errors import Conflict, NotFound, ValidationFailed
from apps.procedural.evolution import EvolutionSettings, Outcome, merged_text, outcome_utilities, skill_step
from apps.procedural.models import Feedback, Retrieval, Skill, SkillCitation, SkillEvent
from apps.procedural.sedm import merged_weight
from apps.procedural.services import skill_event, skill_retire, skill_version_create, skill_version_next
from apps.webhooks.events import SKILL_WEIGHT_CHANGED
from apps.webhooks.services import webhook_event_emit

logger = logging.getLogger(__name__)

EVOLVE_JOB_KIND = "procedural.evolve"
EVOLVE_BATCH = 5000


def feedback_create(
    *,
    retrieval_id: uuid.UUID,
    items_used: Sequence[uuid.UUID],
    reward: float | None,
    success: bool | None,
    latency_ms: int,
    tokens: int,
) -> Feedback:
    """Record the outcome of a task that used a retrieval's items; applied by the next
    evolution job."""
    retrieval = Retrieval.objects.filter(id=retrieval_id).first()
    if retrieval is None:
        raise NotFound("No retrieval with this id in this organization.")
    if (reward is None) == (success is None):
        raise ValidationFailed("Send exactly one of 'reward' (0 to 1) or 'success' (true/false).")
    returned = {item["skill_id"] for item in retrieval.items}
    used = [str(item) for item in dict.fromkeys(items_used)]
    unknown = [item for item in used if item not in returned]
    if unknown:
        raise ValidationFailed(
            "items_used must be skill ids this retrieval returned.", details={"unknown_items": unknown[:20]}
        )
    value = float(reward) if reward is not None else (1.0 if success else 0.0)
    return Feedback.objects.create(
        organization_id=retrieval.organization_id,
        subject_id=retrieval.subject_id,
        retrieval=retrieval,
        items_used=used,
        reward=value,
        latency_ms=latency_ms,
        tokens=tokens,
    )


def evolve_schedule(*, organization_id: uuid.UUID) -> Job | None:
    """An evolution job for the organization in scope when feedback waits and none is active."""
    if not Feedback.objects.filter(applied=False).exists():
        return None
    if Job.objects.filter(kind=EVOLVE_JOB_KIND, status__in=(Job.Status.QUEUED, Job.Status.RUNNING)).exists():
        return None
    job = job_create(organization_id=organization_id, kind=EVOLVE_JOB_KIND)
    job_enqueue_on_commit(job=job, task_name=task_names.PROCEDURAL_EVOLVE)
    return job


def skill_weight_set(skill: Skill, weight: float, *, kind: str, details: dict[str, Any]) -> None:
    previous_weight, previous_status = skill.weight, skill.status
    skill.weight = weight
    skill.save(update_fields=["weight", "status", "negative_streak", "uses", "updated_at"])
    skill_event(
        skill=skill, kind=kind, previous_weight=previous_weight, previous_status=previous_status, details=details
    )
    _weight_changed(skill, previous_weight)


def _weight_changed(skill: Skill, previous_weight: float) -> None:
    webhook_event_emit(
        organization_id=skill.organization_id,
        event_type=SKILL_WEIGHT_CHANGED,
        subject_id=skill.subject_id,
        payload={
            "subject_id": str(skill.subject_id),
            "skill_id": str(skill.id),
            "previous_weight": previous_weight,
            "weight": skill.weight,
            "status": skill.status,
        },
    )


def _evolution_settings() -> EvolutionSettings:
    return EvolutionSettings(
        baseline=settings.PROCEDURAL_REWARD_BASELINE,
        lambda_latency=settings.PROCEDURAL_LAMBDA_LATENCY,
        lambda_tokens=settings.PROCEDURAL_LAMBDA_TOKENS,
        alpha=settings.PROCEDURAL_ALPHA,
        beta=settings.PROCEDURAL_BETA,
        ceiling=settings.PROCEDURAL_WEIGHT_CEILING,
        demote_patience=settings.PROCEDURAL_DEMOTE_PATIENCE,
        archive_below=settings.PROCEDURAL_ARCHIVE_BELOW,
    )


def evolve(*, job: Job | None = None) -> dict[str, Any]:
    """Apply the waiting feedback of the organization in scope: per subject, each used item's
    w ← w + α·Ū − β·f_use (f_use over that subject's feedback in the period); demote items
    whose last updates all realized negative utility; archive those below the threshold; then
    merge near-duplicates of the subjects touched."""
    pending = list(
        Feedback.objects.select_for_update(skip_locked=True).filter(applied=False).order_by("created_at")[:EVOLVE_BATCH]
    )
    evolution = _evolution_settings()
    utilities = outcome_utilities(
        (
            Outcome(
                subject_id=f.subject_id,
                skill_ids=f.items_used,
                reward=f.reward,
                latency_ms=f.latency_ms,
                tokens=f.tokens,
            )
            for f in pending
        ),
        evolution,
    )
    changed = demoted = archived = 0
    skills = Skill.objects.select_for_update().filter(id__in=list(utilities.per_skill)).order_by("id")
    for skill in skills:
        if skill.status not in (Skill.Status.ACTIVE, Skill.Status.DEMOTED):
            continue
        step = skill_step(
            weight=skill.weight,
            active=skill.status == Skill.Status.ACTIVE,
            negative_streak=skill.negative_streak,
            utilities=utilities.per_skill[str(skill.id)],
            events=utilities.events_per_subject[skill.subject_id],
            settings=evolution,
        )
        skill.uses += step.uses
        skill.negative_streak = step.negative_streak
        kind = SkillEvent.Kind.WEIGHT_CHANGED
        if step.demote:
            skill.status = Skill.Status.DEMOTED
            kind = SkillEvent.Kind.DEMOTED
            demoted += 1
        details = {"mean_utility": step.mean_utility, "use_frequency": step.use_frequency, "uses": step.uses}
        skill_weight_set(skill, step.weight, kind=kind, details=details)
        changed += 1
        if step.archive:
            skill_retire(
                skill=skill, status=Skill.Status.ARCHIVED, details={"below": settings.PROCEDURAL_ARCHIVE_BELOW}
            )
            archived += 1
    Feedback.objects.filter(id__in=[f.id for f in pending]).update(applied=True)
    merged = sum(skills_merge_duplicates(subject_id=subject_id, job=job) for subject_id in utilities.events_per_subject)
    return {
        "feedback": len(pending),
        "weights_changed": changed,
        "demoted": demoted,
        "archived": archived,
        "merged": merged,
    }


def skills_merge_duplicates(*, subject_id: uuid.UUID, job: Job | None = None) -> int:
    """Merge near-duplicate active skills of one subject (same domain and form, embedding
    cosine ≥ the setting, no conflict: neither is demoted). The higher-weight skill survives
    with a new version citing the union of evidence; its weight is reconciled without
    counting shared evidence twice; the other is archived as merged, with provenance."""
    merged = 0
    survivors = list(
        Skill.objects.select_for_update()
        .filter(subject_id=subject_id, status=Skill.Status.ACTIVE)
        .order_by("-weight", "created_at")
    )
    gone: set[uuid.UUID] = set()
    for survivor in survivors:
        if survivor.id in gone or survivor.embedding is None:
            continue
        near = (
            Skill.objects.filter(
                subject_id=subject_id,
                status=Skill.Status.ACTIVE,
                domain=survivor.domain,
                form=survivor.form,
                embedding_model=survivor.embedding_model,
            )
            .exclude(id__in=[survivor.id, *gone])
            .annotate(distance=CosineDistance("embedding", survivor.embedding))
            .filter(distance__lte=1.0 - settings.PROCEDURAL_MERGE_SIMILARITY)
            .order_by("distance", "id")
        )
        for duplicate in near:
            skill_merge(survivor=survivor, duplicate=duplicate, job=job)
            gone.add(duplicate.id)
            merged += 1
    return merged


def _current_citations(skill: Skill) -> list[SkillCitation]:
    return list(
        SkillCitation.objects.filter(skill_version__skill=skill, skill_version__version=skill.version).select_related(
            "experience"
        )
    )


def skill_merge(*, survivor: Skill, duplicate: Skill, job: Job | None) -> None:
    own = _current_citations(survivor)
    theirs = _current_citations(duplicate)
    previous_weight = survivor.weight
    survivor.weight = merged_weight(
        [
            (survivor.weight, frozenset(str(c.experience_id) for c in own)),
            (duplicate.weight, frozenset(str(c.experience_id) for c in theirs)),
        ]
    )
    survivor.text = merged_text(survivor.text, duplicate.text)
    survivor.version = skill_version_next(survivor)
    survivor.save(update_fields=["weight", "text", "version", "updated_at"])
    citations = [(c.experience, c.quote) for c in [*own, *theirs] if c.quote in survivor.text]
    skill_version_create(skill=survivor, change="merge", citations=citations, job=job)
    skill_event(
        skill=survivor,
        kind=SkillEvent.Kind.MERGED,
        previous_weight=previous_weight,
        previous_status=survivor.status,
        details={
            "absorbed": str(duplicate.id),
            "absorbed_weight": duplicate.weight,
            "absorbed_version": duplicate.version,
        },
    )
    duplicate.merged_into = survivor
    skill_retire(
        skill=duplicate,
        status=Skill.Status.MERGED,
        details={"merged_into": str(survivor.id), "survivor_version": survivor.version},
    )


def skill_event_revert(*, event_id: uuid.UUID) -> SkillEvent:
    """Undo one weight or status change: the skill gets the event's previous weight and
    status back, recorded as a new ``reverted`` event that names the one it undid."""
    event = SkillEvent.objects.select_related("skill").filter(id=event_id).first()
    if event is None:
        raise NotFound("No skill event with this id in this organization.")
    if event.reverted_by_id is not None or event.kind in (SkillEvent.Kind.ADMITTED, SkillEvent.Kind.REVERTED):
        raise Conflict("This event cannot be reverted (already reverted, or an admission or a revert itself).")
    skill = Skill.objects.select_for_update().get(id=event.skill_id)
    previous_weight, previous_status = skill.weight, skill.status
    skill.weight = event.previous_weight
    skill.status = event.previous_status or skill.status
    if event.kind == SkillEvent.Kind.MERGED and skill.merged_into_id is not None:
        skill.merged_into = None
    skill.save(update_fields=["weight", "status", "merged_into", "updated_at"])
    revert = skill_event(
        skill=skill,
        kind=SkillEvent.Kind.REVERTED,
        previous_weight=previous_weight,
        previous_status=previous_status,
        details={"reverted_event": str(event.id), "at": timezone.now().isoformat()},
    )
    event.reverted_by = revert
    event.save(update_fields=["reverted_by"])
    _weight_changed(skill, previous_weight)
    return revert
