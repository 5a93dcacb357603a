"""Skill admission (docs/architecture.md, "Consolidation plane"): paired A/B replay of a candidate inside an SCEC — a distilled
experience (in its session's SCEC) or a curator's skill edit (a candidate skill version, in
the SCEC ``services.skill_edit_propose`` chose).

``admission_start`` creates the admission, one replay row and one job per arm and run, and
publishes each after commit on the admission queue. Each replay job
records its run and counts itself done on the admission row (under its row lock); the job
that completes the count creates the deciding job — the chord's join, kept in the database
because the deployment keeps no Celery result backend (job rows are the results). The
decision (``services.admission_decide``, which builds on this module) computes S over the
paired runs, admits iff S ≥ η with w0 = max(0, S), and then lets the curator use an admitted
experience, or makes an admitted edit the skill's version.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from typing import Any

from django.conf import settings
from django.utils import timezone

from apps.jobs import task_names
from apps.jobs.services import job_create, job_enqueue_on_commit
from apps.procedural.models import Admission, Experience, Replay, Scec, SkillVersion
from apps.procedural.provider import metering_for, procedural_llm
from apps.procedural.rewards import reward
from apps.procedural.selectors import scec_package
from apps.providers.errors import ProviderError
from apps.providers.interfaces import ReplayUnavailable
from apps.providers.procedural_schemas import ReplayRequest

REPLAY_JOB_KIND = "procedural.replay"
DECIDE_JOB_KIND = "procedural.admission"


def _sha(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _seed(package: dict[str, Any], scec: Scec, run: int) -> int:
    seeds = [s for s in package.get("seeds") or [] if isinstance(s, int)]
    if run < len(seeds):
        return seeds[run]
    return int(_sha(scec.content_hash, str(run))[:12], 16)


def admission_start(
    *,
    llm_version: str,
    experience: Experience | None = None,
    skill_version: SkillVersion | None = None,
    scec: Scec | None = None,
) -> Admission:
    """Admit ``experience`` (replayed in its session's SCEC) or ``skill_version`` (in ``scec``)."""
    if experience is not None:
        scec = Scec.objects.get(session_id=experience.session_id)
    candidate = experience or skill_version
    if scec is None or candidate is None or (experience is not None and skill_version is not None):
        raise ValueError("an admission needs one candidate and an SCEC")
    package = scec_package(scec)
    runs = settings.PROCEDURAL_RUNS_PER_ARM
    admission = Admission.objects.create(
        organization_id=scec.organization_id,
        subject_id=scec.subject_id,
        experience=experience,
        skill_version=skill_version,
        scec=scec,
        runs_per_arm=runs,
        replays_total=2 * runs,
        lambda_latency=settings.PROCEDURAL_LAMBDA_LATENCY,
        lambda_tokens=settings.PROCEDURAL_LAMBDA_TOKENS,
        eta=settings.PROCEDURAL_ETA,
        item_hash=_sha(candidate.text),
        provider_version=llm_version,
    )
    for run in range(runs):
        seed = _seed(package, scec, run)
        for arm in (Replay.Arm.WITHOUT, Replay.Arm.WITH_ITEM):
            job = job_create(organization_id=scec.organization_id, kind=REPLAY_JOB_KIND, subject_id=scec.subject_id)
            replay = Replay.objects.create(
                organization_id=scec.organization_id, admission=admission, job=job, arm=arm, run=run, seed=seed
            )
            job_enqueue_on_commit(job=job, task_name=task_names.SEDM_REPLAY, kwargs={"replay_id": str(replay.id)})
    return admission


def replay_run(*, replay_id: uuid.UUID) -> dict[str, Any]:
    """Run one arm of one paired run (idempotent: a finished replay is not run again)."""
    replay = Replay.objects.select_related(
        "admission", "admission__experience", "admission__skill_version", "admission__scec"
    ).get(id=replay_id)
    admission = replay.admission
    if replay.finished_at is None:
        package = scec_package(admission.scec)
        llm = procedural_llm(admission.organization_id)
        request = ReplayRequest(
            task=package["task"],
            inputs=package["inputs"],
            tool_summaries=tuple(package["tool_summaries"]),
            seed=replay.seed,
            executor=package.get("executor"),
            item=admission.item_text if replay.arm == Replay.Arm.WITH_ITEM else None,
            config=package.get("config") or {},
        )
        replay.fingerprint = _sha(
            admission.scec.content_hash,
            replay.arm,
            admission.item_hash if replay.arm == Replay.Arm.WITH_ITEM else "",
            str(replay.seed),
            llm.version,
            str(package.get("config_hash", "")),
        )
        started = time.perf_counter()
        try:
            result = llm.replay(request, metering=metering_for(admission.organization_id))
        except (ReplayUnavailable, ProviderError) as exc:
            replay.error = str(exc)[:200]
        else:
            replay.latency_seconds = time.perf_counter() - started
            replay.reward = reward(admission.scec.reward_spec, result.output)
            replay.tokens = result.tokens
            replay.output_hash = _sha(result.output)
            replay.model = result.model[:200]
        replay.finished_at = timezone.now()
        replay.save()
        _count_done(admission.id)
    return {
        "replay_id": str(replay.id),
        "arm": replay.arm,
        "run": replay.run,
        "reward": replay.reward,
        "error": replay.error,
    }


def _count_done(admission_id: uuid.UUID) -> None:
    """The chord's join: the replay that completes the count schedules the decision."""
    admission = Admission.objects.select_for_update().get(id=admission_id)
    admission.replays_done += 1
    admission.save(update_fields=["replays_done"])
    if admission.replays_done == admission.replays_total:
        job = job_create(
            organization_id=admission.organization_id, kind=DECIDE_JOB_KIND, subject_id=admission.subject_id
        )
        job_enqueue_on_commit(job=job, task_name=task_names.SEDM_DECIDE, kwargs={"admission_id": str(admission.id)})
