"""The local end-to-end path through the API: sessions → AutoDream → skills → search →
feedback → evolution, with consent, validation and object storage."""

from __future__ import annotations

import pytest
from django.test import override_settings

from apps.jobs import task_names
from apps.procedural.models import Scec, TaskSession
from apps.resources.storage import storage
from apps.tenancy.scope import organization_scope
from tests.factories import make_tenant
from tests.procedural.support import (
    consenting_subject,
    harmful,
    helpful,
    job,
    post_session,
    run_job,
    subject_id,
)


def test_sessions_dream_into_cited_skills_that_search_and_feedback_evolve() -> None:
    tenant = make_tenant()
    agent = consenting_subject(tenant, "agent-e2e")
    client = tenant.client()
    written = [post_session(tenant, agent, helpful("cooking", n, scec=False)) for n in (2, 3, 4, 5)]
    assert [w["pending_sessions"] for w in written] == [1, 2, 3, 4]
    assert all(w["dream_job_id"] is None for w in written)
    fifth = post_session(tenant, agent, harmful("travel", 6, scec=False))
    assert fifth["pending_sessions"] == 5 and fifth["dream_job_id"]
    run_job(task_names.PROCEDURAL_DREAM, tenant, fifth["dream_job_id"], subject_id=subject_id(tenant, agent))
    result = job(tenant, fifth["dream_job_id"])
    assert result["status"] == "succeeded", result
    assert result["result"]["sessions"] == 5 and result["result"]["created"] == 2

    skills = client.get(f"/v1/subjects/{agent}/skills").json()["results"]
    specific = {s["domain"]: s for s in skills if s["form"] == "specific"}
    assert set(specific) == {"cooking", "travel"}
    cooking = specific["cooking"]
    assert cooking["weight"] == pytest.approx(0.5) and cooking["verified"] is False
    assert cooking["verification"].startswith("unverified")
    detail = client.get(f"/v1/subjects/{agent}/skills/{cooking['id']}").json()
    citations = detail["versions"][0]["citations"]
    assert citations and all(c["quote"] in detail["versions"][0]["text"] for c in citations)
    # The general form competes too, at α × w, with placeholders for numbers.
    general = [s for s in skills if s["form"] == "general" and s["general_of"] == cooking["id"]]
    assert len(general) == 1 and general[0]["weight"] == pytest.approx(0.6 * 0.5)
    assert "125" not in general[0]["text"] and "<NUMBER>" in general[0]["text"]

    found = client.post(
        f"/v1/subjects/{agent}/skills/search", {"query": "grams of flour for bread", "domain": "cooking"}, format="json"
    ).json()
    top = found["results"][0]
    assert top["skill"]["id"] == cooking["id"] and top["source_domain"] == "cooking"
    assert top["score"] == pytest.approx(top["similarity"] * top["skill"]["weight"])
    feedback = client.post(
        "/v1/feedback",
        {"retrieval_id": found["retrieval_id"], "items_used": [cooking["id"]], "success": True, "tokens": 0},
        format="json",
    )
    assert feedback.status_code == 202, feedback.content
    with organization_scope(tenant.id):
        from apps.procedural.evolution_store import evolve_schedule

        evolution_job = evolve_schedule(organization_id=tenant.id)
    assert evolution_job is not None
    run_job(task_names.PROCEDURAL_EVOLVE, tenant, str(evolution_job.id))
    after = client.get(f"/v1/subjects/{agent}/skills/{cooking['id']}").json()
    # w ← 0.5 + α·(1 − 0.5) − β·1 = 0.5 + 0.2·0.5 − 0.02
    assert after["weight"] == pytest.approx(0.58)
    assert after["events"][-1]["kind"] == "weight_changed" and after["events"][-1]["previous_weight"] == 0.5

    # /search includes skills when the procedural type is requested, with a retrieval id.
    searched = client.post(
        f"/v1/subjects/{agent}/search", {"query": "flour for bread", "memory_types": ["procedural"]}, format="json"
    ).json()
    assert searched["typed"]["skills"]["retrieval_id"]
    assert searched["typed"]["skills"]["results"][0]["skill"]["id"] in {cooking["id"], general[0]["id"]}


def test_learning_skills_needs_consent_and_stores_nothing_without_it() -> None:
    tenant = make_tenant()
    tenant.subject("no-consent")
    response = tenant.client().post("/v1/subjects/no-consent/sessions", helpful("cooking", 2, scec=True), format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "consent_required"
    assert response.json()["error"]["details"]["missing_purpose"] == "learn_skills"
    with organization_scope(tenant.id):
        assert TaskSession.objects.count() == 0 and Scec.objects.count() == 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"scec": {"reward_spec": {"kind": "regex", "pattern": "("}}}, "does not compile"),
        ({"scec": {"reward_spec": {"kind": "exact", "expected": "x"}, "content_hash": "0" * 64}}, "content_hash"),
        ({"steps": []}, "steps"),
        ({"steps": [{"kind": "dance", "content": "x"}]}, "step kind"),
    ],
)
def test_bad_sessions_are_refused_with_an_actionable_message(change: dict, message: str) -> None:  # type: ignore[type-arg]
    tenant = make_tenant()
    agent = consenting_subject(tenant, "agent-bad")
    response = tenant.client().post(
        f"/v1/subjects/{agent}/sessions", {**helpful("cooking", 2, scec=False), **change}, format="json"
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    with organization_scope(tenant.id):
        assert TaskSession.objects.count() == 0


def test_large_scecs_go_to_object_storage_and_small_ones_stay_inline() -> None:
    tenant = make_tenant()
    agent = consenting_subject(tenant, "agent-scec")
    small = post_session(tenant, agent, helpful("cooking", 2, scec=True))
    assert small["scec"]["stored"] == "inline" and len(small["scec"]["content_hash"]) == 64
    body = helpful("cooking", 3, scec=True)
    body["scec"]["inputs"]["context"] = "x" * 2000
    with override_settings(PROCEDURAL_SCEC_INLINE_BYTES=1000):
        large = post_session(tenant, agent, body)
    assert large["scec"]["stored"] == "object_storage"
    with organization_scope(tenant.id):
        scec = Scec.objects.get(id=large["scec"]["id"])
        assert scec.package is None and storage().exists(scec.object_key)
        from apps.procedural.selectors import scec_package

        assert scec_package(scec)["inputs"]["context"] == "x" * 2000
