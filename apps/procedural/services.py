"""Task sessions and procedural AutoDream (docs/architecture.md, "Consolidation plane"): write a session (with its SCEC), distill pending
sessions into experiences, curate experiences into versioned, cited skills, abstract general
forms, and decide admissions. These start admissions (``admission.py``: replays of a
candidate, below this module) and evolution (``evolution.py``) builds on them.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Count, Max
from django.utils import timezone

from apps.consent.checks import consent_require
from apps.consent.purposes import CROSS_DOMAIN_GENERALIZATION, LEARN_SKILLS, STORE_CONVERSATIONS
from apps.consent.selectors import consent_state
from apps.dream.services import dream_completed_emit
from apps.jobs import task_names
from apps.jobs.models import Job
from apps.jobs.services import job_create, job_enqueue_on_commit
from apps.platform.errors import ValidationFailed
from apps.procedural.admission import admission_start
from apps.procedural.models import (
    Admission,
    Experience,
    Replay,
    Scec,
    Skill,
    SkillCitation,
    SkillEvent,
    SkillVersion,
    TaskSession,
)
from apps.procedural.provider import metering_for, procedural_llm
from apps.procedural.rewards import InvalidRewardSpec, validate_spec
from apps.procedural.sedm import ArmRun, admission_score, general_weight
from apps.procedural.texts import content_hash, leaked_specifics, quote_in
from apps.providers.interfaces import MeteringContext, ProceduralLLM
from apps.providers.procedural_schemas import (
    CurateInput,
    CurationDecision,
    CurationExperience,
    CurationSkill,
    DistillInput,
    SessionStep,
)
from apps.providers.registry import embedder
from apps.resources.storage import object_key, storage
from apps.tenancy.models import Subject
from apps.webhooks.events import SKILL_ARCHIVED, SKILL_CREATED, SKILL_UPDATED
from apps.webhooks.services import webhook_event_emit

logger = logging.getLogger(__name__)

DREAM_JOB_KIND = "procedural.dream"
DISTILL_BATCH = 20
CURATE_BATCH = 40

# -- sessions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionWritten:
    session: TaskSession
    scec: Scec | None
    pending_sessions: int
    dream_job: Job | None


def _scec_package(session: TaskSession, scec: dict[str, Any]) -> dict[str, Any]:
    """The immutable package: what replay needs and nothing it does not."""
    return {
        "task": session.task,
        "inputs": scec.get("inputs") or {},
        "output": scec.get("output", session.final_output),
        "tool_summaries": list(scec.get("tool_summaries") or []),
        "seeds": list(scec.get("seeds") or []),
        "model_hash": scec.get("model_hash", ""),
        "config_hash": scec.get("config_hash", ""),
        "config": scec.get("config") or {},
        "executor": scec.get("executor"),
        "reward_spec": scec["reward_spec"],
    }


def _scec_create(session: TaskSession, scec: dict[str, Any]) -> Scec:
    try:
        validate_spec(scec.get("reward_spec"))
    except InvalidRewardSpec as exc:
        raise ValidationFailed(str(exc), details={"field": "scec.reward_spec"}) from None
    package = _scec_package(session, scec)
    digest = content_hash(package)
    claimed = scec.get("content_hash")
    if claimed and claimed != digest:
        raise ValidationFailed(
            "scec.content_hash does not match the package; omit it or send the SHA-256 of its canonical JSON.",
            details={"expected": digest},
        )
    data = json.dumps(package, sort_keys=True, separators=(",", ":")).encode()
    if len(data) > settings.PROCEDURAL_SCEC_MAX_BYTES:
        raise ValidationFailed(f"The SCEC is larger than {settings.PROCEDURAL_SCEC_MAX_BYTES} bytes.")
    key = ""
    if len(data) > settings.PROCEDURAL_SCEC_INLINE_BYTES:
        key = object_key(organization_id=session.organization_id, subject_id=session.subject_id)
        storage().put(key, data, "application/json")
    return Scec.objects.create(
        organization_id=session.organization_id,
        subject_id=session.subject_id,
        session=session,
        content_hash=digest,
        reward_spec=package["reward_spec"],
        package=None if key else package,
        object_key=key,
        size_bytes=len(data),
    )


def session_create(
    *,
    subject: Subject,
    task: str,
    domain: str,
    steps: Sequence[dict[str, Any]],
    final_output: str,
    outcome: str | None,
    scec: dict[str, Any] | None,
) -> SessionWritten:
    """Store a task session (and its SCEC) for learning skills; start AutoDream once enough
    sessions are pending. Needs the subject's ``store_conversations`` and ``learn_skills``."""
    consent_require(subject=subject, purpose=STORE_CONVERSATIONS)
    consent_require(subject=subject, purpose=LEARN_SKILLS)
    session = TaskSession.objects.create(
        organization_id=subject.organization_id,
        subject=subject,
        task=task,
        domain=domain.strip().lower(),
        steps=[{"kind": s["kind"], "content": s["content"], "tool": s.get("tool")} for s in steps],
        final_output=final_output,
        claimed_outcome=outcome or "",
    )
    stored = _scec_create(session, scec) if scec is not None else None
    pending = TaskSession.objects.filter(subject=subject, status=TaskSession.Status.PENDING).count()
    job = dream_schedule(subject=subject) if pending >= settings.PROCEDURAL_DREAM_THRESHOLD else None
    return SessionWritten(session=session, scec=stored, pending_sessions=pending, dream_job=job)


