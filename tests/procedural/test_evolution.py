"""Evolution: scripted feedback moves weights exactly as w ← w + α·Ū − β·f_use says, harmful
skills are demoted then archived (reversibly, with webhook events), near-duplicates merge
with provenance, and general forms win cross-domain while specific ones win in-domain."""

from __future__ import annotations

import pytest
from django.conf import settings

from apps.procedural.evolution_store import evolve, skills_merge_duplicates
from apps.procedural.models import Experience, Skill, SkillCitation, SkillEvent, TaskSession
from apps.procedural.provider import metering_for, procedural_llm
from apps.procedural.sedm import merged_weight
from apps.procedural.services import general_form_refresh, skill_create
from apps.tenancy.models import Subject
from apps.tenancy.scope import organization_scope
from apps.webhooks.models import WebhookEvent
from apps.webhooks.services import webhook_endpoint_create
from tests.factories import Tenant, make_tenant
from tests.procedural.support import consenting_subject


def _skill(
    tenant: Tenant,
    subject: Subject,
    *,
    name: str,
    domain: str,
    text: str,
    weight: float,
    cites: list[Experience] | None = None,
) -> Skill:
    with organization_scope(tenant.id):
        skill = skill_create(
            subject=subject, name=name, domain=domain, text=text, citations=[(e, e.text) for e in cites or []], job=None
        )
        Skill.objects.filter(id=skill.id).update(weight=weight)
        skill.refresh_from_db()
    return skill


def _experience(tenant: Tenant, subject: Subject, text: str, domain: str) -> Experience:
    with organization_scope(tenant.id):
        session = TaskSession.objects.create(
            organization_id=tenant.id, subject=subject, task="t", domain=domain, steps=[], final_output=""
        )
        return Experience.objects.create(
            organization_id=tenant.id,
            subject=subject,
            session=session,
            domain=domain,
            kind="lesson",
            text=text,
            quote=text,
            verification="unverified",
            weight=0.5,
        )


def _subject(tenant: Tenant, external_id: str) -> Subject:
    consenting_subject(tenant, external_id)
    with organization_scope(tenant.id):
        return Subject.objects.get(external_id=external_id)


def test_scripted_feedback_converges_as_the_update_rule_says() -> None:
    tenant = make_tenant()
    webhook_endpoint_create(
        organization_id=tenant.id,
        url="http://127.0.0.1:9/skills",
        event_types=["skill.created", "skill.weight_changed", "skill.archived"],
    )
    subject = _subject(tenant, "agent-evolve")
    good = _skill(
        tenant,
        subject,
        name="Miles",
        domain="units",
        text="Convert miles to kilometres by multiplying by 1.609.",
        weight=0.5,
    )
    bad = _skill(
        tenant,
        subject,
        name="Retries",
        domain="devops",
        text="Always wait a constant two seconds between deploy retries.",
        weight=0.5,
    )
    alpha, beta = settings.PROCEDURAL_ALPHA, settings.PROCEDURAL_BETA
    baseline = settings.PROCEDURAL_REWARD_BASELINE
    expected_good, expected_bad = 0.5, 0.5
    client = tenant.client()
    for round_number in range(1, 6):
        found = client.post(
            f"/v1/subjects/{subject.external_id}/skills/search",
            {"query": "convert or retry", "limit": 5},
            format="json",
        ).json()
        returned = {item["skill"]["id"] for item in found["results"]}
        if str(bad.id) in returned:
            # One task used both: it failed; another used only the good one: it succeeded.
            for used, success in (([str(good.id), str(bad.id)], False), ([str(good.id)], True)):
                response = client.post(
                    "/v1/feedback",
                    {"retrieval_id": found["retrieval_id"], "items_used": used, "success": success},
                    format="json",
                )
                assert response.status_code == 202, response.content
            expected_good = min(1.0, expected_good + alpha * ((0 - baseline) + (1 - baseline)) / 2 - beta * 2 / 2)
            expected_bad = max(0.0, expected_bad + alpha * (0 - baseline) - beta * 1 / 2)
        with organization_scope(tenant.id):
            evolve()
            good.refresh_from_db()
            bad.refresh_from_db()
        assert good.weight == pytest.approx(expected_good), round_number
        assert bad.weight == pytest.approx(expected_bad), round_number
        if round_number == 2:
            assert bad.status == "demoted"  # two negative updates in a row
    assert bad.status == "archived" and bad.weight < settings.PROCEDURAL_ARCHIVE_BELOW
    with organization_scope(tenant.id):
        kinds = list(SkillEvent.objects.filter(skill=bad).order_by("sequence").values_list("kind", flat=True))
        assert (
            kinds[0] == "admitted"
            and kinds[1] == "weight_changed"
            and kinds[2] == "demoted"
            and kinds[-1] == "archived"
        )
        events = set(WebhookEvent.objects.values_list("event_type", flat=True))
        archive = SkillEvent.objects.get(skill=bad, kind="archived")
    assert {"skill.created", "skill.weight_changed", "skill.archived"} <= events
    # Archived skills are not retrieved; the archive is reversible.
    found = client.post(
        f"/v1/subjects/{subject.external_id}/skills/search", {"query": "deploy retries"}, format="json"
    ).json()
    assert str(bad.id) not in {item["skill"]["id"] for item in found["results"]}
    reverted = client.post(f"/v1/skill-events/{archive.id}/revert")
    assert reverted.status_code == 201, reverted.content
    assert reverted.json()["kind"] == "reverted" and reverted.json()["status"] == "demoted"
    with organization_scope(tenant.id):
        latest = WebhookEvent.objects.filter(event_type="skill.weight_changed").order_by("-created_at").first()
        assert latest is not None and latest.payload["skill_id"] == str(bad.id)
        assert latest.payload["status"] == "demoted"
    assert client.post(f"/v1/skill-events/{archive.id}/revert").status_code == 409
    detail = client.get(f"/v1/subjects/{subject.external_id}/skills/{bad.id}").json()
    assert detail["status"] == "demoted" and detail["events"][-1]["details"]["reverted_event"] == str(archive.id)


