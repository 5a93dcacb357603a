"""Procedural memory on the shipped multi-domain task suite (``apps/procedural/suite``).

Three arms run the same sequence of tasks through the suite's deterministic executor:
no memory; skills learned from the training sessions without verification, retrieved by
similarity alone; and SEDM — candidates A/B-replayed in their SCECs before the curator may
use them, skills retrieved by sim × weight, outcome feedback applied every ``--evolve-every``
tasks. Reported: success rate and tokens per arm (overall and in the last quarter), admission
outcomes, and a plot of the SEDM skills' weights over the sequence.

Everything tenant-level runs in one transaction that is rolled back at the end (so no job is
published to the broker and nothing is left behind); the throwaway organization is then
erased.
"""

from __future__ import annotations

import statistics
import time
import uuid
from argparse import ArgumentParser
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction

from apps.consent.services import consent_update
from apps.erasure.services import organization_erase
from apps.evaluation.report import write_section
from apps.procedural.admission import replay_run
from apps.procedural.evolution_store import evolve, feedback_create
from apps.procedural.models import Admission, Replay, Skill
from apps.procedural.rewards import reward
from apps.procedural.selectors import skill_search
from apps.procedural.services import admission_decide, procedural_dream, session_create
from apps.procedural.suite.tasks import reward_spec as suite_reward_spec
from apps.procedural.suite.tasks import run_task, task_sequence, task_text, training_sessions
from apps.providers.registry import embedder
from apps.tenancy import services as tenancy
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope

IMAGE = Path(settings.BASE_DIR) / "docs" / "img" / "bench_procedural.png"


class _Rollback(Exception):
    pass


@dataclass
class ArmResult:
    name: str
    rewards: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)

    def row(self) -> str:
        tail = len(self.rewards) // 4 or 1
        return (
            f"| {self.name} | {statistics.fmean(self.rewards):.1%} | {statistics.fmean(self.rewards[-tail:]):.1%} | "
            f"{statistics.fmean(self.tokens):.0f} | {sum(self.tokens)} |"
        )