def dream_schedule(*, subject: Subject) -> Job | None:
    """A dream job for ``subject`` unless one is already queued or running."""
    active = Job.objects.filter(
        subject=subject, kind=DREAM_JOB_KIND, status__in=(Job.Status.QUEUED, Job.Status.RUNNING)
    ).exists()
    if active:
        return None
    job = job_create(organization_id=subject.organization_id, kind=DREAM_JOB_KIND, subject_id=subject.id)
    job_enqueue_on_commit(job=job, task_name=task_names.PROCEDURAL_DREAM, kwargs={"subject_id": str(subject.id)})
    return job


def dream_sweep() -> int:
    """Beat: schedule a dream for each subject of the organization in scope with enough
    pending sessions (a write's own trigger may have been lost with its worker)."""
    rows = (
        TaskSession.objects.filter(status=TaskSession.Status.PENDING)
        .values("subject_id")
        .annotate(pending=Count("id"))
        .filter(pending__gte=settings.PROCEDURAL_DREAM_THRESHOLD)
    )
    scheduled = 0
    for row in rows:
        subject = Subject.objects.get(id=row["subject_id"])
        scheduled += dream_schedule(subject=subject) is not None
    return scheduled


# -- distill ------------------------------------------------------------------------------


def _distill_input(session: TaskSession) -> DistillInput:
    steps = tuple(
        SessionStep(index=i, kind=s["kind"], content=s["content"], tool=s.get("tool"))
        for i, s in enumerate(session.steps)
    )
    return DistillInput(
        session_id=str(session.id),
        task=session.task,
        domain=session.domain,
        steps=steps,
        final_output=session.final_output,
        outcome=session.claimed_outcome or None,
    )


def session_distill(*, session: TaskSession, llm: ProceduralLLM, metering: MeteringContext) -> list[Experience]:
    """The distiller's experiences of one session. Its outcome stands only if its quote is in
    the transcript (else ``unclear``); an experience whose quote is not is dropped."""
    source = _distill_input(session)
    reply = llm.distill(source, metering=metering)
    transcript = source.transcript
    quoted = reply.outcome != "unclear" and quote_in(reply.outcome_quote, transcript)
    session.outcome = reply.outcome if quoted else "unclear"
    session.outcome_quote = reply.outcome_quote if quoted else ""
    session.status = TaskSession.Status.DISTILLED
    session.save(update_fields=["outcome", "outcome_quote", "status"])
    has_scec = Scec.objects.filter(session=session).exists()
    experiences = []
    for item in reply.experiences:
        if not quote_in(item.quote, transcript):
            logger.info("experience quote not in transcript", extra={"session_id": str(session.id)})
            continue
        experiences.append(
            Experience.objects.create(
                organization_id=session.organization_id,
                subject_id=session.subject_id,
                session=session,
                domain=session.domain,
                kind=item.kind,
                text=item.text,
                quote=item.quote,
                verification=Experience.Verification.VERIFYING if has_scec else Experience.Verification.UNVERIFIED,
                weight=settings.PROCEDURAL_NEUTRAL_WEIGHT,
            )
        )
    return experiences


