"""SEDM admission with the local provider, in-process: replay runs the SCEC's registered
deterministic executor; an SCEC without one cannot be replayed, and its item enters
unverified with the neutral prior and says so; a redelivered replay counts once."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings

from apps.procedural.admission import replay_run
from apps.procedural.models import Admission, Replay, Skill, TaskSession
from apps.procedural.services import admission_decide, dream_sweep
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant
from tests.procedural.support import consenting_subject, harmful, helpful, post_session


def _dream(tenant, external_id: str) -> None:  # type: ignore[no-untyped-def]
    with organization_scope(tenant.id):
        from apps.procedural.services import procedural_dream

        procedural_dream(subject=Subject.objects.get(external_id=external_id))


def _decide_all(tenant) -> None:  # type: ignore[no-untyped-def]
    """What the deciding jobs do: every replay finished, so each admission is decided."""
    with organization_scope(tenant.id):
        assert all(a.replays_done == a.replays_total for a in Admission.objects.all())
        for admission_id in Admission.objects.values_list("id", flat=True):
            admission_decide(admission_id=admission_id)


def test_local_replay_admits_helpful_and_rejects_harmful_items_and_counts_redeliveries_once() -> None:
    tenant = make_tenant()
    agent = consenting_subject(tenant, "agent-local", cross_domain=False)
    with override_settings(PROCEDURAL_DREAM_THRESHOLD=100):
        post_session(tenant, agent, helpful("travel", 10, scec=True))
        post_session(tenant, agent, harmful("cooking", 4, scec=True))
    _dream(tenant, agent)
    with organization_scope(tenant.id):
        first = Replay.objects.order_by("admission_id", "run", "arm").first()
        assert first is not None
        assert Admission.objects.count() == 4  # per session, the explicit lesson and the action lesson
    replay_run_twice = [first.id, first.id]
    with organization_scope(tenant.id):
        for replay_id in replay_run_twice:
            replay_run(replay_id=replay_id)
        assert Admission.objects.get(id=first.admission_id).replays_done == 1
    with organization_scope(tenant.id):
        for replay in Replay.objects.exclude(id=first.id).order_by("admission_id", "run", "arm"):
            replay_run(replay_id=replay.id)
    _decide_all(tenant)
    with organization_scope(tenant.id):
        decided = {
            (a.experience.domain, a.experience.text.split(" ")[0]): a
            for a in Admission.objects.select_related("experience")
        }
        travel = decided[("travel", "Convert")]
        assert travel.status == "admitted" and travel.delta_reward == pytest.approx(1.0)
        assert travel.provider_version == "local-procedural-1"
        assert decided[("cooking", "Use")].status == "rejected"
        skill = Skill.objects.get(domain="travel")
        assert skill.verified and skill.weight == pytest.approx(
            max(
                a.initial_weight or 0
                for a in decided.values()
                if a.status == "admitted" and a.experience.domain == "travel"
            )
        )
        assert set(Replay.objects.values_list("model", flat=True)) == {"local-procedural-1/suite.v1"}


def test_an_scec_the_provider_cannot_replay_leaves_the_item_unverified_and_says_so() -> None:
    tenant = make_tenant()
    agent = consenting_subject(tenant, "agent-unreplayable", cross_domain=False)
    body = helpful("travel", 10, scec=True)
    body["scec"]["executor"] = "no-such-executor"
    with override_settings(PROCEDURAL_DREAM_THRESHOLD=100):
        post_session(tenant, agent, body)
    _dream(tenant, agent)
    while True:  # deciding lets the curator edit the skill: the edit is a candidate in turn
        with organization_scope(tenant.id):
            if not Admission.objects.filter(status="running").exists():
                break
            for replay in Replay.objects.filter(finished_at__isnull=True):
                replay_run(replay_id=replay.id)
        _decide_all(tenant)
    with organization_scope(tenant.id):
        assert set(Admission.objects.values_list("status", flat=True)) == {"unverifiable"}
        assert Admission.objects.filter(skill_version__verification="unverified").exists()
        assert all("no local executor" in r.error for r in Replay.objects.all())
    skills = tenant.client().get(f"/v1/subjects/{agent}/skills").json()["results"]
    assert len(skills) == 1 and skills[0]["verified"] is False
    assert skills[0]["weight"] == settings.PROCEDURAL_NEUTRAL_WEIGHT
    assert skills[0]["verification"].startswith("unverified")


def test_the_beat_sweep_schedules_dreams_a_lost_trigger_missed() -> None:
    tenant = make_tenant()
    agent = consenting_subject(tenant, "agent-sweep")
    with override_settings(PROCEDURAL_DREAM_THRESHOLD=100):
        for n in range(2, 7):
            assert post_session(tenant, agent, helpful("cooking", n, scec=False))["dream_job_id"] is None
    with organization_scope(tenant.id):
        assert dream_sweep() == 1
        assert dream_sweep() == 0  # one is already queued
        assert TaskSession.objects.filter(status="pending").count() == 5
