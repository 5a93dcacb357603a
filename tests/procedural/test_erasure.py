"""Withdrawing ``learn_skills`` erases what was learned (SCEC objects included) and nothing
else; withdrawing ``cross_domain_generalization`` erases only the general forms."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import override_settings

from apps.procedural.models import Experience, Feedback, Retrieval, Scec, Skill, TaskSession
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from tests.erasure.support import run_erasure, storage_text
from tests.factories import make_tenant
from tests.procedural.support import consenting_subject, helpful, post_session


@pytest.fixture
def storage_root(tmp_path: Path) -> Iterator[Path]:
    with override_settings(OBJECT_STORAGE="filesystem", OBJECT_STORAGE_ROOT=tmp_path / "objects"):
        yield tmp_path / "objects"


def _counts(tenant, subject_id) -> dict[str, int]:  # type: ignore[no-untyped-def]
    with organization_scope(tenant.id):
        return {
            model.__name__: model.objects.filter(subject_id=subject_id).count()
            for model in (TaskSession, Scec, Experience, Skill, Retrieval, Feedback)
        }


def test_withdrawing_learn_skills_erases_sessions_scec_objects_and_skills(storage_root: Path) -> None:
    tenant = make_tenant()
    agent = consenting_subject(tenant, "agent-erase")
    other = consenting_subject(tenant, "agent-kept")
    client = tenant.client()
    body = helpful("cooking", 2, scec=True)
    body["scec"]["inputs"]["context"] = "qzxscec " * 3000  # large: stored as an object
    with override_settings(PROCEDURAL_DREAM_THRESHOLD=2):
        post_session(tenant, agent, body)
        post_session(tenant, other, helpful("cooking", 3, scec=False))
        post_session(tenant, other, helpful("travel", 3, scec=False))
    with organization_scope(tenant.id):
        from apps.procedural.services import procedural_dream

        for external_id in (agent, other):
            procedural_dream(subject=Subject.objects.get(external_id=external_id))
    assert "qzxscec" in storage_text(storage_root)
    found = client.post(f"/v1/subjects/{other}/skills/search", {"query": "flour"}, format="json").json()
    client.post(
        "/v1/feedback", {"retrieval_id": found["retrieval_id"], "items_used": [], "success": True}, format="json"
    )
    with organization_scope(tenant.id):
        agent_id = Subject.objects.get(external_id=agent).id
        other_id = Subject.objects.get(external_id=other).id
    kept = _counts(tenant, other_id)
    assert kept["Skill"] >= 2 and kept["Feedback"] == 1
    withdrawn = client.put(f"/v1/subjects/{agent}/consent", {"purposes": {"learn_skills": False}}, format="json").json()
    request = run_erasure(withdrawn["erasure_request_id"])
    assert request.counts["scec_objects"] == 1 and request.counts["procedural_session"] == 1
    assert _counts(tenant, agent_id) == dict.fromkeys(kept, 0)
    assert "qzxscec" not in storage_text(storage_root)
    assert _counts(tenant, other_id) == kept
    refused = client.post(f"/v1/subjects/{agent}/sessions", helpful("cooking", 4, scec=False), format="json")
    assert refused.status_code == 403


def test_withdrawing_cross_domain_generalization_erases_only_general_forms() -> None:
    tenant = make_tenant()
    agent = consenting_subject(tenant, "agent-general-erase")
    with override_settings(PROCEDURAL_DREAM_THRESHOLD=1):
        written = post_session(tenant, agent, helpful("cooking", 2, scec=False))
    with organization_scope(tenant.id):
        from apps.procedural.services import procedural_dream

        procedural_dream(subject=Subject.objects.get(external_id=agent))
        assert set(Skill.objects.values_list("form", flat=True)) == {"specific", "general"}
    assert written["dream_job_id"]
    withdrawn = (
        tenant.client()
        .put(f"/v1/subjects/{agent}/consent", {"purposes": {"cross_domain_generalization": False}}, format="json")
        .json()
    )
    run_erasure(withdrawn["erasure_request_id"])
    with organization_scope(tenant.id):
        assert set(Skill.objects.values_list("form", flat=True)) == {"specific"}
        assert TaskSession.objects.count() == 1