class Command(BaseCommand):
    help = "Procedural memory benchmark: no memory vs unweighted skills vs SEDM weighting and evolution."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--tasks", type=int, default=80, help="Evaluation tasks in the sequence.")
        parser.add_argument("--evolve-every", type=int, default=8, help="Tasks between evolution jobs (SEDM arm).")
        parser.add_argument("--write-docs", action="store_true", help="Write the results into docs/benchmarks.md.")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()
        slug = f"bench-procedural-{uuid.uuid4().hex[:8]}"
        organization = tenancy.organization_create(name="Procedural benchmark", slug=slug)
        report: dict[str, Any] = {}
        try:
            with transaction.atomic(), organization_scope(organization.id):
                report = self._run(organization.id, options["tasks"], options["evolve_every"])
                raise _Rollback
        except _Rollback:
            pass
        finally:
            organization_erase(organization_id=organization.id)
        body = self._body(report, options, time.perf_counter() - started)
        self.stdout.write(body)
        if options["write_docs"]:
            write_section("bench_procedural", body)

    # -- arms -------------------------------------------------------------------------------

    def _subject(self, organization_id: uuid.UUID, external_id: str) -> Subject:
        subject = tenancy.subject_create(organization_id=organization_id, external_id=external_id, kind="agent")
        consent_update(subject=subject, changes={"learn_skills": True})
        return subject

    def _learn(self, subject: Subject, *, verified: bool) -> dict[str, Any]:
        for session in training_sessions():
            body = session.payload()
            session_create(
                subject=subject,
                task=body["task"],
                domain=body["domain"],
                steps=body["steps"],
                final_output=body["final_output"],
                outcome=body["outcome"],
                scec=body.get("scec") if verified else None,
            )
        dream = procedural_dream(subject=subject)
        self.stdout.write(f"  dream: {dream}")
        # Deciding lets the curator propose edits, admitted in turn: loop until none is running
        # (a fresh query each time; an evaluated queryset would answer from its cache).
        while admissions := list(Admission.objects.filter(subject=subject, status=Admission.Status.RUNNING)):
            unfinished = Replay.objects.filter(admission__in=admissions, finished_at__isnull=True)
            for replay in unfinished.order_by("admission_id", "run", "arm"):
                replay_run(replay_id=replay.id)
            for admission in admissions:
                admission_decide(admission_id=admission.id)
        decided = list(Admission.objects.filter(subject=subject).select_related("experience", "skill_version__skill"))
        return {
            "admitted": sorted((a.domain, round(a.score or 0, 3)) for a in decided if a.status == "admitted"),
            "rejected": sorted((a.domain, round(a.score or 0, 3)) for a in decided if a.status == "rejected"),
            "replays": Replay.objects.filter(admission__subject=subject).count(),
        }

    def _run(self, organization_id: uuid.UUID, tasks: int, evolve_every: int) -> dict[str, Any]:
        vectors = embedder()
        sequence = list(task_sequence(tasks))
        baseline = ArmResult("no memory")
        for domain, n in sequence:
            output, used = run_task({"domain": domain, "n": n}, None, 0)
            baseline.rewards.append(reward(suite_reward_spec(domain, n), output))
            baseline.tokens.append(used)

        self.stdout.write("unweighted skills: learning without verification")
        plain_subject = self._subject(organization_id, "bench-unweighted")
        self._learn(plain_subject, verified=False)
        plain = ArmResult("skills, unweighted (sim only)")
        for domain, n in sequence:
            found = skill_search(
                subject=plain_subject,
                query=task_text(domain, n),
                embedder=vectors,
                domain=domain,
                limit=1,
                weighted=False,
            )
            guidance = found.items[0].skill.text if found.items else None
            output, used = run_task({"domain": domain, "n": n}, guidance, 0)
            plain.rewards.append(reward(suite_reward_spec(domain, n), output))
            plain.tokens.append(used)

        self.stdout.write("SEDM: learning with A/B admission")
        sedm_subject = self._subject(organization_id, "bench-sedm")
        admission = self._learn(sedm_subject, verified=True)
        sedm = ArmResult("SEDM weighting + evolution")
        history: dict[str, list[tuple[int, float]]] = {}
        labels: dict[str, str] = {}
        self._snapshot(sedm_subject, 0, history, labels)
        for index, (domain, n) in enumerate(sequence, start=1):
            found = skill_search(
                subject=sedm_subject, query=task_text(domain, n), embedder=vectors, domain=domain, limit=1
            )
            top = found.items[0].skill if found.items else None
            output, used = run_task({"domain": domain, "n": n}, top.text if top else None, 0)
            value = reward(suite_reward_spec(domain, n), output)
            sedm.rewards.append(value)
            sedm.tokens.append(used)
            feedback_create(
                retrieval_id=found.retrieval.id,
                items_used=[top.id] if top else [],
                reward=value,
                success=None,
                latency_ms=0,
                tokens=used,
            )
            if index % evolve_every == 0:
                evolve()
                self._snapshot(sedm_subject, index, history, labels)
                self.stdout.write(f"  {index}/{tasks} tasks, success so far {statistics.fmean(sedm.rewards):.0%}")
        final = {labels[skill_id]: Skill.objects.get(id=skill_id).status for skill_id in history if skill_id in labels}
        self._plot(history, labels)
        return {"arms": [baseline, plain, sedm], "admission": admission, "final": final, "tasks": tasks}

    def _snapshot(
        self, subject: Subject, step: int, history: dict[str, list[tuple[int, float]]], labels: dict[str, str]
    ) -> None:
        for skill in Skill.objects.filter(subject=subject).exclude(status=Skill.Status.DELETED):
            key = str(skill.id)
            labels[key] = f"{skill.domain} ({'verified' if skill.verified else 'unverified'}, {skill.form})"
            weight = skill.weight if skill.status in (Skill.Status.ACTIVE, Skill.Status.DEMOTED) else 0.0
            history.setdefault(key, []).append((step, weight))

    def _plot(self, history: dict[str, list[tuple[int, float]]], labels: dict[str, str]) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(figsize=(7, 4))
        for key, points in sorted(history.items(), key=lambda item: labels[item[0]]):
            axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, label=labels[key])
        axes.axhline(settings.PROCEDURAL_ARCHIVE_BELOW, color="grey", linestyle=":", label="archive threshold")
        axes.set_xlabel("tasks completed")
        axes.set_ylabel("skill weight w(m)")
        axes.set_title("SEDM skill weights under outcome feedback")
        axes.legend(fontsize=7)
        figure.tight_layout()
        IMAGE.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(IMAGE, dpi=110)
        plt.close(figure)

    def _body(self, report: dict[str, Any], options: dict[str, Any], seconds: float) -> str:
        arms: list[ArmResult] = report["arms"]
        lines = [
            "## Procedural memory (`python manage.py bench_procedural --write-docs`)",
            "",
            f"Shipped suite `apps/procedural/suite` (4 domains; training: a helpful and a harmful lesson per domain with "
            f"SCECs, shipping's harmful lesson without one), {report['tasks']} evaluation tasks round-robin, top-1 skill "
            f"injected as guidance into the deterministic executor, local providers; SEDM settings λ_L="
            f"{settings.PROCEDURAL_LAMBDA_LATENCY}, λ_T={settings.PROCEDURAL_LAMBDA_TOKENS}/1k tokens, "
            f"η={settings.PROCEDURAL_ETA}, {settings.PROCEDURAL_RUNS_PER_ARM} runs per arm, α={settings.PROCEDURAL_ALPHA}, "
            f"β={settings.PROCEDURAL_BETA}, evolution every {options['evolve_every']} tasks. Run time {seconds:.0f} s.",
            "",
            "| arm | success | success, last quarter | tokens / task | tokens total |",
            "|---|---|---|---|---|",
            *(arm.row() for arm in arms),
            "",
            f"Admission: admitted {report['admission']['admitted']}, rejected {report['admission']['rejected']} "
            f"({report['admission']['replays']} replays).",
            f"Skill status at the end: {report['final']}.",
            "",
            "![SEDM skill weights](img/bench_procedural.png)",
        ]
        return "\n".join(lines)
