"""SEDM admission end to end on a real worker pool: sessions with SCECs are distilled, each
candidate experience is A/B-replayed through the ``openai`` provider against the stub (which
answers from the prompt: the helpful item fixes the answer, the harmful one breaks it), and
the chord's decision admits the helpful item with w0 = S and rejects the harmful one."""

from __future__ import annotations

import json
import re

import pytest
from django.conf import settings

from apps.jobs.models import Job
from apps.procedural.models import Admission, Experience, Replay, Skill, SkillCitation
from apps.procedural.suite.tasks import FAMILIES
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant
from tests.procedural.support import consenting_subject, harmful, helpful, post_session, use_stub
from tests.processes import celery_worker, purge_queues, wait_for
from tests.providers.openai_stub import OpenAIStub, RecordedRequest, StubReply, json_reply

pytestmark = pytest.mark.slow


def _user(request: RecordedRequest) -> str:
    return str(request.body["messages"][1]["content"])


def _tagged(text: str, tag: str) -> str:
    return text.split(f"<{tag}>\n")[1].split(f"\n</{tag}>")[0]


def _decide(request: RecordedRequest) -> StubReply | None:
    schema = request.body["response_format"]["json_schema"]["name"]
    user = _user(request)
    if schema == "DistillReply":
        session = json.loads(_tagged(user, "task_session"))
        lesson = next(s["content"] for s in session["steps"] if s["content"].startswith("Lesson: "))
        return json_reply(
            {
                "outcome": "success",
                "outcome_quote": "the check passed",
                "experiences": [{"kind": "lesson", "text": lesson.removeprefix("Lesson: "), "quote": lesson}],
            }
        )
    if schema == "CurateReply":
        offered = json.loads(_tagged(user, "experiences"))
        decisions = [
            {
                "action": "create",
                "skill_id": None,
                "experience_ids": [e["experience_id"]],
                "name": e["text"][:40],
                "domain": e["domain"],
                "text": e["text"] + ".",
                "citations": [{"experience_id": e["experience_id"], "quote": e["text"]}],
            }
            for e in offered
        ]
        return json_reply({"decisions": decisions})
    if schema == "ReplayOutput":
        task = json.loads(_tagged(user, "task"))
        memory = json.loads(_tagged(user, "memory")) if "<memory>" in user else ""
        family = FAMILIES[task["inputs"]["domain"]]
        n = task["inputs"]["n"]
        if family.trap in memory:
            answer = family.wrong(n)
        elif family.keyword in memory or family.domain == "cooking":  # the model knows cooking already
            answer = family.correct(n)
        else:
            answer = family.naive(n)
        # The item costs prompt tokens: 40 more with it than without.
        return json_reply({"output": f"answer: {answer}"}, prompt_tokens=200 if memory else 160, completion_tokens=10)
    return None


def test_helpful_items_are_admitted_with_w0_equal_to_s_and_harmful_ones_rejected(openai_stub: OpenAIStub) -> None:
    purge_queues()
    tenant = make_tenant()
    use_stub(tenant, openai_stub)
    openai_stub.respond_with(_decide)
    agent = consenting_subject(tenant, "agent-sedm", cross_domain=False)
    runs = settings.PROCEDURAL_RUNS_PER_ARM
    with celery_worker(queues=["dream", "admission"], concurrency=2, name="procedural-sedm"):
        post_session(tenant, agent, helpful("travel", 10, scec=True))
        post_session(tenant, agent, harmful("cooking", 4, scec=True))
        for n in (3, 5):
            post_session(tenant, agent, helpful("shipping", n, scec=False))
        fifth = post_session(tenant, agent, helpful("devops", 3, scec=False))
        assert fifth["dream_job_id"]

        def decided() -> bool:
            with organization_scope(tenant.id):
                admissions = list(Admission.objects.all())
                done = len(admissions) == 2 and all(a.status != Admission.Status.RUNNING for a in admissions)
                return done and not Job.objects.filter(status__in=("queued", "running")).exists()

        wait_for(decided, timeout=240, interval=0.5)

    with organization_scope(tenant.id):
        admitted = Admission.objects.select_related("experience").get(experience__domain="travel")
        rejected = Admission.objects.select_related("experience").get(experience__domain="cooking")
        assert admitted.status == "admitted" and rejected.status == "rejected"
        assert admitted.delta_reward == pytest.approx(1.0) and rejected.delta_reward == pytest.approx(-1.0)
        expected = (
            admitted.delta_reward
            - admitted.lambda_latency * admitted.delta_latency
            - admitted.lambda_tokens * admitted.delta_tokens
        )
        assert admitted.score == pytest.approx(expected)
        assert admitted.delta_tokens == pytest.approx(0.04)
        assert admitted.initial_weight == pytest.approx(admitted.score) and admitted.score >= admitted.eta
        assert admitted.experience.verification == "admitted"
        assert admitted.experience.weight == pytest.approx(admitted.score)
        assert rejected.experience.verification == "rejected" and rejected.experience.curation == "not_worth"

        # One replay row and one job record per arm and run, each run by the worker pool.
        for admission in (admitted, rejected):
            replays = list(Replay.objects.filter(admission=admission).select_related("job"))
            assert len(replays) == 2 * runs == admission.replays_done
            assert {(r.arm, r.run) for r in replays} == {(arm, run) for arm in "AB" for run in range(runs)}
            assert {r.seed for r in replays} == {7, 11, 13}
            assert all(r.job.kind == "procedural.replay" and r.job.status == "succeeded" for r in replays)
            assert all(r.job.attempts == 1 and r.job.started_at for r in replays)
            assert all(re.fullmatch(r"[0-9a-f]{64}", r.fingerprint) for r in replays)
            assert len({r.fingerprint for r in replays}) == 2 * runs
            assert all(r.model == "gpt-test" for r in replays)
        assert Job.objects.filter(kind="procedural.admission", status="succeeded").count() == 2

        # The curator used the admitted item (w0 = S) and the unverified ones (neutral prior),
        # never the rejected one.
        skills = {s.domain: s for s in Skill.objects.all()}
        assert set(skills) == {"travel", "shipping", "devops"}
        assert skills["travel"].verified and skills["travel"].weight == pytest.approx(admitted.score)
        assert not skills["shipping"].verified and skills["shipping"].weight == settings.PROCEDURAL_NEUTRAL_WEIGHT
        cited = set(SkillCitation.objects.values_list("experience_id", flat=True))
        assert admitted.experience_id in cited and rejected.experience_id not in cited
        assert Experience.objects.filter(verification="unverified").count() == 3
    replay_calls = [
        r for r in openai_stub.requests if r.body["response_format"]["json_schema"]["name"] == "ReplayOutput"
    ]
    assert len(replay_calls) == 4 * runs
    assert all(r.body["seed"] in (7, 11, 13) and r.body["temperature"] == 0 for r in replay_calls)
