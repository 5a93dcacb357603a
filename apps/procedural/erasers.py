"""Erasure steps of procedural memory (see ``apps.erasure.registry``).

Withdrawing ``learn_skills`` or ``store_conversations`` (or erasing the subject) removes the subject's task sessions,
SCECs with their stored objects, experiences, admissions and replays, skills derived from
them, retrievals and feedback; skills of other subjects lose the citations of this subject's
experiences. Withdrawing ``cross_domain_generalization`` removes the general forms.
"""

from __future__ import annotations

from apps.consent.purposes import CROSS_DOMAIN_GENERALIZATION, LEARN_SKILLS, STORE_CONVERSATIONS
from apps.erasure.erasers import DELETE_BATCH, delete_batch, subject_rows
from apps.erasure.registry import Counts, Eraser, ErasureTarget, eraser_register
from apps.procedural.models import Feedback, Retrieval, Scec, Skill, SkillCitation, TaskSession
from apps.resources.storage import storage


def _scec_objects_erase(target: ErasureTarget) -> Counts:
    """Stored SCEC packages, before the rows that hold their keys (and before the subject's
    object prefix is emptied, so the receipt counts them as SCECs)."""
    rows = subject_rows(Scec, target).exclude(object_key="")
    keys = list(rows.values_list("id", "object_key")[:DELETE_BATCH])
    if not keys:
        return {}
    objects = storage()
    for _, key in keys:
        objects.delete(key)
    rows.filter(id__in=[scec_id for scec_id, _ in keys]).update(object_key="")
    return {"scec_objects": len(keys)}


def _shared_citations_erase(target: ErasureTarget) -> Counts:
    """Citations of this subject's experiences in skills of other subjects."""
    rows = SkillCitation._base_manager.filter(
        organization_id=target.organization_id, experience__subject_id=target.subject_id
    ).exclude(skill_version__skill__subject_id=target.subject_id)
    return delete_batch(rows)


def _skills_erase(target: ErasureTarget) -> Counts:
    # General forms go first: they point at their specific form.
    general = subject_rows(Skill, target).filter(general_of__isnull=False)
    return delete_batch(general) or delete_batch(subject_rows(Skill, target))


def _general_forms_erase(target: ErasureTarget) -> Counts:
    return delete_batch(subject_rows(Skill, target).filter(form=Skill.Form.GENERAL))


def _model_step(model: type[TaskSession] | type[Retrieval] | type[Feedback]):  # type: ignore[no-untyped-def]
    def erase(target: ErasureTarget) -> Counts:
        return delete_batch(subject_rows(model, target))

    return erase


def register_procedural_erasers() -> None:
    # A session transcript is also conversation data: withdrawing either purpose erases it.
    learn = frozenset({LEARN_SKILLS, STORE_CONVERSATIONS})
    for step in (
        Eraser("procedural_scec_objects", _scec_objects_erase, ("scec_objects",), learn, order=390),
        Eraser(
            "procedural_shared_citations", _shared_citations_erase, ("procedural_skill_citation",), learn, order=445
        ),
        Eraser(
            "procedural_general_forms",
            _general_forms_erase,
            ("procedural_skill",),
            frozenset({CROSS_DOMAIN_GENERALIZATION}),
            order=449,
        ),
        Eraser("procedural_skills", _skills_erase, ("procedural_skill",), learn, order=450),
        Eraser("procedural_feedback", _model_step(Feedback), ("procedural_feedback",), learn, order=455),
        Eraser("procedural_retrievals", _model_step(Retrieval), ("procedural_retrieval",), learn, order=456),
        Eraser("procedural_sessions", _model_step(TaskSession), ("procedural_session",), learn, order=460),
    ):
        eraser_register(step)
