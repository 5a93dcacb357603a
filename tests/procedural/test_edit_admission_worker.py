"""A curator's skill edit goes through SEDM admission on a real worker pool, like an
experience: with an SCEC of the subject it is A/B-replayed (without vs with the new skill
text, through the ``openai`` provider against the stub), the helpful edit becomes the skill's
version at w0 = S, the harmful one is rejected and the previous version stays active; an edit
without an SCEC is applied unverified at the neutral prior and says so."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from apps.jobs.models import Job
from apps.procedural.models import Admission, Replay, Skill, SkillVersion
from apps.procedural.suite.tasks import FAMILIES
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant
from tests.procedural.support import consenting_subject, harmful, helpful, post_session, use_stub
from tests.procedural.test_admission_worker import _decide as _experience_decide
from tests.procedural.test_admission_worker import _tagged, _user
from tests.processes import celery_worker, purge_queues, wait_for
from tests.providers.openai_stub import OpenAIStub, RecordedRequest, StubReply, json_reply

pytestmark = pytest.mark.slow


def _curate(request: RecordedRequest) -> StubReply | None:
    """One decision per domain: create its skill, or edit the existing one by adding the
    offered lessons — except cooking, whose edit adds the trap (a harmful edit)."""
    if request.body["response_format"]["json_schema"]["name"] != "CurateReply":
        return _experience_decide(request)
    user = _user(request)
    skills = {s["domain"]: s for s in json.loads(_tagged(user, "skills"))}
    by_domain: dict[str, list[dict[str, str]]] = {}
    for experience in json.loads(_tagged(user, "experiences")):
        by_domain.setdefault(experience["domain"], []).append(experience)
    decisions = []
    for domain, offered in by_domain.items():
        added = [
            FAMILIES[domain].trap_lesson if domain == "cooking" and domain in skills else e["text"] for e in offered
        ]
        citations = [{"experience_id": e["experience_id"], "quote": e["text"]} for e in offered]
        current = skills.get(domain)
        decisions.append(
            {
                "action": "edit" if current else "create",
                "skill_id": current["skill_id"] if current else None,
                "experience_ids": [e["experience_id"] for e in offered],
                "name": f"{domain} procedure",
                "domain": domain,
                "text": "\n".join([current["text"] if current else f"How to handle {domain} tasks:", *added]),
                "citations": citations,
            }
        )
    return json_reply({"decisions": decisions})


def test_skill_edits_are_admitted_by_replay_with_w0_equal_to_s_or_rejected_keeping_the_previous_version(
    openai_stub: OpenAIStub,
) -> None:
    purge_queues()
    tenant = make_tenant()
    use_stub(tenant, openai_stub)
    openai_stub.respond_with(_curate)
    agent = consenting_subject(tenant, "agent-sedm-edits", cross_domain=False)
    runs = settings.PROCEDURAL_RUNS_PER_ARM

    def idle() -> bool:
        with organization_scope(tenant.id):
            running = Admission.objects.filter(status=Admission.Status.RUNNING).exists()
            return not running and not Job.objects.filter(status__in=("queued", "running")).exists()

    with celery_worker(queues=["dream", "admission"], concurrency=2, name="procedural-sedm-edits"):
        # First dream: no SCEC anywhere, so one unverified skill per domain.
        for domain, n in (("travel", 3), ("cooking", 4), ("shipping", 5), ("devops", 3), ("shipping", 6)):
            post_session(tenant, agent, helpful(domain, n, scec=False))
        wait_for(idle, timeout=240, interval=0.5)
        with organization_scope(tenant.id):
            before = {s.domain: (s.id, s.text, s.version) for s in Skill.objects.all()}
        assert set(before) == {"travel", "cooking", "shipping", "devops"}
        # Second dream: travel's admitted experience (its SCEC) leads to a helpful edit; a
        # cooking SCEC exists (its harmful experience is rejected), so cooking's edit is
        # replayed in it; shipping and devops have no SCEC, so their edits go in unverified.
        post_session(tenant, agent, helpful("travel", 10, scec=True))
        post_session(tenant, agent, harmful("cooking", 4, scec=True))
        post_session(tenant, agent, helpful("cooking", 5, scec=False))
        post_session(tenant, agent, helpful("shipping", 3, scec=False))
        assert post_session(tenant, agent, helpful("devops", 4, scec=False))["dream_job_id"]
        wait_for(idle, timeout=300, interval=0.5)

    with organization_scope(tenant.id):
        edits = {
            a.skill_version.skill.domain: a
            for a in Admission.objects.filter(skill_version__isnull=False).select_related("skill_version__skill")
        }
        assert set(edits) == {"travel", "cooking"}
        skills = {s.domain: s for s in Skill.objects.filter(form="specific")}

        helpful_edit = edits["travel"]
        assert helpful_edit.status == "admitted" and helpful_edit.delta_reward == pytest.approx(1.0)
        expected = (
            helpful_edit.delta_reward
            - helpful_edit.lambda_latency * helpful_edit.delta_latency
            - helpful_edit.lambda_tokens * helpful_edit.delta_tokens
        )
        assert helpful_edit.score == pytest.approx(expected) and helpful_edit.score >= helpful_edit.eta
        assert helpful_edit.initial_weight == pytest.approx(helpful_edit.score)
        travel, version = skills["travel"], helpful_edit.skill_version
        assert version.verification == "admitted" and travel.version == version.version > before["travel"][2]
        assert travel.text == version.text and FAMILIES["travel"].lesson in travel.text
        assert travel.verified and travel.weight == pytest.approx(helpful_edit.score)

        harmful_edit = edits["cooking"]
        assert harmful_edit.status == "rejected" and harmful_edit.delta_reward == pytest.approx(-1.0)
        assert harmful_edit.score < harmful_edit.eta
        assert harmful_edit.skill_version.verification == "rejected"
        assert FAMILIES["cooking"].trap_lesson in harmful_edit.skill_version.text
        cooking = skills["cooking"]
        assert (cooking.id, cooking.text, cooking.version) == before["cooking"]  # the previous version stays
        assert not cooking.verified and cooking.weight == settings.PROCEDURAL_NEUTRAL_WEIGHT

        # One replay row and one job record per arm and run, run by the worker pool, with the
        # new skill text as the B arm's item.
        for admission in (helpful_edit, harmful_edit):
            replays = list(Replay.objects.filter(admission=admission).select_related("job"))
            assert len(replays) == 2 * runs == admission.replays_done
            assert {(r.arm, r.run) for r in replays} == {(arm, run) for arm in "AB" for run in range(runs)}
            assert all(r.job.kind == "procedural.replay" and r.job.status == "succeeded" for r in replays)
            assert all(r.job.attempts == 1 and r.job.started_at and r.finished_at for r in replays)
        assert Job.objects.filter(kind="procedural.admission", status="succeeded").count() == 4

        # Without an SCEC the edit is the skill's version at once, unverified, at the neutral prior.
        for domain in ("shipping", "devops"):
            unverified = SkillVersion.objects.filter(skill=skills[domain], change="edit").get()
            assert unverified.verification == "unverified" and skills[domain].version == unverified.version
            assert not skills[domain].verified and skills[domain].weight == settings.PROCEDURAL_NEUTRAL_WEIGHT

    replays = [r for r in openai_stub.requests if r.body["response_format"]["json_schema"]["name"] == "ReplayOutput"]
    with_edit = [r for r in replays if "<memory>" in _user(r)]
    assert any(json.loads(_tagged(_user(r), "memory")) == helpful_edit.skill_version.text for r in with_edit)
    listed = tenant.client().get(f"/v1/subjects/{agent}/skills/{skills['cooking'].id}").json()
    assert [v["verification"] for v in listed["versions"]] == ["", "rejected"]
    listed = tenant.client().get(f"/v1/subjects/{agent}/skills/{skills['shipping'].id}").json()
    assert listed["verification"].startswith("unverified") and listed["versions"][-1]["verification"] == "unverified"