def procedural_dream(*, subject: Subject, job: Job | None = None) -> dict[str, Any]:
    """One AutoDream round: distill every pending session (a bounded batch), start admission
    for experiences with an SCEC, then curate what is ready."""
    if not consent_state(subject=subject)[LEARN_SKILLS].granted:
        # Withdrawn after the sessions were written: their erasure is under way; learn nothing.
        return {"sessions": 0, "skipped": "learn_skills withdrawn"}
    llm = procedural_llm(subject.organization_id)
    metering = metering_for(subject.organization_id)
    sessions = list(
        TaskSession.objects.select_for_update(skip_locked=True)
        .filter(subject=subject, status=TaskSession.Status.PENDING)
        .order_by("created_at")[:DISTILL_BATCH]
    )
    experiences: list[Experience] = []
    for session in sessions:
        experiences += session_distill(session=session, llm=llm, metering=metering)
    admissions = 0
    for experience in experiences:
        if experience.verification == Experience.Verification.VERIFYING:
            admission_start(experience=experience, llm_version=llm.version)
            admissions += 1
    curated = skills_curate(subject=subject, llm=llm, metering=metering, job=job)
    dream_completed_emit(
        subject=subject,
        kind="procedural",
        job=job,
        merges=[],
        skills_changed=curated["created"] + curated["edited"] + curated["deleted"],
    )
    return {
        "sessions": len(sessions),
        "unclear": sum(1 for s in sessions if s.outcome == "unclear"),
        "experiences": len(experiences),
        "admissions": admissions,
        **curated,
    }


# -- curate -------------------------------------------------------------------------------


def _skill_embedding(name: str, text: str) -> tuple[list[float], str]:
    vectors = embedder()
    return vectors.embed([f"{name}\n{text}"])[0], vectors.model_name


def skill_event(
    *, skill: Skill, kind: str, previous_weight: float, previous_status: str, details: dict[str, Any]
) -> SkillEvent:
    sequence = SkillEvent.objects.filter(skill=skill).count() + 1
    return SkillEvent.objects.create(
        organization_id=skill.organization_id,
        skill=skill,
        sequence=sequence,
        kind=kind,
        previous_weight=previous_weight,
        weight=skill.weight,
        previous_status=previous_status,
        status=skill.status,
        details=details,
    )


def _cited(text: str, decision: CurationDecision, known: dict[str, Experience]) -> list[tuple[Experience, str]]:
    """Citations whose experience was offered and whose quote is in the skill's text."""
    cited = []
    for citation in decision.citations:
        experience = known.get(citation.experience_id)
        if experience is None or not quote_in(citation.quote, text):
            logger.info("citation dropped", extra={"experience_id": citation.experience_id[:64]})
            continue
        cited.append((experience, citation.quote))
    return cited


def skill_version_next(skill: Skill) -> int:
    """The next version number, after every version proposed (rejected ones included);
    the skill's row lock keeps two proposals from taking the same number."""
    current = Skill.objects.select_for_update().values_list("version", flat=True).get(id=skill.id)
    latest = SkillVersion.objects.filter(skill=skill).aggregate(latest=Max("version"))["latest"]
    return max(current, latest or 0) + 1


def skill_version_create(
    *,
    skill: Skill,
    change: str,
    citations: Iterable[tuple[Experience, str]],
    job: Job | None,
    proposed: tuple[str, str] | None = None,
    verification: str = SkillVersion.Verification.NOT_A_CANDIDATE,
) -> SkillVersion:
    """A version of ``skill`` with the citations whose experience it rests on: the skill's
    current name and text, or a ``proposed`` (name, text) under the next number."""
    name, text = proposed or (skill.name, skill.text)
    version = SkillVersion.objects.create(
        organization_id=skill.organization_id,
        skill=skill,
        version=skill_version_next(skill) if proposed else skill.version,
        name=name,
        text=text,
        change=change,
        verification=verification,
        job=job,
    )
    for experience, quote in dict((e.id, (e, q)) for e, q in citations).values():
        SkillCitation.objects.create(
            organization_id=skill.organization_id, skill_version=version, experience=experience, quote=quote
        )
    return version