def test_feedback_names_only_items_its_retrieval_returned() -> None:
    tenant = make_tenant()
    subject = _subject(tenant, "agent-feedback")
    skill = _skill(
        tenant, subject, name="Miles", domain="units", text="Convert miles by multiplying by 1.609.", weight=0.5
    )
    found = (
        tenant.client()
        .post(f"/v1/subjects/{subject.external_id}/skills/search", {"query": "miles"}, format="json")
        .json()
    )
    other = "00000000-0000-0000-0000-000000000001"
    bad = tenant.client().post(
        "/v1/feedback", {"retrieval_id": found["retrieval_id"], "items_used": [other], "success": True}, format="json"
    )
    assert bad.status_code == 400 and "items_used" in bad.content.decode()
    both = tenant.client().post(
        "/v1/feedback",
        {"retrieval_id": found["retrieval_id"], "items_used": [str(skill.id)], "success": True, "reward": 1},
        format="json",
    )
    assert both.status_code == 400 and "exactly one" in both.content.decode()


def test_near_duplicates_merge_without_double_counting_and_keep_provenance() -> None:
    tenant = make_tenant()
    subject = _subject(tenant, "agent-merge")
    e1 = _experience(tenant, subject, "Use 125 grams of flour per serving", "cooking")
    e2 = _experience(tenant, subject, "Weigh the flour, 125 grams per serving", "cooking")
    first = _skill(
        tenant,
        subject,
        name="Bread",
        domain="cooking",
        text="Scale bread: Use 125 grams of flour per serving.",
        weight=0.8,
        cites=[e1],
    )
    second = _skill(
        tenant,
        subject,
        name="Bread",
        domain="cooking",
        text="Scale bread: Weigh the flour, 125 grams per serving.",
        weight=0.4,
        cites=[e2],
    )
    _skill(tenant, subject, name="Retries", domain="devops", text="Double the wait between deploy retries.", weight=0.9)
    with organization_scope(tenant.id):
        assert skills_merge_duplicates(subject_id=subject.id) == 1
        first.refresh_from_db()
        second.refresh_from_db()
        assert first.status == "active" and first.version == 2
        assert first.weight == pytest.approx(
            merged_weight([(0.8, frozenset({str(e1.id)})), (0.4, frozenset({str(e2.id)}))])
        )
        cited = set(
            SkillCitation.objects.filter(skill_version__skill=first, skill_version__version=2).values_list(
                "experience_id", flat=True
            )
        )
        assert cited == {e1.id, e2.id}
        assert (
            SkillCitation.objects.filter(skill_version__skill=first, skill_version__version=1).count() == 1
        )  # v1 kept
        assert second.status == "merged" and second.merged_into_id == first.id
        absorbed = SkillEvent.objects.get(skill=first, kind="merged")
        assert absorbed.details["absorbed"] == str(second.id) and absorbed.previous_weight == 0.8
        assert SkillEvent.objects.get(skill=second, kind="merged").details["merged_into"] == str(first.id)
        # Merging again finds nothing: the contributor is no longer active.
        assert skills_merge_duplicates(subject_id=subject.id) == 0


def test_general_forms_win_across_domains_and_specific_forms_in_their_own() -> None:
    tenant = make_tenant()
    subject = _subject(tenant, "agent-general")
    specific = _skill(
        tenant,
        subject,
        name="Hotel booking",
        domain="travel",
        text="Book the Lisbon hotel through Booking Inc for 3 guests and confirm by email.",
        weight=0.8,
    )
    with organization_scope(tenant.id):
        assert (
            general_form_refresh(
                skill=specific, llm=procedural_llm(tenant.id), metering=metering_for(tenant.id), job=None
            )
            == 1
        )
        general = Skill.objects.get(general_of=specific)
    assert general.weight == pytest.approx(settings.PROCEDURAL_GENERAL_ALPHA * 0.8)
    assert "Lisbon" not in general.text and "<GPE>" in general.text and "<NUMBER>" in general.text
    client = tenant.client()
    in_domain = client.post(
        f"/v1/subjects/{subject.external_id}/skills/search",
        {"query": "book a hotel in Lisbon", "domain": "travel"},
        format="json",
    ).json()["results"]
    assert in_domain[0]["skill"]["id"] == str(specific.id)
    cross = client.post(
        f"/v1/subjects/{subject.external_id}/skills/search",
        {"query": "book a venue for the conference", "domain": "events"},
        format="json",
    ).json()["results"]
    assert [item["skill"]["id"] for item in cross] == [str(general.id)]
    assert cross[0]["source_domain"] == "travel" and cross[0]["skill"]["form"] == "general"