def _skill_payload(skill: Skill) -> dict[str, Any]:
    return {
        "subject_id": str(skill.subject_id),
        "skill_id": str(skill.id),
        "version": skill.version,
        "weight": skill.weight,
        "form": skill.form,
        "domain": skill.domain,
    }


def _initial_weight(experiences: Sequence[Experience]) -> tuple[float, bool]:
    admitted = [e.weight for e in experiences if e.verification == Experience.Verification.ADMITTED]
    if admitted:
        return max(admitted), True
    return settings.PROCEDURAL_NEUTRAL_WEIGHT, False


def skill_create(
    *,
    subject: Subject,
    name: str,
    domain: str,
    text: str,
    citations: Sequence[tuple[Experience, str]],
    job: Job | None,
) -> Skill:
    weight, verified = _initial_weight([experience for experience, _ in citations])
    vector, model = _skill_embedding(name, text)
    skill = Skill.objects.create(
        organization_id=subject.organization_id,
        subject=subject,
        name=name[:300],
        domain=domain.strip().lower()[:100],
        text=text,
        verified=verified,
        weight=weight,
        embedding=vector,
        embedding_model=model,
    )
    skill_version_create(skill=skill, change="create", citations=citations, job=job)
    skill_event(
        skill=skill,
        kind=SkillEvent.Kind.ADMITTED,
        previous_weight=0.0,
        previous_status="",
        details={"verified": verified, "experience_ids": [str(e.id) for e, _ in citations]},
    )
    webhook_event_emit(
        organization_id=subject.organization_id,
        event_type=SKILL_CREATED,
        subject_id=subject.id,
        payload=_skill_payload(skill),
        content={"name": skill.name, "text": skill.text},
    )
    return skill


def skill_edit(
    *,
    skill: Skill,
    name: str | None,
    text: str,
    citations: Sequence[tuple[Experience, str]],
    change: str,
    job: Job | None,
    verification: str = SkillVersion.Verification.NOT_A_CANDIDATE,
) -> SkillVersion:
    """A new version of ``skill``, applied at once; earlier versions keep their text and
    citations. (A curator's edit goes through ``skill_edit_propose``.)"""
    version = skill_version_create(
        skill=skill,
        change=change,
        citations=citations,
        job=job,
        proposed=((name or skill.name)[:300], text),
        verification=verification,
    )
    _version_apply(skill, version)
    return version


def _version_apply(skill: Skill, version: SkillVersion) -> None:
    skill.name, skill.text, skill.version = version.name, version.text, version.version
    skill.embedding, skill.embedding_model = _skill_embedding(skill.name, skill.text)
    skill.save(update_fields=["name", "text", "version", "embedding", "embedding_model", "updated_at"])
    webhook_event_emit(
        organization_id=skill.organization_id,
        event_type=SKILL_UPDATED,
        subject_id=skill.subject_id,
        payload=_skill_payload(skill),
        content={"name": skill.name, "text": skill.text},
    )


def _edit_scec(skill: Skill, citations: Sequence[tuple[Experience, str]]) -> Scec | None:
    """The SCEC an edit is replayed in: the latest of the sessions it cites, else the latest
    of the subject's sessions in the skill's domain."""
    scecs = Scec.objects.filter(subject_id=skill.subject_id).order_by("-created_at")
    cited = scecs.filter(session_id__in=[e.session_id for e, _ in citations]).first()
    return cited or scecs.filter(session__domain=skill.domain).first()


def skill_edit_propose(
    *,
    skill: Skill,
    name: str | None,
    text: str,
    citations: Sequence[tuple[Experience, str]],
    job: Job | None,
    llm_version: str,
) -> SkillVersion:
    """A curator's edit is a candidate for admission: with an SCEC of the subject it is
    A/B-replayed and becomes the skill's version only if admitted (``skill_version_decided``);
    without one it is applied at once, unverified, at the neutral prior, and says so."""
    scec = _edit_scec(skill, citations)
    if scec is None:
        version = skill_edit(
            skill=skill,
            name=name,
            text=text,
            citations=citations,
            change="edit",
            job=job,
            verification=SkillVersion.Verification.UNVERIFIED,
        )
        _weight_set(skill, settings.PROCEDURAL_NEUTRAL_WEIGHT, verified=False, details={"version": version.version})
        return version
    version = skill_version_create(
        skill=skill,
        change="edit",
        citations=citations,
        job=job,
        proposed=((name or skill.name)[:300], text),
        verification=SkillVersion.Verification.VERIFYING,
    )
    admission_start(skill_version=version, scec=scec, llm_version=llm_version)
    return version


def skill_version_decided(*, version: SkillVersion, admitted: bool, weight: float, verified: bool) -> None:
    """An edit's admission decided: an admitted (or unverifiable) version becomes the skill's
    at its weight; a rejected one is kept as history and the previous version stays active.
    A version older than the skill's current one (a later edit came first) only records it."""
    skill = Skill.objects.select_for_update().get(id=version.skill_id)
    if not admitted:
        version.verification = SkillVersion.Verification.REJECTED
    else:
        version.verification = SkillVersion.Verification.ADMITTED if verified else SkillVersion.Verification.UNVERIFIED
        if version.version > skill.version:
            _version_apply(skill, version)
            _weight_set(skill, weight, verified=verified, details={"version": version.version})
    version.save(update_fields=["verification"])


def _weight_set(skill: Skill, weight: float, *, verified: bool, details: dict[str, Any]) -> None:
    """A new version's weight: w0 when A/B-verified, the neutral prior when not (reversible)."""
    previous = skill.weight
    skill.weight, skill.verified = weight, verified
    skill.save(update_fields=["weight", "verified", "updated_at"])
    skill_event(
        skill=skill,
        kind=SkillEvent.Kind.WEIGHT_CHANGED,
        previous_weight=previous,
        previous_status=skill.status,
        details={**details, "verified": verified},
    )


def skill_retire(*, skill: Skill, status: str, details: dict[str, Any]) -> None:
    """Archive, merge away or delete a skill: a reversible event and a webhook."""
    previous = skill.status
    skill.status = status
    skill.save(update_fields=["status", "merged_into", "updated_at"])
    kind = SkillEvent.Kind.MERGED if status == Skill.Status.MERGED else SkillEvent.Kind.ARCHIVED
    skill_event(skill=skill, kind=kind, previous_weight=skill.weight, previous_status=previous, details=details)
    webhook_event_emit(
        organization_id=skill.organization_id,
        event_type=SKILL_ARCHIVED,
        subject_id=skill.subject_id,
        payload={**_skill_payload(skill), "status": status},
    )


def _apply_decision(
    decision: CurationDecision,
    *,
    subject: Subject,
    offered: dict[str, Experience],
    skills: dict[str, Skill],
    job: Job | None,
    counts: dict[str, int],
    llm_version: str,
) -> list[Skill]:
    """One curator decision, checked: unknown skills or experiences are ignored."""
    named = [offered[eid] for eid in decision.experience_ids if eid in offered]
    action = decision.action
    if action in ("covered", "not_worth", "defer"):
        state = {"covered": Experience.Curation.COVERED, "not_worth": Experience.Curation.NOT_WORTH}.get(
            action, Experience.Curation.DEFERRED
        )
        Experience.objects.filter(id__in=[e.id for e in named]).update(curation=state)
        counts[action] += len(named)
        return []
    if action == "create" and decision.text and decision.name:
        citations = _cited(decision.text, decision, offered)
        skill = skill_create(
            subject=subject,
            name=decision.name,
            domain=decision.domain or (named[0].domain if named else "general"),
            text=decision.text,
            citations=citations,
            job=job,
        )
        skills[str(skill.id)] = skill
        _mark_used(citations)
        counts["created"] += 1
        counts["citations_dropped"] += len(decision.citations) - len(citations)
        return [skill]
    target = skills.get(decision.skill_id or "")
    if target is None:
        logger.info("curator named an unknown skill", extra={"action": action})
        return []
    if action == "edit" and decision.text:
        citations = _cited(decision.text, decision, offered)
        version = skill_edit_propose(
            skill=target, name=decision.name, text=decision.text, citations=citations, job=job, llm_version=llm_version
        )
        _mark_used(citations)
        verifying = version.verification == SkillVersion.Verification.VERIFYING
        counts["edits_verifying" if verifying else "edited"] += 1
        counts["citations_dropped"] += len(decision.citations) - len(citations)
        return [] if verifying else [target]
    if action == "delete":
        skill_retire(skill=target, status=Skill.Status.DELETED, details={"by": "curator"})
        counts["deleted"] += 1
    return []


def _mark_used(citations: Sequence[tuple[Experience, str]]) -> None:
    Experience.objects.filter(id__in=[e.id for e, _ in citations]).update(curation=Experience.Curation.USED)


def skills_curate(
    *, subject: Subject, llm: ProceduralLLM, metering: MeteringContext, job: Job | None = None
) -> dict[str, int]:
    """Run the curator over the experiences ready for it: unverified ones (neutral prior) and
    admitted ones; those still being verified wait, rejected ones never come."""
    ready = list(
        Experience.objects.filter(
            subject=subject,
            curation__in=(Experience.Curation.PENDING, Experience.Curation.DEFERRED),
            verification__in=(Experience.Verification.UNVERIFIED, Experience.Verification.ADMITTED),
        ).order_by("created_at")[:CURATE_BATCH]
    )
    counts = dict.fromkeys(
        (
            "created",
            "edited",
            "edits_verifying",
            "deleted",
            "covered",
            "not_worth",
            "defer",
            "citations_dropped",
            "general_forms",
        ),
        0,
    )
    if not ready:
        return counts
    skills = {
        str(s.id): s
        for s in Skill.objects.filter(subject=subject, form=Skill.Form.SPECIFIC, status=Skill.Status.ACTIVE)
    }
    request = CurateInput(
        skills=tuple(CurationSkill(skill_id=k, name=s.name, domain=s.domain, text=s.text) for k, s in skills.items()),
        experiences=tuple(
            CurationExperience(
                experience_id=str(e.id), kind=e.kind, domain=e.domain, text=e.text, verification=e.verification
            )
            for e in ready
        ),
    )
    reply = llm.curate(request, metering=metering)
    offered = {str(e.id): e for e in ready}
    changed: list[Skill] = []
    for decision in reply.decisions:
        changed += _apply_decision(
            decision, subject=subject, offered=offered, skills=skills, job=job, counts=counts, llm_version=llm.version
        )
    if consent_state(subject=subject)[CROSS_DOMAIN_GENERALIZATION].granted:
        for skill in {s.id: s for s in changed}.values():
            counts["general_forms"] += general_form_refresh(skill=skill, llm=llm, metering=metering, job=job)
    return counts


# -- general forms ------------------------------------------------------------------------


def general_form_refresh(*, skill: Skill, llm: ProceduralLLM, metering: MeteringContext, job: Job | None) -> int:
    """Create or update the general form of a specific skill: entities and numbers
    become placeholders; w_general = α·w_specific. A proposal that still names an entity or a
    number of the specific form is refused (returns 0)."""
    reply = llm.abstract(skill.text, metering=metering)
    entities = [(pair[0], pair[1]) for pair in reply.entities if len(pair) == 2]
    if leaked_specifics(reply.general_text, entities) or reply.general_text.strip() == skill.text.strip():
        logger.info("general form refused", extra={"skill_id": str(skill.id)})
        return 0
    weight = general_weight(specific_weight=skill.weight, alpha=settings.PROCEDURAL_GENERAL_ALPHA)
    general = Skill.objects.filter(general_of=skill).first()
    name = f"{skill.name} (general form)"
    if general is None:
        vector, model = _skill_embedding(name, reply.general_text)
        general = Skill.objects.create(
            organization_id=skill.organization_id,
            subject_id=skill.subject_id,
            name=name[:300],
            domain=skill.domain,
            text=reply.general_text,
            form=Skill.Form.GENERAL,
            general_of=skill,
            verified=skill.verified,
            weight=weight,
            embedding=vector,
            embedding_model=model,
        )
        skill_version_create(skill=general, change="abstract", citations=(), job=job)
        skill_event(
            skill=general,
            kind=SkillEvent.Kind.ADMITTED,
            previous_weight=0.0,
            previous_status="",
            details={"general_of": str(skill.id), "alpha": settings.PROCEDURAL_GENERAL_ALPHA},
        )
    else:
        skill_edit(skill=general, name=name, text=reply.general_text, citations=(), change="abstract", job=job)
    return 1


# -- admission decisions -----------------------------------------------------------------


def admission_decide(*, admission_id: uuid.UUID, job: Job | None = None) -> dict[str, Any]:
    admission = (
        Admission.objects.select_for_update(of=("self",))
        .select_related("experience", "skill_version")
        .get(id=admission_id)
    )
    if admission.status != Admission.Status.RUNNING:
        return {"admission_id": str(admission.id), "status": admission.status}
    replays = list(admission.replays.order_by("run", "arm"))
    failed = [r for r in replays if r.error or r.reward is None]
    admission.decided_at = timezone.now()
    if failed:
        # Not replayable here: the item enters unverified with the neutral prior, and says so.
        admission.status = Admission.Status.UNVERIFIABLE
    else:
        arms: dict[str, dict[int, ArmRun]] = {Replay.Arm.WITHOUT: {}, Replay.Arm.WITH_ITEM: {}}
        for r in replays:
            arms[r.arm][r.run] = ArmRun(
                reward=float(r.reward or 0), latency_seconds=float(r.latency_seconds or 0), tokens=r.tokens or 0
            )
        runs = sorted(arms[Replay.Arm.WITHOUT])
        score = admission_score(
            without=[arms[Replay.Arm.WITHOUT][run] for run in runs],
            with_item=[arms[Replay.Arm.WITH_ITEM][run] for run in runs],
            lambda_latency=admission.lambda_latency,
            lambda_tokens=admission.lambda_tokens,
            eta=admission.eta,
        )
        admission.delta_reward, admission.delta_latency = score.delta_reward, score.delta_latency
        admission.delta_tokens, admission.score = score.delta_tokens, score.score
        admission.initial_weight = score.initial_weight
        admission.status = Admission.Status.ADMITTED if score.admitted else Admission.Status.REJECTED
    admission.save()
    replayed = admission.status != Admission.Status.UNVERIFIABLE
    weight = float(admission.initial_weight or 0) if replayed else settings.PROCEDURAL_NEUTRAL_WEIGHT
    curated: dict[str, int] = {}
    if admission.skill_version is not None:
        skill_version_decided(
            version=admission.skill_version,
            admitted=admission.status != Admission.Status.REJECTED,
            weight=weight,
            verified=replayed,
        )
    else:
        curated = _experience_decided(admission, weight=weight, job=job)
    logger.info("admission decided", extra={"admission_id": str(admission.id), "status": admission.status})
    return {"admission_id": str(admission.id), "status": admission.status, "score": admission.score, **curated}


def _experience_decided(admission: Admission, *, weight: float, job: Job | None) -> dict[str, int]:
    """Record the decision on the experience; the curator may then use it unless rejected."""
    experience = admission.experience
    assert experience is not None
    experience.verification = Experience.Verification.UNVERIFIED
    if admission.status == Admission.Status.ADMITTED:
        experience.verification = Experience.Verification.ADMITTED
    elif admission.status == Admission.Status.REJECTED:
        experience.verification = Experience.Verification.REJECTED
    experience.weight = weight
    if experience.verification == Experience.Verification.REJECTED:
        experience.curation = Experience.Curation.NOT_WORTH
    experience.save(update_fields=["verification", "weight", "curation"])
    if experience.verification == Experience.Verification.REJECTED:
        return {}
    subject = Subject.objects.get(id=admission.subject_id)
    llm = procedural_llm(admission.organization_id)
    return skills_curate(subject=subject, llm=llm, metering=metering_for(admission.organization_id), job=job)
